"""Ground truth, no pt2bot code: pt2bot's paste-ready shape advice for the tiny autoencoder, pasted:
export with {'x': {0: Dim('batch'), 3: Dim('width', min=4)}}, then torch.compile(dynamic=True) and
mark_dynamic(x, 3) over the 4 shape cases. usage: python gt_ae_advice.py SRC"""
import sys, os
src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch, torch._dynamo
torch.set_num_threads(1)
torch._logging.set_logs(recompiles=True, graph_breaks=True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gt_dynamo_common import build, cases
from torch.export import Dim
from torch._dynamo.utils import counters
m = build("ae"); allc = list(cases("ae")); args = (allc[0][1]["x"],)
# --- pasted verbatim from pt2bot's summary (rev4/summary.md and run0's shape_advice.code.python)
batch = Dim('batch')
width = Dim('width', min=4)
dynamic_shapes = {'x': {0: batch, 3: width}}
# args, kwargs: example inputs with every dynamic dim at least 2 (torch specialises a size of 1)
try:
    ep = torch.export.export(m, args, {}, dynamic_shapes=dynamic_shapes)
    print("EXPORT OK")
    for shape, inp in allc:
        with torch.no_grad():
            print(shape, "exported==eager", torch.allclose(ep.module()(**inp), m(**inp), atol=1e-5))
except Exception as e:
    print("EXPORT FAILED:", type(e).__name__, str(e)[:1200])
for label, how in [("dynamic=True", "dyn"), ("mark_dynamic(x,0) and (x,3)", "mark")]:
    torch._dynamo.reset(); counters.clear()
    cm = torch.compile(m, backend="eager", dynamic=True if how == "dyn" else None)
    try:
        for shape, inp in allc:
            x = inp["x"].clone()
            if how == "mark":
                torch._dynamo.mark_dynamic(x, 0); torch._dynamo.mark_dynamic(x, 3)
            with torch.no_grad():
                ok = torch.allclose(cm(x), m(x), atol=1e-5)
        print(label, "-> unique graphs", counters["stats"]["unique_graphs"], "compiled==eager on last case", ok)
    except Exception as e:
        print(label, "-> RAISED", type(e).__name__, str(e)[:600])
