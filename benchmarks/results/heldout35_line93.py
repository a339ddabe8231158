"""Head's side alone on st-moe-pytorch:sm_moe_eval (no pt2bot code): which break is logged at
st_moe_pytorch.py:93 and 94, on which compile id, over the spec's two cases and a third size."""
import sys, torch
sys.path.insert(0, "benchmarks/real_code")
import models
torch.manual_seed(0)
sp = models.by_key()["st-moe-pytorch:sm_moe_eval"]
model, cases = sp.build()
comp = torch.compile(model, backend="eager")
with torch.no_grad():
    for args, kw in cases + [((torch.randn(4, 10, 16),), {})]:
        comp(*args, **kw)
