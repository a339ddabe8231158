# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from gpt2.trainers.ra import GPTConfig, RAConfig, RATransformerBlock


class Replay(nn.Module):
    """A Reciprocal Attention transformer block of knlp's RA model in its routing phase (phase 2,
    as the trainer switches it once the warm-up loss has dropped): the router picks the cheap RA
    heads or the full heads for the batch from |x - E(x)|, with the token embeddings given."""

    def __init__(self) -> None:
        super().__init__()
        gpt_config = GPTConfig(block_size=16, vocab_size=64, n_layer=1, n_head=4, n_embd=16,
                               dropout=0.0, bias=True)
        ra_config = RAConfig(d_model=16, n_heads=4, block_size=16, ra_head_frac=0.25)
        self.inp = nn.Linear(16, 16)
        self.block = RATransformerBlock(gpt_config, ra_config, 0)
        self.block.phase1 = False

    def forward(self, tok_emb: torch.Tensor) -> torch.Tensor:
        return self.block(self.inp(tok_emb), tok_emb=tok_emb)
