"""PTC101's advice on PR 1's line 48 applied as written ("`.detach()` where `.item()` was"):
model_peaknorm_detach.py, `math.log10(peak.detach() + 1e-12)`. Does the break go? No pt2bot code."""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
torch.manual_seed(0)
model = m.AutoEQ().eval()
x = torch.rand(2, 2, 2048) * 2 - 1
with torch.no_grad():
    ex = torch._dynamo.explain(model)(x)
print(f"{sys.argv[1]}: graphs {ex.graph_count}, graph breaks {ex.graph_break_count}")
for r in ex.break_reasons:
    fr = r.user_stack[-1] if r.user_stack else None
    print("  ", r.reason.splitlines()[0][:140], f"at line {fr.lineno}: {fr.line.strip() if fr and fr.line else ''}" if fr else "")
