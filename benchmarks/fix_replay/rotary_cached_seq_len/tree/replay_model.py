# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from rotary_embedding_torch.rotary_embedding_torch import RotaryEmbedding


class Replay(nn.Module):
    """Self-attention with rotary embeddings on queries and keys (two heads of width 8, a cached
    rotary table of width 8), as the lucidrains transformers use RotaryEmbedding."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.out = nn.Linear(16, 16)
        self.rotary = RotaryEmbedding(dim=8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, 2, 8).permute(2, 0, 3, 1, 4)
        q = self.rotary.rotate_queries_or_keys(q)
        k = self.rotary.rotate_queries_or_keys(k)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, n, 16))
