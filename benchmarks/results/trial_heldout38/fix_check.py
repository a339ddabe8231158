"""PR 1 (log-folding): the review's verified *setting*, `torch._dynamo.config.capture_scalar_outputs
= True`, against head as written (no pt2bot code). Head's model file is loaded as it is; three runs
per input: head eager (the reference), head compiled without the setting (backend eager, the graph
break) and head compiled with the setting. Compared: the outputs (moved, loss), every parameter's
gradient and the inputs' gradients, and what the PR is for, `model.last_folding` (its value and its
type). Inputs: random pairs of sizes 12 to 24 and batches 1 to 4, all 0, all 1, raw 0..4095
intensities, identical scans, a NaN and an inf voxel, tiny 1e-30, negative values, and weights that
fold (the flow layer's weights x 300) or are all 0.

    python fix_check.py model_folding.py [--setting] > fix_check_folding.log
"""
import copy, importlib.util, math, sys, warnings
import torch
warnings.filterwarnings("ignore")
torch.set_num_threads(1)
path = sys.argv[1]
spec = importlib.util.spec_from_file_location("m", path); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)

def inputs():
    g = torch.Generator().manual_seed(38)
    out = []
    for i, (b, n) in enumerate([(2, 16), (4, 16), (2, 24), (1, 12), (3, 20), (2, 16), (4, 24), (1, 16)]):
        out.append((f"rand{i}_b{b}_n{n}", torch.rand(b, 1, n, n, n, generator=g), torch.rand(b, 1, n, n, n, generator=g), None))
    x = torch.rand(2, 1, 16, 16, 16, generator=g)
    out += [("zeros", torch.zeros_like(x), torch.zeros_like(x), None), ("ones", torch.ones_like(x), torch.ones_like(x), None),
            ("raw4095", (x * 4095).round(), (x.flip(-1) * 4095).round(), None), ("identical", x, x.clone(), None),
            ("tiny", x * 1e-30, x.flip(-1) * 1e-30, None), ("negative", -x, x, None)]
    xn = x.clone(); xn[0, 0, 3, 3, 3] = float("nan"); out.append(("nan_voxel", xn, x.flip(-1), None))
    xi = x.clone(); xi[1, 0, 5, 5, 5] = float("inf"); out.append(("inf_voxel", xi, x.flip(-1), None))
    out += [("w_fold", x, x.flip(-1), "fold"), ("w_fold_b4", torch.rand(4, 1, 16, 16, 16, generator=g), torch.rand(4, 1, 16, 16, 16, generator=g), "fold"),
            ("w_zero", x, x.flip(-1), "zero")]
    return out

def build(w):
    torch.manual_seed(0)
    m = mod.RegNet()
    if w == "fold":
        with torch.no_grad(): m.flow.weight.mul_(300.0)
    if w == "zero":
        with torch.no_grad():
            for p in m.parameters(): p.zero_()
    return m

def run(fn, m, a, b, grad):
    m.zero_grad(set_to_none=True)
    a = a.clone().requires_grad_(grad); b = b.clone().requires_grad_(grad)
    m.last_folding = None
    try:
        with torch.enable_grad() if grad else torch.no_grad():
            moved, loss = fn(a, b)
        gr = []
        if grad:
            torch.nan_to_num(loss, 0.0, 0.0, 0.0).backward()
            gr = [a.grad, b.grad] + [p.grad for p in m.parameters()]
        return ("ok", moved.detach(), loss.detach(), gr, m.last_folding)
    except Exception as e:
        return ("raise", type(e).__name__, str(e).split("\n")[0][:200])

def same(x, y):
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        return x.shape == y.shape and x.dtype == y.dtype and torch.equal(torch.nan_to_num(x, 7.0, 8.0, 9.0), torch.nan_to_num(y, 7.0, 8.0, 9.0)) and torch.equal(x.isnan(), y.isnan())
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    if x is None or y is None:
        return x is y
    if isinstance(x, float) and isinstance(y, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    return x == y

def fold_str(v):
    return f"{type(v).__name__}({v!r})" if not isinstance(v, torch.Tensor) else f"Tensor({v.tolist()!r}, {v.dtype})"

modes = ["compiled_nosetting", "compiled_setting"]
tot = {k: [0, 0] for k in modes}
for name, a, b, w in inputs():
    for grad in (False, True):
        ref_m = build(w); ref = run(ref_m, ref_m, a, b, grad)
        res = {}
        for mode in modes:
            torch._dynamo.reset()
            torch._dynamo.config.capture_scalar_outputs = (mode == "compiled_setting")
            m = build(w)
            fn = torch.compile(m, backend="eager")
            res[mode] = run(fn, m, a, b, grad)
            torch._dynamo.config.capture_scalar_outputs = False
        for mode in modes:
            r = res[mode]
            tot[mode][1] += 1
            if ref[0] != "ok" or r[0] != "ok":
                ok = ref[:2] == r[:2]
                detail = f"head eager {ref[:3] if ref[0] == 'raise' else 'ok'} / {mode} {r[:3] if r[0] == 'raise' else 'ok'}"
            else:
                parts = {"moved": same(ref[1], r[1]), "loss": same(ref[2], r[2]), "grads": same(ref[3], r[3]),
                         "last_folding value": same(float(ref[4]), float(r[4]) if r[4] is not None else None),
                         "last_folding type": type(ref[4]) is type(r[4])}
                ok = all(parts.values())
                detail = ", ".join(k for k, v in parts.items() if not v) or "all equal"
                detail += f"; last_folding head eager {fold_str(ref[4])}, {mode} {fold_str(r[4])}"
            tot[mode][0] += ok
            print(f"{name:14s} {'grad' if grad else 'nograd':6s} {mode:19s} {'EQUAL' if ok else 'DIFFER'}: {detail}", flush=True)
for mode in modes:
    print(f"{mode}: {tot[mode][0]} of {tot[mode][1]} equal to head's eager run (outputs, gradients, last_folding value and type)")
