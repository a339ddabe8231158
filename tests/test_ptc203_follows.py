"""PTC203's message against torch 2.13 (CPU, backend="eager"): one problem, one finding.

A branch on a number read from a tensor a few lines above follows from that read: under
torch.compile's default settings the read breaks the graph (PTC101/PTC102/PTC104 report it on
its line) and the branch adds no break. The branch finding names the read's line and claims only
what the branch adds once the read is captured; each claim its message makes is checked here:
where the default compile breaks, where capture_scalar_outputs=True breaks, where fullgraph=True
raises, and where non-strict and strict torch.export fail."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.smoke import graph_breaks
from pt2bot.smoke.trace import TraceCollector
from pt2bot.static import check_paths

from pymodule import load_module

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
FIXTURE = FIXTURES / "ptc203_follows_from_read.py"
POSITIVES = ["PosItemThenBranch", "PosIntThenBranch", "PosItemConvertedThenBranch", "PosBoolThenBranch",
             "PosIntegerTolistThenBranch"]
_LINE = re.compile(re.escape(FIXTURE.name) + r'(?:", line |:)(\d+)')


def _findings():
    return check_paths(str(FIXTURES), [FIXTURE.name], StaticConfig(select=("ALL",)), jobs=1)


def _span(name: str) -> tuple[int, int]:
    import ast

    node = next(n for n in ast.parse(FIXTURE.read_text()).body if isinstance(n, ast.ClassDef) and n.name == name)
    return node.lineno, node.end_lineno


def _break_lines(module, x, *, capture: bool) -> set[tuple[int, str | None]]:
    """(line in the fixture, GB id) of every graph break dynamo reports for one call."""
    torch._dynamo.reset()
    with TraceCollector() as events, torch._dynamo.config.patch(capture_scalar_outputs=capture):
        torch.compile(module, backend="eager")(x)
    out = set()
    for ev in events.artifacts("dynamo_graph_break_reason"):
        pb = graph_breaks.parse_break(ev.payload or "")
        if pb.header_file and Path(pb.header_file).name == FIXTURE.name:
            out.add((pb.header_line, pb.gb))
    return out


def _fails_at(run) -> set[int]:
    """The fixture lines the exception `run()` raises names (empty: it did not raise)."""
    torch._dynamo.reset()
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            run()
    except Exception as e:  # noqa: BLE001 - Unsupported, UserError, GuardOnDataDependentSymNode: a failure
        return {int(n) for n in _LINE.findall(str(e))} or {-1}
    return set()


def test_each_branch_names_the_read_it_follows_from_and_that_read_is_reported():
    findings = _findings()
    for name in POSITIVES:
        first, last = _span(name)
        mine = [f for f in findings if first <= f.line <= last]
        branch = [f for f in mine if f.rule == "PTC203"]
        assert len(branch) == 1, (name, mine)
        m = re.match(r"follows from the `[^`]+` at line (\d+), reported there", branch[0].message)
        assert m, branch[0].message
        root = int(m.group(1))
        assert any(f.line == root and f.rule in ("PTC101", "PTC102", "PTC104") for f in mine), (name, root, mine)


@pytest.mark.parametrize("name", POSITIVES)
def test_the_message_claims_what_torch_does(name, capfd):
    mod = load_module(FIXTURE, "pt2bot_ptc203_follows")
    cls = getattr(mod, name)
    first, last = _span(name)
    f = next(f for f in _findings() if f.rule == "PTC203" and first <= f.line <= last)
    msg, branch = f.message, f.line
    root = int(re.search(r"at line (\d+)", msg).group(1))
    x = torch.randn(4, 8)

    # default settings: the read is the break, the branch adds none
    assert "this branch adds no break of its own" in msg
    default = {line for line, _ in _break_lines(cls(), x, capture=False)}
    assert root in default and branch not in default, (default, root, branch)

    # once the read is captured, the branch is where it fails
    captured = _break_lines(cls(), x, capture=True)
    assert "breaks the graph here (GB0170" in msg or "this branch breaks the graph (GB0170" in msg, msg
    assert (branch, "GB0170") in captured and root not in {line for line, _ in captured}, captured
    assert "fullgraph=True" in msg
    assert branch in _fails_at(lambda: torch.compile(cls(), backend="eager", fullgraph=True)(x))

    non_strict = _fails_at(lambda: torch.export.export(cls(), (x,), strict=False))
    strict = _fails_at(lambda: torch.export.export(cls(), (x,), strict=True))
    conv = re.search(r"non-strict torch.export already fails at the `\w+\(\)` on line (\d+)", msg)
    if "and fullgraph=True and torch.export raise here" in msg:
        assert branch in non_strict and branch in strict, (non_strict, strict)
    elif conv:
        at = int(conv.group(1))
        assert at in non_strict and (at == branch or branch not in non_strict), (at, non_strict)
        if "strict torch.export raise here" in msg:
            assert branch in strict, strict
    else:
        assert "non-strict torch.export raises here" in msg, msg
        assert branch in non_strict, non_strict
    capfd.readouterr()


def test_the_read_alone_breaks_once_and_exports():
    """The negative: without the branch, capture_scalar_outputs=True compiles one graph and
    both exports succeed; so what the positives fail on is the branch."""
    mod = load_module(FIXTURE, "pt2bot_ptc203_follows")
    x = torch.randn(4, 8)
    assert _break_lines(mod.NegItemArithmetic(), x, capture=True) == set()
    assert _fails_at(lambda: torch.export.export(mod.NegItemArithmetic(), (x,), strict=False)) == set()
    assert _fails_at(lambda: torch.export.export(mod.NegItemArithmetic(), (x,), strict=True)) == set()
