# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from pytorch3d.transforms.rotation_conversions import matrix_to_quaternion, rotation_6d_to_matrix


class Replay(nn.Module):
    """A pose head: a 6D rotation regressed from features, made a rotation matrix and then a unit
    quaternion with pytorch3d's conversions."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(8, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return matrix_to_quaternion(rotation_6d_to_matrix(self.head(x)))
