# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from x_moe.moe import MoEFFN


class Replay(nn.Module):
    """A pre-norm MoE feed-forward sublayer of a small language model: layer norm, then X-MoE's
    MoEFFN with top-2 routing over 4 experts run as one batched (stacked-weight) computation, as
    X-MoE's transformer wrapper builds it with `batched_experts=True`, and the residual."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.moe = MoEFFN(dim=16, num_experts=4, expert_top_k=2, batched_experts=True,
                          max_seq_len=8, max_batch_size=4, zero_init_output=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.moe(self.norm(x))
