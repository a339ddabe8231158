"""A small complex-valued classifier for radar range-Doppler maps (complextorch)."""
import torch
from torch import nn

import complextorch.nn as cvnn


class RangeDopplerNet(nn.Module):
    """Classifies gestures from complex range-Doppler maps.

    z is [batch, 2, range, doppler] complex64: the two receive channels of an FMCW radar after the
    range and Doppler FFTs; range and doppler are multiples of 4. Returns [batch, n_classes]
    real logits (the magnitude of the complex head).
    """

    def __init__(self, in_channels: int = 2, width: int = 8, n_classes: int = 5,
                 min_energy: float = 1e-6) -> None:
        super().__init__()
        self.n_classes = n_classes
        self.min_energy = min_energy
        self.conv1 = cvnn.Conv2d(in_channels, width, 3, padding=1)
        self.bn1 = cvnn.BatchNorm2d(width)
        self.act1 = cvnn.modReLU()
        self.pool = cvnn.MagMaxPool2d(2)
        self.conv2 = cvnn.Conv2d(width, 2 * width, 3, padding=1)
        self.act2 = cvnn.CReLU()
        self.head = cvnn.Linear(2 * width, n_classes)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        # an empty scene (nothing moving in range: only receiver noise) has no gesture: skip the
        # network and return zero logits for the whole batch
        def early():
            return torch.zeros(z.shape[0], self.n_classes, device=z.device)

        def rest():
            h = self.pool(self.act1(self.bn1(self.conv1(z))))
            h = self.act2(self.conv2(h))
            return self.head(h.mean(dim=(2, 3))).abs()

        return torch.cond(z.abs().pow(2).mean() < self.min_energy, early, rest, ())
