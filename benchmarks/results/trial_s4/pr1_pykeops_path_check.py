"""PR 1 (e757cef in reverse): what the changed lines do on the path pt2bot's run cannot take.
Simulates the pykeops path being available (has_pykeops=True) without pykeops: the dispatch
line is evaluated before any keops call. No pt2bot code."""
import sys, warnings; warnings.filterwarnings("ignore")
sys.path.insert(0, ".")
import torch
import models.s4.s4 as s4
torch.manual_seed(0)
m = s4.S4Block(16, d_state=8, mode="dplr", transposed=True).eval()
x = torch.randn(2, 16, 40)
print("has_pykeops as installed:", s4.has_pykeops, "-> forward OK:", tuple(m(x)[0].shape))
s4.has_pykeops = True
for name, f in [("eager", m), ("compiled (eager backend)", torch.compile(m, backend="eager"))]:
    try:
        f(x); print(name, "OK")
    except Exception as e:
        print(name, "->", type(e).__name__, str(e).splitlines()[0][:200])
