import torch
from torch import nn

from zoo.layers import FeedForward


class TinyEncoder(nn.Module):
    """Embedding + a few residual feed-forward blocks + mean pooling."""

    def __init__(self, vocab: int = 100, dim: int = 32, depth: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(FeedForward(dim, 4 * dim) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens)
        for block in self.blocks:
            h = h + block(h)
        h = self.norm(h)
        return h.mean(dim=1)
