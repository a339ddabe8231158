"""Inputs for pt2bot's smoke run of tiny FLUX models (built as sampling.prepare builds them)."""
import torch


def flux_inputs(batch: int, seq: int, txt: int, in_channels: int = 4, context_in_dim: int = 16,
                vec_in_dim: int = 8, guidance: bool = True):
    # img tokens laid out on a grid 4 wide, as prepare() lays out (h/2)x(w/2) latent patches
    idx = torch.arange(seq)
    img_ids = torch.zeros(batch, seq, 3)
    img_ids[..., 1] = (idx // 4).float()
    img_ids[..., 2] = (idx % 4).float()
    out = {
        "img": torch.randn(batch, seq, in_channels),
        "img_ids": img_ids,
        "txt": torch.randn(batch, txt, context_in_dim),
        "txt_ids": torch.zeros(batch, txt, 3),
        "timesteps": torch.rand(batch),
        "y": torch.randn(batch, vec_in_dim),
    }
    if guidance:
        out["guidance"] = torch.full((batch,), 3.5)
    return out


def flux_schnell_inputs(batch: int, seq: int, txt: int):
    return flux_inputs(batch, seq, txt, guidance=False)
