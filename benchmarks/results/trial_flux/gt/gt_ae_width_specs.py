"""Ground truth: which width specs export the tiny AE (base), and compiled with plain mark_dynamic on width only."""
import sys, os
src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch
torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gt_dynamo_common import build, cases
from torch.export import Dim
m = build("ae"); allc = list(cases("ae")); args = (allc[0][1]["x"],)
for label, wd in [("Dim('width')", Dim('width')), ("2*Dim('w2', min=2)", 2 * Dim('w2', min=2)), ("4*Dim('w4', min=2)", 4 * Dim('w4', min=2))]:
    try:
        ep = torch.export.export(m, args, {}, dynamic_shapes=({0: Dim('batch'), 3: wd},))
        ok = all(torch.allclose(ep.module()(inp["x"]), m(inp["x"]), atol=1e-5) for _, inp in allc)
        print(label, "EXPORT OK, exported==eager on all 4 cases:", ok)
    except Exception as e:
        print(label, "EXPORT FAILED:", type(e).__name__, str(e).splitlines()[0][:150], "|", " ".join(l.strip() for l in str(e).splitlines()[1:6] if "Suggested" in l or "Dim(" in l)[:300])
