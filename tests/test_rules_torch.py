"""Every rule is true to torch 2.13: positive fixtures break / recompile / fail export the way
the rule claims, negative fixtures compile with fullgraph=True (or export with a dynamic dim).

Runs on CPU with backend="eager" (no inductor). The GB ids each positive must show are the ones
the checker predicts for that class, so a finding's `gb` field is tested against torch too.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import BY_CODE
from pt2bot.static import check_paths

from pymodule import load_module, sibling_imports

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
SHAPE_CLAIMS = ("export",)


def load(path: Path):
    return load_module(path, "pt2bot_fixture")


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
# The torch this suite runs on: every claim is checked against it (the torch-backed tests run
# on each release in pt2bot/rules/base.py KNOWN_TORCH: `make test-torch TORCH=2.14.1`).
TORCH = torch.__version__
_RANGE = re.compile(r"#\s*torch\s*(<|>=)\s*([0-9]+\.[0-9]+(?:\.[0-9]+)?)")


def holds_here(line: str) -> bool:
    """A fixture mark's torch range (`# torch<2.14  # PTC107`): whether it holds on TORCH."""
    from pt2bot.rules.base import parse_version

    here = parse_version(TORCH)
    for op, bound in _RANGE.findall(line):
        b = parse_version(bound)
        if (here[:len(b)] < b) != (op == "<"):
            return False
    return True


