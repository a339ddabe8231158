"""A classifier for long-tailed labels: an MLP over pooled image features, trained with a
class-weighted cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LongTailClassifier(nn.Module):
    """x: [batch, 16] float32 pooled features; y: [batch] int64 class ids in [0, 8).

    Returns (loss, logits): the training loss and the [batch, 8] logits.
    """

    def __init__(self, num_classes: int = 8, dim: int = 16):
        super().__init__()
        self.num_classes = num_classes
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, num_classes))
        self.register_buffer("class_weight", torch.ones(num_classes))

    def forward(self, x, y):
        logits = self.net(x)
        loss = F.cross_entropy(logits, y, weight=self.class_weight)
        return loss, logits
