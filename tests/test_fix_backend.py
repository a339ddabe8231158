"""A candidate the eager-backend proof accepts is also run once under the configured backend
(pt2bot/smoke/verify.py `backend_check`): a backend that generates code may compute the
rewritten form differently from eager.

The mismatching backend here is a real dynamo backend registered for the test: it returns
each graph's outputs shifted whenever the graph calls `torch.where`, as a code generator with
a wrong `where` kernel would. Head's code has no `where` and matches; the rewrite has one, so
its outputs differ under that backend although they equal head's in eager.
"""
from __future__ import annotations

import sys

import pytest

from pt2bot.rules import Candidate, apply_candidate
from pt2bot.smoke.inputs import CaseInputs
from pt2bot.smoke.location import RepoPaths
from pt2bot.smoke.patch import Edit
from pt2bot.smoke.verify import backend_check, judge, measure_state, prove_candidate

torch = pytest.importorskip("torch")

SKEW = "pt2bot_test_where_skew"

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        return h + 1
"""
BRANCH = 12   # the `if` on a tensor value (GB0170)


def _where_skew(gm, example_inputs):
    if not any(n.op == "call_function" and n.target is torch.where for n in gm.graph.nodes):
        return gm.forward

    def run(*args):
        out = gm.forward(*args)
        return tuple(o + 0.5 if isinstance(o, torch.Tensor) else o for o in out) \
            if isinstance(out, (tuple, list)) else out + 0.5
    return run


@pytest.fixture(scope="module", autouse=True)
def skew_backend():
    from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend

    register_backend(_where_skew, name=SKEW)
    yield
    _COMPILER_FNS.pop(SKEW, None)


@pytest.fixture()
def net(tmp_path, monkeypatch):
    pkg = tmp_path / "bpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "net.py").write_text(NET)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "bpkg" or m.startswith("bpkg.")]:
        monkeypatch.delitem(sys.modules, name)   # each test imports its own copy
    import bpkg.net
    yield bpkg.net.Net(), RepoPaths(str(tmp_path))


def _prove(model, paths, backend: str, safe: bool = False) -> dict:
    torch.manual_seed(0)
    case = CaseInputs(shape={"batch": 2}, args=(torch.randn(2, 4),), kwargs={})
    with torch.no_grad():
        torch.manual_seed(0)
        head_out = model(*case.args)
    head = measure_state(model, [case], [head_out], {}, {}, paths, ["breaks"])
    cand = Candidate(code="PTC201", path="bpkg/net.py", start_line=BRANCH, end_line=BRANCH + 1,
                     lines=("        h = torch.where(h.sum() > 0, h * 2, h)",), title="where",
                     safe=False)
    target = {"kind": "break", "path": "bpkg/net.py", "line": BRANCH, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    return prove_candidate(
        {"path": cand.path, "start_line": cand.start_line, "end_line": cand.end_line,
         "lines": list(cand.lines), "original": NET, "patched": apply_candidate(NET, cand),
         "guards": [], "safe": safe, "targets": [target]},
        model, [case], [head_out], head, {}, {"backend": backend}, paths, ["breaks"], None, {})


def test_a_rewrite_that_differs_under_the_configured_backend_is_rejected(net):
    model, paths = net
    assert _prove(model, paths, "eager")["accepted"] is True
    verdict = _prove(model, paths, SKEW)
    assert verdict["accepted"] is False
    assert verdict["reason"].startswith(
        f"outputs differ from head's eager outputs under {SKEW} (")


def test_a_candidate_safe_by_construction_is_not_compiled_again(net):
    """Safe means eager-identical by construction (a print kept in eager only): the graph's
    operations are head's, so the backend has nothing new to compute differently."""
    model, paths = net
    verdict = _prove(model, paths, SKEW, safe=True)
    assert verdict["accepted"] is True
    assert "under" not in verdict["evidence"]


def test_an_accepted_rewrite_says_it_was_compared_under_inductor(net):
    model, paths = net
    verdict = _prove(model, paths, "inductor")
    assert verdict["accepted"] is True, verdict
    assert "outputs equal on 1 shape case" in verdict["evidence"]
    assert verdict["evidence"].endswith(", equal under inductor on 1 case")


def test_backend_check_skips_the_backends_that_run_eagers_kernels(net):
    model, paths = net
    case = CaseInputs(shape={"batch": 2}, args=(torch.randn(2, 4),), kwargs={})
    with torch.no_grad():
        out = model(*case.args)
    assert backend_check(model, case, out, paths, {"backend": "aot_eager"}, None) is None
    row = backend_check(model, case, out, paths, {"backend": "no_such_backend"}, None)
    assert row["match"] is False and "no_such_backend" in row["message"]


HEAD = {"graph_count": 2, "phase_errors": {},
        "breaks": [{"gb": "GB0170", "gb_type": "Data-dependent branching", "path": "p.py",
                    "line": 12}]}
CAND = {"graph_count": 1, "phase_errors": {}, "breaks": [],
        "outputs": [{"shape": {"batch": 2}, "match": True}]}
TARGET = {"kind": "break", "path": "p.py", "line": 12, "gb": "GB0170"}
EDIT = Edit(path="p.py", start_line=12, end_line=13, new_lines=1)


@pytest.mark.parametrize("row, verdict", [
    ({"backend": "inductor", "match": True}, (True, "equal under inductor on 1 case")),
    ({"backend": "inductor", "match": False, "max_abs_err": 0.5, "head_match": True},
     (False, "outputs differ from head's eager outputs under inductor (max abs error 0.5)")),
    ({"backend": "inductor", "match": False, "max_abs_err": 0.5, "head_match": False},
     (True, "not compared under inductor: head's own outputs differ there")),
])
def test_judge_reads_the_backend_row(row, verdict):
    got = judge(HEAD, {**CAND, "backend": row}, [TARGET], EDIT)
    accepted, text = verdict
    assert got["accepted"] is accepted
    assert text in (got["evidence"] if accepted else got["reason"])
