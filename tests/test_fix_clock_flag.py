"""A clock read for a verbose print (pt2bot/rules/host_nondeterminism.py
`_timed_when_told_fixes`): tntorch's rounding and CP-ALS time each step with `start =
time.time()` and print it only `if verbose:`. The clock breaks the graph (GB0007) whether or
not anything is printed; read under the same flag, it is never read with the flag off, and
dynamo folds the flag. The edit texts and what gets none, then the proof loop.
"""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

MODEL = """\
import time

import torch
from torch import nn


def svd_step(m, verbose=False):
    start = time.time()
    u = torch.tanh(m) * 2
    if verbose:
        print("Time (SVD):", time.time() - start)
    start = time.time()
    v = u.cumsum(-1)
    if verbose:
        print("Time (sum):", time.time() - start)
    return v


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return svd_step(self.proj(x))
"""
LINE = 8
CONFIG = one_model("step", "pkg.step:Step", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 5]}")


def _target(line: int = LINE) -> dict:
    return break_target("step", "pkg/step.py", line, "GB0007", "Attempted to call function marked as skipped")


def _edits(text: str, line: int = LINE) -> list:
    return offered(_target(line), text, "read the clock only under")


@pytest.mark.parametrize("line", [LINE, 12])
def test_the_clock_is_read_under_the_flag(line):
    (c,) = _edits(MODEL, line)
    assert c.lines == ("    if verbose:", "        start = time.time()") and not c.safe
    assert (c.start_line, c.end_line) == (line, line)
    assert c.title == "read the clock only under `if verbose:`, where `start` is read"


@pytest.mark.parametrize("old, new", [
    ('        print("Time (sum):", time.time() - start)\n', '        print("Time (sum):", time.time() - start)\n'
                                                              '    print(start)\n'),     # read with the flag off
    ("    if verbose:\n        print(\"Time (sum)", "    if debug:\n        print(\"Time (sum)"),  # two flags
    ("def svd_step(m, verbose=False):\n", "def svd_step(m, verbose=False):\n    verbose = verbose or m.numel() > 9\n"),
    ("def svd_step(m, verbose=False):\n", "def svd_step(m):\n    verbose = m.numel() > 9\n"),  # not a parameter
    ("    start = time.time()\n    v =", "    start = 0.0\n    v ="),               # set otherwise too
    ("    if verbose:\n        print(\"Time (SVD)", "    if not verbose:\n        pass\n    else:\n        print(\"Time (SVD)"),
])
def test_no_edit_where_a_read_is_not_under_the_one_flag(old, new):
    text = MODEL.replace(old, new)
    assert text != MODEL
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == "start = time.time()")
    assert _edits(text, line) == []


@pytest.mark.torch
def test_the_loop_verifies_it(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/step.py": MODEL}, CONFIG)
    (c,) = _edits(MODEL)
    verdict = prove(root, "step", [item("step", c, MODEL, _target())], tmp_path / "work")["step"]
    assert verdict["accepted"], verdict
    assert verdict["evidence"].startswith("GB0007 gone"), verdict
