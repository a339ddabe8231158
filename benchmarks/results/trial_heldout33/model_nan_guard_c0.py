"""A small 3-D patch classifier for CT crops, built on unfoldNd's UnfoldNd."""
import warnings

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
        if not torch.compiler.is_compiling() and torch.isnan(x).any():
            warnings.warn("VolumePatchClassifier: input holds NaN voxels; they are read as 0")
        x = torch.where(torch.isnan(x).any(), torch.nan_to_num(x, nan=0.0), x)
        tokens = self.unfold(x).transpose(1, 2)          # [batch, n_patches, patch**3]
        h = self.norm(torch.relu(self.proj(tokens)))
        w = torch.softmax(self.score(h).squeeze(-1), dim=1)
        pooled = (w.unsqueeze(-1) * h).sum(1)             # attention pooling over patches
        return self.head(pooled)
