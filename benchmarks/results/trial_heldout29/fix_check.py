"""A new user's own re-run of the trial's fixes (no pt2bot code): head's forward against a fix, on
edge inputs that reach the edited line, eager and compiled (backends eager and inductor), the
outputs and the gradients of the summed outputs (loss + rec.sum(), non-finite zeroed) w.r.t. the
input and every parameter, compared exactly (NaN positions equal; a None gradient is reported
apart where the other side's is all zero). The pairs (fix_check.log):

    for pair in "model_normalize_loudness.py model_normalize_loudness_fix.py" \
                "model_skip_silent.py model_skip_silent_hand.py" \
                "model_skip_silent.py model_skip_silent_hand2.py" \
                "model_skip_silent.py model_skip_silent_cond.py" \
                "model_variant_one_line.py model_variant_one_line_fix.py"; do
        python fix_check.py $pair; done > fix_check.log

PR 2's verified suggestion; PR 1's hand edits (pt2bot offered none): outputs selected by
torch.where around the unchanged body, the same with the body run on a stand-in of ones where the
batch is skipped, and torch.cond with the body in a nested function; the one-line variant's
verified torch.cond (pt2bot's suggestion, on a variant of PR 1 made to see which early returns
get an edit)."""
import importlib.util, sys, torch
torch.set_num_threads(1)

def load(path):
    name = path[:-3]   # registered, so that torch.cond's tracing can import it by name
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); sys.modules[name] = m
    spec.loader.exec_module(m); return m.SpectrogramNMF

def inputs():
    g = torch.Generator().manual_seed(7)
    out = []
    for b in (1, 2, 4):
        for t in (32, 40):
            x = torch.rand(b, 64, t, generator=g) * 2
            out.append((f"plain_b{b}_t{t}", x))
            out.append((f"zeros_b{b}_t{t}", torch.zeros(b, 64, t)))          # silence
            y = x.clone(); y[0] = 0
            out.append((f"one_silent_b{b}_t{t}", y))
            out.append((f"tiny_b{b}_t{t}", x * 1e-6))                        # below 1e-4
            out.append((f"denormal_b{b}_t{t}", torch.full((b, 64, t), 1e-40)))
            y = x.clone(); y.view(-1)[3] = float('nan'); out.append((f"nan_b{b}_t{t}", y))
            y = x.clone(); y.view(-1)[3] = float('inf'); out.append((f"inf_b{b}_t{t}", y))
            out.append((f"negative_b{b}_t{t}", -x))
    return out

def run(cls, mode, x, grad, zero_w):
    torch.manual_seed(0)
    m = cls()
    if zero_w:
        with torch.no_grad():
            for p in m.parameters(): p.zero_()
    f = torch.compile(m, backend=mode, dynamic=False) if mode != "none" else m
    xx = x.clone().requires_grad_(grad)
    try:
        with torch.set_grad_enabled(grad):
            outs = f(xx)
        outs = list(outs) if isinstance(outs, tuple) else [outs]   # the variant returns rec alone
        if not grad:
            return ("ok", outs, [])
        tot = sum(torch.nan_to_num(o, 0., 0., 0.).sum() for o in outs)
        gs = [None] * (1 + len(list(m.parameters())))
        if tot.requires_grad:
            tot.backward()
            gs = [xx.grad] + [p.grad for p in m.parameters()]
        return ("ok", [o.detach() for o in outs], gs)
    except Exception as e:
        return ("raise", type(e).__name__, str(e).split("\n")[0][:200])

def same(a, b):
    if a is None or b is None: return a is None and b is None
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape: return False
        na, nb = a.isnan(), b.isnan()
        return torch.equal(na, nb) and torch.equal(torch.where(na, 0., a), torch.where(nb, 0., b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b

def nzsame(a, b):   # None equal to an all-zero gradient
    if isinstance(a, (list, tuple)) and not isinstance(a, torch.Tensor):
        return len(a) == len(b) and all(nzsame(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        o = b if a is None else a
        return o is None or not bool(o.any())
    return same(a, b)

def main(head_path, fix_path):
    H, F = load(head_path), load(fix_path)
    n = eq = nz = 0
    diffs = []
    for mode in ("none", "eager", "inductor"):
        for grad in (False, True):
            torch._dynamo.reset()
            for zero_w in (False, True):
                for name, x in inputs():
                    if mode == "inductor" and zero_w: continue
                    h, p = run(H, mode, x, grad, zero_w), run(F, mode, x, grad, zero_w)
                    n += 1
                    tag = f"{name}/{mode}/{'grad' if grad else 'nograd'}{'/w0' if zero_w else ''}"
                    if same(h, p): eq += 1
                    elif nzsame(h, p): nz += 1; diffs.append(("None vs 0 grads", tag))
                    else:
                        if h[0] == p[0] == "ok":
                            o = [i for i, (a, b) in enumerate(zip(h[1], p[1])) if not same(a, b)]
                            gi = [i for i, (a, b) in enumerate(zip(h[2], p[2])) if not same(a, b)]
                            gnan = [i for i, b in enumerate(p[2]) if b is not None and bool(b.isnan().any())]
                            hnan = [i for i, b in enumerate(h[2]) if b is not None and bool(b.isnan().any())]
                            diffs.append(("DIFFER", f"{tag}: outputs {o} differ, gradients {gi} differ (NaN in fix's grads {gnan}, head's {hnan})"))
                        else:
                            diffs.append(("DIFFER", f"{tag}: head {h[0] if h[0]=='ok' else h[1:]} / fix {p[0] if p[0]=='ok' else p[1:]}"))
    print(f"{fix_path} vs {head_path}: {eq} of {n} equal, {nz} only None vs zero gradients, {len(diffs) - nz} differ")
    nzs = [d for k, d in diffs if k != "DIFFER"]
    if nzs:
        print(f"   None vs 0 gradients (head returned early with no gradient) on {len(nzs)}: "
              + ", ".join(sorted({d.split('/')[0].rsplit('_b', 1)[0] for d in nzs})) + " inputs")
    for kind, d in diffs:
        if kind == "DIFFER":
            print(f"   {kind} {d}")

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
