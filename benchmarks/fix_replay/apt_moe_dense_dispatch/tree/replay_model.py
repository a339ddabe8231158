# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from apt.model.architectures.apt_model import MoEFFN


class Replay(nn.Module):
    """APT-Transformer's MoE feed-forward: a top-2 router over 4 SwiGLU experts and the
    always-on shared expert, as an APT layer builds it with use_moe=True; the router's aux loss
    is added to the output so that it is part of what is compared."""

    def __init__(self) -> None:
        super().__init__()
        self.moe = MoEFFN(d_model=16, dim_feedforward=32, use_moe=True, num_experts=4, top_k=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, aux = self.moe(x)
        return out + aux
