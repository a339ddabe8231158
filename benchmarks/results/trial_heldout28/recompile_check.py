"""The base model (model_base.py, no PR) compiled once (backend eager), called on 12 fresh batches
of one shape, as training steps: how many times dynamo compiles, and why (the library's
`assert weight_matrix.min().item() >= 0 ...` at focal_frequency_loss.py:84 hands a Python float to
the frame resumed after it). No pt2bot code."""
import logging
import os
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
mod = types.ModuleType("base")
exec(compile(open(os.path.join(HERE, "model_base.py")).read(), "model_base.py", "exec"), mod.__dict__)
torch.set_num_threads(1)
reasons = []


class H(logging.Handler):
    def emit(self, r):
        reasons.append(r.getMessage())


torch._logging.set_logs(recompiles=True)
logging.getLogger("torch._dynamo").addHandler(H())
torch.manual_seed(0)
m = mod.Denoiser()
fn = torch.compile(m, backend="eager")
for step in range(12):
    clean = torch.rand(4, 3, 32, 32)
    out, loss = fn(clean + 0.1 * torch.randn_like(clean), clean)
    loss.backward()
rec = [r for r in reasons if "Recompiling function" in r]
print(f"12 steps of one shape: {len(rec)} recompiles logged")
for r in rec[:10]:
    print("  " + "\n  ".join(x.rstrip()[:160] for x in r.splitlines()[:4]))
hit = [r for r in reasons if "cache_size_limit" in r or "recompile_limit" in r]
print(f"limit messages: {len(hit)}", (hit[0].splitlines()[0][:200] if hit else ""))
