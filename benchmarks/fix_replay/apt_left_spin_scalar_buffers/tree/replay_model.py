# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from apt.model.layers.left_spin_smooth import LeftSpinResidual


class Replay(nn.Module):
    """A residual sublayer of APT-Transformer with its Left-Spin smoothing step: the sublayer's
    output is added to its input scaled by a gate computed from the spike strength of the
    update and its inertial buffer angle (adaptive=False: smoothed in eval too)."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(16, 16)
        self.ff = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
        self.res = LeftSpinResidual(adaptive=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        return self.res(h, self.ff(h))
