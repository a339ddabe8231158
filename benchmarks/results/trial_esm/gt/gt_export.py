"""Ground truth for pt2bot's paste-ready export advice, no pt2bot code: export the model with the advised
dynamic_shapes, then run the exported program on sizes in and beyond the matrix and compare with eager.
usage: python gt_export.py MODEL   (esm2 | esm2_contacts | esm1b; the advice as PR3's summary.md gives it)"""
import os, sys, copy
sys.path.insert(0, os.getcwd())
import torch
torch.set_num_threads(1)
from torch.export import Dim
import pt2bot_fixtures as f
name = sys.argv[1]
build = {"esm2": f.tiny_esm2, "esm2_contacts": f.tiny_esm2, "esm1b": f.tiny_esm1b}[name]
inputs = {"esm2": f.padded_tokens, "esm2_contacts": f.unpadded_tokens_contacts, "esm1b": f.padded_tokens}[name]
torch.manual_seed(0)
model = build().eval()
ref = copy.deepcopy(model)
batch = Dim('batch')
seq = {"esm2": Dim('seq'), "esm2_contacts": Dim('seq', min=4), "esm1b": Dim('seq', max=128)}[name]
dynamic_shapes = {'tokens': {0: batch, 1: seq}}
kw = inputs(2, 16)
args = ()
if "return_contacts" in kw:
    dynamic_shapes["return_contacts"] = None
with torch.no_grad():
    ep = torch.export.export(model, args, kw, dynamic_shapes=dynamic_shapes)
print("exported:", name)
for b, s in ((2, 16), (4, 32), (3, 24), (2, 100), (5, 7)):
    kw = inputs(b, s)
    with torch.no_grad():
        try:
            o = ep.module()(**kw); r = ref(**kw)
            print(f"batch={b} seq={s}: logits equal eager: {torch.allclose(o['logits'], r['logits'], atol=1e-5)}" + (f", contacts equal: {torch.allclose(o['contacts'], r['contacts'], atol=1e-5)}" if 'contacts' in r else ""))
        except Exception as e:
            print(f"batch={b} seq={s}: {type(e).__name__}: {str(e)[:200]}")
