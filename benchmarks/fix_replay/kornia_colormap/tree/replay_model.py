# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from kornia.color.colormap import apply_colormap


class _Colors:
    def __init__(self, colors: torch.Tensor) -> None:
        self.colors = colors


class Replay(nn.Module):
    """A depth map rendered with a 16-colour map, as a visualisation head would."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)
        self.register_buffer("colors", torch.rand(3, 16, generator=torch.Generator().manual_seed(0)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        depth = torch.sigmoid(self.conv(x))
        return apply_colormap(depth, _Colors(self.colors))
