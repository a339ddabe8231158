"""fix_check's two largest inductor differences (all_nan train grad: gradients 55.2; big1e6 eval grad:
logits 0.0156, gradients 0.75) against a baseline, no pt2bot code, on the same kinds of input (every
pixel NaN, the same; x 1e6 of a fresh random crop, not fix_check's): base (model_base.py, fed the image
head's guard makes of it, NaN -> 0.5), PR 1's head and the suggestion, each compiled with inductor
against its own eager run, and the suggestion's inductor run against head's inductor run."""
import importlib.util, warnings
import torch
warnings.filterwarnings("ignore")
torch.set_num_threads(1)
def load(p, n):
    s = importlib.util.spec_from_file_location(n, p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
mods = {"base": load("model_base.py", "b"), "head": load("model_nanguard.py", "h"), "fix": load("model_nanguard_fix.py", "f")}
g = torch.Generator().manual_seed(39)
for _ in range(6):
    torch.rand(1, generator=g)
x = torch.rand(2, 3, 32, 32)
cases = [("all_nan", torch.full_like(x, float("nan")), True), ("big1e6", x * 1e6, False)]
def build(k, train):
    torch.manual_seed(0); return mods[k].AgeNet().train(train)
def run(fn, m, inp):
    inp = inp.clone().requires_grad_(True)
    lo, pr, _ = fn(inp)
    (torch.nan_to_num(lo, 0.0, 0.0, 0.0).sum() + torch.nan_to_num(pr, 0.0, 0.0, 0.0).sum()).backward()
    return lo.detach(), [inp.grad] + [p.grad for p in m.parameters()]
def md(a, b):
    return max((p - q).abs().nan_to_num(0).max().item() for p, q in zip(a, b))
for name, inp, train in cases:
    res = {}
    for k in ("base", "head", "fix"):
        feed = torch.nan_to_num(inp, nan=0.5) if k == "base" else inp
        m = build(k, train); e = run(m, m, feed)
        torch._dynamo.reset(); m = build(k, train); c = run(torch.compile(m, backend="inductor"), m, feed)
        res[k] = c
        print(f"{name:8s} {'train' if train else 'eval'} {k:4s} inductor vs its own eager: logits max |d| {md([e[0]], [c[0]]):.3g}, grads max |d| {md(e[1], c[1]):.3g}")
    print(f"{name:8s} fix inductor vs head inductor: logits max |d| {md([res['fix'][0]], [res['head'][0]]):.3g}, grads max |d| {md(res['fix'][1], res['head'][1]):.3g}")
