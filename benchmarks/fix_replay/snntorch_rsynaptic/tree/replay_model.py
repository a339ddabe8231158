# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from snntorch._neurons.rsynaptic import RSynaptic


class Replay(nn.Module):
    """A recurrent second-order LIF neuron (all-to-all recurrent weights) over 3 time steps, its
    states passed explicitly and started at zero in each call."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.lif = RSynaptic(alpha=0.9, beta=0.8, linear_features=6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spk = syn = mem = x.new_zeros(x.shape[0], 6)
        spk_rec = []
        for step in range(x.shape[1]):
            spk, syn, mem = self.lif(self.fc(x[:, step]), spk, syn, mem)
            spk_rec.append(spk)
        return torch.stack(spk_rec) + mem.sum()
