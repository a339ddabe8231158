"""A tiny image classifier trained with soft labels (ready for batch-mixing augmentation)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def cutmix(images: torch.Tensor, targets: torch.Tensor, alpha: float = 1.0):
    """CutMix with torch's generator: a box of a shuffled partner pasted, labels mixed by area."""
    b, _, h, w = images.shape
    lam = torch.distributions.Beta(alpha, alpha).sample().item()
    perm = torch.randperm(b, device=images.device)
    cut_h, cut_w = int(h * math.sqrt(1.0 - lam)), int(w * math.sqrt(1.0 - lam))
    cy = torch.randint(h, (1,)).item()
    cx = torch.randint(w, (1,)).item()
    y1, y2 = max(cy - cut_h // 2, 0), min(cy + cut_h // 2, h)
    x1, x2 = max(cx - cut_w // 2, 0), min(cx + cut_w // 2, w)
    mixed = images.clone()
    mixed[:, :, y1:y2, x1:x2] = images[perm, :, y1:y2, x1:x2]
    kept = 1.0 - (y2 - y1) * (x2 - x1) / (h * w)
    return mixed, kept * targets + (1.0 - kept) * targets[perm]


class SoftLabelClassifier(nn.Module):
    """A small conv net over 16x16 RGB images, trained with a soft-label cross-entropy.

    images: [batch, 3, 16, 16] float32 images in [0, 1].
    targets: [batch, 4] float32 soft labels (rows sum to 1; one-hot for plain labels).
    Returns (loss, logits), logits [batch, 4].
    """

    def __init__(self, num_classes: int = 4) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(2))
        self.head = nn.Linear(8 * 4, num_classes)

    def forward(self, images: torch.Tensor, targets: torch.Tensor):
        if self.training:
            images, targets = cutmix(images, targets)
        logits = self.head(self.features(images).flatten(1))
        loss = -(targets * F.log_softmax(logits, dim=-1)).sum(-1).mean()
        return loss, logits
