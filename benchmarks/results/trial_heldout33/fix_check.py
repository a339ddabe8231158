"""Head against each variant of the trial's two PRs, with no pt2bot code.

PR 1 (nan-guard): head (model_nan_guard.py) against c0, the torch.where candidate the review offered
and refused ("a new recompile ... 5 recompiles there, head 2"; model_nan_guard_c0.py), the one
edit a user could have clicked had it been posted. PR 2 (minmax-normalise): head (model_minmax.py)
against the helper's hand edit (model_minmax_hand.py): the review posted no edit for it.

Inputs: the pt2bot.yml cases ([batch, 1, depth, 8, 8], batch 2/4, depth 8/12, uniform in [-1, 1)),
24 random volumes (batch 1 to 4, depth 4 to 16, scales 1e-3 to 1e3, offsets), and edge volumes:
zeros, a constant 0.5, tiny (x 1e-30), negated, x 1e3, one NaN voxel, half the voxels NaN, all
NaN, one inf, one -inf, inf and NaN together, a blank volume beside a normal one in the batch.
Each eager and compiled (torch.compile(backend="eager"), one compiled function per variant and
gradient mode, so shapes recompile as in training), without gradients and with the gradients of
the summed (non-finite zeroed) logits with respect to the input and every parameter. Compared
exactly: torch.equal with NaN positions equal, None gradients apart from zero ones, the same
exception type and first message line; the warnings the model file gives, apart. Seeded model
(torch.manual_seed(0) before building). Prints one line per difference and a table.

    /work/venvs/realcode/bin/python fix_check.py > fix_check.log 2> fix_check.stderr
    /work/venvs/realcode/bin/python fix_check.py pr2_nodetach > fix_check_nodetach.log 2> /dev/null

(model_minmax_hand_nodetach.py is the hand edit as first written, lo and hi kept as tensors with
their gradient: it differs from head in the input's gradient, which head's `.item()` cuts.)
"""
import importlib.util
import os
import sys
import warnings

import torch
import torch._dynamo

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)


def load(fname):
    spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(HERE, fname))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def inputs():
    g = torch.Generator().manual_seed(123)
    out = []
    for b, d in ((2, 8), (2, 12), (4, 8), (4, 12)):
        out.append((f"cfg_b{b}_d{d}", torch.rand(b, 1, d, 8, 8, generator=g) * 2 - 1))
    for i in range(24):
        b = 1 + i % 4
        d = 4 * (1 + i % 4)
        scale = [1e-3, 0.1, 1.0, 10.0, 1e3][i % 5]
        off = [0.0, -1.0, 0.5][i % 3]
        out.append((f"rand{i}_b{b}_d{d}_s{scale:g}", torch.randn(b, 1, d, 8, 8, generator=g) * scale + off))
    base = torch.rand(2, 1, 8, 8, 8, generator=g) * 2 - 1
    out.append(("zeros", torch.zeros_like(base)))
    out.append(("const0.5", torch.full_like(base, 0.5)))
    out.append(("tiny", base * 1e-30))
    out.append(("negated", -base))
    out.append(("x1e3", base * 1e3))
    x = base.clone(); x[0, 0, 3, 3, 3] = float("nan"); out.append(("nan_one", x))
    x = base.clone(); x[:, :, :4] = float("nan"); out.append(("nan_half", x))
    out.append(("nan_all", torch.full_like(base, float("nan"))))
    x = base.clone(); x[1, 0, 2, 2, 2] = float("inf"); out.append(("inf_one", x))
    x = base.clone(); x[0, 0, 1, 1, 1] = float("-inf"); out.append(("-inf_one", x))
    x = base.clone(); x[0, 0, 1, 1, 1] = float("inf"); x[1, 0, 0, 0, 0] = float("nan"); out.append(("inf_nan", x))
    x = base.clone(); x[0] = 0.0; out.append(("blank_beside_normal", x))
    return out


