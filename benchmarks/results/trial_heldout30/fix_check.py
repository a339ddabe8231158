"""Head against the review's verified suggestion (PR 1) and against my hand edit (PR 2), with no
pt2bot code: the enhancer's forward on many inputs, including edge values, eager and compiled.

    /work/venvs/realcode/bin/python fix_check.py > fix_check.log

Pairs (files beside this one):
  PR 1  model_warn_low_sdr.py       vs model_warn_low_sdr_fix.py        (the verified suggestion)
  PR 2  model_skip_silent_refs.py   vs model_skip_silent_refs_hand.py   (my edit; nothing was verified)

Inputs (noisy, clean), [batch, samples]: speech-like (clean ~ N(0,1), noisy = clean + 0.3 N(0,1))
for batch 1, 2, 4 and samples 1024, 1600; the clean reference all zero; one example's reference
zero; noisy equal to clean; both all zero; both times 1e-6 (tiny), 1e-40 (denormal), 1e4 (large);
both negated; a NaN, an inf in noisy; a NaN, an inf in clean. Weights: as built (seed 0) and all
zero. Modes: eager; torch.compile with the eager backend (counting its compiles) and with inductor
(a subset of inputs), each compiled once per side and gradient mode so that the inputs recompile
as in training. Without and with gradients (of the sum of the finite outputs, w.r.t. noisy, clean
and every parameter). Compared exactly (torch.equal, NaN where NaN), and so are the warnings each
call gives ("enhancer: ..." messages).
"""
import importlib.util
import os
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)


def load(fname):
    spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(HERE, fname))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Enhancer


def inputs():
    g = torch.Generator().manual_seed(7)
    out = []
    for b in (1, 2, 4):
        for t in (1024, 1600):
            c = torch.randn(b, t, generator=g)
            out.append((f"speech_b{b}_t{t}", c + 0.3 * torch.randn(b, t, generator=g), c))
    c = torch.randn(2, 1024, generator=g)
    n = c + 0.3 * torch.randn(2, 1024, generator=g)
    z = c.clone(); z[0] = 0
    out += [("clean_all_zero", n, torch.zeros_like(c)), ("clean_one_zero", n, z),
            ("noisy_eq_clean", c.clone(), c), ("both_zero", torch.zeros_like(n), torch.zeros_like(c)),
            ("tiny", n * 1e-6, c * 1e-6), ("denormal", n * 1e-40, c * 1e-40),
            ("large", n * 1e4, c * 1e4), ("negated", -n, -c)]
    for where in ("noisy", "clean"):
        for name, v in (("nan", float("nan")), ("inf", float("inf"))):
            nn_, cc = n.clone(), c.clone()
            (nn_ if where == "noisy" else cc)[0, 5] = v
            out.append((f"{name}_{where}", nn_, cc))
    return out


INDUCTOR_SUBSET = {"speech_b2_t1024", "speech_b4_t1600", "clean_one_zero", "clean_all_zero",
                   "both_zero", "nan_clean", "tiny"}


def run(cls, mode, grad, weights, ins, counter):
    torch.manual_seed(0)
    model = cls().eval()
    if weights == "zero":
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    if mode == "eager":
        fn = model
    elif mode == "compiled_eager":
        def backend(gm, ex):
            counter[0] += 1
            return gm.forward
        torch._dynamo.reset()
        fn = torch.compile(model, backend=backend)
    else:
        torch._dynamo.reset()
        fn = torch.compile(model)
    res = {}
    for name, n, c in ins:
        if mode == "compiled_inductor" and name not in INDUCTOR_SUBSET:
            continue
        model.load_state_dict(state)
        model.zero_grad(set_to_none=True)
        n_ = n.clone().requires_grad_(grad)
        c_ = c.clone().requires_grad_(grad)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                with torch.set_grad_enabled(grad):
                    outs = fn(n_, c_)
                    outs = [o.detach().clone() for o in outs] if not grad else list(outs)
                    grads = None
                    if grad:
                        s = sum(torch.where(torch.isfinite(o), o, 0).sum() for o in outs)
                        s.backward()
                        grads = [None if x.grad is None else x.grad.clone() for x in (n_, c_)]
                        grads += [None if p.grad is None else p.grad.clone() for p in model.parameters()]
                        outs = [o.detach().clone() for o in outs]
                r = ("ok", outs, grads)
            except Exception as e:  # noqa: BLE001
                r = ("raised", type(e).__name__, str(e).splitlines()[0][:200])
        msgs = [str(x.message) for x in w if str(x.message).startswith("enhancer")]
        res[name] = (r, msgs)
    return res


