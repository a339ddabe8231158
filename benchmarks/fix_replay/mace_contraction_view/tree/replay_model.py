# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from mace.modules.symmetric_contraction import Contraction


class Replay(nn.Module):
    """MACE's product basis for an l=1 output: node features (4 channels, 4 spherical-harmonic
    components) contracted with the U matrices and per-element weights."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.species = nn.Linear(4, 3)
        self.contraction = Contraction()

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        x = self.lin(feats)  # [nodes, channels, components]
        y = torch.softmax(self.species(feats.mean(-1)), -1)  # [nodes, elements]
        return self.contraction(x, y)
