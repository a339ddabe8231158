"""PR 1 (peak-normalise): head against the review's refused torch.where candidate for line 49-50
(model_peaknorm_cand1.py: "a new recompile ... from line 48"), and against the helper's rewrite of
both lines (model_peaknorm_hand.py: the peak level kept as a tensor, torch.where). No pt2bot code.
Outputs, `last_peak_db` and gradients (of the summed output w.r.t. the input and every parameter),
eager and compiled (backend eager), on inputs whose output peaks below and above full scale and on
edge inputs; then recompiles over 12 same-shape batches."""
import importlib.util
import math
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def run(model, fn, x, grad):
    model.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_(grad)
    with torch.set_grad_enabled(grad):
        y = fn(x)
        peak = float(model.last_peak_db)
        g = []
        if grad:
            torch.nan_to_num(y, 0.0, 0.0, 0.0).sum().backward()
            g = [x.grad] + [p.grad for p in model.parameters()]
    return y.detach(), peak, g


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        torch.nan_to_num(a, 0.0, 0.0, 0.0), torch.nan_to_num(b, 0.0, 0.0, 0.0))


def main():
    head_m = load(sys.argv[1], "head")
    g = torch.Generator().manual_seed(5)
    inputs = []
    for i in range(16):
        scale = [0.3, 1.0, 3.0, 10.0][i % 4]
        inputs.append((f"rand_b{1 + i % 4}_x{scale}", scale * (torch.rand(1 + i % 4, 2, 2048, generator=g) * 2 - 1)))
    base = torch.rand(2, 2, 2048, generator=g) * 2 - 1
    inputs += [("zeros", torch.zeros(2, 2, 2048)), ("tiny", base * 1e-30), ("huge", base * 1e6),
               ("negated", -base), ("nan", base.clone().index_put_((torch.tensor(0), torch.tensor(0), torch.tensor(5)), torch.tensor(float("nan")))),
               ("inf", base.clone().index_put_((torch.tensor(1), torch.tensor(1), torch.tensor(7)), torch.tensor(float("inf")))),
               ("dc_1.0", torch.ones(2, 2, 2048)), ("samples_4096", torch.rand(2, 2, 4096, generator=g) * 2 - 1)]
    for other in sys.argv[2:]:
        oth_m = load(other, "other")
        n = eq = rounding = 0
        for mode in ("eager", "compiled"):
            for grad in (False, True):
                torch.manual_seed(0)
                a = head_m.AutoEQ().eval()
                torch.manual_seed(0)
                b = oth_m.AutoEQ().eval()
                torch._dynamo.reset()
                fa = a if mode == "eager" else torch.compile(a, backend="eager")
                fb = b if mode == "eager" else torch.compile(b, backend="eager")
                for name, x in inputs:
                    ya, pa, ga = run(a, fa, x, grad)
                    yb, pb, gb = run(b, fb, x, grad)
                    # the hand rewrite keeps the level as a float32 tensor: its value may differ from
                    # head's float64 math.log10 in the 7th digit (counted apart, not as a difference)
                    peq = pa == pb or (math.isnan(pa) and math.isnan(pb))
                    pclose = peq or abs(pa - pb) <= 1e-5
                    ok = same(ya, yb) and pclose and len(ga) == len(gb) and all(same(u, v) for u, v in zip(ga, gb))
                    n += 1
                    eq += ok
                    rounding += ok and not peq
                    if not ok:
                        print(f"  DIFFER {other} {name} {mode} grad={grad}: out equal {same(ya, yb)}, peak_db {pa} / {pb}, "
                              f"grads equal {[same(u, v) for u, v in zip(ga, gb)][:3]}...")
        print(f"{other}: {eq} of {n} equal to head ({len(inputs)} inputs; eager and compiled; with and without gradients; "
              f"{rounding} of them with last_peak_db within 1e-5 dB, not equal: float32 against head's float64)", flush=True)
    for path in sys.argv[1:]:
        m = load(path, "r")
        torch.manual_seed(0)
        model = m.AutoEQ().eval()
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        c = torch.compile(model, backend="eager")
        gg = torch.Generator().manual_seed(9)
        with torch.no_grad():
            for i in range(12):
                c(torch.rand(2, 2, 2048, generator=gg) * 2 - 1)
        print(f"{path}: 12 same-shape batches: {torch._dynamo.utils.counters['stats']['unique_graphs']} unique graphs, "
              f"graph breaks {sum(torch._dynamo.utils.counters['graph_break'].values())}", flush=True)


main()
