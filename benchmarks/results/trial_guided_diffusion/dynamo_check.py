"""Check pt2bot's run against dynamo, no pt2bot code. Usage (from the guided-diffusion root):
TORCH_LOGS=graph_breaks,recompiles python dynamo_check.py MODEL [mark]
Eager backend, one thread, the configured cases in pt2bot.yml's order (batch outer, res inner),
mark_dynamic on the dims pt2bot.yml declares dynamic when `mark` is given; then torch.export
with those dims dynamic, compared with eager on an unseen case."""
import sys, torch
from torch.export import Dim
torch.set_num_threads(1)
sys.path.insert(0, ".")
from guided_diffusion.unet import UNetModel, SuperResModel, EncoderUNetModel

M = {
 "unet_cond": (UNetModel, dict(image_size=32, in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
               attention_resolutions=[2], channel_mult=[1, 2, 2], num_classes=10, num_head_channels=16), [16, 32], True),
 "unet_ss": (UNetModel, dict(image_size=32, in_channels=3, model_channels=64, out_channels=6, num_res_blocks=1,
             attention_resolutions=[2], channel_mult=[0.5, 1, 2], num_heads=2, use_scale_shift_norm=True,
             resblock_updown=True, use_new_attention_order=True), [16, 32], False),
 "classifier_attnpool": (EncoderUNetModel, dict(image_size=32, in_channels=3, model_channels=32, out_channels=10,
             num_res_blocks=1, attention_resolutions=[2], channel_mult=[1, 2, 2], num_head_channels=16,
             use_scale_shift_norm=True, resblock_updown=True, pool="attention"), [32], False),
 "classifier_adaptive": (EncoderUNetModel, dict(image_size=32, in_channels=3, model_channels=32, out_channels=10,
             num_res_blocks=1, attention_resolutions=[2], channel_mult=[1, 2, 2], num_head_channels=16,
             pool="adaptive"), [16, 32], False),
 "superres": (SuperResModel, dict(image_size=32, in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
             attention_resolutions=[2], channel_mult=[1, 2, 2], num_head_channels=16, use_scale_shift_norm=True,
             resblock_updown=True), [16, 32], False),
}

def inputs(name, b, r, seed=0):
    g = torch.Generator().manual_seed(seed + 100 * b + r)
    args = [torch.randn(b, 3, r, r, generator=g), torch.randint(0, 1000, (b,), generator=g)]
    kw = {}
    if name == "unet_cond":
        args.append(torch.randint(0, 10, (b,), generator=g))
    if name == "superres":
        kw["low_res"] = torch.rand(b, 3, r // 4, r // 4, generator=g) * 2 - 1
    return args, kw

name = sys.argv[1]; mark = len(sys.argv) > 2
cls, kw, sizes, _ = M[name]
torch.manual_seed(0)
m = cls(**kw).eval()
c = torch.compile(m, backend="eager")
dyn_res = len(sizes) > 1
with torch.no_grad():
    for b in (2, 4):
        for r in sizes:
            args, k = inputs(name, b, r)
            ts = list(args) + list(k.values())
            if mark:
                for t in ts:
                    torch._dynamo.mark_dynamic(t, 0)
                    if dyn_res and t.dim() == 4:
                        torch._dynamo.mark_dynamic(t, 2); torch._dynamo.mark_dynamic(t, 3)
            out = c(*args, **k); ref = m(*args, **k)
            print(f"case batch={b} res={r}: out {tuple(out.shape)} max|out| {out.abs().max().item():.3g} "
                  f"equal to eager: {torch.equal(out, ref)}", flush=True)
    # export, dims dynamic
    B = Dim("batch", min=2, max=64)
    args, k = inputs(name, 2, sizes[-1])
    if dyn_res:
        R = 4 * Dim("r4", min=2, max=64)
        ds4 = {0: B, 2: R, 3: R}
    else:
        ds4 = {0: B}
    spec = {"x": ds4, "timesteps": {0: B}}
    if name == "unet_cond":
        spec["y"] = {0: B}
    if name == "superres":
        spec["low_res"] = {0: B, 2: Dim("lr", min=1, max=64), 3: Dim("lr", min=1, max=64)} if dyn_res else {0: B}
    try:
        ep = torch.export.export(m, tuple(args), k, dynamic_shapes=spec)
        a2, k2 = inputs(name, 3, sizes[0], seed=5)
        print("export OK; equal to eager on batch=3 res=%d: %s" % (sizes[0], torch.allclose(ep.module()(*a2, **k2), m(*a2, **k2), atol=1e-5)))
    except Exception as e:
        print("export FAILED:", type(e).__name__, str(e).splitlines()[0][:400])
