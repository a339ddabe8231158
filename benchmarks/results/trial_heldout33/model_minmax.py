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
        lo, hi = x.min().item(), x.max().item()
        if hi - lo < 1e-6:
            # a blank volume (padding crop): no patch carries information
            return torch.zeros(x.shape[0], self.head.out_features, device=x.device)
        x = (x - lo) / (hi - lo)
        tokens = self.unfold(x).transpose(1, 2)          # [batch, n_patches, patch**3]
        h = self.norm(torch.relu(self.proj(tokens)))
        w = torch.softmax(self.score(h).squeeze(-1), dim=1)
        pooled = (w.unsqueeze(-1) * h).sum(1)             # attention pooling over patches
        return self.head(pooled)
