# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from kornia.augmentation._2d.intensity.color_jitter import ColorJitter


class Replay(nn.Module):
    """ColorJitter's transform with the factors an image head predicts (in the generator's ranges)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.jitter = ColorJitter(order=(2, 0, 3, 1))
        self.register_buffer("order", torch.tensor([2, 0, 3, 1]))  # the generator's random order

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        img = torch.sigmoid(self.conv(x))
        m = img.mean((1, 2, 3))
        params = {"brightness_factor": (m - 0.5) * 0.2, "contrast_factor": 0.8 + 0.4 * m,
                  "saturation_factor": torch.ones_like(m), "hue_factor": (m - 0.5) * 0.1,
                  "order": self.order}
        return self.jitter(img, params)
