"""Checks of what the reviews state, with no pt2bot code:
(a) PR 1's PTC101 text: "under `fullgraph=True` torch captures it [.item()] as an unbacked symbol
    instead": compile head with fullgraph=True (capture_scalar_outputs left False) and call it;
(b) base's shape advice: size "cannot be dynamic, the code specialises size to 16 at
    regnet/model.py:43" (create_grid): export base with Dim on the three spatial dims, and with
    only their equality, and compile base with dynamic=True over sizes 12 to 24;
(c) PR 1's "dim batch = 2 [newly specialised] at regnet/model.py:50": head compiled (backend eager)
    with batch marked dynamic, the guards on the resumed frame.
"""
import importlib.util, sys, warnings
import torch
from torch.export import Dim
warnings.filterwarnings("ignore")
torch.set_num_threads(1)
def load(p):
    s = importlib.util.spec_from_file_location(p[:-3], p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
base, head = load("model_base.py"), load("model_folding.py")
x = lambda b, n: (torch.rand(b, 1, n, n, n), torch.rand(b, 1, n, n, n))
print("(a) fullgraph=True on head (PR 1), capture_scalar_outputs =", torch._dynamo.config.capture_scalar_outputs)
torch.manual_seed(0); m = head.RegNet()
try:
    f = torch.compile(m, backend="eager", fullgraph=True)
    out = f(*x(2, 16)); print("   ran; last_folding =", repr(m.last_folding))
except Exception as e:
    print("   raises", type(e).__name__, str(e).split("\n")[0][:200])
print("(b) base export with a dynamic spatial size")
torch.manual_seed(0); m = base.RegNet()
s = Dim("size", min=8, max=64)
for name, ds in (("one Dim for d, h, w", {"moving": {0: Dim("batch"), 2: s, 3: s, 4: s}, "static": {0: Dim("batch"), 2: s, 3: s, 4: s}}),):
    try:
        ep = torch.export.export(m, x(2, 16), dynamic_shapes=ds)
        print("   export OK with", name, "; runs at size 24:", tuple(ep.module()(*x(2, 24))[0].shape))
    except Exception as e:
        print("   export fails with", name, ":", type(e).__name__, str(e).split("\n")[0][:300])
        msg = str(e)
        i = msg.find("specialized"); print("   ...", msg[max(0, i - 200): i + 300].replace("\n", " ") if i >= 0 else msg[:600].replace("\n", " "))
torch._dynamo.reset()
cnt = {"n": 0}
def be(gm, ex):
    cnt["n"] += 1; return gm.forward
f = torch.compile(m, backend=be, dynamic=True)
for n in (12, 16, 20, 24):
    f(*x(2, n))
print("   compile(dynamic=True) over sizes 12, 16, 20, 24:", cnt["n"], "graph(s) compiled")
print("(c) head compiled with batch marked dynamic: recompiles over batch 2, 4, 3 at size 16")
torch._dynamo.reset()
torch.manual_seed(0); m = head.RegNet()
cnt["n"] = 0
f = torch.compile(m, backend=be)
for b in (2, 4, 3):
    a, c = x(b, 16); torch._dynamo.mark_dynamic(a, 0); torch._dynamo.mark_dynamic(c, 0)
    f(a, c)
print("   graphs compiled:", cnt["n"])
