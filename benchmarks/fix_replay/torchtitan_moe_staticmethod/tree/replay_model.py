# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from torchtitan.models.moe import GroupedExperts


class Replay(nn.Module):
    """Two experts' SwiGLU feed-forward over tokens already grouped per expert (the bmm path:
    no token counts, equal groups)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.experts = GroupedExperts(dim=8, hidden_dim=16, num_experts=2, use_grouped_mm=False)
        self.experts.init_weights(0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = self.proj(x).reshape(2, -1, 8)
        return self.experts(tokens).reshape(x.shape)