def marks_here(path: Path) -> set[tuple[int, str]]:
    """The fixture's inline marks that hold on this torch."""
    out = set()
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = re.search(r"#\s*(PTC\d{3}(?:\s*,\s*PTC\d{3})*)(?:\s+when\s+`[^`]+`)?\s*$", line)
        if m and holds_here(line):
            out |= {(i, c.strip()) for c in m.group(1).split(",")}
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_findings_on_this_torch_are_the_marks_that_hold_here(path):
    """`pt2bot check` told this torch reports exactly the marks whose range includes it."""
    findings = check_paths(str(FIXTURES), [path.name], StaticConfig(select=("ALL",)), jobs=1, torch=TORCH,
                           context=sibling_imports(path))
    assert {(f.line, f.rule) for f in findings} == marks_here(path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_fixture_is_true_to_torch(path, capfd):
    code = path.stem[:6].upper()
    rule = BY_CODE[code]
    mod = load(path)
    # the claims for this torch: a positive case whose marks hold only on other releases must
    # behave as a negative here (PTC107's random.random() compiles from 2.14 on)
    findings = check_paths(str(FIXTURES), [path.name], StaticConfig(select=("ALL",)), jobs=1, torch=TORCH,
                           context=sibling_imports(path))
    found = cases(path)
    assert any(k == "pos" for k, *_ in found) and any(k == "neg" for k, *_ in found)
    lines = path.read_text().splitlines()
    x = torch.randn(8, 8)
    compiles: dict[str, list[int]] = {}
    for kind, name, first, last in found:
        obj = getattr(mod, name)
        ranged = [s for s in lines[first - 1:last] if _RANGE.search(s)]
        if kind == "pos" and ranged and not any(holds_here(s) for s in ranged):
            assert not any(first <= f.line <= last for f in findings), f"{name}: reported on torch {TORCH}"
            kind = "neg"
        if isinstance(obj, type):
            # `default_call(x)`: the module and arguments of the default call, where the class
            # needs more than `cls()` and `x`; `opt_in(x)`: those that take the path its
            # findings' conditions name (the default call must not take it)
            m, args = obj.default_call(x) if hasattr(obj, "default_call") else (obj(), (x,))
            opt_in = getattr(obj, "opt_in", None)
            if opt_in is not None:
                mine = [f for f in findings if first <= f.line <= last]
                assert kind == "pos" and mine and all(f.condition for f in mine), \
                    f"{name}: opt_in() goes with findings that all carry a condition"
            if rule.claim == "break":
                if kind == "pos" and opt_in is not None:
                    torch._dynamo.reset()
                    torch.compile(m, backend="eager", fullgraph=True)(*args)   # the default path: no break
                    expected = {f.gb for f in findings if first <= f.line <= last and f.gb} or {rule.gb}
                    om, oargs = opt_in(x)
                    got = observed_gbs(om, *oargs)
                    assert expected <= got, f"{name}: predicted {expected} on the opt-in path, torch reported {got}"
                elif kind == "pos":
                    expected = {f.gb for f in findings if first <= f.line <= last and f.gb} or {rule.gb}
                    got = observed_gbs(m, *args)
                    assert expected <= got, f"{name}: predicted {expected}, torch reported {got}"
                else:
                    torch._dynamo.reset()
                    torch.compile(m, backend="eager", fullgraph=True)(*args)   # must not raise
            elif rule.claim in SHAPE_CLAIMS:
                assert opt_in is None, f"{name}: no opt-in harness for claim {rule.claim}"
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


FULLGRAPH_RULES = [r for r in BY_CODE.values() if r.fullgraph_captures]


@pytest.mark.parametrize("rule", FULLGRAPH_RULES, ids=lambda r: r.code)
def test_fullgraph_captures_what_the_message_says(rule, capfd):
    """Where a message says `fullgraph=True` captures the break as an unbacked symbol, the
    positive case compiles with fullgraph=True on this torch; where it does not say so, it fails."""
    path = next(FIXTURES.glob(f"{rule.code.lower()}_*.py"))
    mod = load(path)
    findings = check_paths(str(FIXTURES), [path.name], StaticConfig(select=("ALL",)), jobs=1, torch=TORCH,
                           context=sibling_imports(path))
    x = torch.randn(8, 8)
    said = set()
    for kind, name, first, last in cases(path):
        obj = getattr(mod, name)
        if kind != "pos" or not isinstance(obj, type):
            continue
        # the finding may sit in a helper the case calls (outside its lines): then all of them
        mine = [f for f in findings if first <= f.line <= last] or findings
        says = any("unbacked symbol" in f.message for f in mine)
        # a class whose findings hold only on an opt-in path: that path's module and arguments
        m, args = obj.opt_in(x) if hasattr(obj, "opt_in") else \
            obj.default_call(x) if hasattr(obj, "default_call") else (obj(), (x,))
        torch._dynamo.reset()
        try:
            torch.compile(m, backend="eager", fullgraph=True)(*args)
            captured = True
        except Exception:   # Unsupported, or a guard on a data-dependent value (UserError)
            captured = False
        assert captured is says, f"{name}: the message says captured={says}, torch: {captured}"
        said.add(says)
    assert True in said
    capfd.readouterr()


# ---------------------------------------------------------------------------------------------
# conditions (a path the default call does not take) and per-branch kinds, against dynamo

GUARDED = '''\
import warnings

import torch
import torch.nn as nn


class Guarded(nn.Module):
    def __init__(self, use_tiling=False, layerdrop=0.5):
        super().__init__()
        self.use_tiling = use_tiling
        self.layerdrop = layerdrop
        self.gradient_checkpointing = False

    def forward(self, x, mask=None, **kwargs):
        if self.training and self.layerdrop > 0.0:
            print("layerdrop")
        if self.use_tiling:
            x = x * x.sum().item()
        if self.gradient_checkpointing:
            print("checkpointing")
        if x.dtype == torch.float16 and not torch.isfinite(x).all():
            x = x.clamp(-1, 1)
        if mask is not None:
            x = x[mask]
        if "old" in kwargs:
            warnings.warn("`old` is deprecated")
            print(kwargs["old"])
        if x.dim() > 4:
            raise ValueError(f"too many dims: {x.sum().item()}")
        if mask is None:
            return x + 1
        return x * x.sum().item()


m = torch.compile(Guarded())
'''


def _write_module(tmp_path, name: str, source: str):
    (tmp_path / f"{name}.py").write_text(source)
    return load(tmp_path / f"{name}.py")


def test_conditional_findings_are_off_the_default_path(tmp_path, capfd):
    """Every finding in GUARDED carries a condition, and the default call (eval, float32, no
    optional argument) compiles with fullgraph=True; taking a guarded path does break."""
    mod = _write_module(tmp_path, "guarded", GUARDED)
    findings = check_paths(str(tmp_path), ["guarded.py"], StaticConfig(select=("ALL",), conditional="keep"),
                           jobs=1, torch=TORCH)
    assert len(findings) >= 7 and all(f.condition for f in findings), \
        [(f.line, f.rule, f.condition) for f in findings]
    x = torch.randn(8, 8)
    torch._dynamo.reset()
    torch.compile(mod.Guarded().eval(), backend="eager", fullgraph=True)(x)   # must not raise
    assert observed_gbs(mod.Guarded().train(), x)                  # self.training
    assert "GB0124" in observed_gbs(mod.Guarded(use_tiling=True).eval(), x)
    assert "GB0036" in observed_gbs(lambda t: mod.Guarded().eval()(t, mask=t > 0), x)
    assert "GB0170" in observed_gbs(mod.Guarded().eval(), x.half())
    capfd.readouterr()


LEAK = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, idx=None):
        out = []
        if idx is None:
            out = x.sum(0)
            return out * 2
        for i in idx:
            out.append(x[i])
        if out:
            x = x + 1
        for o in out:
            x = x + o
        return x


