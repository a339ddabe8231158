# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from torchmultimodal.modules.layers.transformer import TransformerDecoderLayer


class Replay(nn.Module):
    """A decoder layer with cross-attention over an encoded sequence (d_model 8, 2 heads), as
    torchmultimodal's text decoders stack them."""

    def __init__(self) -> None:
        super().__init__()
        self.encode = nn.Linear(8, 8)
        self.layer = TransformerDecoderLayer(d_model=8, n_head=2, dim_feedforward=16)

    def forward(self, x: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        out, _ = self.layer(x, self.encode(memory))
        return out
