"""PR 3 (s4d-log-dt): (a) what the verified setting capture_scalar_outputs=True leaves in
self.dt_range after a compiled call, against eager; (b) whether head recompiles on every training
step (dt is a learned parameter), with and without the setting. No pt2bot code."""
import sys, warnings; warnings.filterwarnings("ignore"); sys.path.insert(0, ".")
import torch, logging
torch.set_num_threads(1)
from pt2bot_models import S4Model
torch._dynamo.config.recompile_limit = 8
def counting():
    c = {"n": 0}
    def be(gm, ex): c["n"] += 1; return gm.forward
    return c, be
for setting in (False, True):
    torch._dynamo.reset()
    torch._dynamo.config.capture_scalar_outputs = setting
    torch.manual_seed(0); m = S4Model(1, 10, 32, 2, 0.0, True).train()
    torch.manual_seed(0); e = S4Model(1, 10, 32, 2, 0.0, True).train()
    c, be = counting(); cm = torch.compile(m, backend=be)
    x = torch.randn(2, 40, 1)
    y = cm(x); ye = e(x)
    print(f"capture_scalar_outputs={setting}: output equal {torch.equal(y, ye)}")
    for i, (lc, le) in enumerate(zip(m.s4_layers, e.s4_layers)):
        print(f"  layer {i}: compiled dt_range={lc.kernel.dt_range!r} types={[type(v).__name__ for v in lc.kernel.dt_range]}; eager dt_range={le.kernel.dt_range!r}; equal={lc.kernel.dt_range == le.kernel.dt_range}")
    d0 = m.s4_layers[0].kernel.log_dt.detach().clone()
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    for step in range(12):
        opt.zero_grad(); cm(torch.randn(2, 40, 1)).pow(2).mean().backward(); opt.step()
        if step in (0, 1, 2, 5, 11): print(f"  after training step {step+1} (same shape): graphs compiled {c['n']}; layer-0 dt_range {m.s4_layers[0].kernel.dt_range}")
