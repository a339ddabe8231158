"""A classifier for long-tailed labels: an MLP over pooled image features, trained with the
Seesaw loss (rare classes' negative gradients damped by the classes' running counts)."""
import torch
import torch.nn as nn
from seesawloss import SeesawLoss


class LongTailClassifier(nn.Module):
    """x: [batch, 16] float32 pooled features; y: [batch] int64 class ids in [0, 8).

    Returns (loss, logits): the training loss and the [batch, 8] logits.
    """

    def __init__(self, num_classes: int = 8, dim: int = 16):
        super().__init__()
        self.num_classes = num_classes
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, num_classes))
        self.criterion = SeesawLoss(num_classes=num_classes, p=0.8, q=2.0)

    def forward(self, x, y):
        logits = self.net(x)
        loss = self.criterion(logits, y)
        return loss, logits
