"""A small 3-D patch classifier for CT crops, built on unfoldNd's UnfoldNd."""
import torch
from torch import nn
from unfoldNd import UnfoldNd


class VolumePatchClassifier(nn.Module):
    """Classify single-channel volumes from their non-overlapping 3-D patches.

    forward(x): x is [batch, 1, depth, height, width] float32 intensities (HU / 1000);
    depth, height and width are multiples of `patch`. Returns logits [batch, num_classes].
    """

    def __init__(self, num_classes: int = 3, patch: int = 4, dim: int = 32):
        super().__init__()
        self.unfold = UnfoldNd(patch, stride=patch)
        self.proj = nn.Linear(patch ** 3, dim)
        self.norm = nn.LayerNorm(dim)
        self.score = nn.Linear(dim, 1)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        # window the intensities to [0, 1] over the batch (scans differ in their HU offset)
        # (hand edit: the window kept as tensors, the blank case selected at the end)
        lo, hi = x.min().detach(), x.max().detach()   # .item() gave no gradient either
        blank = (hi - lo) < 1e-6
        x = (x - lo) / torch.where(blank, torch.ones_like(hi), hi - lo)
        tokens = self.unfold(x).transpose(1, 2)          # [batch, n_patches, patch**3]
        h = self.norm(torch.relu(self.proj(tokens)))
        w = torch.softmax(self.score(h).squeeze(-1), dim=1)
        pooled = (w.unsqueeze(-1) * h).sum(1)             # attention pooling over patches
        logits = self.head(pooled)
        # a blank volume (padding crop): no patch carries information
        return torch.where(blank, torch.zeros_like(logits), logits)
