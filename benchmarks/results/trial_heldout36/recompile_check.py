"""PR 1 (peak-normalise)'s head, compiled (backend "eager") and called on 12 batches of one shape
[2, 2, 2048] (uniform in [-1, 1], as pt2bot.yml draws them): how many recompiles, and on what. No
pt2bot code. TORCH_LOGS=recompiles goes to stderr."""
import importlib.util
import sys

import torch


def load(path):
    spec = importlib.util.spec_from_file_location("m", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


torch.manual_seed(0)
m = load(sys.argv[1]).AutoEQ().eval()
c = torch.compile(m, backend="eager")
counts = []
with torch.no_grad():
    for i in range(12):
        x = torch.rand(2, 2, 2048) * 2 - 1
        y = c(x)
        e = m(x)
        counts.append(torch._dynamo.utils.counters["stats"]["unique_graphs"])
        print(f"call {i}: peak_db {m.last_peak_db:.4f}, equal to eager {torch.equal(y, e)}, unique graphs so far {counts[-1]}", flush=True)
print("recompile-limit hits:", dict(torch._dynamo.utils.counters["recompile_limit"]) if "recompile_limit" in torch._dynamo.utils.counters else {})
