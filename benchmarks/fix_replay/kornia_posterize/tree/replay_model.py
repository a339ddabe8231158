# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from kornia.enhance.adjust import posterize


class Replay(nn.Module):
    """An image head that posterizes its output to 4 bits (a 0-d bits tensor, as RandomPosterize passes)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.register_buffer("bits", torch.tensor(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return posterize(torch.sigmoid(self.conv(x)), self.bits)
