"""Ground truth: where torch adds the txt <= 512 guard in PR3 (fix applied), via the dynamic logs of an export."""
import sys, os, logging
src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch
torch.set_num_threads(1)
torch._logging.set_logs(dynamic=logging.INFO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gt_dynamo_common import build, cases
from torch.export import Dim
m = build("flux"); shape0, inp0 = next(iter(cases("flux")))
batch, seq, txt = Dim('batch'), Dim('seq'), Dim('txt')
ds = {'guidance': {0: batch}, 'img': {0: batch, 1: seq}, 'img_ids': {0: batch, 1: seq}, 'timesteps': {0: batch},
      'txt': {0: batch, 1: txt}, 'txt_ids': {0: batch, 1: txt}, 'y': {0: batch}}
try:
    torch.export.export(m, (), inp0, dynamic_shapes=ds); print("EXPORT OK")
except Exception as e:
    print("EXPORT FAILED", str(e)[:400])
txt = Dim('txt', max=512)
ds.update({'txt': {0: batch, 1: txt}, 'txt_ids': {0: batch, 1: txt}})
ep = torch.export.export(m, (), inp0, dynamic_shapes=ds); print("EXPORT with Dim('txt', max=512) OK")
for s, inp in cases("flux"):
    with torch.no_grad(): print(s, torch.allclose(ep.module()(**inp), m(**inp), atol=1e-5))
