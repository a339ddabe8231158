# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from kornia.enhance.adjust import solarize


class Replay(nn.Module):
    """Per-sample solarize thresholds and additions (1-d tensors, as RandomSolarize passes)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        img = torch.sigmoid(self.conv(x))
        m = img.mean((1, 2, 3))
        return solarize(img, thresholds=m, additions=(m - 0.5) * 0.2)
