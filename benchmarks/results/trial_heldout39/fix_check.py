"""PR 1 (nan-guard): the review's verified suggestion against head as written (no pt2bot code).
Head's model file and the file with the suggestion applied (lines 34-35 replaced by the posted
`images = torch.where(torch.isnan(images).any(), torch.nan_to_num(images, nan=0.5), images)`) are
loaded as they are. Per input, head eager is the reference; compared with it: the suggestion eager,
the suggestion compiled (torch.compile, backend "eager", and backend "inductor"), and head compiled
(backend "eager", with its break), each in eval mode and in train mode (BatchNorm's batch statistics
and its running statistics after the call), without and with gradients (of the sum of the finite
part of logits and probas, with respect to the images and every parameter). Compared: logits, probas,
the predicted group (int64), the gradients, the BatchNorm running statistics, or the exception type
and first line. Inputs: random crops of sizes 32 and 48, batches 1 to 4; all 0; all 1; one NaN pixel;
a whole NaN image in a batch; every pixel NaN; one +inf pixel and no NaN; one -inf pixel; a NaN and
an inf pixel; tiny 1e-30; negative; 1e6; NaN with weights all 0.

    python fix_check.py model_nanguard.py model_nanguard_fix.py > fix_check_nanguard.log
"""
import importlib.util, sys, warnings
import torch
warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod


head_mod, fix_mod = load(sys.argv[1], "head"), load(sys.argv[2], "fix")


def inputs():
    g = torch.Generator().manual_seed(39)
    out = []
    for i, (b, n) in enumerate([(2, 32), (4, 32), (2, 48), (1, 32), (3, 48), (4, 48)]):
        out.append((f"rand{i}_b{b}_n{n}", torch.rand(b, 3, n, n, generator=g), None))
    x = torch.rand(2, 3, 32, 32, generator=g)
    out += [("zeros", torch.zeros_like(x), None), ("ones", torch.ones_like(x), None)]
    a = x.clone(); a[0, 1, 5, 7] = float("nan"); out.append(("nan_pixel", a, None))
    a = x.clone(); a[1] = float("nan"); out.append(("nan_image", a, None))
    out.append(("all_nan", torch.full_like(x, float("nan")), None))
    a = x.clone(); a[0, 0, 3, 3] = float("inf"); out.append(("inf_pixel_no_nan", a, None))
    a = x.clone(); a[1, 2, 9, 4] = float("-inf"); out.append(("neginf_pixel", a, None))
    a = x.clone(); a[0, 0, 1, 1] = float("nan"); a[1, 0, 2, 2] = float("inf"); out.append(("nan_and_inf", a, None))
    out += [("tiny", x * 1e-30, None), ("negative", -x, None), ("big1e6", x * 1e6, None)]
    a = x.clone(); a[0, 1, 5, 7] = float("nan"); out.append(("nan_w_zero", a, "zero"))
    return out


def build(mod, w, train):
    torch.manual_seed(0)
    m = mod.AgeNet()
    if w == "zero":
        with torch.no_grad():
            for p in m.parameters(): p.zero_()
    return m.train(train)


def run(fn, m, x, grad):
    m.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_(grad)
    try:
        with torch.enable_grad() if grad else torch.no_grad():
            logits, probas, label = fn(x)
        gr = []
        if grad:
            (torch.nan_to_num(logits, 0.0, 0.0, 0.0).sum() + torch.nan_to_num(probas, 0.0, 0.0, 0.0).sum()).backward()
            gr = [x.grad] + [p.grad for p in m.parameters()]
        bufs = [b.clone() for b in m.buffers()]
        return ("ok", logits.detach(), probas.detach(), label, gr, bufs)
    except Exception as e:
        return ("raise", type(e).__name__, str(e).split("\n")[0][:200])


def same(x, y):
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        return x.shape == y.shape and x.dtype == y.dtype and torch.equal(torch.nan_to_num(x, 7.0, 8.0, 9.0), torch.nan_to_num(y, 7.0, 8.0, 9.0)) and torch.equal(x.isnan(), y.isnan())
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    return x is y if (x is None or y is None) else x == y


def maxdiff(x, y):
    try:
        d = [(a.double() - b.double()).abs().nan_to_num(0.0).max().item() for a, b in zip(x, y) if isinstance(a, torch.Tensor) and a.numel()]
        return max(d) if d else 0.0
    except Exception:
        return float("nan")


modes = [("fix_eager", fix_mod, None), ("fix_compiled_eager", fix_mod, "eager"), ("fix_compiled_inductor", fix_mod, "inductor"),
         ("head_compiled_eager", head_mod, "eager")]
tot = {k[0]: [0, 0] for k in modes}
for name, x, w in inputs():
    for train in (False, True):
        for grad in (False, True):
            ref_m = build(head_mod, w, train); ref = run(ref_m, ref_m, x, grad)
            for mode, mod, backend in modes:
                torch._dynamo.reset()
                m = build(mod, w, train)
                fn = m if backend is None else torch.compile(m, backend=backend)
                r = run(fn, m, x, grad)
                tot[mode][1] += 1
                if ref[0] != "ok" or r[0] != "ok":
                    ok = ref[:3] == r[:3]
                    detail = f"head eager {ref[:3] if ref[0] == 'raise' else 'ok'} / {r[:3] if r[0] == 'raise' else 'ok'}"
                else:
                    parts = {"logits": same(ref[1], r[1]), "probas": same(ref[2], r[2]), "label": same(ref[3], r[3]),
                             "grads": same(ref[4], r[4]), "bn_running": same(ref[5], r[5])}
                    ok = all(parts.values())
                    bad = [k for k, v in parts.items() if not v]
                    detail = ("all equal" if ok else "differ: " + ", ".join(bad) +
                              f" (max |d| logits {maxdiff([ref[1]], [r[1]]):.3g}, grads {maxdiff(ref[4], r[4]):.3g})")
                    detail += f"; logits finite {bool(torch.isfinite(ref[1]).all())}"
                tot[mode][0] += ok
                print(f"{name:17s} {'train' if train else 'eval':5s} {'grad' if grad else 'nograd':6s} {mode:22s} {'EQUAL' if ok else 'DIFFER'}: {detail}", flush=True)
for mode, _, _ in modes:
    print(f"{mode}: {tot[mode][0]} of {tot[mode][1]} equal to head's eager run")
