# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from roma.mappings import unitquat_to_rotvec


class Replay(nn.Module):
    """A rotation-regression head: a unit quaternion per sample (XYZW, normalized), returned as the
    rotation vector of the shortest arc, as pose networks built on RoMa output it."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        quat = torch.nn.functional.normalize(self.head(x), dim=-1)
        return unitquat_to_rotvec(quat)
