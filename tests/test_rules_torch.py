"""Every rule is true to torch 2.13: positive fixtures break / recompile / fail export the way
the rule claims, negative fixtures compile with fullgraph=True (or export with a dynamic dim).

Runs on CPU with backend="eager" (no inductor). The GB ids each positive must show are the ones
the checker predicts for that class, so a finding's `gb` field is tested against torch too.
"""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import BY_CODE
from pt2bot.static import check_paths

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
SHAPE_CLAIMS = ("export",)


def load(path: Path):
    name = f"pt2bot_fixture_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def cases(path: Path) -> list[tuple[str, str, int, int]]:
    """(kind, name, first line, last line) of the Pos*/Neg* classes and pos_/neg_ functions."""
    tree = ast.parse(path.read_text())
    out = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            low = node.name.lower()
            if low.startswith("pos"):
                out.append(("pos", node.name, node.lineno, node.end_lineno))
            elif low.startswith("neg"):
                out.append(("neg", node.name, node.lineno, node.end_lineno))
    return out


def observed_gbs(fn, *args) -> set[str]:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    torch.compile(fn, backend="eager")(*args)
    msgs = list(counters["graph_break"]) + list(counters["unimplemented"])
    return {"GB" + n for m in msgs for n in re.findall(r"gb(\d{4})\.html", m)}


def export_ok(mod, x) -> bool:
    from torch.export import Dim

    torch._dynamo.reset()
    try:
        torch.export.export(mod, (x,), dynamic_shapes={"x": {0: Dim("b", min=2, max=64)}})
        return True
    except Exception:   # constraint violation, data-dependent error, unsupported: all a failure here
        return False


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


FILES = sorted(FIXTURES.glob("ptc*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_fixture_is_true_to_torch(path, capfd):
    code = path.stem[:6].upper()
    rule = BY_CODE[code]
    mod = load(path)
    findings = check_paths(str(FIXTURES), [path.name], StaticConfig(select=("ALL",)), jobs=1)
    found = cases(path)
    assert any(k == "pos" for k, *_ in found) and any(k == "neg" for k, *_ in found)
    x = torch.randn(8, 8)
    compiles: dict[str, list[int]] = {}
    for kind, name, first, last in found:
        obj = getattr(mod, name)
        if isinstance(obj, type):
            m = obj()
            if rule.claim == "break":
                if kind == "pos":
                    expected = {f.gb for f in findings if first <= f.line <= last and f.gb} or {rule.gb}
                    got = observed_gbs(m, x)
                    assert expected <= got, f"{name}: predicted {expected}, torch reported {got}"
                else:
                    torch._dynamo.reset()
                    torch.compile(m, backend="eager", fullgraph=True)(x)   # must not raise
            elif rule.claim in SHAPE_CLAIMS:
                assert export_ok(m, x) is (kind == "neg"), f"{name}: export ok should be {kind == 'neg'}"
                if kind == "neg" and rule.claim == "export" and code != "PTC103":
                    torch._dynamo.reset()
                    torch.compile(m, backend="eager", fullgraph=True)(x)
            else:
                pytest.fail(f"{name}: no harness for claim {rule.claim}")
        else:
            counter = Counter()
            mod.BACKEND = counter
            torch._dynamo.reset()
            if rule.claim == "recompile":
                obj([torch.randn(b, 8) for b in (2, 8, 3, 5)])
                compiles.setdefault(kind, []).append(counter.n)
            elif rule.claim == "graphs":
                obj([torch.randn(4, 8)])
                if kind == "pos":
                    assert counter.n >= 2, f"{name}: expected several graphs, got {counter.n}"
                else:
                    assert counter.n == 1, f"{name}: expected one graph, got {counter.n}"
            else:
                pytest.fail(f"{name}: no harness for claim {rule.claim}")
    if compiles:
        # the positive case compiles more often than the fixed version of the same code
        assert min(compiles["pos"]) > max(compiles["neg"]), compiles
    capfd.readouterr()
