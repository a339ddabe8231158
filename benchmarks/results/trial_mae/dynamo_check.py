"""Check breaks, recompiles and export of the trial's MAE models with dynamo itself (no pt2bot
code). Run from the MAE checkout:
  TORCH_LOGS=graph_breaks,recompiles OMP_NUM_THREADS=1 python dynamo_check.py MODEL MARK
MODEL: a name of pt2bot.yml's models; MARK 0: plain torch.compile, 1: mark_dynamic(batch).
Every shape case eagerly and compiled (eager backend, train mode as configured, autograd on for
train models), outputs compared exactly with the same seed; then torch.export with batch dynamic.
"""
import os, sys; sys.path.insert(0, os.getcwd())
import torch, yaml, importlib, traceback
torch.set_num_threads(1)
name, mark = sys.argv[1], int(sys.argv[2])
cfg = {m["name"]: m for m in yaml.safe_load(open("pt2bot.yml"))["models"]}[name]
mod, attr = cfg["entry"].split(":")
ctor = getattr(importlib.import_module(mod), attr)
imod, iattr = cfg["inputs"]["entry"].split(":")
make = getattr(importlib.import_module(imod), iattr)
torch.manual_seed(0)
model = ctor(**cfg["kwargs"])
model.train(bool(cfg.get("train")))
grad = bool(cfg.get("train"))
cases = [dict(batch=b, height=h, width=w) for b in cfg["shapes"]["batch"]
         for h in cfg["shapes"]["height"] for w in cfg["shapes"]["width"]]
torch._dynamo.reset()
cm = torch.compile(model, backend="eager")
def flat(o):
    return [t for t in (o if isinstance(o, (tuple, list)) else [o]) if isinstance(t, torch.Tensor)]
for c in cases:
    kw = make(**c)
    if mark:
        for v in kw.values():
            torch._dynamo.mark_dynamic(v, 0)
    with torch.set_grad_enabled(grad):
        torch.manual_seed(1); e = flat(model(**kw))
        torch.manual_seed(1); g = flat(cm(**kw))
    same = all(torch.equal(a, b) or (a.isnan().any() and torch.allclose(a, b, equal_nan=True, rtol=0, atol=0)) for a, b in zip(e, g))
    print(f"case {c}: compiled == eager: {same}", flush=True)
from torch.export import Dim
for ex_case in ([cases[0], cases[-1]] if cases[0]["batch"] == 1 else [cases[0]]):
  kw = make(**ex_case)
  k = list(kw)[0]
  print(f"export with the example input {ex_case}:")
  try:
      torch.manual_seed(1)
      ep = torch.export.export(model, (), kw, dynamic_shapes={k: {0: Dim("batch")}})
      print("export batch dynamic: OK")
      for c in cases:
          kw = make(**c)
          torch.manual_seed(1); a = flat(ep.module()(**kw)); torch.manual_seed(1); b = flat(model(**kw))
          print(f"  exported {c}: equal {all(torch.equal(x, y) for x, y in zip(a, b))}")
  except Exception as ex:
      print("export batch dynamic: FAILED", type(ex).__name__, str(ex).splitlines()[0][:300])
