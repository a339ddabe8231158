"""An f-string that formats a tensor size, handed to a call that breaks the graph: what dynamo
really does on that line, and that pt2bot says it once (one comment per line, not one per rule).

Measured here, not assumed: dynamo builds the f-string before the call breaks, so the frame is
specialised on the size (one compile per size, automatic dynamic never helps), while lazy
logging arguments (`logger.info("%s", n)`) stay symbolic. PTC105/PTC106 say both facts in one
finding (`warnings.warn(f"...")` too, PTC106 since it is reported: GB0007); PTC307's export
claim for such an f-string is strict export's: non-strict `torch.export.export` keeps the dim dynamic.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

from pymodule import load_module

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
FIXTURE = "ptc106_logging_fstring_size.py"
SIZES = (8, 10, 12, 14)

OTHERS = '''\
import logging
import warnings

import torch.nn as nn

logger = logging.getLogger(__name__)


class Warns(nn.Module):
    def forward(self, x):
        y = x + 1
        warnings.warn(f"forward on {x.shape[0]} rows")
        return y * 2


class LazyLog(nn.Module):
    def forward(self, x):
        y = x + 1
        logger.info("forward on %s rows", x.shape[0])
        return y * 2
'''


def _load(path: Path):
    return load_module(path, "pt2bot_fstring")


def forward_compiles(module) -> int:
    """How often dynamo compiles `forward` itself (not its resume functions) over SIZES, default
    settings: 2 where the size stays symbolic (static, then automatic dynamic), one per size
    where it is specialised."""
    from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics

    torch._dynamo.reset()
    clear_compilation_metrics()
    compiled = torch.compile(module, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b in SIZES:
            compiled(torch.randn(b, 4))
    return sum(m.co_name == "forward" for m in get_compilation_metrics())


def test_break_calls_with_a_size_fstring_are_one_finding_that_says_both(capfd):
    mod = _load(FIXTURES / FIXTURE)
    findings = check_paths(str(FIXTURES), [FIXTURE], StaticConfig(select=("ALL",)), jobs=1)
    assert findings and not any(f.rule == "PTC307" for f in findings)
    by_line = {f.line: f for f in findings}
    assert len(by_line) == len(findings)            # one finding per line
    for name in ("PosLoggerFstringSize", "PosLoggingFstringSize", "PosPrintFstringSize"):
        cls = getattr(mod, name)
        first = cls.forward.__code__.co_firstlineno
        f = next(f for line, f in by_line.items() if line > first and f.function == f"{name}.forward")
        assert f.rule in ("PTC105", "PTC106") and "specialises it too" in f.message, f.message
        # the truth of that clause: the size is specialised (one compile per size)
        assert forward_compiles(cls()) == len(SIZES), name
    assert forward_compiles(mod.NegGuardedFstringSize()) == 2
    capfd.readouterr()


def test_lazy_logging_and_warnings_warn(tmp_path, capfd):
    (tmp_path / "others.py").write_text(OTHERS)
    mod = _load(tmp_path / "others.py")
    findings = check_paths(str(tmp_path), ["others.py"], StaticConfig(select=("ALL",)), jobs=1)
    got = {(f.function, f.rule) for f in findings}
    # warnings.warn breaks the graph (PTC106, GB0007): its finding names the size, PTC307 stands aside
    assert got == {("Warns.forward", "PTC106"), ("LazyLog.forward", "PTC106")}, got
    warns = next(f for f in findings if f.function == "Warns.forward")
    assert warns.gb == "GB0007" and "specialises it too" in warns.message, warns.message
    lazy = next(f for f in findings if f.function == "LazyLog.forward")
    assert "specialises" not in lazy.message
    assert forward_compiles(mod.Warns()) == len(SIZES)
    assert forward_compiles(mod.LazyLog()) == 2     # `%s` arguments keep the size symbolic
    # PTC307's export claim for an f-string: strict export fails, non-strict keeps the dim
    from torch.export import Dim

    shapes = {"x": {0: Dim("b", min=2, max=64)}}
    x = torch.randn(8, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch._dynamo.reset()
        torch.export.export(mod.Warns(), (x,), dynamic_shapes=shapes, strict=False)
        torch._dynamo.reset()
        with pytest.raises(Exception, match="specialized|Constraints violated"):
            torch.export.export(mod.Warns(), (x,), dynamic_shapes=shapes, strict=True)
    capfd.readouterr()
