"""A guard input on which head's own run never ends (pt2bot/smoke/verify.py `GUARD_RUN_S`,
pt2bot/smoke/patch.py `GuardOverrun`). The proof injects each special value into every call of
the edited function, so a solver whose step is handed a step size of 0 or -1 on every call never
reaches its end time: torchdiffeq's adaptive step, whose `assert t0 + dt > t0` and
`assert torch.isfinite(y0).all()` the check recipe keeps in compiled code. Such an input says
nothing of the check, and the others still do (NaN in the state makes head raise): the run on it
is cut, not compared, and said with the evidence, where it used to refuse the whole candidate
for the candidate's time.
"""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

SOLVE = """\
import torch
from torch import nn


def advance(dt, y):
    assert torch.isfinite(y).all(), "non-finite values in state `y`: {}".format(y)
    return dt, y - dt * y


class Solve(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = self.proj(x)
        t, dt = torch.zeros(()), torch.full((), 0.25)
        while t < 1:
            step, y = advance(dt, y)
            t = t + step
        return y
"""
LINE = 6
CONFIG = one_model("solve", "pkg.solve:Solve", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")
TARGET = break_target("solve", "pkg/solve.py", LINE, "GB0170", "Data-dependent branching")


@pytest.mark.torch
def test_an_input_head_never_ends_on_is_cut_and_the_check_is_still_proven(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/solve.py": SOLVE}, CONFIG)
    [c] = offered(TARGET, SOLVE, "_assert_async")
    verdict = prove(root, "solve", [item("check", c, SOLVE, TARGET)], tmp_path / "work")["check"]
    assert verdict["accepted"] is True, verdict
    # NaN in `y` makes head raise: the check is exercised; a step of 0 never reaches the end
    assert "equal with inf and values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of several; " \
        "head raised on -1, NaN) and NaN injected into `dt`, `y` (one at a time), eager and " \
        "compiled" in verdict["evidence"], verdict
    # (twenty times head's own run, at least 2 s: a tiny model's run takes milliseconds)
    assert "not compared where head's own run does not end within 2 s: 0 in `dt`" \
        in verdict["evidence"], verdict
