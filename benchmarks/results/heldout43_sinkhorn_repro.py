"""Plain-torch repro (no pt2bot code) of what heldout43_rerun.log finds for PTC101's verified edit
of otloss's Sinkhorn convergence test (otloss/functional.py:106, verified by
realcode_proof_heldout43_matrix.json on three models): `if not torch.compiler.is_compiling() and
(f - f_prev).abs().max().item() < tol: break`. In eager the loop stops where head stops; compiled,
it runs all max_iter iterations. Once the potentials have converged, the extra iterations leave
the forward values equal or within an ulp, but the gradient is taken through every unrolled
iteration: the derivative of the max_iter-fold map, not of the k-fold one head stops at. So the
compiled gradients differ from head's, by more as max_iter grows past the iteration head stops
at; and every compiled call does max_iter iterations of work.

otloss's `_sinkhorn_core` (functional.py:75-110, as released) is copied twice, head and edited (the
posted line in place of line 106); each runs eager and compiled (torch.compile(backend="eager")),
one thread, on one pair of point clouds with the gradient of the cost with respect to the first.

    /work/venvs/realcode/bin/python benchmarks/results/heldout43_sinkhorn_repro.py > benchmarks/results/heldout43_sinkhorn_repro.log 2>&1
"""
import importlib.util
import inspect
import time

import torch

torch.set_num_threads(1)
import otloss.functional as F_ot  # noqa: E402

src = inspect.getsource(F_ot._sinkhorn_core)
line = "        if (f - f_prev).abs().max().item() < tol:\n"
assert src.count(line) == 1
ns_h, ns_p = {"torch": torch, "Tensor": torch.Tensor, "Tuple": tuple}, {"torch": torch, "Tensor": torch.Tensor, "Tuple": tuple}
exec(src, ns_h)
exec(src.replace(line, "        if not torch.compiler.is_compiling() and (f - f_prev).abs().max().item() < tol:\n"), ns_p)
head, edited = ns_h["_sinkhorn_core"], ns_p["_sinkhorn_core"]


def iters(a, b, C, blur, max_iter, tol):
    """How many iterations head runs before its break."""
    eps = blur ** 2
    log_a, log_b = a.clamp(min=1e-38).log(), b.clamp(min=1e-38).log()
    f, g = torch.zeros_like(a), torch.zeros_like(b)
    for i in range(max_iter):
        f_prev = f
        f = eps * (log_a - torch.logsumexp((g.unsqueeze(1) - C) / eps, dim=2))
        g = eps * (log_b - torch.logsumexp((f.unsqueeze(2) - C) / eps, dim=1))
        if (f - f_prev).abs().max().item() < tol:
            return i + 1
    return max_iter


def call(fn, x, y, blur, max_iter, tol):
    x = x.clone().requires_grad_(True)
    a = torch.full((1, x.shape[1]), 1.0 / x.shape[1])
    b = torch.full((1, y.shape[1]), 1.0 / y.shape[1])
    C = F_ot.cost_matrix(x, y)
    _, _, cost = fn(a, b, C, blur, max_iter, tol)
    (gx,) = torch.autograd.grad(cost.sum(), x)
    return cost.detach(), gx


print("torch", torch.__version__)
g = torch.Generator().manual_seed(0)
x, y = torch.randn(1, 8, 3, generator=g), torch.randn(1, 6, 3, generator=g) * 0.5 + 0.3
for blur, max_iter, tol in [(0.5, 10, 1e-6), (0.5, 100, 1e-6), (0.3, 100, 1e-6), (0.1, 100, 1e-6), (0.1, 300, 1e-6)]:
    a = torch.full((1, 8), 1 / 8); b = torch.full((1, 6), 1 / 6)
    k = iters(a, b, F_ot.cost_matrix(x, y), blur, max_iter, tol)
    res = {}
    for name, fn in (("head", head), ("edited", edited)):
        torch._dynamo.reset()
        c = torch.compile(fn, backend="eager")
        res[name + " eager"] = call(fn, x, y, blur, max_iter, tol)
        res[name + " compiled"] = call(c, x, y, blur, max_iter, tol)
        t0 = time.perf_counter()
        for _ in range(20):
            call(c, x, y, blur, max_iter, tol)
        res[name + " t"] = (time.perf_counter() - t0) / 20
    hc, hg = res["head eager"]
    print(f"blur {blur} max_iter {max_iter} tol {tol}: head breaks after {k} iterations")
    for key in ("head compiled", "edited eager", "edited compiled"):
        c, gx = res[key]
        print(f"   {key:<16} cost equal {torch.equal(c, hc)} (max |diff| {(c - hc).abs().max().item():.3g}), "
              f"grad equal {torch.equal(gx, hg)} (max |diff| {(gx - hg).abs().max().item():.3g}, relative {((gx - hg).norm() / hg.norm()).item():.3g})")
    print(f"   compiled call with its backward: head {res['head t'] * 1e3:.2f} ms, edited {res['edited t'] * 1e3:.2f} ms")

# an empty cloud: head's .max() of an empty tensor raises; the edited compiled loop never calls it
x0, y0 = torch.zeros(1, 0, 3), torch.randn(1, 6, 3, generator=g)
for name, fn in (("head", head), ("edited", edited)):
    for kind in ("eager", "compiled"):
        torch._dynamo.reset()
        f = fn if kind == "eager" else torch.compile(fn, backend="eager")
        try:
            a = torch.zeros(1, 0); b = torch.full((1, 6), 1 / 6)
            _, _, cost = f(a, b, F_ot.cost_matrix(x0, y0), 0.5, 10, 1e-6)
            out = f"ok, cost {cost.tolist()}"
        except Exception as e:  # noqa: BLE001
            out = f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
        print(f"empty source cloud, {name} {kind}: {out}")
