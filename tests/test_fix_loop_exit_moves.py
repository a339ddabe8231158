"""An early `break` taken in eager only whose skipped iterations still move the result
(pt2bot/smoke/verify.py `_eager_only_refusal`). otloss's Sinkhorn loop breaks once its
potentials change by less than `tol`; compiled code, where the test would break the graph, runs
the loop to its end. The iterations head skips change the potentials by less than `tol` each,
so the compiled outputs stayed within the float32 tolerance of head's and the edit was posted as
verified, where the independent re-run, which compares exactly, found 19 of 400 results differ
(gradients by 1e-5). With the eager backend compiled code runs head's own kernels: any
difference on a case where head takes the exit is those iterations'. A loop whose later
iterations change nothing (the damping at its fixed point) is still verified. And an exit
whose frame dynamo still skips after the edit (a break it uncovers in the same loop) never ran
compiled at all.
"""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

DAMPED = """\
import torch
from torch import nn


class Damped(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        f = torch.zeros_like(h)
        for _ in range(60):
            f_new = 0.5 * f + h
            if (f_new - f).abs().max() <= TOL:
                break
            f = f_new
        return f
"""
LINE = 15
assert DAMPED.splitlines()[LINE - 1].strip().startswith("if (f_new - f)")
CONFIG = one_model("damped", "pkg.damped:Damped", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")


def _target() -> dict:
    return break_target("damped", "pkg/damped.py", LINE, "GB0170", "Data-dependent branching")


@pytest.mark.torch
@pytest.mark.parametrize("tol, accepted", [("1e-6", False), ("0.0", True)])
def test_a_loop_run_past_its_exit_is_refused_where_the_skipped_iterations_move_the_result(tmp_path, tol, accepted):
    src = DAMPED.replace("TOL", tol)
    root = write_repo(tmp_path / "repo", {"pkg/damped.py": src}, CONFIG)
    (c,) = offered(_target(), src, "take the early `break` in eager only")
    verdict = prove(root, "damped", [item("exit", c, src, _target())], tmp_path / "work")["exit"]
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        # at a tolerance of 0 head breaks only at the fixed point (float32's, some 25 iterations in), where another iteration
        # changes nothing: compiled code equals head's exactly
        assert "runs on past the early exit and still equals head's eager outputs" in verdict["evidence"]
    else:
        # a change of under 1e-6 per iteration: within the float32 tolerance, not head's result
        assert verdict["reason"].startswith(
            f"compiled code runs the loop on past the early exit at line {LINE + 1} and the iterations "
            "head skips change the outputs (max abs error "), verdict
        assert "on 2 shape cases where head takes the exit): within the tolerance" in verdict["reason"]


BINS = """\
import torch
from torch import nn


class Calibration(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        confidences = self.lin(x).softmax(-1).max(-1).values
        bounds = torch.linspace(0, 1, 6)
        ece = torch.zeros(())
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            mask = (confidences > lo) & (confidences <= hi)
            if mask.sum() == 0:
                continue
            ece = ece + confidences[mask].mean() * mask.float().mean()
        return ece
"""
BIN_LINE = 16
assert BINS.splitlines()[BIN_LINE - 1].strip() == "if mask.sum() == 0:"


@pytest.mark.torch
def test_an_exit_whose_frame_dynamo_still_skips_is_refused(tmp_path):
    """otloss's calibration error: the empty bin's `continue` taken in eager only removes its
    GB0170, and uncovers the masked mean's GB0036 on the next line, in the same loop: dynamo
    skips the frame again, so the edited line never runs compiled. It was verified ("GB0170
    gone, uncovers GB0036"), with 14 breaks logged before and after it."""
    root = write_repo(tmp_path / "repo", {"pkg/bins.py": BINS},
                      one_model("bins", "pkg.bins:Calibration", "[{name: x, shape: [batch, 4]}]",
                                "{batch: [8, 16]}"))
    target = break_target("bins", "pkg/bins.py", BIN_LINE, "GB0170", "Data-dependent branching")
    (c,) = offered(target, BINS, "eager only")
    verdict = prove(root, "bins", [item("skip", c, BINS, target)], tmp_path / "work")["skip"]
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"] == (
        f"the break moves to GB0036 at pkg/bins.py:{BIN_LINE + 2}, and dynamo still runs `forward`, which "
        "holds the edit, in eager: the edited code never runs compiled, so nothing compared its compiled "
        "path"), verdict