class Joined(nn.Module):
    def forward(self, x: torch.Tensor, flag: bool = False):
        if flag:
            n = len(x.shape)
        else:
            n = x.sum()
        if n > 1:
            x = x + 1
        return x


m = torch.compile(Net())
j = torch.compile(Joined())
'''


def test_kinds_flow_per_branch(tmp_path, capfd):
    """`out` is a tensor only in a branch that returns; after it a list, and dynamo
    compiles the branch and loop on it; the name that is a tensor on the default path of an
    if/else (Joined) is still flagged, and does break."""
    mod = _write_module(tmp_path, "leak", LEAK)
    findings = check_paths(str(tmp_path), ["leak.py"], StaticConfig(select=("ALL",)), jobs=1, torch=TORCH)
    assert [(f.rule, f.function) for f in findings] == [("PTC201", "Joined.forward")]
    x = torch.randn(8, 8)
    torch._dynamo.reset()
    torch.compile(lambda t: mod.Net()(t, idx=[0, 1]), backend="eager", fullgraph=True)(x)
    assert "GB0170" in observed_gbs(mod.Joined(), x)
    capfd.readouterr()


# ---------------------------------------------------------------------------------------------
# claims that depend on sizes or on where the break sits, measured over several inputs

def _compiles(module, shapes, dynamic=None) -> int:
    """How many graphs dynamo builds for `module` over inputs of these shapes."""
    counter = Counter()
    torch._dynamo.reset()
    compiled = torch.compile(module, backend=counter, dynamic=dynamic)
    for s in shapes:
        compiled(torch.randn(*s))
    return counter.n


def _findings_by_case(path: Path) -> dict[str, list]:
    findings = check_paths(str(FIXTURES), [path.name], StaticConfig(select=("ALL",), conditional="keep"),
                           jobs=1, torch=TORCH)
    return {name: [f for f in findings if first <= f.line <= last] for _, name, first, last in cases(path)}


def test_range_bounded_by_a_setting_recompiles_only_below_it(capfd):
    """`range(min(h, 4))`: every size of at least 4 shares one graph (guard `h >= 4`), each
    smaller size compiles again, export needs the dim's min at least 4: the finding says so
    and carries the condition; `min` of sizes only is unrolled per size, as `range(h)`."""
    from torch.export import Dim

    path = FIXTURES / "ptc303_range_bounded.py"
    mod = load(path)
    found = _findings_by_case(path)
    big = [(b, 8) for b in (4, 6, 8, 10, 12)]
    for name in ("PosBoundedByConstant", "PosBlendBoundedByArgument", "PosBoundedName"):
        (f,) = found[name]
        assert f.condition and f.condition.endswith(("< 4", "< extent")), (name, f.condition)
        assert "smaller size recompiles" in f.message, f.message
        m = getattr(mod, name)()
        assert _compiles(m, big, dynamic=True) == 1, name
        assert _compiles(m, big + [(2, 8), (3, 8)], dynamic=True) == 3, name
        # (the blend's own `a[-extent + y]` asks one more of the dim: min=5 there)
        low = 5 if name == "PosBlendBoundedByArgument" else 4
        torch._dynamo.reset()
        torch.export.export(m, (torch.randn(8, 8),), dynamic_shapes={"x": {0: Dim("b", min=low, max=64)}})
    (f,) = found["PosMinOfSizesOnly"]
    assert f.condition is None and "every new size" in f.message
    assert _compiles(mod.PosMinOfSizesOnly(), big, dynamic=True) == len(big)
    capfd.readouterr()


def test_chunk_count_loops_compile_once_per_count(capfd):
    """`range(n // 4)` and its ceiling forms compile once per chunk count, `range(0, n, 4)`
    once per size; the closed forms the message proposes compile once over the same sizes
    (two chunks or more) and compute the same values. The message says which, not "vectorise"."""
    path = FIXTURES / "ptc303_range_chunks.py"
    mod = load(path)
    found = _findings_by_case(path)
    sizes = (8, 9, 10, 11, 13, 17, 21)
    shapes = [(n, 3) for n in sizes]
    floor_counts = len({n // 4 for n in sizes})
    ceil_counts = len({-(-n // 4) for n in sizes})
    assert floor_counts < ceil_counts < len(sizes)
    expected = {"PosChunkCount": floor_counts, "PosCeilChunkCount": ceil_counts,
                "PosNamedChunkCount": ceil_counts, "PosStepRange": len(sizes)}
    for name, n in expected.items():
        (f,) = found[name]
        assert "vectorise" not in f.message and "unfold" in f.message, f.message
        assert ("every new size" in f.message) is (name == "PosStepRange"), f.message
        assert ("each new count" in f.message) is (name != "PosStepRange"), f.message
        assert _compiles(getattr(mod, name)(), shapes, dynamic=True) == n, name
    for name in ("ClosedFormPaddedChunks", "ClosedFormUnfoldChunks"):
        assert _compiles(getattr(mod, name)(), shapes, dynamic=True) == 1, name
    for fixed, loop in (("ClosedFormPaddedChunks", "PosCeilChunkCount"), ("ClosedFormUnfoldChunks", "PosChunkCount")):
        for n in sizes:
            x = torch.randn(n, 3)
            torch.testing.assert_close(getattr(mod, fixed)()(x), getattr(mod, loop)()(x))
    capfd.readouterr()


GENERATOR_FIXTURES = ("ptc101_tensor_item_generator.py", "ptc102_tensor_tolist_generator.py",
                      "ptc104_tensor_to_scalar_generator.py")


@pytest.mark.parametrize("name", GENERATOR_FIXTURES)
def test_break_in_a_generator_expression_runs_the_whole_function_eagerly(name, capfd):
    """Where the message says dynamo gives up on the whole function, `forward` compiles no graph
    at all; where it does not (a list comprehension, the generator's first iterable), the
    break is an ordinary one: a graph before it and one after."""
    path = FIXTURES / name
    mod = load(path)
    found = _findings_by_case(path)
    said = set()
    for kind, case, _, _ in cases(path):
        if kind != "pos":
            continue
        (f,) = found[case]
        whole = "gives up on the whole function" in f.message
        graphs = _compiles(getattr(mod, case)(), [(8, 8)])
        assert (graphs == 0) is whole, f"{case}: message says whole={whole}, dynamo built {graphs} graphs"
        assert whole or graphs >= 2, case
        said.add(whole)
    assert said == {True, False}
    capfd.readouterr()


def test_masked_selection_hint_computes_the_same_value(capfd):
    """Each Fixed* class of the fixture is the static-shape form its Pos* class's message names
    and returns the same value, with fullgraph=True; `torch.where(mask, x, 0).mean()` (the hint
    before) is another number than the mean of the selected values."""
    path = FIXTURES / "ptc304_masked_reduction.py"
    mod = load(path)
    found = _findings_by_case(path)
    x = torch.randn(8, 8)
    pairs = [(n, "Fixed" + n[3:]) for _, n, _, _ in cases(path) if n.startswith("Pos")]
    assert pairs and all(hasattr(mod, fixed) for _, fixed in pairs)
    for pos, fixed in pairs:
        (f,) = found[pos]
        means = "Mean" in pos
        assert ("/ mask.sum()" in f.message) is means, f.message
        assert ("torch.where(mask, x, 0).sum()" in f.message) is ("Sum" in pos or means), f.message
        torch._dynamo.reset()
        got = torch.compile(getattr(mod, fixed)(), backend="eager", fullgraph=True)(x)
        torch.testing.assert_close(got, getattr(mod, pos)()(x))
    assert not torch.allclose(torch.where(x > 0, x, 0).mean(), x[x > 0].mean())
    capfd.readouterr()


def test_a_size_read_back_again_after_its_break_is_a_guard(capfd):
    """PTC104 flags the first use of a tensor as a size, not a second one that surely follows:
    after the first breaks, the tensor is an input of the frame dynamo resumes in, and a frame
    input used as a size is a value dynamo guards on, not a break.
    With one finding, dynamo builds two graphs (before and after the break); a second break
    would make three. Where the first use may not run, the second breaks and is flagged."""
    path = FIXTURES / "ptc104_size_argument.py"
    mod = load(path)
    found = _findings_by_case(path)
    assert len(found["PosSizeReadAgain"]) == 1
    assert _compiles(mod.PosSizeReadAgain(), [(8, 8)]) == 2
    assert len(found["PosSizeReadAgainAfterABranch"]) == 2
    assert _compiles(mod.PosSizeReadAgainAfterABranch(), [(8, 8)]) == 2   # the branch not taken
    capfd.readouterr()
