"""PTC118's recipe: an operator between a plain Python object and a tensor (GB0055), or `@` of
two such objects (GB0059), as the method the operator calls. A new user of torch-complex wrote
`y * mask` with `y` a ComplexTensor and got dynamo's "Failed to convert args/kwargs to proxy" and
"no static finding on the line offers a fix"; `y.__mul__(mask)` compiles with no break and equals
head. The class usually lives in another module than the operator, so no finding flags the
line: dynamo's break there brings the recipe."""
from __future__ import annotations

import textwrap
import time

import pytest

from pt2bot.config import StaticConfig
from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, gather, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import fix_candidates
from pt2bot.static import check_paths

PAIR = """\
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __mul__(self, o):
        if isinstance(o, Pair):
            return Pair(self.a * o.a - self.b * o.b, self.a * o.b + self.b * o.a)
        return Pair(self.a * o, self.b * o)

    def __matmul__(self, o):
        return Pair(self.a @ o.a - self.b @ o.b, self.a @ o.b + self.b @ o.a)
"""


def test_the_static_finding_gets_the_method_then_the_reflected_one(tmp_path):
    src = PAIR + textwrap.dedent("""\


        import torch


        @torch.compile
        def f(x):
            p = Pair(x, x.sin())
            mask = torch.sigmoid(x) > 0.5
            q = p * mask
            return q.a
        """)
    (tmp_path / "m.py").write_text(src)
    found = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC118"]
    assert [(f.line, f.gb) for f in found] == [(21, "GB0055")]
    cands = fix_candidates(found[0], src)
    assert [c.lines for c in cands] == [("    q = p.__mul__(mask)",), ("    q = mask.__rmul__(p)",)]
    assert cands[0].title == "call `p.__mul__(mask)`, the method Python calls for `*`, which dynamo traces"
    assert not any(c.safe for c in cands)     # NotImplemented would make the call differ: proven


def test_dynamo_s_break_brings_the_recipe_where_no_finding_is(tmp_path):
    """The class imported from another module: no finding; GB0059 on `a @ b` and GB0055 on an
    operand that is an expression (parenthesised as the receiver) and a number (never one)."""
    src = textwrap.dedent("""\
        from pkg.cplx import Pair


        def matmul(a, b):
            return a @ b


        def scaled(a, b, t):
            return 2 * (a + b) * t
        """)
    (tmp_path / "m.py").write_text(src)

    def target(line, gb):
        return {"kind": "break", "model": "m", "path": "m.py", "line": line, "gb": gb, "gb_type": "x"}

    proposals, why = gather([target(5, "GB0059"), target(9, "GB0055")], [], str(tmp_path), None)
    assert why == {}
    got = {(p.targets[0], p.cand.lines) for p in proposals}
    assert (0, ("    return a.__matmul__(b)",)) in got and (0, ("    return b.__rmatmul__(a)",)) in got
    assert (1, ("    return (2 * (a + b)).__mul__(t)",)) in got
    assert (1, ("    return t.__rmul__(2 * (a + b))",)) in got
    assert not any("2.__" in ln for _, lines in got for ln in lines)
    for p in proposals:
        compile(p.patched, "m.py", "exec")


NET = """\
import torch
from torch import nn

from pkg.cplx import Pair


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.re = nn.Linear(8, 8)
        self.im = nn.Linear(8, 8)

    def forward(self, x):
        y = Pair(self.re(x), self.im(x))
        mask = x > 0
        z = y * mask
        return z.a + z.b
"""

CONFIG = """\
version: 1
models:
  - name: gate
    entry: pkg.net:Gate
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


@pytest.mark.torch
def test_the_method_call_is_verified_on_the_model(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "cplx.py").write_text(PAIR)
    (root / "pkg" / "net.py").write_text(NET)
    target = {"kind": "break", "model": "gate", "path": "pkg/net.py", "line": 16, "gb": "GB0055",
              "gb_type": "Failed to convert args/kwargs to proxy"}
    proposals, why = gather([target], [], str(root), None)
    assert why == {}
    for i, p in enumerate(proposals):
        p.cid = f"c{i}"
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    s = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                     head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(s, config.model("gate"), None, [(p, [target]) for p in proposals],
                              str(root), time.monotonic() + 240, str(tmp_path / "work"))
    by_lines = {p.cand.lines: verdicts[p.cid] for p in proposals}
    ok = by_lines[("        z = y.__mul__(mask)",)]
    assert ok["accepted"], ok
    assert "gone" in ok["evidence"]
    # the reflected form comes after it, so it is not tried once the first is verified ...
    assert by_lines[("        z = mask.__rmul__(y)",)] == {"skipped": "an earlier candidate already fixed its target"}
    # ... and alone it is refused: a tensor's `__rmul__` of the object is NotImplemented, not
    # the product Python's fallback to `y.__mul__` gave
    reflected = next(p for p in proposals if p.cand.lines == ("        z = mask.__rmul__(y)",))
    alone = prove_on_model(s, config.model("gate"), None, [(reflected, [target])], str(root),
                           time.monotonic() + 240, str(tmp_path / "work2"))
    assert not alone[reflected.cid]["accepted"]
    assert "NotImplementedType" in alone[reflected.cid]["reason"], alone
