"""Ground truth, no pt2bot code: dynamo (eager backend, 1 thread) on a tiny RecurrentGemma
model from TREE's pt2bot_models.py, graph_breaks and recompiles logged.
Usage: gt_dynamo.py TREE MODEL [batchdyn]
  batchdyn: mark dim 0 (batch) of every tensor input dynamic, as pt2bot.yml's `dynamic: [batch]`.
Cases: batch 2,4 x seq 8,12 (decode: seq 1), as in pt2bot.yml."""
import sys
tree, model = sys.argv[1], sys.argv[2]
dyn = "batchdyn" in sys.argv[3:]
sys.path.insert(0, tree)
import torch
torch.set_num_threads(1)
torch._logging.set_logs(graph_breaks=True, recompiles=True)
import torch._dynamo
from torch._dynamo.utils import counters
from torch.utils._pytree import tree_leaves
import pt2bot_models as m
build, inputs = {
    "griffin": (m.build_griffin, m.griffin_inputs),
    "griffin_decode": (m.build_griffin, m.griffin_decode_inputs),
    "rglru": (m.build_rglru, m.rglru_inputs),
    "local_attention": (m.build_local_attention, m.attention_inputs),
}[model]
cases = [(2, 1), (4, 1)] if model == "griffin_decode" else [(b, s) for b in (2, 4) for s in (8, 12)]
torch.manual_seed(0)
net = build().eval()
ngraphs = 0
def backend(gm, ex):
  global ngraphs; ngraphs += 1
  return gm.forward
cnet = torch.compile(net, backend=backend)
with torch.no_grad():
  for b, s in cases:
    torch.manual_seed(1)
    kw = inputs(b, s)
    if dyn:
      for t in tree_leaves(kw):
        if isinstance(t, torch.Tensor): torch._dynamo.mark_dynamic(t, 0)
    try:
      cnet(**kw)
      print(f"case batch={b} seq={s}: graphs compiled so far={ngraphs}", flush=True)
    except Exception as e:
      print(f"case batch={b} seq={s}: RAISED {type(e).__name__}: {str(e)[:300]}", flush=True)
print("graph_break counters:", dict(counters["graph_break"]) and len(counters["graph_break"]))
for k, v in counters["graph_break"].items():
  print("  break:", " ".join(k.split())[:300], "x", v)
print("total graphs compiled:", ngraphs, "| frames (unique_graphs):", counters["stats"]["unique_graphs"])
