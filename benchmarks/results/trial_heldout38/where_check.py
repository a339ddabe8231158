"""PR 2 (rescale-raw): the review offered one candidate ("run the block always in compiled code",
refused on gradients) and no other. The torch.where a user would write (model_rescale_where.py)
against head, no pt2bot code: eager and compiled (backend eager), with and without gradients, on
inputs in [0, 1), raw 0..4095 scans, one raw and one not, all 0, a NaN, an inf, negative, tiny;
and its graph breaks."""
import importlib.util, warnings, torch
warnings.filterwarnings("ignore"); torch.set_num_threads(1)
def load(p):
    s = importlib.util.spec_from_file_location(p[:-3], p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
H, W = load("model_rescale.py"), load("model_rescale_where.py")
g = torch.Generator().manual_seed(7)
x = torch.rand(2, 1, 16, 16, 16, generator=g); y = torch.rand(2, 1, 16, 16, 16, generator=g)
cases = {"unit": (x, y), "raw_both": (x * 4095, y * 4095), "raw_moving": (x * 4095, y), "zeros": (0 * x, 0 * y),
         "nan": (x.clone().index_put_((torch.tensor([0]),) * 5, torch.tensor(float('nan'))), y),
         "inf": (x.clone().index_put_((torch.tensor([0]),) * 5, torch.tensor(float('inf'))), y),
         "negative": (-x, y), "tiny": (x * 1e-30, y * 1e-30), "b4_n24_raw": (torch.rand(4, 1, 24, 24, 24, generator=g) * 900, torch.rand(4, 1, 24, 24, 24, generator=g))}
def run(mod, compiled, a, b, grad):
    torch.manual_seed(0); m = mod.RegNet()
    f = torch.compile(m, backend="eager") if compiled else m
    a = a.clone().requires_grad_(grad); b = b.clone().requires_grad_(grad)
    with torch.enable_grad() if grad else torch.no_grad():
        mv, l = f(a, b)
    gr = []
    if grad:
        torch.nan_to_num(l, 0., 0., 0.).backward(); gr = [a.grad, b.grad] + [p.grad for p in m.parameters()]
    return [mv.detach(), l.detach()] + gr
def same(p, q):
    return all((u is None and v is None) or (u is not None and v is not None and torch.equal(torch.nan_to_num(u, 1., 2., 3.), torch.nan_to_num(v, 1., 2., 3.)) and torch.equal(u.isnan(), v.isnan())) for u, v in zip(p, q))
n = eq = 0
for name, (a, b) in cases.items():
    for compiled in (False, True):
        for grad in (False, True):
            torch._dynamo.reset()
            h = run(H, False, a, b, grad)   # head eager: the reference
            w = run(W, compiled, a, b, grad)
            ok = same(h, w); n += 1; eq += ok
            print(f"{name:11s} {'compiled' if compiled else 'eager':8s} {'grad' if grad else 'nograd':6s} {'EQUAL' if ok else 'DIFFER'}")
print(f"torch.where version: {eq} of {n} equal to head's eager run")
torch._dynamo.reset(); torch.manual_seed(0)
e = torch._dynamo.explain(W.RegNet())(x * 4095, y)
print("graph breaks of the torch.where version:", e.graph_break_count)
