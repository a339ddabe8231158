"""fix_check.py (no pt2bot code): the two PRs' heads against every suggestion pt2bot posted as
verified, on many inputs including edge values, eager and compiled (backend "eager", as the
pt2bot.yml runs; one compiled function per variant and gradient mode, so sizes recompile as in
an MD loop), without and with gradients (of the summed energy with respect to the positions and
every parameter). Compared exactly: outputs (torch.equal, NaN positions equal), the exception's
type and message, the gradients, and the warnings each call gives.

    /work/venvs/realcode/bin/python fix_check.py > fix_check.log 2>&1
"""
import importlib.util
import sys
import warnings

import torch

torch.set_num_threads(1)
sys.path.insert(0, ".")
import data  # noqa: E402  (the user's input factory, mlpot/data.py)


def load(path):
    spec = importlib.util.spec_from_file_location(path[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.PairPotential


def inputs():
    out = []
    g = torch.Generator().manual_seed(7)
    for n in (8, 12):
        out.append((f"factory_n{n}", *data.make_inputs(n)))
    for n in list(range(1, 31)):
        side = [3.0, 4.0, 6.0][n % 3]
        out.append((f"rand_n{n}_side{side}", torch.rand(n, 3, generator=g, dtype=torch.float64) * side,
                    torch.eye(3, dtype=torch.float64) * side))
    pos, cell = data.make_inputs(8)
    out += [
        ("zeros", torch.zeros_like(pos), cell),                       # every atom on one point
        ("two_close", torch.cat([pos[:1], pos[:1] + 0.1, pos[2:]]), cell),   # one pair 0.17 apart
        ("at_min_distance", torch.cat([pos[:1], pos[:1] + torch.tensor([0.3, 0, 0], dtype=torch.float64), pos[2:]]), cell),
        ("tiny", pos * 1e-30, cell),
        ("negative", -pos, cell),                                     # outside the cell
        ("large", pos * 1e3, cell),
        ("nan", torch.where(torch.arange(24).view(8, 3) == 4, float("nan"), pos), cell),
        ("inf", torch.where(torch.arange(24).view(8, 3) == 4, float("inf"), pos), cell),
        ("neg_inf", torch.where(torch.arange(24).view(8, 3) == 4, float("-inf"), pos), cell),
        ("one_atom", pos[:1], cell),
        ("small_cell", pos * 0.25, cell * 0.25),                      # side 1 < cutoff 2.5
    ]
    return out


def call(fn, model, pos, cell, grad):
    model.zero_grad(set_to_none=True)
    p = pos.clone().requires_grad_(grad)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            with torch.set_grad_enabled(grad):
                e, ea = fn(p, cell)
                g = None
                if grad:
                    torch.nan_to_num(e, 0.0, 0.0, 0.0).backward()
                    g = [p.grad] + [q.grad for q in model.parameters()]
            res = ("ok", e.detach(), ea.detach(), g)
        except Exception as ex:  # noqa: BLE001 - a raise is a result
            res = ("raise", type(ex).__name__, str(ex).split("\n")[0][:120])
    warned = sorted({str(x.message)[:60] for x in w if "PairPotential" in str(x.message)})
    return res, warned


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and torch.equal(a.isnan(), b.isnan())
                and torch.equal(torch.nan_to_num(a, 0.0, 1.0, -1.0), torch.nan_to_num(b, 0.0, 1.0, -1.0)))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def run(path):
    torch.manual_seed(0)
    model = load(path)().eval()
    res = {}
    for mode in ("eager", "compiled"):
        for grad in (False, True):
            torch._dynamo.reset()
            fn = torch.compile(model, backend="eager") if mode == "compiled" else model
            for name, pos, cell in inputs():
                res[(name, mode, grad)] = call(fn, model, pos, cell, grad)
    return res


def compare(head_path, fix_paths):
    head = run(head_path)
    head2 = run(head_path)
    rep = sum(same(head[k][0], head2[k][0]) and head[k][1] == head2[k][1] for k in head)
    print(f"== {head_path}: head's two runs agree on {rep} of {len(head)} results")
    raised = sum(1 for k in head if head[k][0][0] == "raise")
    print(f"   head raises on {raised} of {len(head)} calls: "
          + "; ".join(sorted({f'{k[0]}/{k[1]}: {head[k][0][1]}: {head[k][0][2]}' for k in head
                              if head[k][0][0] == 'raise'})[:6]))
    for fp in fix_paths:
        fix = run(fp)
        n_out = sum(same(head[k][0], fix[k][0]) for k in head)
        n_w = sum(head[k][1] == fix[k][1] for k in head)
        print(f"-- {fp}: results (outputs, gradients, exceptions) equal on {n_out} of {len(head)}; "
              f"warnings equal on {n_w} of {len(head)}")
        for k in head:
            if not same(head[k][0], fix[k][0]):
                h, f = head[k][0], fix[k][0]
                hs = h[0] if h[0] == "ok" else f"{h[1]}: {h[2]}"
                fs = f[0] if f[0] == "ok" else f"{f[1]}: {f[2]}"
                print(f"   DIFFER {k[0]}/{k[1]}/{'grad' if k[2] else 'nograd'}: head {hs} / fix {fs}")
        wd = [k for k in head if head[k][1] != fix[k][1]]
        for k in wd[:8]:
            print(f"   warnings differ {k[0]}/{k[1]}/{'grad' if k[2] else 'nograd'}: head {head[k][1]} / fix {fix[k][1]}")
        if len(wd) > 8:
            print(f"   ... {len(wd) - 8} more; of them compiled: {sum(k[1] == 'compiled' for k in wd)}, "
                  f"eager: {sum(k[1] == 'eager' for k in wd)}")
        hw = sum(1 for k in head if head[k][1])
        print(f"   calls where head warns: {hw} (eager {sum(1 for k in head if head[k][1] and k[1] == 'eager')}, "
              f"compiled {sum(1 for k in head if head[k][1] and k[1] == 'compiled')}); where the fix warns: "
              f"{sum(1 for k in fix if fix[k][1])}")


if __name__ == "__main__":
    print(f"torch {torch.__version__}")
    compare("model_close_contact.py", ["model_close_contact_fixA.py", "model_close_contact_fixB.py",
                                       "model_close_contact_fixAB.py"])
    compare("model_nan_guard.py", ["model_nan_guard_fix.py"])
