"""PR 2 head (NaN check at unet.py:664): superres's recompiles, dynamo's own log. Marks as pt2bot
does (x: batch, res, res; timesteps, low_res: batch). Run from a checkout of the side to test."""
import sys, torch
torch.set_num_threads(1); sys.path.insert(0, ".")
from guided_diffusion.unet import SuperResModel
torch.manual_seed(0)
m = SuperResModel(image_size=32, in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
                  attention_resolutions=[2], channel_mult=[1, 2, 2], num_head_channels=16,
                  use_scale_shift_norm=True, resblock_updown=True).eval()
c = torch.compile(m, backend="eager")
with torch.no_grad():
    for b in (2, 4):
        for r in (16, 32):
            x = torch.randn(b, 3, r, r); t = torch.randint(0, 1000, (b,)); lr = torch.rand(b, 3, r // 4, r // 4) * 2 - 1
            for d in (0, 2, 3): torch._dynamo.mark_dynamic(x, d)
            torch._dynamo.mark_dynamic(t, 0); torch._dynamo.mark_dynamic(lr, 0)
            print(f"== case batch={b} res={r}", flush=True)
            c(x, t, low_res=lr)
