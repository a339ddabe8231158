# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from dataclasses import dataclass
from types import SimpleNamespace

from tools.llama.generate import decode_one_token


@dataclass
class _Logits:
    token_logits: torch.Tensor
    codebook_logits: torch.Tensor


class Replay(nn.Module):
    """One decoding step of fish-speech's text-to-semantic model as decode_one_token runs it: a
    stand-in decoder (one linear layer) gives the token logits (a 32,400-token vocabulary, semantic
    tokens above 32,311) and two codebooks' logits at the last position; the step samples a token and
    each codebook (top-k 10), and maps the first codebook from the sampled token."""

    def __init__(self) -> None:
        super().__init__()
        self.config = SimpleNamespace(num_codebooks=2)
        self.proj = nn.Linear(8, 8)
        self.token_head = nn.Linear(8, 32400)
        self.codebook_head = nn.Linear(8, 2 * 16)

    def forward_generate(self, x: torch.Tensor, input_pos: torch.Tensor) -> _Logits:
        h = torch.tanh(self.proj(x))[:, -1:]
        return _Logits(self.token_head(h), self.codebook_head(h).unflatten(-1, (2, 16)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        input_pos = torch.tensor([x.shape[1] - 1])
        return decode_one_token(self, x, input_pos, top_k=10)
