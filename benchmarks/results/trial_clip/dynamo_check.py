"""Breaks and recompiles of the trial's CLIP models, checked with dynamo directly (no pt2bot code):
eager backend, one thread, TORCH_LOGS=graph_breaks,recompiles set by the caller; the same cases
in the same order as pt2bot.yml; MARK=1 marks the configured dynamic dims with mark_dynamic.
Then torch.export with the same dims dynamic. Usage (from the CLIP checkout):
  TORCH_LOGS=graph_breaks,recompiles python dynamo_check.py MODEL [MARK]"""
import itertools, sys, os
import torch
torch.set_num_threads(1)
import torch._dynamo as dynamo
sys.path.insert(0, os.getcwd())
import pt2bot_models as m

MODELS = {
    "clip_vit32_ctx16": (lambda: m.clip_model("vit", 32, 16), m.clip_inputs,
                         dict(batch=[1, 3], texts=[2, 5], res=[32], ctx=[16]),
                         {"image": {0: "batch"}, "text": {0: "texts"}}),
    "clip_vit64_ctx77": (lambda: m.clip_model("vit", 64, 77), m.clip_inputs,
                         dict(batch=[1, 3], texts=[2, 5], res=[64], ctx=[77]),
                         {"image": {0: "batch"}, "text": {0: "texts"}}),
    "clip_rn64_ctx16": (lambda: m.clip_model("rn", 64, 16), m.clip_inputs,
                        dict(batch=[1, 3], texts=[2, 5], res=[64], ctx=[16]),
                        {"image": {0: "batch"}, "text": {0: "texts"}}),
    "encode_image_rn64": (lambda: m.EncodeImage("rn", 64), m.image_inputs,
                          dict(batch=[1, 3, 5], res=[64]), {"image": {0: "batch"}}),
    "encode_image_vit64": (lambda: m.EncodeImage("vit", 64), m.image_inputs,
                           dict(batch=[1, 3, 5], res=[64]), {"image": {0: "batch"}}),
    "encode_text_ctx77": (lambda: m.EncodeText("vit", 16, 77), m.text_inputs,
                          dict(texts=[2, 5, 7], ctx=[77]), {"text": {0: "texts"}}),
}

name = sys.argv[1]
mark = len(sys.argv) > 2 and sys.argv[2] == "1"
build, make, shapes, dyn = MODELS[name]
torch.manual_seed(0)
model = build().eval()
cnt = {"graphs": 0}

def backend(gm, ex):
    cnt["graphs"] += 1
    return gm.forward

dynamo.reset()
cm = torch.compile(model, backend=backend)
keys = list(shapes)
for vals in itertools.product(*(shapes[k] for k in keys)):
    case = dict(zip(keys, vals))
    inp = make(**case)
    if mark:
        for arg, dims in dyn.items():
            for d in dims:
                dynamo.mark_dynamic(inp[arg], d)
    with torch.no_grad():
        out = cm(**inp)
        ref = model(**inp)
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    eq = all(torch.equal(a, b) for a, b in zip(outs, refs))
    print(f"case {case}: graphs so far {cnt['graphs']}, compiled == eager bitwise: {eq}", flush=True)
print(f"{name} mark_dynamic={mark}: {cnt['graphs']} graph(s) compiled in all")

# export with the configured dims dynamic
from torch.export import Dim, export
# example inputs from the largest case: a size-1 example specialises the dim (export then
# reports "Constraints violated (batch)", whatever min says)
case0 = dict(zip(keys, [shapes[k][-1] for k in keys]))
inp = make(**case0)
ds = {arg: {d: Dim(n, min=1, max=64) for d, n in dims.items()} for arg, dims in dyn.items()}
try:
    ep = export(model, (), inp, dynamic_shapes=ds)
    case1 = dict(zip(keys, [shapes[k][0] for k in keys]))
    inp1 = make(**case1)
    with torch.no_grad():
        a = ep.module()(**inp1); b = model(**inp1)
    a = a if isinstance(a, tuple) else (a,); b = b if isinstance(b, tuple) else (b,)
    print("export ok (dims min=1); exported == eager on", case1, ":",
          all(torch.allclose(x, y, atol=1e-5) for x, y in zip(a, b)))
except Exception as e:
    print("export failed:", type(e).__name__, str(e).splitlines()[0][:300])
