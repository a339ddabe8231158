"""A hyperdimensional (HDC) activity classifier for wearable sensor windows, built on torchhd."""
import torch
import torch.nn as nn
import torchhd
from torchhd import embeddings
from torchhd.models import Centroid


class ActivityHD(nn.Module):
    """Classifies a window of sensor features into activities.

    forward(x): x is [batch, n_features], each feature a reading scaled to [0, 1];
    returns the cosine similarity of each window to each activity's prototype, [batch, n_classes],
    and the predicted activity, [batch], -1 where no prototype is similar enough (an activity
    the classifier was not trained on).
    """

    def __init__(self, n_features: int = 16, n_classes: int = 4, dim: int = 1024, levels: int = 32,
                 reject_below: float = 0.1):
        super().__init__()
        self.reject_below = reject_below
        self.keys = embeddings.Random(n_features, dim)
        self.levels = embeddings.Level(levels, dim, low=0.0, high=1.0)
        self.centroid = Centroid(dim, n_classes)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        sample_hv = torchhd.hash_table(self.keys.weight, self.levels(x))
        return torchhd.hard_quantize(sample_hv)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        sim = self.centroid(self.encode(x))
        conf, pred = sim.max(dim=1)
        # open-set: a window unlike every known activity is "unknown" (-1), not its nearest class
        unknown = conf < self.reject_below
        pred[unknown] = -1
        return sim, pred
