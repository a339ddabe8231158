"""Ground truth, no pt2bot code: the tiny AE's Decoder alone on latents that enter PR4's clamp
(|h| > 6e4 after the mid block), with NaN/inf beside them; outputs + grads saved.
usage: python gt_decoder.py SRC OUT.pt"""
import sys, os
src, out = sys.argv[1:3]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch
torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gt_dynamo_common import build
ae = build("ae"); dec = ae.decoder
res = {}
torch.manual_seed(5)
z0 = torch.randn(2, 4, 8, 8)
def mk(label):
    z = z0.clone()
    if label == "big": z *= 1e5
    if label == "big_one": z[0, 0, 0, 0] = 1e7
    if label == "big_nan": z *= 1e5; z[1, 0, 0, 0] = float("nan")
    if label == "inf_nan": z[0, 0, 0, 0] = float("inf"); z[1, 0, 0, 0] = float("nan")
    if label == "nan": z[0, 0, 0, 0] = float("nan")
    return z
for label in ["plain", "big", "big_one", "big_nan", "inf_nan", "nan"]:
    z = mk(label).requires_grad_(True)
    dec.zero_grad(set_to_none=True)
    # mid-block max, to know whether the clamp block is entered
    with torch.no_grad():
        h = dec.mid.block_2(dec.mid.attn_1(dec.mid.block_1(dec.conv_in(z))))
    o = dec(z)
    torch.manual_seed(123); w = torch.randn_like(o)
    (o.nan_to_num(0.0, 0.0, 0.0) * w).sum().backward()
    res[label] = {"out": o.detach(), "igrad": {"z": z.grad.clone()},
                  "pgrad": {n: (p.grad.clone() if p.grad is not None else None) for n, p in dec.named_parameters()}}
    print(label, "mid-block |h|.max() =", h.abs().max().item(), "-> clamp block entered:", bool(h.abs().max() > 6e4))
torch.save({("dec", k): v for k, v in res.items()}, out)
