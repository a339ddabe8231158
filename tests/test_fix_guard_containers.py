"""Guard inputs reach a tensor inside a state tuple or a dict argument (pt2bot/smoke/patch.py
`_slots`): torchdiffeq's adaptive step unpacks `rk_state` and tests `if not
torch.isfinite(dt): dt = self.min_step`. Before, only the function's own arguments could carry
inf, none of them was a tensor, and the edit was refused with "no tensor argument ... can hold
inf"; now `rk_state.dt` carries it, the names the guarded code reads first.
"""
from __future__ import annotations

import collections

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, one_model, prove, write_repo

STEP = """\
import collections

import torch
from torch import nn

State = collections.namedtuple("State", "y, t, dt")


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("min_step", torch.tensor(0.1))

    def step(self, state):
        y, t, dt = state
        if not torch.isfinite(dt):
            dt = self.min_step
        return State(y + dt * torch.tanh(self.lin(y)), t + dt, dt)

    def forward(self, x):
        state = State(x, torch.zeros(()), x.abs().mean() * 0.1)
        for _ in range(2):
            state = self.step(state)
        return state.y
"""
LINE = 17
CONFIG = one_model("stepper", "pkg.step:Stepper", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_the_slots_reach_one_level_into_containers_and_name_each():
    import torch

    from pt2bot.smoke.patch import _slots

    State = collections.namedtuple("State", "y, dt")
    x, dt, k = torch.ones(2), torch.ones(()), torch.ones(3)
    slots = _slots((None, State(x, dt), [k, 3], {"mask": k}), {"scale": k}, ["self", "state", "coeffs", "batch"])
    labels = [s[4] for s in slots if isinstance(s[2], torch.Tensor)]
    assert labels == ["state.y", "state.dt", "coeffs[0]", "batch['mask']", "scale"]


@pytest.mark.torch
def test_the_injected_container_is_a_copy_and_the_named_field_goes_first():
    import torch

    from pt2bot.smoke.patch import Injection, Swap, injecting

    State = collections.namedtuple("State", "y, dt")
    seen = []

    class Owner:
        @staticmethod
        def step(state, batch):
            seen.append((state, batch))
            return state.dt

    state, batch = State(torch.ones(2), torch.ones(())), {"x": torch.ones(2)}
    swap = Swap(owner=Owner, name="step", original=Owner.__dict__["step"], patched=Owner.__dict__["step"],
                qualname="Owner.step")
    with injecting(swap, Injection("inf", "one", 0, prefer=("dt",))) as inj:
        Owner.step(state, batch)
    assert inj.hit and inj.argument == "state.dt"
    got_state, got_batch = seen[-1]
    assert type(got_state) is State and torch.isinf(got_state.dt) and torch.equal(got_state.y, state.y)
    assert torch.isfinite(state.dt)   # the caller's tuple is unchanged
    with injecting(swap, Injection("inf", "one", 2)) as inj:
        Owner.step(state, batch)
    assert inj.argument == "batch['x']" and torch.isinf(seen[-1][1]["x"]).any() and torch.isfinite(batch["x"]).all()


@pytest.mark.torch
def test_the_loop_exercises_a_guard_on_a_field_of_a_state_tuple(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/step.py": STEP}, CONFIG)
    where = Candidate(code="PTC201", path="pkg/step.py", start_line=LINE, end_line=LINE + 1,
                      lines=("        dt = torch.where(torch.logical_not(torch.isfinite(dt)), self.min_step, dt)",),
                      title="select with `torch.where` instead of branching", safe=False, guards=("inf",))
    # deleting the guard: equal wherever dt is finite, which every shape case's dt is
    dropped = Candidate(code="PTC201", path="pkg/step.py", start_line=LINE, end_line=LINE + 1, lines=(),
                        title="dropped", safe=False, guards=("inf",))
    target = {"kind": "break", "model": "stepper", "path": "pkg/step.py", "line": LINE, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    verdicts = prove(root, "stepper", [item("dropped", dropped, STEP, target), item("where", where, STEP, target)],
                     tmp_path / "work")
    assert verdicts["dropped"]["accepted"] is False
    assert "`state.dt`" in verdicts["dropped"]["reason"], verdicts["dropped"]
    assert verdicts["where"]["accepted"] is True, verdicts["where"]
    assert "equal with inf and NaN injected" in verdicts["where"]["evidence"], verdicts["where"]
