"""A tiny image classifier trained with soft labels (ready for batch-mixing augmentation)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from mixup import CutMix


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
        self.cutmix = CutMix(alpha=1.0)

    def forward(self, images: torch.Tensor, targets: torch.Tensor):
        if self.training:
            images, targets = self.cutmix(images, targets)
        logits = self.head(self.features(images).flatten(1))
        loss = -(targets * F.log_softmax(logits, dim=-1)).sum(-1).mean()
        return loss, logits
