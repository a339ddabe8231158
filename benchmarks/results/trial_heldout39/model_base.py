"""Age-group estimation from face crops with CORAL ordinal regression (coral-pytorch)."""
import torch
from torch import nn
from coral_pytorch.dataset import proba_to_label
from coral_pytorch.layers import CoralLayer


class AgeNet(nn.Module):
    """A small CNN whose CORAL head gives rank-consistent age-group logits.

    Args:
        num_classes: number of ordered age groups.
        width: channels of the first conv block.

    forward(images):
        images: [batch, 3, size, size] float32 RGB face crops, values in [0, 1];
            size is 32 or 48.
    Returns (logits [batch, num_classes - 1], probas [batch, num_classes - 1],
    predicted age group [batch] int64).
    """

    def __init__(self, num_classes: int = 8, width: int = 8):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.coral = CoralLayer(size_in=2 * width, num_classes=num_classes)

    def forward(self, images):
        x = (images - 0.5) / 0.25
        logits = self.coral(self.features(x))
        probas = torch.sigmoid(logits)
        return logits, probas, proba_to_label(probas)
