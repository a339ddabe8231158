"""Check pt2bot's break/recompile/export claims with dynamo itself (no pt2bot code).
usage: TORCH_LOGS=graph_breaks,recompiles python dynamo_check.py MODEL MARK [BATCHES] [SEQS]
MARK 0: plain torch.compile(backend="eager"); 1: mark_dynamic on batch and seq.
Builds the model from pt2bot.yml as written (kwargs, train), one thread, seed 0."""
import sys, importlib, itertools, warnings, logging
warnings.filterwarnings("ignore")
import yaml, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
name, mark = sys.argv[1], int(sys.argv[2])
cfg = next(m for m in yaml.safe_load(open("pt2bot.yml"))["models"] if m["name"] == name)
mod, attr = cfg["entry"].split(":")
cls = getattr(importlib.import_module(mod), attr)
torch.manual_seed(0)
model = cls(**cfg.get("kwargs", {}))
model.train(bool(cfg.get("train", False)))
shapes = dict(cfg["shapes"])
if len(sys.argv) > 3: shapes["batch"] = [int(v) for v in sys.argv[3].split(",")]
if len(sys.argv) > 4: shapes["seq"] = [int(v) for v in sys.argv[4].split(",")]
spec = cfg["inputs"][0]
cnt = {"frames": 0}
def backend(gm, ex):
    cnt["frames"] += 1
    return gm.forward
torch._dynamo.reset()
cm = torch.compile(model, backend=backend)
grad = bool(cfg.get("train", False))
for b, s in itertools.product(shapes["batch"], shapes["seq"]):
    dims = {"batch": b, "seq": s}
    shape = [dims[d] if isinstance(d, str) else d for d in spec["shape"]]
    x = torch.randn(*shape)
    if mark:
        for i, d in enumerate(spec["shape"]):
            if d in ("batch", "seq"): torch._dynamo.mark_dynamic(x, i)
    with torch.set_grad_enabled(grad):
        try:
            torch.manual_seed(1); e = model(x)
            torch.manual_seed(1); c = cm(x)
            e = e[0] if isinstance(e, tuple) else e
            c = c[0] if isinstance(c, tuple) else c
            print(f"CASE batch={b} seq={s}: graphs compiled so far {cnt['frames']}, equal={torch.equal(e, c)} maxdiff={(e-c).abs().max().item():.3g}", flush=True)
        except Exception as ex:
            print(f"CASE batch={b} seq={s}: RAISED {type(ex).__name__}: {str(ex)[:400]}", flush=True)
print("TOTAL graphs compiled:", cnt["frames"])
