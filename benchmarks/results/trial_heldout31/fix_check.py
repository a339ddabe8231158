"""Independent check (no pt2bot code) of the trial's suggestions and edits on ActivityHD.

Pairs, each head against an edit, on the same inputs and weights:
  reject:  model_reject_unknown.py (PR 2, `if unknown.any(): pred[unknown] = -1`) against
           model_reject_unknown_fix.py (the review's "Verified fix": the `if` dropped);
  clip_c0: model_clip_out_of_range.py (PR 1) against model_clip_out_of_range_c0.py (PR 1's first
           candidate, refused by the review for a recompile: torch.where over the any-mask, the
           warning in eager only);
  clip_hand: PR 1 against model_clip_out_of_range_hand.py (my edit: clamp always, warn in eager
           only).
Inputs: uniform readings in [0, 1] for batch 1, 2, 4, 8, 16; all 0; all 1; tiny (1e-30);
denormal (1e-40); negative (-0.5); above 1 (1.7); one reading out of range; readings x 1e6; a NaN;
an inf; a -inf. Weights: as built (Centroid prototypes all 0, as the review's models run it) and
"trained" (prototypes from Centroid.add over 64 random labelled windows, then one prototype zeroed),
and reject_below 0.1 and -2 (never rejects). Eager, compiled with the eager backend (one compiled
model per pair side and weight set, called over all inputs in order, so shapes recompile as in
serving) and with inductor (on the first 6 inputs). No gradients: torchhd's embeddings and
prototypes have requires_grad=False and the inputs are read through an index.
Compared exactly: torch.equal on every output (NaN positions equal), dtype, shape, the
exception type and message's first line, and the warnings each call gives.
"""
import importlib.util
import os
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def load(fname):
    spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(HERE, fname))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ActivityHD


def inputs():
    g = torch.Generator().manual_seed(1)
    out = []
    for b in (1, 2, 4, 8, 16):
        out.append((f"uniform_b{b}", torch.rand(b, 16, generator=g)))
    base = torch.rand(4, 16, generator=g)
    out += [("zeros", torch.zeros(4, 16)), ("ones", torch.ones(4, 16)),
            ("tiny", torch.full((4, 16), 1e-30)), ("denormal", torch.full((4, 16), 1e-40)),
            ("negative", torch.full((4, 16), -0.5)), ("above1", torch.full((4, 16), 1.7))]
    one = base.clone(); one[1, 3] = 1.25
    out.append(("one_out_of_range", one))
    out.append(("x1e6", base * 1e6))
    for name, v in (("nan", float("nan")), ("inf", float("inf")), ("-inf", float("-inf"))):
        t = base.clone(); t[2, 5] = v
        out.append((name, t))
    return out


def build(cls, weights, reject):
    torch.manual_seed(0)
    kw = {"dim": 256}
    if reject is not None:
        kw["reject_below"] = reject
    m = cls(**kw).eval()
    if weights == "trained":
        g = torch.Generator().manual_seed(2)
        with torch.no_grad():
            x = torch.rand(64, 16, generator=g)
            y = torch.randint(0, 4, (64,), generator=g)
            m.centroid.add(m.encode(x).as_subclass(torch.Tensor), y)
            m.centroid.weight[3].zero_()
    return m


def call(m, x):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            with torch.no_grad():
                o = m(x.clone())
            o = o if isinstance(o, tuple) else (o,)
            res = ("ok", tuple(t.as_subclass(torch.Tensor).clone() for t in o))
        except Exception as e:  # noqa: BLE001
            res = ("raise", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    msgs = tuple(str(x.message) for x in w if "ActivityHD" in str(x.message))
    return res, msgs


def same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "raise":
        return a[1] == b[1]
    if len(a[1]) != len(b[1]):
        return False
    for x, y in zip(a[1], b[1]):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.is_floating_point():
            if not torch.equal(torch.isnan(x), torch.isnan(y)):
                return False
            if not torch.equal(torch.nan_to_num(x, nan=0.0), torch.nan_to_num(y, nan=0.0)):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def run_pair(tag, head_f, edit_f, rejects):
    H, E = load(head_f), load(edit_f)
    n = eq = 0
    warn_eq = 0
    warn_counts = {}
    diffs = []
    for weights in ("built", "trained"):
        for reject in rejects:
            for mode in ("eager", "compiled_eager", "inductor"):
                torch._dynamo.reset()
                hm, em = build(H, weights, reject), build(E, weights, reject)
                if mode != "eager":
                    backend = "eager" if mode == "compiled_eager" else "inductor"
                    hm, em = torch.compile(hm, backend=backend), torch.compile(em, backend=backend)
                ins = inputs() if mode != "inductor" else inputs()[:6]
                for name, x in ins:
                    (hr, hw), (er, ew) = call(hm, x), call(em, x)
                    n += 1
                    ok = same(hr, er)
                    eq += ok
                    warn_eq += hw == ew
                    k = (mode, weights)
                    c = warn_counts.setdefault(k, [0, 0, 0])
                    c[0] += 1; c[1] += bool(hw); c[2] += bool(ew)
                    if not ok or hw != ew:
                        diffs.append(f"  {weights:7s} reject={reject} {mode:14s} {name:16s} "
                                     f"outputs {'equal' if ok else 'DIFFER'}; warnings head {len(hw)} edit {len(ew)}"
                                     + ("" if ok else f"; head {hr[0]} edit {er[0]}"
                                        + (f" ({hr[1]} / {er[1]})" if 'raise' in (hr[0], er[0]) else "")))
    print(f"{tag}: {head_f} vs {edit_f}: outputs equal on {eq} of {n} results; warnings equal on {warn_eq} of {n}")
    for (mode, weights), (calls, hwn, ewn) in sorted(warn_counts.items()):
        print(f"  warned: {mode:14s} weights {weights:7s}: head on {hwn} of {calls} calls, edit on {ewn}")
    for d in diffs:
        print(d)
    return eq == n


if __name__ == "__main__":
    torch.set_num_threads(1)
    print("torch", torch.__version__)
    ok = run_pair("reject", "model_reject_unknown.py", "model_reject_unknown_fix.py", (0.1, -2.0))
    ok &= run_pair("clip_c0", "model_clip_out_of_range.py", "model_clip_out_of_range_c0.py", (None,))
    ok &= run_pair("clip_hand", "model_clip_out_of_range.py", "model_clip_out_of_range_hand.py", (None,))
    sys.exit(0 if ok else 1)
