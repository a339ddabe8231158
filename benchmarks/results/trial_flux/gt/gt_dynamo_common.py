"""build() and cases() shared by the ground-truth scripts (no pt2bot code)."""
import torch

def build(which):
    torch.manual_seed(0)
    if which == "flux":
        from flux.model import Flux, FluxParams
        m = Flux(FluxParams(in_channels=4, out_channels=4, vec_in_dim=8, context_in_dim=16, hidden_size=32,
                            mlp_ratio=2.0, num_heads=2, depth=1, depth_single_blocks=1, axes_dim=[4, 6, 6],
                            theta=10000, qkv_bias=True, guidance_embed=True))
    else:
        from flux.modules.autoencoder import AutoEncoder, AutoEncoderParams
        m = AutoEncoder(AutoEncoderParams(resolution=32, in_channels=3, ch=32, out_ch=3, ch_mult=[1, 2],
                                          num_res_blocks=1, z_channels=4, scale_factor=0.3611, shift_factor=0.1159))
    return m.eval()

def cases(which):
    if which == "flux":
        from pt2bot_inputs import flux_inputs
        for b in (2, 3):
            for s in (8, 12):
                for t in (5, 7):
                    torch.manual_seed(1)
                    yield dict(batch=b, seq=s, txt=t), flux_inputs(b, s, t)
    else:
        for b in (2, 3):
            for w in (16, 24):
                torch.manual_seed(1)
                yield dict(batch=b, width=w), {"x": torch.randn(b, 3, 16, w)}

