"""A small image denoiser trained with a pixel loss plus the focal frequency loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from focal_frequency_loss import FocalFrequencyLoss


class ResBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(F.relu(self.conv1(x)))


class Denoiser(nn.Module):
    """Predicts the noise of a noisy RGB image; forward returns the clean estimate and the loss."""

    def __init__(self, channels: int = 3, width: int = 32, blocks: int = 2, ffl_weight: float = 1.0):
        super().__init__()
        self.head = nn.Conv2d(channels, width, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(width) for _ in range(blocks)])
        self.tail = nn.Conv2d(width, channels, 3, padding=1)
        self.ffl = FocalFrequencyLoss(loss_weight=ffl_weight, alpha=1.0)

    def forward(self, noisy, clean):
        out = noisy - self.tail(self.body(F.relu(self.head(noisy))))
        pix = F.l1_loss(out, clean)
        freq = self.ffl(out, clean)
        return out, pix + freq
