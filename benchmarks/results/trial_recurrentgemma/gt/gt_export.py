"""Ground truth, no pt2bot code: torch.export.export of a tiny model from TREE with dim 0 of
every tensor input as Dim('batch') (pt2bot.yml dynamic: [batch]), example case batch=2 and
seq=8 (decode: 1); then runs the exported program on the other shape cases.
Usage: gt_export.py TREE MODEL"""
import sys
tree, model = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree)
import torch
torch.set_num_threads(1)
from torch.export import Dim
from torch.utils._pytree import tree_map
import pt2bot_models as m
build, inputs = {
    "griffin": (m.build_griffin, m.griffin_inputs),
    "griffin_decode": (m.build_griffin, m.griffin_decode_inputs),
    "rglru": (m.build_rglru, m.rglru_inputs),
    "local_attention": (m.build_local_attention, m.attention_inputs),
}[model]
s0 = 1 if model == "griffin_decode" else 8
torch.manual_seed(0)
net = build().eval()
batch = Dim("batch")
torch.manual_seed(1)
kw = inputs(2, s0)
ds = tree_map(lambda t: {0: batch}, kw)
with torch.no_grad():
  try:
    ep = torch.export.export(net, (), kw, dynamic_shapes=ds)
    print(f"{tree.split('/')[-1]} {model}: export OK")
  except Exception as e:
    print(f"{tree.split('/')[-1]} {model}: export FAILED {type(e).__name__}: {' '.join(str(e).split())[:400]}")
    sys.exit(0)
  for b, s in ([(4, 1)] if model == "griffin_decode" else [(4, 8), (2, 12)]):
    torch.manual_seed(1); kw = inputs(b, s)
    torch.manual_seed(1); kw2 = inputs(b, s)
    try:
      out = ep.module()(**kw); ref = net(**kw2)
      print(f"  exported program on batch={b} seq={s}: runs, max|diff| vs eager {(out[0]-ref[0]).abs().max().item():.2e}")
    except Exception as e:
      print(f"  exported program on batch={b} seq={s}: raised {type(e).__name__}: {' '.join(str(e).split())[:200]}")
