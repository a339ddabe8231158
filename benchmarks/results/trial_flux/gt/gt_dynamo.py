"""Ground truth, no pt2bot code: dynamo (eager backend, 1 thread) on a tiny FLUX model from a given
source tree; graph breaks and recompiles from TORCH logs + dynamo counters; outputs saved.
usage: python gt_dynamo.py SRC_DIR MODEL(flux|ae) [mark|auto] OUT.pt"""
import sys, os, logging, collections
src, which, mode, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch
torch.set_num_threads(1)
torch._logging.set_logs(graph_breaks=True, recompiles=True)
import torch._dynamo
from torch._dynamo.utils import counters

from gt_dynamo_common import build, cases
def _unused_build(which):
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

def _unused_cases(which):
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

DYN = {"flux": {"img": (0, 1), "img_ids": (0, 1), "txt": (0, 1), "txt_ids": (0, 1), "timesteps": (0,), "y": (0,), "guidance": (0,)},
       "ae": {"x": (0,)}}
m = build(which)
torch._dynamo.reset()
cm = torch.compile(m, backend="eager")
res = []
for shape, inp in cases(which):
    if mode in ("mark", "weak"):
        for k, dims in DYN[which].items():
            if k in inp:
                for d in dims:
                    (torch._dynamo.mark_dynamic if mode == "mark" else torch._dynamo.maybe_mark_dynamic)(inp[k], d)
    with torch.no_grad():
        e = m(**inp)
        before = sum(counters["stats"].values()) if False else counters["stats"]["unique_graphs"]
        c = cm(**inp)
    print(f"CASE {shape}: eager==compiled {torch.equal(e, c)} maxabs {(e - c).abs().max().item():.3g}", flush=True)
    res.append((shape, e))
print("COUNTERS graph_break:", dict(counters["graph_break"]))
print("COUNTERS unique_graphs:", counters["stats"]["unique_graphs"], "calls_captured:", counters["stats"]["calls_captured"])
print("COUNTERS recompiles:", dict(counters["recompiles"]) if "recompiles" in counters else "n/a")
torch.save(res, out)
