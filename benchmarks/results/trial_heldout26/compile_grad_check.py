"""The trial's base model compiled with three backends, without and with autograd (main branch).

    venv/bin/python compile_grad_check.py > compile_grad_check.log
"""
import sys, torch
sys.path.insert(0, '/tmp/trial26/repo')
from densityscore.model import FlowScorer
torch.manual_seed(0)
m = FlowScorer().eval()
x = torch.randn(2, 6)
for backend, g in [(b, g) for g in (False, True) for b in ("eager", "aot_eager", "inductor")]:
    torch._dynamo.reset()
    try:
        with torch.set_grad_enabled(g):
            out = torch.compile(m, backend=backend)(x)
        print(backend, g, "ok", torch.allclose(out, m(x)))
    except Exception as e:
        print(backend, g, "raised", type(e).__name__, str(e).split("\n")[0][:200])
