"""A hyperdimensional (HDC) activity classifier for wearable sensor windows, built on torchhd."""
import warnings

import torch
import torch.nn as nn
import torchhd
from torchhd import embeddings
from torchhd.models import Centroid


class ActivityHD(nn.Module):
    """Classifies a window of sensor features into activities.

    forward(x): x is [batch, n_features], each feature a reading scaled to [0, 1];
    returns the cosine similarity of each window to each activity's prototype, [batch, n_classes].
    """

    def __init__(self, n_features: int = 16, n_classes: int = 4, dim: int = 1024, levels: int = 32):
        super().__init__()
        self.keys = embeddings.Random(n_features, dim)
        self.levels = embeddings.Level(levels, dim, low=0.0, high=1.0)
        self.centroid = Centroid(dim, n_classes)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        sample_hv = torchhd.hash_table(self.keys.weight, self.levels(x))
        return torchhd.hard_quantize(sample_hv)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # a miscalibrated sensor sends readings outside [0, 1]: the Level embedding would map
        # them all to its end levels silently, so say so and clip them
        if not torch.compiler.is_compiling() and ((x < 0).any() or (x > 1).any()):
            warnings.warn("ActivityHD: sensor readings outside [0, 1] were clipped; check the scaling")
        x = torch.where((x < 0).any() | (x > 1).any(), x.clamp(0.0, 1.0), x)
        return self.centroid(self.encode(x))
