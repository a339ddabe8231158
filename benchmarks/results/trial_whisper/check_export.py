"""torch.export of a tiny Whisper with the dims pt2bot advised, no pt2bot code.
usage: python check_export.py WHISPER_SRC_DIR"""
import sys, torch, traceback
sys.path.insert(0, sys.argv[1])
from torch.export import Dim
from whisper.model import Whisper, ModelDimensions
torch.manual_seed(0)
m = Whisper(ModelDimensions(80, 8, 32, 2, 2, 100, 16, 32, 2, 2)).eval()
mel = torch.randn(2, 80, 16); tok = torch.randint(0, 100, (2, 3))
for name, seq in (("seq any", Dim("seq")), ("seq<=16", Dim("seq", max=16)), ("seq 2..16", Dim("seq", min=2, max=16)), ("seq<=15", Dim("seq", max=15))):
    batch = Dim("batch")
    try:
        ep = torch.export.export(m, (mel, tok), dynamic_shapes={"mel": {0: batch}, "tokens": {0: batch, 1: seq}})
        print(name, "-> exports;", "range constraints:", {str(k): str(v) for k, v in ep.range_constraints.items()})
    except Exception as e:
        msg = str(e).strip().splitlines()
        print(name, "->", type(e).__name__, "|", " / ".join(l for l in msg[:12] if l.strip())[:900])
