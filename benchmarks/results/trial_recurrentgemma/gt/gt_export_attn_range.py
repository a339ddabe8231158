"""Ground truth, no pt2bot code: LocalAttentionBlock exports with seq dynamic when seq's range
excludes the window (8): Dim('seq', min=9), example seq=12; then runs seq 9, 16, 30 and 8."""
import sys; sys.path.insert(0, "/tmp/fh-rg/gt/trees/main")
import torch; torch.set_num_threads(1)
from torch.export import Dim
import pt2bot_models as m
torch.manual_seed(0); net = m.build_local_attention().eval()
batch, seq = Dim("batch"), Dim("seq", min=9)
kw = m.attention_inputs(2, 12)
ep = torch.export.export(net, (), kw, dynamic_shapes={"x": {0: batch, 1: seq}, "segment_pos": {0: batch, 1: seq}})
print("export with Dim('seq', min=9): OK")
for b, s in [(4, 9), (3, 16), (2, 30), (2, 8)]:
  kw = m.attention_inputs(b, s)
  try:
    o = ep.module()(**kw); r = net(**kw)
    print(f"  batch={b} seq={s}: max|diff| vs eager {(o[0]-r[0]).abs().max().item():.1e}")
  except Exception as e:
    print(f"  batch={b} seq={s}: raised {type(e).__name__}: {' '.join(str(e).split())[:150]}")
