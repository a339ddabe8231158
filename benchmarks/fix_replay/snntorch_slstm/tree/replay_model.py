# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from snntorch._neurons.slstm import SLSTM


class Replay(nn.Module):
    """A spiking LSTM cell over 3 time steps, its states passed explicitly and started at zero in
    each call (the stateless way to drive an snntorch neuron)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.lstm = SLSTM(input_size=4, hidden_size=8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        syn = mem = x.new_zeros(x.shape[0], 8)
        spk_rec = []
        for step in range(x.shape[1]):
            spk, syn, mem = self.lstm(self.fc(x[:, step]), syn, mem)
            spk_rec.append(spk)
        return torch.stack(spk_rec) + mem.sum()
