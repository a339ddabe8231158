"""Ground truth, no pt2bot code: torch.export of a tiny FLUX model from SRC with the dynamic_shapes that
pt2bot's paste-ready shape advice gives (batch, seq, txt all Dim()), then the exported program vs eager
on every shape case.  usage: python gt_export.py SRC flux|ae"""
import sys, os
src, which = sys.argv[1:3]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch
torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gt_dynamo_common import build, cases
from torch.export import Dim
m = build(which)
allc = list(cases(which))
shape0, inp0 = allc[0]
if which == "flux":
    batch, seq, txt = Dim('batch'), Dim('seq'), Dim('txt')
    ds = {'guidance': {0: batch}, 'img': {0: batch, 1: seq}, 'img_ids': {0: batch, 1: seq}, 'timesteps': {0: batch},
          'txt': {0: batch, 1: txt}, 'txt_ids': {0: batch, 1: txt}, 'y': {0: batch}}
else:
    ds = {'x': {0: Dim('batch')}}
try:
    ep = torch.export.export(m, (), inp0, dynamic_shapes=ds)
    print("EXPORT OK")
except Exception as e:
    msg = str(e)
    print("EXPORT FAILED:", type(e).__name__, msg[:1500])
    sys.exit(0)
for shape, inp in allc:
    with torch.no_grad():
        try:
            o = ep.module()(**inp); e_ = m(**inp)
            print(shape, "exported==eager", torch.allclose(o, e_, rtol=1e-4, atol=1e-5, equal_nan=True))
        except Exception as ex:
            print(shape, "exported program raised", type(ex).__name__, str(ex)[:200])
