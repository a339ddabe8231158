"""PR 3 (log-visible-loss): what `torch._dynamo.config.capture_scalar_outputs = True` (pt2bot's
"Verified setting") does, with no pt2bot code. From the MAE checkout on branch log-visible-loss:
  TORCH_LOGS=graph_breaks,recompiles python pr3_setting_check.py [mark]
Eager vs torch.compile(backend="eager"), the setting on; loss, pred, mask, every gradient and the
kept `last_visible_loss` (type and value) compared; mask ratios 0 .. 1; batch 2, 3, 4; then
torch.export with batch dynamic, the setting on.
"""
import os, sys; sys.path.insert(0, os.getcwd())
import torch
torch.set_num_threads(1)
torch._dynamo.config.capture_scalar_outputs = True
torch._dynamo.config.recompile_limit = 1000
from models_mae import MaskedAutoencoderViT
mark = len(sys.argv) > 1 and sys.argv[1] == "mark"
cfg = dict(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2, decoder_embed_dim=32,
           decoder_depth=1, decoder_num_heads=2, norm_pix_loss=True)
torch.manual_seed(0)
m = MaskedAutoencoderViT(**cfg).train()
cm = torch.compile(m, backend="eager")
def step(fn, x, r):
    m.zero_grad(set_to_none=True); torch.manual_seed(5)
    loss, pred, mask = fn(x, mask_ratio=r); loss.backward()
    return [loss.detach(), pred.detach(), mask], {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}, m.last_visible_loss
for r in (0.0, 0.5, 0.75, 0.95, 1.0):
    for b in (2, 3, 4):
        x = torch.randn(b, 3, 32, 32)
        if mark: torch._dynamo.mark_dynamic(x, 0)
        eo, eg, ev = step(m, x, r)
        try:
            co, cg, cv = step(cm, x, r)
        except Exception as e:
            print(f"ratio {r} batch {b}: compiled raised {type(e).__name__}: {str(e).splitlines()[0][:200]}"); continue
        outs = all(torch.equal(a, c) or (a.isnan().all() and c.isnan().all()) for a, c in zip(eo, co))
        grads = eg.keys() == cg.keys() and all(torch.equal(eg[k], cg[k]) or torch.equal(eg[k].isnan(), cg[k].isnan()) for k in eg)
        print(f"ratio {r} batch {b}: outputs equal {outs}, grads equal {grads}, last_visible_loss eager {type(ev).__name__} {ev!r} compiled {type(cv).__name__} {cv!r} equal {ev == cv}", flush=True)
from torch.export import Dim
try:
    torch.manual_seed(5)
    torch.export.export(m, (torch.randn(2, 3, 32, 32),), dynamic_shapes=({0: Dim("batch")},))
    print("export (setting on), batch dynamic: OK")
except Exception as e:
    print("export (setting on), batch dynamic: FAILED", type(e).__name__, str(e).splitlines()[0][:300])
