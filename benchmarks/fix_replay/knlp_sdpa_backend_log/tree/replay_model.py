# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from gpt2.model import Block, GPTConfig


class Replay(nn.Module):
    """One GPT-2 transformer block of knlp's baseline model (causal self-attention with SDPA,
    then the MLP), on embedded inputs, with a small head."""

    def __init__(self) -> None:
        super().__init__()
        config = GPTConfig(block_size=16, vocab_size=64, n_layer=1, n_head=2, n_embd=16,
                           dropout=0.0, bias=True)
        self.block = Block(config)
        self.head = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(x))
