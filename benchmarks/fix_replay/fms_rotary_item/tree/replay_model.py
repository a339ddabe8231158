# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from fms.modules.positions import RotaryEmbedding


class Replay(nn.Module):
    """Rotary position embeddings on an attention's queries and keys (2 heads of 8), with the rotation
    cache filled before the call, as LLaMA.update_cacheable_data does at this commit."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(8, 16)
        self.k = nn.Linear(8, 16)
        self.rot_emb = RotaryEmbedding(8, max_seq_len=16)
        self.rot_emb.compute_freqs_cis(torch.device("cpu"), 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q(x).view(b, s, 2, 8).transpose(1, 2)
        k = self.k(x).view(b, s, 2, 8).transpose(1, 2)
        q, k = self.rot_emb.adjusted_qk(q, k)
        return (q @ k.transpose(-1, -2)).softmax(-1)
