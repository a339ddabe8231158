# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

import os
import sys

# fairchem has a src/ layout: what `pip install -e .` would put on the path
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

from fairchem.core.models.uma.nn.embedding import ChgSpinEmbedding


class Replay(nn.Module):
    """UMA's per-system charge embedding (`rand_emb`: a learned table indexed by the integer total
    charge) added to a system feature."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 8)
        self.charge_emb = ChgSpinEmbedding("rand_emb", "charge", 8, grad=True)

    def forward(self, x: torch.Tensor, charge: torch.Tensor) -> torch.Tensor:
        return self.lin(x) + self.charge_emb(charge)


def make_inputs(batch: int):
    return {"x": torch.randn(batch, 4, generator=torch.Generator().manual_seed(batch)),
            "charge": torch.arange(batch) - 1}
