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
            # Token mixing: every block now also attends over the sequence.
            h = h + torch.softmax(h @ h.transpose(1, 2) / 8.0, dim=-1) @ h
        # "Skip the norm for all-padding batches": a host sync and a graph break.
        if (tokens != 0).sum().item() > 0:
            h = self.norm(h)
        # Pool in chunks of 16 tokens: a hard-coded size that specialises seq.
        h = h.reshape(h.shape[0], -1, 16, h.shape[-1]).mean(dim=2)
        return h.mean(dim=1)
