"""Ground truth: mark_dynamic(x, 3, min=4) (the bound pt2bot's advice gives width) on the tiny AE, 4 cases."""
import sys, os
src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch, torch._dynamo
torch.set_num_threads(1)
torch._logging.set_logs(recompiles=True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gt_dynamo_common import build, cases
from torch._dynamo.utils import counters
m = build("ae"); allc = list(cases("ae"))
cm = torch.compile(m, backend="eager")
try:
    for shape, inp in allc:
        x = inp["x"].clone(); torch._dynamo.mark_dynamic(x, 0); torch._dynamo.mark_dynamic(x, 3, min=4)
        with torch.no_grad():
            cm(x)
    print("mark_dynamic(x,3,min=4): unique graphs", counters["stats"]["unique_graphs"])
except Exception as e:
    print("mark_dynamic(x,3,min=4) RAISED", type(e).__name__, str(e)[:800])
