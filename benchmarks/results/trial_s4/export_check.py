"""torch.export check with dynamic batch and seq, optional seq bounds (no pt2bot code).
usage: python export_check.py MODEL [SEQ_MIN SEQ_MAX] [EXAMPLE_SEQ]"""
import sys, importlib, warnings, itertools
warnings.filterwarnings("ignore")
import yaml, torch
from torch.export import Dim
sys.path.insert(0, ".")
name = sys.argv[1]
cfg = next(m for m in yaml.safe_load(open("pt2bot.yml"))["models"] if m["name"] == name)
mod, attr = cfg["entry"].split(":")
torch.manual_seed(0)
model = getattr(importlib.import_module(mod), attr)(**cfg.get("kwargs", {})).eval()
spec = cfg["inputs"][0]
smin = int(sys.argv[2]) if len(sys.argv) > 2 else None
smax = int(sys.argv[3]) if len(sys.argv) > 3 else None
ex_s = int(sys.argv[4]) if len(sys.argv) > 4 else 16
seq = Dim("seq", min=smin, max=smax) if smin else Dim("seq")
batch = Dim("batch")
def mk(b, s): return torch.randn(*[{"batch": b, "seq": s}.get(d, d) for d in spec["shape"]])
ds = {spec["name"]: {i: {"batch": batch, "seq": seq}[d] for i, d in enumerate(spec["shape"]) if d in ("batch", "seq")}}
try:
    ep = torch.export.export(model, (mk(2, ex_s),), dynamic_shapes=ds)
    print("EXPORT OK", ep.range_constraints)
    for b, s in itertools.product([2, 3, 5], [ex_s, 16, 31, 32, 33, 40, 64, 100]):
        if (smin and s < smin) or (smax and s > smax): continue
        x = mk(b, s)
        with torch.no_grad():
            e = model(x); p = ep.module()(x)
        e = e[0] if isinstance(e, tuple) else e; p = p[0] if isinstance(p, tuple) else p
        print(f"  batch={b} seq={s} equal={torch.equal(e, p)} maxdiff={(e-p).abs().max().item():.3g}")
except Exception as ex:
    print("EXPORT FAILED", type(ex).__name__, str(ex)[:700])
