"""Ground truth, no pt2bot code: eager (and eager-backend compiled) outputs and gradients of a tiny FLUX
model from SRC on the shape cases and on guard inputs (NaN / inf / huge in an input or in the weights).
usage: python gt_run.py SRC flux|ae OUT.pt   (compare two OUT.pt files with gt_cmp.py)"""
import sys, os, copy
src, which, out = sys.argv[1:4]
sys.path.insert(0, os.path.join(src, "src")); sys.path.insert(0, src)
import torch
torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gt_dynamo_common import build, cases

def run(m, inp, grad=True):
    inp = {k: (v.clone().requires_grad_(grad and v.is_floating_point() and k in ("img", "txt", "y", "x")) if torch.is_tensor(v) else v) for k, v in inp.items()}
    m.zero_grad(set_to_none=True)
    try:
        o = m(**inp)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"[:300]}
    r = {"out": o.detach().clone()}
    if grad:
        torch.manual_seed(123)
        w = torch.randn_like(o)
        (o.nan_to_num(0.0, 0.0, 0.0) * w).sum().backward()
        r["pgrad"] = {n: (p.grad.clone() if p.grad is not None else None) for n, p in m.named_parameters()}
        r["igrad"] = {k: v.grad.clone() for k, v in inp.items() if torch.is_tensor(v) and v.grad is not None}
    return r

res = {}
base = build(which)
state = copy.deepcopy(base.state_dict())
allcases = list(cases(which))
for shape, inp in allcases:
    res[("case", str(shape))] = run(base, inp)
# guard inputs on the first case
shape0, inp0 = allcases[0]
key = "img" if which == "flux" else "x"
for label, val in [("nan", float("nan")), ("inf", float("inf")), ("-inf", -float("inf")), ("1e6", 1e6), ("1e38", 1e38)]:
    i = {k: v.clone() if torch.is_tensor(v) else v for k, v in inp0.items()}
    i[key].view(-1)[0] = val
    res[("inj_one_" + key, label)] = run(base, i)
    i = {k: v.clone() if torch.is_tensor(v) else v for k, v in inp0.items()}
    i[key].fill_(val)
    res[("inj_all_" + key, label)] = run(base, i)
if which == "flux":
    for k in ("timesteps", "guidance", "txt"):
        for label, val in [("nan", float("nan")), ("inf", float("inf")), ("0", 0.0), ("0.5", 0.5), ("1", 1.0), ("500", 500.0), ("-1", -1.0)]:
            i = {kk: v.clone() if torch.is_tensor(v) else v for kk, v in inp0.items()}
            i[k].view(-1)[0] = val
            res[("inj_one_" + k, label)] = run(base, i)
            i = {kk: v.clone() if torch.is_tensor(v) else v for kk, v in inp0.items()}
            i[k].fill_(val)
            res[("inj_all_" + k, label)] = run(base, i)
for label, val in [("zeros", 0.0), ("ones", 1.0)]:
    i = {k: (torch.full_like(v, val) if torch.is_tensor(v) and k not in ("img_ids", "txt_ids") else v) for k, v in inp0.items()}
    res[("inputs_all", label)] = run(base, i)
# NaN / inf / huge in one weight of each floating parameter, then all weights 0
for label, val in [("nan", float("nan")), ("inf", float("inf")), ("1e30", 1e30)]:
    m = copy.deepcopy(base)
    with torch.no_grad():
        for p in m.parameters():
            p.view(-1)[0] = val
    res[("weights_one", label)] = run(m, inp0)
m = copy.deepcopy(base)
with torch.no_grad():
    for p in m.parameters():
        p.zero_()
res[("weights", "zero")] = run(m, inp0)
# compiled, eager backend, on every case (no grads)
import torch._dynamo
torch._dynamo.reset()
cm = torch.compile(base, backend="eager")
for shape, inp in allcases:
    with torch.no_grad():
        try:
            res[("compiled_case", str(shape))] = {"out": cm(**inp).clone()}
        except Exception as e:
            res[("compiled_case", str(shape))] = {"error": f"{type(e).__name__}: {e}"[:300]}
torch.save(res, out)
print("saved", len(res), "entries to", out)
