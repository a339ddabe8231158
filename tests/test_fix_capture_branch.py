"""The function's own branch for another graph capture, taken when compiling too
(pt2bot/rules/capture_branch_fixes.py): kornia's canny keeps its hysteresis as a `while` on the
edges' values in eager and as a `torch.while_loop` under `is_exporting()`; dynamo breaks on the
first and traces the second. The edit is that branch's header, `torch.compiler.is_compiling() or
is_exporting()`. Eager runs as before, so the proof compares compiled code with head's eager
code, outputs and gradients, on every shape case: verified where the branch computes the same,
refused where it does not (a fixed number of steps too few to converge).
"""
from __future__ import annotations

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

SPREAD = """\
import torch
from torch import nn


def spread(x, steps):
    # the running maximum along the last dim, one neighbour a step, until nothing changes
    if torch.jit.is_tracing():
        for _ in range(steps):
            x = torch.maximum(x, torch.roll(x, 1, -1) * (torch.arange(x.shape[-1]) > 0))
    else:
        old = torch.zeros_like(x) - 1
        while (old != x).any():
            old = x
            x = torch.maximum(x, torch.roll(x, 1, -1) * (torch.arange(x.shape[-1]) > 0))
    return x


class Spread(nn.Module):
    def __init__(self, steps=8):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.steps = steps

    def forward(self, x):
        return spread(self.proj(x).relu(), self.steps)
"""
LINE = 12
assert SPREAD.splitlines()[LINE - 1].strip().startswith("while ")
CONFIG = one_model("spread", "pkg.spread:Spread", "[{name: x, shape: [batch, 8]}]", "{batch: [3, 5]}",
                   extra="    kwargs: {steps: STEPS}\n")


def _target(line: int = LINE, path: str = "pkg/spread.py") -> dict:
    return break_target("spread", path, line, "GB0170", "Data-dependent branching")


def _edits(text: str, line: int = LINE, path: str = "m.py") -> list:
    return offered(_target(line, path), text, "branch when compiling too")


def test_the_capture_branch_header_asks_whether_compiling():
    (c,) = _edits(SPREAD)
    assert (c.start_line, c.end_line, c.safe) == (7, 7, False)
    assert c.lines == ("    if torch.compiler.is_compiling() or torch.jit.is_tracing():",)
    assert c.title.startswith("take the function's own `is_tracing()` branch when compiling too")
    compile(apply_candidate(SPREAD, c), "m.py", "exec")


def test_an_elif_chain_offers_each_capture_branch_outermost_first():
    chain = SPREAD.replace("    if torch.jit.is_tracing():",
                           "    if torch.onnx.is_in_onnx_export() or _XLA:\n        x = x.cummax(-1).values\n"
                           "    elif torch.jit.is_tracing():")
    cands = _edits(chain, LINE + 2)
    assert [c.lines for c in cands] == [
        ("    if torch.compiler.is_compiling() or torch.onnx.is_in_onnx_export() or _XLA:",),
        ("    elif torch.compiler.is_compiling() or torch.jit.is_tracing():",)]


def test_the_code_after_an_early_return_of_the_capture_branch():
    early = SPREAD.replace("    else:\n        old", "        return x\n    if True:\n        old")
    (c,) = _edits(early)
    assert c.lines == ("    if torch.compiler.is_compiling() or torch.jit.is_tracing():",)


@pytest.mark.parametrize("old, new", [
    ("torch.jit.is_tracing()", "torch.jit.is_tracing() and steps > 0"),           # not the test alone
    ("torch.jit.is_tracing()", "torch.jit.is_tracing() or torch.compiler.is_compiling()"),  # already
    ("torch.jit.is_tracing()", "steps > 100"),                                     # no capture predicate
    ("torch.jit.is_tracing()", "not torch.jit.is_tracing()"),                       # the eager branch's
])
def test_no_edit_where_the_branch_is_not_a_capture_branch(old, new):
    assert _edits(SPREAD.replace(old, new, 1)) == []


@pytest.mark.torch
@pytest.mark.parametrize("steps, accepted", [(8, True), (2, False)])
def test_the_loop_verifies_it_only_where_the_branch_computes_the_same(tmp_path, steps, accepted):
    root = write_repo(tmp_path / "repo", {"pkg/spread.py": SPREAD}, CONFIG.replace("STEPS", str(steps)))
    (c,) = _edits(SPREAD, path="pkg/spread.py")
    verdict = prove(root, "spread", [item("capture", c, SPREAD, _target())], tmp_path / "work")["capture"]
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        assert verdict["evidence"].startswith(
            "GB0170 gone, 1 graph instead of 3, compiled outputs equal head's eager ones on 2 shape cases, "
            "compiled gradients equal on 2 shape cases"), verdict
    else:
        # two steps carry a maximum two places along; eight values need seven
        assert verdict["reason"].startswith("compiled, the model's outputs differ from head's eager ones on "
                                            "shape case batch=3 (max abs error"), verdict


@pytest.mark.torch
def test_compiled_code_is_compared_where_no_shape_matrix_runs(tmp_path):
    """One shape case: no shape matrix compares compiled code with eager, and eager runs head's
    own code, so only the proof's compiled run shows that the branch computes something else."""
    config = CONFIG.replace("STEPS", "2").replace("{batch: [3, 5]}", "{batch: [3]}")
    root = write_repo(tmp_path / "repo", {"pkg/spread.py": SPREAD}, config)
    (c,) = _edits(SPREAD, path="pkg/spread.py")
    verdict = prove(root, "spread", [item("capture", c, SPREAD, _target())], tmp_path / "work")["capture"]
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"].startswith("compiled, the model's outputs differ from head's eager ones"), verdict
