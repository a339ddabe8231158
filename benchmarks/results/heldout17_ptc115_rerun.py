"""An independent re-run of PTC115's edit of nflows 0.14 `transforms/nonlinearities.py:109` and `:116`
(`(inputs < 0).type(torch.Tensor)` as `.to(device="cpu", dtype=torch.get_default_dtype())`), no pt2bot
code: a copy of nflows with both lines edited by sed, and `LeakyReLU` forward (outputs, log-det, input
gradient) and inverse on 20 inputs (batch 1 to 20, float32 and float64, four slopes), eager and
compiled (eager backend), head against the copy, bit for bit with dtypes.

    mkdir -p /tmp/nfl && cp -r <site-packages>/nflows /tmp/nfl/ && sed -i 's/mask = (inputs < 0).type(torch.Tensor)/mask = (inputs < 0).to(device="cpu", dtype=torch.get_default_dtype())/' /tmp/nfl/nflows/transforms/nonlinearities.py
    python heldout17_ptc115_rerun.py 0 && python heldout17_ptc115_rerun.py 1   # then compare /tmp/nfl_0.pt and /tmp/nfl_1.pt
"""
import sys, torch, importlib
torch.manual_seed(0)
patched = sys.argv[1] == "1"
if patched: sys.path.insert(0, "/tmp/nfl")
from nflows.transforms.nonlinearities import LeakyReLU
print(LeakyReLU.__module__, sys.modules["nflows"].__file__)
out = []
g = torch.Generator().manual_seed(3)
for i in range(20):
    x = torch.randn(1 + i, 5, generator=g, dtype=torch.float64 if i % 3 == 0 else torch.float32)
    t = LeakyReLU(negative_slope=0.01 * (1 + i % 4))
    for compiled in (False, True):
        torch._dynamo.reset()
        f = torch.compile(t, backend="eager") if compiled else t
        xr = x.clone().requires_grad_(True)
        y, ld = f(xr)
        gy, = torch.autograd.grad((y.sum() + ld.sum()), xr)
        yi, ldi = (torch.compile(t.inverse, backend="eager") if compiled else t.inverse)(x)
        out.append([y.detach(), ld.detach(), gy, yi, ldi])
torch.save(out, f"/tmp/nfl_{int(patched)}.pt")
