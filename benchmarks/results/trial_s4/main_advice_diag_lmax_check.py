"""main, s4block_diag_lmax (S4Block diag, l_max=32): the export pt2bot's shape advice gives
(`dynamic_shapes = {'x': {0: batch, 2: seq}}`), seq bounded below/above l_max, and batch only.
No pt2bot code."""
import sys, warnings; warnings.filterwarnings("ignore"); sys.path.insert(0, ".")
import torch
from torch.export import Dim
from models.s4.s4 import S4Block
torch.manual_seed(0)
m = S4Block(16, d_state=8, mode="diag", l_max=32, transposed=True).eval()
for desc, ds, L in [
    ("advice: batch and seq dynamic, example seq 16", {"x": {0: Dim("batch"), 2: Dim("seq")}}, 16),
    ("seq in [2, 32], example 16", {"x": {0: Dim("batch"), 2: Dim("seq", min=2, max=32)}}, 16),
    ("seq in [33, 4096], example 40", {"x": {0: Dim("batch"), 2: Dim("seq", min=33, max=4096)}}, 40),
    ("batch only, example seq 40", {"x": {0: Dim("batch")}}, 40),
]:
    try:
        ep = torch.export.export(m, (torch.randn(2, 16, L),), dynamic_shapes=ds)
        x = torch.randn(5, 16, L)
        print(f"{desc}: EXPORT OK; at batch 5 equal to eager: {torch.equal(ep.module()(x)[0], m(x)[0])}")
    except Exception as e:
        print(f"{desc}: EXPORT FAILED {type(e).__name__}: {' '.join(str(e).split())[:330]}")
