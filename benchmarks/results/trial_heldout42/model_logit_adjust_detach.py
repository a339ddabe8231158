"""A classifier for long-tailed labels: an MLP over pooled image features, trained with a
logit-adjusted cross-entropy (Menon et al.: the log of the classes' running prior added to the
logits), the class counts kept as the Seesaw loss keeps them."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LongTailClassifier(nn.Module):
    """x: [batch, 16] float32 pooled features; y: [batch] int64 class ids in [0, 8).

    Returns (loss, logits): the training loss and the [batch, 8] logits.
    """

    def __init__(self, num_classes: int = 8, dim: int = 16, tau: float = 1.0):
        super().__init__()
        self.num_classes = num_classes
        self.tau = tau
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, num_classes))
        self.register_buffer("class_weight", torch.ones(num_classes))
        self.register_buffer("counts", torch.zeros(num_classes))

    def forward(self, x, y):
        logits = self.net(x)
        # running class counts (as seesawloss accumulates them)
        for c in y.unique():
            self.counts[c] += (y == c.detach()).sum()
        prior = (self.counts + 1.0) / (self.counts.sum() + self.num_classes)
        adjusted = logits + self.tau * torch.log(prior)
        loss = F.cross_entropy(adjusted, y, weight=self.class_weight)
        return loss, logits
