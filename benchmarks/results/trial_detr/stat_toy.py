import torch
from torch import nn


class A(nn.Module):
    def forward(self, x, mask):
        if mask.any():
            x = x + 1
        if not mask.any():
            x = x + 2
        if not torch.isnan(x).any():
            x = x + 3
        n = int((~mask).sum())
        k = (~mask).sum().item()
        return x
