"""Ground truth for pt2bot's shape claims (no pt2bot code).
usage: python gt_shapes.py REPO MODEL
 A) mark_dynamic on every batch/seq dim of every input tensor, nested ones (kv_caches, freqs_cis) too
 B) pt2bot's paste-ready export (its dynamic_shapes, copied from results.json)
 C) export with dynamic_shapes that also cover the nested inputs
 D) torch.compile(model, dynamic=True) over the matrix"""
import sys
repo, model = sys.argv[1], sys.argv[2]
sys.path.insert(0, repo)
import torch
torch.set_num_threads(1)
import torch._dynamo
from torch.export import Dim
import pt2bot_models as P
from gemma import config as C
AT = C.AttentionType
build, make = {"lm": (P.build_lm, P.lm_inputs), "decoder": (P.build_decoder, P.decoder_inputs)}[model]
m = build()
cases = [(b, s) for b in (2, 3) for s in (4, 8)]
n = []
def counter(gm, ex):
    n.append(1); return gm.forward

DIMS = {"input_token_ids": (0, 1), "hidden_states": (0, 1), "input_positions": (0,), "kv_write_indices": (0,),
        "kv_caches": (0,), "freqs_cis": (0,), "mask": (2,), "local_mask": (2,), "temperatures": (0,),
        "top_ps": (0,), "top_ks": (0,)}
def mark_all(inp, b, s):
    for k, v in inp.items():
        ts = []
        if isinstance(v, torch.Tensor): ts = [v]
        elif isinstance(v, list): ts = [t for pair in v for t in pair]
        elif isinstance(v, dict): ts = list(v.values())
        for t in ts:
            for d in DIMS.get(k, ()):
                torch._dynamo.mark_dynamic(t, d)

print("A) mark_dynamic on all tensors incl. nested")
torch._dynamo.reset(); cm = torch.compile(m, backend=counter)
try:
    for b, s in cases:
        inp = make(b, s); mark_all(inp, b, s)
        torch.manual_seed(0); cm(**inp)
        print(f"   batch={b} seq={s}: compiles so far {len(n)}")
except Exception as e:
    print("   raised:", type(e).__name__, str(e)[:600])

print("B) pt2bot's paste-ready export code")
seq = Dim('seq'); batch = Dim('batch')
if model == "lm":
    ds = {'input_positions': {0: seq}, 'input_token_ids': {0: batch, 1: seq}, 'local_mask': {2: seq}, 'mask': {2: seq}, 'temperatures': {0: batch}, 'top_ks': {0: batch}, 'top_ps': {0: batch}}
else:
    ds = {'hidden_states': {0: batch, 1: seq}, 'kv_write_indices': {0: seq}, 'mask': {2: seq}}
kwargs = make(2, 4)
try:
    ep = torch.export.export(m, (), kwargs, dynamic_shapes=ds)
    print("   exported OK")
except Exception as e:
    print("   raised:", type(e).__name__, str(e)[:400].replace("\n", " | "))

print("C) export with dynamic_shapes covering the nested inputs")
ds2 = {k: None for k in kwargs}
ds2.update(ds)
cache_ds = [({0: batch}, {0: batch}) for _ in kwargs["kv_caches"]]
ds2["kv_caches"] = cache_ds
if model == "decoder":
    ds2["freqs_cis"] = {AT.GLOBAL: {0: seq}, AT.LOCAL_SLIDING: {0: seq}}
try:
    ep = torch.export.export(m, (), make(2, 4), dynamic_shapes=ds2)
    print("   exported OK")
    for b, s in (cases if model == "lm" else []):
        torch.manual_seed(0); ref = m(**make(b, s))
        torch.manual_seed(0); out = ep.module()(**make(b, s))
        ref = ref if isinstance(ref, tuple) else (ref,); out = out if isinstance(out, tuple) else (out,)
        print(f"   batch={b} seq={s}: exported == eager: {all(torch.equal(x, y) for x, y in zip(ref, out))}")
except Exception as e:
    print("   raised:", type(e).__name__, str(e)[:1200].replace("\n", " | "))

print("D) torch.compile(model, dynamic=True)")
n.clear(); torch._dynamo.reset(); cm = torch.compile(m, backend=counter, dynamic=True)
for b, s in cases:
    torch.manual_seed(0); cm(**make(b, s))
    print(f"   batch={b} seq={s}: compiles so far {len(n)}")
