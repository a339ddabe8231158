"""Ground truth for trial_heldout41's two PRs, no pt2bot code: torch 2.13 dynamo with backend
'eager', one thread, fresh process per invocation. Each model file is loaded from its path, built
with torch.manual_seed(0) (same weights on every side).

  python truth_check.py claims FILE...   # the review's matrix (batch [2, 4] x frames [16, 32],
                                         # both dims maybe_mark_dynamic on both inputs, as pt2bot.smoke.matrix falls back to): graph breaks
                                         # (file:line, GB code) and recompiles, per file
  python truth_check.py setting FILE     # PR 2's verified setting: head eager against head compiled
                                         # with capture_dynamic_output_shape_ops, on many inputs
  python truth_check.py fix BASEFILE FIXFILE  # a hand fix against head eager, eager and compiled
"""
import importlib.util, logging, math, sys, time
import torch
torch.set_num_threads(1)
from torch._dynamo.utils import counters

def load(path, tag):
    spec = importlib.util.spec_from_file_location(f"m_{tag}", path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    torch.manual_seed(0)
    return mod.SpectralMaskEnhancer().eval()

class Grab(logging.Handler):
    def __init__(self): super().__init__(); self.msgs = []
    def emit(self, r): self.msgs.append(r.getMessage())

def flat(o): return list(o) if isinstance(o, (tuple, list)) else [o]

def same(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and x.dtype == y.dtype and torch.equal(torch.isnan(x), torch.isnan(y)) and torch.equal(torch.nan_to_num(x), torch.nan_to_num(y)) for x, y in zip(a, b))

def claims(paths):
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    for p in paths:
        torch._dynamo.reset(); counters.clear()
        g = Grab(); lg = logging.getLogger("torch._dynamo"); lg.addHandler(g)
        m = load(p, "c"); c = torch.compile(m, backend="eager")
        for b in (2, 4):
            for t in (16, 32):
                torch.manual_seed(1); re, im = torch.randn(b, 33, t), torch.randn(b, 33, t)
                for x in (re, im):
                    torch._dynamo.maybe_mark_dynamic(x, 0); torch._dynamo.maybe_mark_dynamic(x, 2)
                with torch.no_grad(): c(re, im)
        lg.removeHandler(g)
        breaks = [msg.split("\n")[0] for msg in g.msgs if "Graph break" in msg and "user code at" in msg]
        rec = [msg for msg in g.msgs if "Recompiling function" in msg]
        print(f"{p}: graph_break counter {sum(counters['graph_break'].values())}, logged break lines {len(breaks)}, recompiles {len(rec)}")
        for s in sorted(set(b[b.find('user code at'):] for b in breaks)): print("   break", s)
        for r in rec: print("   recompile", r.split("\n")[0][:160], "|", [l.strip() for l in r.split("\n") if "guard" in l.lower() or "mismatch" in l][:1])

def inputs():
    g = torch.Generator().manual_seed(5)
    out = []
    for i, (b, t) in enumerate([(1, 8), (2, 16), (3, 11), (4, 32), (5, 9), (8, 40), (2, 33), (6, 17)]):
        s = [0.3, 1.0, 2.0, 4.0][i % 4]
        out.append((f"randn b={b} t={t} x{s}", s * torch.randn(b, 33, t, generator=g), s * torch.randn(b, 33, t, generator=g)))
    z = torch.zeros(2, 33, 16)
    out.append(("all 0 (no loud bin: empty selection)", z, z.clone()))
    out.append(("all 0.01 (no loud bin)", z + 0.01, z + 0.01))
    out.append(("all 1", z + 1, z + 1))
    q = torch.zeros(2, 33, 16); q[1, 5, 7] = 3.0
    out.append(("one loud bin", q, torch.zeros_like(q)))
    r, i_ = torch.randn(2, 33, 16, generator=g), torch.randn(2, 33, 16, generator=g)
    a = r.clone(); a[0, 3, 4] = float("nan"); out.append(("a NaN in re", a, i_))
    a = r.clone(); a[1, 0, 0] = float("inf"); out.append(("an inf in re", a, i_))
    a = r.clone(); a[0, 2, 2] = -float("inf"); out.append(("a -inf in re", a, i_))
    a = r.clone(); a[0] = float("nan"); out.append(("a whole NaN row", a, i_))
    out.append(("1e30", r * 1e30, i_ * 1e30))
    out.append(("tiny 1e-30", r * 1e-30, i_ * 1e-30))
    out.append(("empty frames t=0", torch.zeros(2, 33, 0), torch.zeros(2, 33, 0)))
    return out

def run(fn, re, im, grad, params):
    re, im = re.clone(), im.clone()
    if grad:
        re.requires_grad_(True); im.requires_grad_(True)
    torch.manual_seed(1)
    try:
        with torch.set_grad_enabled(grad):
            o = flat(fn(re, im))
            if grad:
                tot = sum(torch.nan_to_num(x, 0.0, 0.0, 0.0).sum() for x in o)
                gs = torch.autograd.grad(tot, [re, im] + params, allow_unused=True)
                o = o + [g if g is not None else torch.zeros(()) for g in gs]
        return [x.detach() for x in o]
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"

def compare(ref_m, ref_fn, other_fn, label, params_ref, params_other):
    n = eq = 0
    for name, re, im in inputs():
        for grad in (False, True):
            a = run(ref_fn, re, im, grad, params_ref); b = run(other_fn, re, im, grad, params_other)
            ok = (a == b) if isinstance(a, str) or isinstance(b, str) else same(a, b)
            n += 1; eq += ok
            if not ok:
                if isinstance(a, str) or isinstance(b, str):
                    print(f"  DIFF {label} {name} grad={grad}: ref {a if isinstance(a, str) else 'ok'} | other {b if isinstance(b, str) else 'ok'}")
                else:
                    d = [i for i, (x, y) in enumerate(zip(a, b)) if not same([x], [y])]
                    md = max((x.float() - y.float()).abs().nan_to_num(0).max().item() for i, (x, y) in enumerate(zip(a, b)) if i in d)
                    print(f"  DIFF {label} {name} grad={grad}: outputs {d} differ (0,1 = re, im; rest gradients), max |diff| {md:.3g}")
    print(f"{label}: {eq} of {n} equal")

def setting(path):
    m = load(path, "h")
    ps = list(m.parameters())
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    g = Grab(); logging.getLogger("torch._dynamo").addHandler(g)
    c = torch.compile(m, backend="eager")
    t0 = time.time()
    compare(m, m, c, "head compiled (capture_dynamic_output_shape_ops) vs head eager", ps, ps)
    print(f"  {time.time() - t0:.1f} s; logged breaks {sum(1 for x in g.msgs if 'Graph break' in x)}, recompiles {sum(1 for x in g.msgs if 'Recompiling function' in x)}")
    for x in g.msgs:
        if "Graph break" in x and "user code at" in x: print("   break:", x.split('\n')[0][-160:])

def fix(base, fixp):
    h = load(base, "h"); f = load(fixp, "f")
    hp, fp = list(h.parameters()), list(f.parameters())
    compare(h, h, f, "fix eager vs head eager", hp, fp)
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    g = Grab(); logging.getLogger("torch._dynamo").addHandler(g)
    c = torch.compile(f, backend="eager")
    compare(h, h, c, "fix compiled vs head eager", hp, fp)
    print(f"  logged breaks {sum(1 for x in g.msgs if 'Graph break' in x)}, recompiles {sum(1 for x in g.msgs if 'Recompiling function' in x)}")

if __name__ == "__main__":
    if sys.argv[1] == "claims": claims(sys.argv[2:])
    elif sys.argv[1] == "setting": setting(sys.argv[2])
    elif sys.argv[1] == "fix": fix(sys.argv[2], sys.argv[3])