def run(model, fn, x, grad):
    model.zero_grad(set_to_none=True)
    xi = x.clone().requires_grad_(grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with torch.set_grad_enabled(grad):
                y = fn(xi)
                res = [y.detach().clone()]
                if grad:
                    s = torch.nan_to_num(y, nan=0.0, posinf=0.0, neginf=0.0).sum()
                    if s.requires_grad:
                        s.backward()
                    res.append(None if xi.grad is None else xi.grad.clone())
                    res += [None if p.grad is None else p.grad.clone() for p in model.parameters()]
        except Exception as e:  # noqa: BLE001
            res = ("raises", type(e).__name__, str(e).split("\n")[0][:160])
    warned = sorted({str(w.message)[:100] for w in caught if "model_" in (w.filename or "")})
    return res, warned


def same(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a == b
    if len(a) != len(b):
        return False
    for u, v in zip(a, b):
        if (u is None) != (v is None):
            return False
        if u is None:
            continue
        if u.shape != v.shape or u.dtype != v.dtype:
            return False
        if not torch.equal(torch.isnan(u), torch.isnan(v)):
            return False
        if not torch.equal(torch.nan_to_num(u, nan=0.0), torch.nan_to_num(v, nan=0.0)):
            return False
    return True


def maxdiff(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        return f"{a[1:] if isinstance(a, tuple) else 'ok'} / {b[1:] if isinstance(b, tuple) else 'ok'}"
    out = []
    for i, (u, v) in enumerate(zip(a, b)):
        if (u is None) != (v is None):
            out.append(f"[{i}] None vs tensor")
        elif u is not None and not same([u], [v]):
            fin = torch.isfinite(u) & torch.isfinite(v)
            d = (u - v)[fin].abs().max().item() if fin.any() else float("nan")
            out.append(f"[{i}] max|d| {d:.3g}, nan {int(torch.isnan(u).sum())}/{int(torch.isnan(v).sum())}")
    return "; ".join(out)


def side(fname, cases):
    torch._dynamo.reset()
    mod = load(fname)
    torch.manual_seed(0)
    model = mod.VolumePatchClassifier()
    compiled = {g: torch.compile(model, backend="eager") for g in (False, True)}
    out = {}
    for name, x in cases:
        for mode in ("eager", "compiled"):
            for grad in (False, True):
                fn = model if mode == "eager" else compiled[grad]
                out[(name, mode, grad)] = run(model, fn, x, grad)
    return out


def compare(title, head_file, var_file, cases):
    h = side(head_file, cases)
    h2 = side(head_file, cases)
    v = side(var_file, cases)
    n = len(h)
    rep = sum(1 for k in h if same(h[k][0], h2[k][0]))
    eq = sum(1 for k in h if same(h[k][0], v[k][0]))
    weq = sum(1 for k in h if h[k][1] == v[k][1])
    hw = sum(1 for k in h if h[k][1])
    vw = sum(1 for k in h if v[k][1])
    print(f"== {title}: {var_file} against {head_file}")
    print(f"   head's two runs agree on {rep} of {n}; results equal {eq} of {n}; warnings equal {weq} of {n} (head warns on {hw} calls, the variant on {vw})")
    for k in h:
        if not same(h[k][0], v[k][0]):
            print(f"   DIFFER {k[0]}/{k[1]}/{'grad' if k[2] else 'nograd'}: {maxdiff(h[k][0], v[k][0])}")
    for k in h:
        if h[k][1] != v[k][1]:
            print(f"   WARN differ {k[0]}/{k[1]}/{'grad' if k[2] else 'nograd'}: head {h[k][1]} / variant {v[k][1]}")
    hc = sum(1 for k in h if k[1] == "compiled" and same(h[k][0], h[(k[0], 'eager', k[2])][0]))
    vc = sum(1 for k in v if k[1] == "compiled" and same(v[k][0], v[(k[0], 'eager', k[2])][0]))
    print(f"   compiled equal to its own eager: head {hc}, variant {vc} (of {n // 2})")
    return eq, n, weq


if __name__ == "__main__":
    cases = inputs()
    print(f"torch {torch.__version__}, {len(cases)} inputs, 4 calls each (eager/compiled x grad/no grad)")
    if "pr1" in (sys.argv[1:] or ["pr1"]):
        compare("PR 1 c0 (refused, not posted)", "model_nan_guard.py", "model_nan_guard_c0.py", cases)
    which = sys.argv[1:] or ["pr1", "pr2"]
    if "pr2_nodetach" in which:
        compare("PR 2 hand edit without detach", "model_minmax.py", "model_minmax_hand_nodetach.py", cases)
    if "pr2" in which:
        compare("PR 2 hand edit", "model_minmax.py", "model_minmax_hand.py", cases)
