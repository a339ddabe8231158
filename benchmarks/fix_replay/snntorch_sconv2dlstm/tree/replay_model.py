# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from snntorch._neurons.sconv2dlstm import SConv2dLSTM


class Replay(nn.Module):
    """A spiking convolutional LSTM over 3 time steps, its states passed explicitly and started at
    zero in each call (the stateless way to drive an snntorch neuron)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.lstm = SConv2dLSTM(in_channels=2, out_channels=4, kernel_size=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        syn = mem = x.new_zeros(x.shape[0], 4, x.shape[-2], x.shape[-1])
        spk_rec = []
        for step in range(x.shape[1]):
            spk, syn, mem = self.lstm(self.conv(x[:, step]), syn, mem)
            spk_rec.append(spk)
        return torch.stack(spk_rec) + mem.sum()