def same_t(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(torch.isnan(a), torch.isnan(b)) \
        and torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0))


def same(ra, rb):
    if ra[0] != rb[0]:
        return False
    if ra[0] == "raised":
        return ra[1:] == rb[1:]
    if not all(same_t(x, y) for x, y in zip(ra[1], rb[1])):
        return False
    if ra[2] is None:
        return rb[2] is None
    return all(same_t(x, y) for x, y in zip(ra[2], rb[2]))


def describe(ra, rb):
    if ra[0] != rb[0] or ra[0] == "raised":
        return f"head {ra[0]} {ra[1:] if ra[0] == 'raised' else ''} / other {rb[0]} {rb[1:] if rb[0] == 'raised' else ''}"
    parts = []
    for i, (x, y) in enumerate(zip(ra[1], rb[1])):
        if not same_t(x, y):
            parts.append(f"output {i}: head {x.flatten()[:3].tolist()} / other {y.flatten()[:3].tolist()}")
    if ra[2] is not None:
        names = ["d noisy", "d clean"] + [f"d param{j}" for j in range(len(ra[2]) - 2)]
        bad = [names[j] for j, (x, y) in enumerate(zip(ra[2], rb[2])) if not same_t(x, y)]
        if bad:
            x, y = ra[2][names.index(bad[0])], rb[2][names.index(bad[0])]
            det = ("None vs tensor" if (x is None) != (y is None) else
                   f"max |diff| {float((torch.nan_to_num(x) - torch.nan_to_num(y)).abs().max()):.3g}, "
                   f"NaN head {int(torch.isnan(x).sum())} / other {int(torch.isnan(y).sum())}")
            parts.append(f"gradients differ: {bad[:4]}{' ...' if len(bad) > 4 else ''} ({bad[0]}: {det})")
    return "; ".join(parts)


def main():
    ins = inputs()
    pairs = [("PR 1 (verified suggestion)", "model_warn_low_sdr.py", "model_warn_low_sdr_fix.py"),
             ("PR 2 (my hand edit)", "model_skip_silent_refs.py", "model_skip_silent_refs_hand.py")]
    for title, fh, fo in pairs:
        H, O = load(fh), load(fo)
        tot = eq = 0
        wtot = weq = 0
        print(f"== {title}: {fh} vs {fo}")
        for mode in ("eager", "compiled_eager", "compiled_inductor"):
            for weights in ("built", "zero"):
                if mode == "compiled_inductor" and weights == "zero":
                    continue
                for grad in (False, True):
                    ch, co = [0], [0]
                    rh = run(H, mode, grad, weights, ins, ch)
                    ro = run(O, mode, grad, weights, ins, co)
                    diffs = []
                    for k in rh:
                        tot += 1
                        wtot += 1
                        if same(rh[k][0], ro[k][0]):
                            eq += 1
                        else:
                            diffs.append(f"{k}: {describe(rh[k][0], ro[k][0])}")
                        if rh[k][1] == ro[k][1]:
                            weq += 1
                        else:
                            diffs.append(f"{k}: WARNINGS head {len(rh[k][1])} {rh[k][1][:1]} / other {len(ro[k][1])} {ro[k][1][:1]}")
                    tag = f"{mode}/{weights}/{'grad' if grad else 'nograd'}"
                    extra = f"; compiles head {ch[0]}, other {co[0]}" if mode == "compiled_eager" else ""
                    nwarn = sum(bool(v[1]) for v in rh.values())
                    print(f"   {tag}: {len(rh) - sum(1 for d in diffs if 'WARNINGS' not in d)} of {len(rh)} results equal; "
                          f"head warned on {nwarn} calls, other on {sum(bool(v[1]) for v in ro.values())}{extra}", flush=True)
                    for d in diffs:
                        print(f"      DIFFER {d}")
        print(f"   total: results {eq} of {tot} equal; warnings {weq} of {wtot} equal")


if __name__ == "__main__":
    sys.exit(main())
