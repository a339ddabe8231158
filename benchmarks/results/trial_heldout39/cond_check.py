"""PR 2 (flip-tta): the review posted no fix; its summary says what would keep one graph, unverified:
`torch.cond(cond, early, rest, ())` (not in training, where BatchNorm's running statistics are
updated), or `rest` run always and selected with `torch.where`. Both written as the summary says
(model_fliptta_cond.py, model_fliptta_where.py) and compared with head's eager run (no pt2bot code):
eager and compiled (backend eager, fullgraph=False; graph breaks counted), eval and train mode,
without and with gradients (sum of the finite logits and probas, w.r.t. the images and parameters).
Inputs: random crops (sizes 32, 48; batches 1 to 4: the early return not taken with the initial
weights), the same with the CORAL biases set to +-6 so that head returns early (confident), zeros,
a NaN pixel, an inf pixel, 1e6, and confident weights scaled so that probabilities saturate to 0 or 1.

    python cond_check.py > cond_check.log
"""
import importlib.util, warnings
import torch
warnings.filterwarnings("ignore")
torch.set_num_threads(1)
import importlib, os, sys
sys.path.insert(0, os.getcwd())   # imported by name: torch.cond in eager traces its branches with dynamo, which imports the module
mods = {"head": importlib.import_module("model_fliptta"), "cond": importlib.import_module("model_fliptta_cond"),
        "where": importlib.import_module("model_fliptta_where")}

def inputs():
    g = torch.Generator().manual_seed(391)
    out = [(f"rand{i}_b{b}_n{n}", torch.rand(b, 3, n, n, generator=g), None) for i, (b, n) in enumerate([(2, 32), (4, 48), (1, 32), (3, 48)])]
    out += [(f"confident{i}_b{b}_n{n}", torch.rand(b, 3, n, n, generator=g), "confident") for i, (b, n) in enumerate([(2, 32), (4, 48)])]
    x = torch.rand(2, 3, 32, 32, generator=g)
    out += [("zeros", torch.zeros_like(x), None), ("big1e6", x * 1e6, None), ("confident_zeros", torch.zeros_like(x), "confident")]
    a = x.clone(); a[0, 0, 4, 4] = float("nan"); out.append(("nan_pixel", a, None))
    a = x.clone(); a[1, 2, 4, 4] = float("inf"); out.append(("inf_pixel", a, None))
    out.append(("saturated", x, "saturated"))
    return out

def build(k, w, train):
    torch.manual_seed(0)
    m = mods[k].AgeNet()
    with torch.no_grad():
        if w in ("confident", "saturated"):
            m.coral.coral_bias.copy_(torch.tensor([6.0, 6.0, 6.0, -6.0, -6.0, -6.0, -6.0]))
        if w == "saturated":
            m.coral.coral_bias.mul_(20.0)
    return m.train(train)

def run(fn, m, x, grad):
    m.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_(grad)
    try:
        with torch.enable_grad() if grad else torch.no_grad():
            lo, pr, lab = fn(x)
        gr = []
        if grad:
            (torch.nan_to_num(lo, 0.0, 0.0, 0.0).sum() + torch.nan_to_num(pr, 0.0, 0.0, 0.0).sum()).backward()
            gr = [x.grad] + [p.grad for p in m.parameters()]
        return ("ok", lo.detach(), pr.detach(), lab, gr, [b.clone() for b in m.buffers()])
    except Exception as e:
        return ("raise", type(e).__name__, str(e).split("\n")[0][:160])

def same(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.nan_to_num(7.0, 8.0, 9.0), b.nan_to_num(7.0, 8.0, 9.0)) and torch.equal(a.isnan(), b.isnan())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(p, q) for p, q in zip(a, b))
    return a is b if (a is None or b is None) else a == b

tot = {}
for name, x, w in inputs():
    for train in (False, True):
        for grad in (False, True):
            rm = build("head", w, train); ref = run(rm, rm, x, grad)
            taken = "early" if ref[0] == "ok" and torch.equal(ref[2], torch.sigmoid(build("head", w, False).coral(build("head", w, False).features((x - 0.5) / 0.25))).detach()) and not train else "-"
            for k in ("cond", "where"):
                for comp in (False, True):
                    torch._dynamo.reset()
                    m = build(k, w, train)
                    breaks = ""
                    if comp:
                        fn = torch.compile(m, backend="eager")
                    else:
                        fn = m
                    r = run(fn, m, x, grad)
                    if comp:
                        try:
                            ex = torch._dynamo.explain(build(k, w, train))(x)
                            breaks = f" breaks {ex.graph_break_count}"
                        except Exception as e:
                            breaks = f" explain raised {type(e).__name__}"
                    mode = f"{k}_{'compiled' if comp else 'eager'}"
                    tot.setdefault(mode, [0, 0]); tot[mode][1] += 1
                    if ref[0] != "ok" or r[0] != "ok":
                        ok = ref[:3] == r[:3]; detail = f"head {ref[:3] if ref[0] != 'ok' else 'ok'} / {r[:3] if r[0] != 'ok' else 'ok'}"
                    else:
                        parts = {"logits": same(ref[1], r[1]), "probas": same(ref[2], r[2]), "label": same(ref[3], r[3]), "grads": same(ref[4], r[4]), "bn_running": same(ref[5], r[5])}
                        ok = all(parts.values()); detail = "all equal" if ok else "differ: " + ", ".join(k2 for k2, v in parts.items() if not v)
                        if not parts["grads"]:
                            nan_r = sum(int(t.isnan().sum()) for t in r[4] if t is not None); nan_h = sum(int(t.isnan().sum()) for t in ref[4] if t is not None)
                            detail += f" (NaN gradient entries head {nan_h}, {k} {nan_r})"
                    tot[mode][0] += ok
                    print(f"{name:22s} {'train' if train else 'eval':5s} {'grad' if grad else 'nograd':6s} {mode:15s} {'EQUAL' if ok else 'DIFFER'}: {detail}{breaks}", flush=True)
for k, v in tot.items():
    print(f"{k}: {v[0]} of {v[1]} equal to head's eager run")
