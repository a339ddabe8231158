"""An early return whose test reads a buffer no argument holds: `if self.n.item() == 0: return
torch.zeros_like(self.total)` (deel-torchlip's BatchLipNorm in eval mode, never updated). No
injected input can put the zero there, but every shape case takes the return: the test held
on them, and that is the guard's case. The selection was refused as "the guard's case (zeros)
cannot be reached" beside its own evidence, "the early return ... taken by head on 2 of the 2
shape cases"."""
from __future__ import annotations

import pytest

from pt2bot.findings import Finding
from pt2bot.rules import fix_candidates
from proofs import break_target, item, one_model, prove, write_repo

pytestmark = pytest.mark.torch

NORM = """\
import torch
from torch import nn


class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.zeros(()))
        self.register_buffer("total", torch.ones(8))
        self.fc = nn.Linear(8, 8)

    def _mean(self):
        if self.n.item() == 0:
            return torch.zeros_like(self.total)
        return self.total / self.n

    def forward(self, x):
        return self.fc(x) - self._mean()
"""
IF = 13


def test_an_early_return_every_case_takes_exercises_its_guard(tmp_path):
    raw = NORM.splitlines()[IF - 1]
    f = Finding(rule="PTC101", path="pkg/norm.py", line=IF, col=raw.index("self.n"), severity="error",
                message="m", source=raw.strip(), gb="GB0124")
    [where] = [c for c in fix_candidates(f, NORM) if "torch.where" in "".join(c.lines)]
    assert "zero" in where.guards
    root = write_repo(tmp_path / "repo", {"pkg/norm.py": NORM},
                      one_model("norm", "pkg.norm:Norm", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}"))
    target = break_target("norm", "pkg/norm.py", IF, "GB0124", "Unsupported Tensor.item() call")
    verdict = prove(root, "norm", [item("where", where, NORM, target)], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict
    assert f"the early return at line {IF + 1} taken by head on 2 of the 2 shape cases" in verdict["evidence"]
