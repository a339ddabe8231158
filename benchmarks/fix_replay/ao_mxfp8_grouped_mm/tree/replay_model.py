# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from torchao.prototype.moe_training.scaled_grouped_mm import _emulated_mxfp8_scaled_grouped_mm_2d_2d


def _to_mxfp8(t: torch.Tensor, block: int = 32):
    # float8 data with a power-of-two scale per block of 32 along the last dim (the MX layout)
    blocks = t.reshape(*t.shape[:-1], t.shape[-1] // block, block)
    amax = blocks.abs().amax(-1).clamp(min=2.0 ** -100)
    scale = torch.exp2(torch.floor(torch.log2(amax / 448.0)))
    data = (blocks / scale.unsqueeze(-1)).to(torch.float8_e4m3fn).reshape(t.shape)
    return data, scale.to(torch.float8_e8m0fnu)


class Replay(nn.Module):
    """An MoE layer's weight gradient for two experts, emulated in MXFP8: the grad output (8 features)
    and the activations (64 features), each over 64 tokens, grouped at token 32 and 64."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.register_buffer("act", torch.randn(64, 64, generator=torch.Generator().manual_seed(0)))
        self.register_buffer("offs", torch.tensor([32, 64], dtype=torch.int32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        grad_out = self.proj(x).mean(0).t()  # (8 features, 64 tokens)
        a, a_scale = _to_mxfp8(grad_out)
        b, b_scale = _to_mxfp8(self.act)
        return _emulated_mxfp8_scaled_grouped_mm_2d_2d(a, a_scale, b, b_scale, offs=self.offs,
                                                       out_dtype=torch.bfloat16).float()
