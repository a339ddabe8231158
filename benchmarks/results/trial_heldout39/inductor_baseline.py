"""fix_check's inductor rows against a baseline (no pt2bot code): base (model_base.py, no guard) and
PR 1's head compiled with inductor against their own eager runs, on fix_check's first random input
and its NaN pixel, eval mode, without gradients; and the suggestion compiled with inductor against
head compiled with inductor."""
import importlib.util, warnings
import torch
warnings.filterwarnings("ignore")
torch.set_num_threads(1)
def load(p, n):
    s = importlib.util.spec_from_file_location(n, p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
mods = {"base": load("model_base.py", "b"), "head": load("model_nanguard.py", "h"), "fix": load("model_nanguard_fix.py", "f")}
g = torch.Generator().manual_seed(39)
x = torch.rand(2, 3, 32, 32, generator=g)
xn = torch.rand(2, 3, 32, 32, generator=g); xn[0, 1, 5, 7] = float("nan")
def build(k):
    torch.manual_seed(0); return mods[k].AgeNet().eval()
for name, inp in (("rand_b2_n32", x), ("nan_pixel", xn)):
    res = {}
    for k in ("base", "head", "fix"):
        with torch.no_grad():
            e = build(k)(inp)
            torch._dynamo.reset()
            c = torch.compile(build(k), backend="inductor")(inp)
        res[k] = c
        d = (e[0] - c[0]).abs().nan_to_num(0).max().item()
        print(f"{name:12s} {k:4s} inductor vs its own eager: logits equal {torch.equal(e[0].nan_to_num(7), c[0].nan_to_num(7))}, max |d| {d:.3g}, labels equal {torch.equal(e[2], c[2])}")
    d = (res['fix'][0] - res['head'][0]).abs().nan_to_num(0).max().item()
    print(f"{name:12s} fix inductor vs head inductor: logits equal {torch.equal(res['fix'][0], res['head'][0])}, max |d| {d:.3g}")
