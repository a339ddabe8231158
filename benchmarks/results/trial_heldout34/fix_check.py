"""PR 1 of trial_heldout34 (peak normalisation): head (model_peak.py) against pt2bot's verified
suggestion (model_peak_fix.py), with no pt2bot code. Both models are built with seed 0 (equal
weights, asserted), run on the same inputs, eager and compiled (torch.compile, backend eager, one
compiled function per side and mode), in eval and in training mode (complex BatchNorm2d then
normalises with the batch's statistics and updates its running ones, compared too), without
gradients and with the gradients of the summed (non-finite zeroed) logits with respect to the
input and every parameter. Inputs: the pt2bot.yml's eight shape cases, 24 random maps (batch 1 to
6, range 8 to 28 and doppler 4 to 20 in steps of 4, scales 1e-3 to 1e3), and edge values: zeros,
one non-zero sample, a constant, tiny (1e-30, 1e-45 subnormal), negated, times 1e30, real-only,
imaginary-only, a NaN (real part, imaginary part, all), an inf, -inf, inf and NaN together, a
batch whose one map is empty beside a normal one. Exact comparison (torch.equal with equal NaN
positions; the same exception type and first message line)."""
import importlib.util
import sys
import warnings

import torch

torch.set_num_threads(1)
warnings.simplefilter("ignore")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HEAD, FIX = sys.argv[1], sys.argv[2]


def inputs():
    g = torch.Generator().manual_seed(7)
    C = lambda *s, scale=1.0: scale * torch.randn(*s, generator=g, dtype=torch.cfloat)   # noqa: E731
    out = []
    for b in (2, 4):
        for r in (16, 24):
            for d in (12, 16):
                out.append((f"case_b{b}_r{r}_d{d}", C(b, 2, r, d)))
    scales = [1e-3, 0.1, 1.0, 10.0, 1e3]
    for i in range(24):
        b, r, d = 1 + i % 6, 8 + 4 * (i % 6), 4 + 4 * (i % 5)
        out.append((f"rand{i}_b{b}_r{r}_d{d}_x{scales[i % 5]:g}", C(b, 2, r, d, scale=scales[i % 5])))
    base = C(2, 2, 16, 12)
    one = torch.zeros_like(base); one[0, 0, 3, 4] = 0.5 - 0.25j
    def setv(v, idx=(0, 1, 2, 3)):
        t = base.clone(); t[idx] = v; return t
    out += [
        ("zeros", torch.zeros_like(base)),
        ("one_nonzero_sample", one),
        ("constant", torch.full_like(base, 0.3 + 0.4j)),
        ("tiny_1e-30", base * 1e-30),
        ("subnormal_1e-45", torch.full_like(base, 1e-45)),
        ("negated", -base),
        ("huge_x1e30", base * 1e30),
        ("real_only", base.real.to(torch.cfloat)),
        ("imag_only", (1j * base.imag).to(torch.cfloat)),
        ("nan_real", setv(complex(float("nan"), 0.0))),
        ("nan_imag", setv(complex(0.0, float("nan")))),
        ("nan_all", torch.full_like(base, complex(float("nan"), float("nan")))),
        ("inf", setv(complex(float("inf"), 0.0))),
        ("neg_inf", setv(complex(float("-inf"), 1.0))),
        ("inf_and_nan", setv(complex(float("inf"), float("nan")))),
        ("empty_map_beside_normal", torch.cat([torch.zeros_like(base[:1]), base[1:]])),
    ]
    return out


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    na, nb = a.isnan(), b.isnan()
    return bool(torch.equal(na, nb) and torch.equal(torch.where(na, 0.0, a), torch.where(nb, 0.0, b)))


def run(path, name, mode, train, grad, cases):
    mod = load(path, name)
    torch.manual_seed(0)
    m = mod.RangeDopplerNet()
    m.train(train)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    torch._dynamo.reset()
    fn = torch.compile(m, backend="eager") if mode == "compiled" else m
    res = {}
    for cname, z in cases:
        m.load_state_dict(state)
        x = z.clone().requires_grad_(grad)
        try:
            if grad:
                m.zero_grad(set_to_none=True)
                y = fn(x)
                torch.nan_to_num(y, 0.0, 0.0, 0.0).sum().backward()
                gr = [x.grad] + [p.grad for p in m.parameters()]
            else:
                with torch.no_grad():
                    y = fn(x)
                gr = []
            res[cname] = ("ok", y.detach(), [None if t is None else t.detach() for t in gr],
                          {k: v.clone() for k, v in m.state_dict().items()})
        except Exception as e:   # noqa: BLE001 - a raise is a result
            res[cname] = ("raise", type(e).__name__, str(e).split("\n")[0][:200])
    return res, {k: v.clone() for k, v in state.items()}


cases = inputs()
total = equal = 0
diffs = []
for mode in ("eager", "compiled"):
    for train in (False, True):
        for grad in (False, True):
            h, hs = run(HEAD, "head_mod", mode, train, grad, cases)
            f, fs = run(FIX, "fix_mod", mode, train, grad, cases)
            assert all(torch.equal(hs[k], fs[k]) for k in hs), "weights differ"
            for cname, _ in cases:
                a, b = h[cname], f[cname]
                total += 1
                tag = f"{cname}/{mode}/{'train' if train else 'eval'}/{'grad' if grad else 'nograd'}"
                if a[0] != b[0]:
                    diffs.append(f"{tag}: head {a[0]} {a[1:] if a[0] != 'ok' else ''} / fix {b[0]} {b[1:] if b[0] != 'ok' else ''}")
                elif a[0] == "raise":
                    if a[1:] == b[1:]:
                        equal += 1
                    else:
                        diffs.append(f"{tag}: head raises {a[1:]} / fix raises {b[1:]}")
                else:
                    o = same(a[1], b[1])
                    g = len(a[2]) == len(b[2]) and all(same(x, y) for x, y in zip(a[2], b[2]))
                    s = all(same(a[3][k], b[3][k]) for k in a[3])
                    if o and g and s:
                        equal += 1
                    else:
                        d = (a[1] - b[1]).abs()
                        d = d[torch.isfinite(d)]
                        diffs.append(f"{tag}: outputs equal {o}, grads equal {g}, state equal {s}; "
                                     f"max |out diff| {float(d.max()) if d.numel() else float('nan'):.3g}; "
                                     f"head out[0] {a[1][0].tolist()} fix out[0] {b[1][0].tolist()}")
print(f"{HEAD} vs {FIX}: {equal} of {total} results equal "
      f"({len(cases)} inputs x eager/compiled x eval/train x no grad/grad)")
for d in diffs:
    print("DIFFER", d)

# graph breaks and export of each side, on one input
for path, name in ((HEAD, "h2"), (FIX, "f2")):
    mod = load(path, name)
    torch.manual_seed(0)
    m = mod.RangeDopplerNet().eval()
    z = cases[0][1]
    torch._dynamo.reset()
    e = torch._dynamo.explain(m)(z)
    try:
        torch.export.export(m, (z,))
        ex = "exports"
    except Exception as ex_:   # noqa: BLE001
        ex = f"export raises {type(ex_).__name__}: {str(ex_).splitlines()[0][:150]}"
    print(f"{path}: graph breaks {e.graph_break_count}, graphs {e.graph_count}; {ex}")
