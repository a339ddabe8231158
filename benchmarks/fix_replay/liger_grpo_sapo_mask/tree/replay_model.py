# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

import os
import sys

# Liger-Kernel has a src/ layout: what `pip install -e .` would put on the path
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

from liger_kernel.chunked_loss.grpo_loss import LigerFusedLinearGRPOFunction


class Replay(nn.Module):
    """A policy head's per-token log-probabilities and Liger's GRPO loss with SAPO's soft gate
    (the per-chunk loss of the fused linear + loss), against fixed old log-probabilities and
    per-sequence advantages of both signs."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(8, 16)

    def forward(self, h: torch.Tensor, ids: torch.Tensor, old: torch.Tensor, advantages: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        logps = self.head(h).log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        loss, metrics = LigerFusedLinearGRPOFunction.ppo_loss_fn(
            logps, mask, advantages, mask, old_per_token_logps=old, beta=0.0, loss_type="sapo")
        return loss


def make_inputs(batch: int):
    g = torch.Generator().manual_seed(batch)
    return {"h": torch.randn(batch, 5, 8, generator=g), "ids": torch.randint(0, 16, (batch, 5), generator=g),
            "old": torch.randn(batch, 5, generator=g) - 2,
            "advantages": torch.tensor([1.0, -1.0]).repeat(batch // 2), "mask": torch.ones(batch, 5)}
