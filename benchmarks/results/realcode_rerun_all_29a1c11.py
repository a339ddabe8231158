"""Independent re-run, with no pt2bot code, of every edit (and dynamo setting) that the real-code
proof at 29a1c11 verifies on its main set (benchmarks/results/realcode_proof_verified_models_29a1c11
.json), plus two named checks of a torchdiffeq edit the proof no longer verifies.

    /work/venvs/realcode/bin/python benchmarks/results/realcode_rerun_all_29a1c11.py PHASE [KEY...]

PHASE: `claims` (the two named checks), `core` (the spec's cases and the edge inputs) or `fresh`
(8 freshly drawn inputs per model); KEY limits the run to those model keys. Side results are
cached under $RR_WORK (default /tmp/rr49_work) so that a phase can be resumed.

Harness (adapted from heldout18_rerun.py, written anew here; only models.py is imported):
1. a copy of the installed package per side; an edit replaces `start_line..end_line` of `path`
   with `lines`; a setting leaves the package as installed and sets
   `torch._dynamo.config.<setting> = True` in the patched side's process before anything runs;
2. each side is its own subprocess that imports the package from its copy (asserted), builds the
   model from models.py (torch.manual_seed(0), one thread, `.eval()`), and for each input runs
   eager and compiled (`torch.compile(model, backend="eager")`, `torch._dynamo.reset()` before
   every compiled call), each without gradients and with the gradients of the sum of the
   floating outputs (non-finite entries zeroed by nan_to_num, so one NaN output does not hide
   every other gradient) with respect to every floating input tensor and every parameter. The
   state dict is restored and `torch.manual_seed(1)` set before every call. A call past 60 s is
   the result "timeout".
3. head vs patched bit for bit (same dtype/shape, torch.equal with NaN positions equal; None
   grads equal only to None; exceptions by type). A second head process (control) is compared
   with the first: a head/patched difference counts as edit-caused only where head agrees with
   itself on that result.

Inputs per model: the spec's cases (`case*`); edge inputs built on the first case: `zeros`
(every floating, integer and bool input all 0/False), `ones` (all 1/True), `x50` (floats x 50),
`nan` and `inf` (one entry of the first floating input), `neg` (floats negated) -- for models
with no floating input (uint8 images) only zeros and ones apply; fresh draws (`fresh*`): every
tensor redrawn with the spec's kind (uint8 in 0..255, integer labels in 0..max, bools, binary
floats, [0, 1] floats, time-free y0 etc. as randn x scale), batch / length varied, image sides in
{16, 32, 48}, NaViT image lists with a random group structure.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
REAL = os.path.join(REPO, "benchmarks", "real_code")
PY = sys.executable
RESULTS = os.path.join(HERE, "realcode_proof_verified_models_29a1c11.json")
WORK = os.environ.get("RR_WORK", "/tmp/rr49_work")
CALL_TIMEOUT = int(os.environ.get("RR_CALL_TIMEOUT", "60"))
N_FRESH = int(os.environ.get("RR_N_FRESH", "8"))

# ---------------------------------------------------------------- the two named checks (step 2)
MISC = "torchdiffeq/_impl/misc.py"
CLAIM_EDITS = {
    "claimA_where": {"path": MISC, "start_line": 60, "end_line": 63, "lines": [
        "    h0 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.tensor(1e-6, dtype=dtype, device=device), "
        "0.01 * d0 / d1)"]},
    "claimB_safe_d1": {"path": MISC, "start_line": 60, "end_line": 63, "lines": [
        "    test = (d0 < 1e-5) | (d1 < 1e-5)",
        "    safe_d1 = torch.where(test, torch.ones_like(d1), d1)",
        "    h0 = torch.where(test, torch.tensor(1e-6, dtype=dtype, device=device), 0.01 * d0 / safe_d1)"]},
    # the verified edit misc.py:71-74 (edit id in the phase logs: torchdiffeq/_impl/misc.py:71-74),
    # copied from the results JSON, run on the zero-field model
    "claimC_h1_where": {"path": MISC, "start_line": 71, "end_line": 74, "lines": [
        "    h1 = torch.where((d1 <= 1e-15) & (d2 <= 1e-15), torch.max(torch.tensor(1e-6, dtype=dtype, "
        "device=device), h0 * 1e-3), (0.01 / max(d1, d2)) ** (1. / float(order + 1)))"]},
}
CLAIM_HEAD_LINES = [   # what lines 60-63 must read in the installed torchdiffeq (asserted)
    "    if d0 < 1e-5 or d1 < 1e-5:",
    "        h0 = torch.tensor(1e-6, dtype=dtype, device=device)",
    "    else:",
    "        h0 = 0.01 * d0 / d1",
]
# (model, edits): the spec's vector field, and the same field with its last layer zero-initialised
# (f == 0 everywhere: a common neural-ODE init), where d1 = d2 = 0 in _select_initial_step
CLAIM_RUNS = [("claim:dopri5", ["claimA_where", "claimB_safe_d1"]),
              ("claim:adaptive_heun", ["claimA_where", "claimB_safe_d1"]),
              ("claim0:dopri5", ["claimC_h1_where"]),
              ("claim0:adaptive_heun", ["claimC_h1_where"])]


def installed(package: str) -> str:
    import importlib.util
    return importlib.util.find_spec(package).submodule_search_locations[0]


def make_copy(package: str, cand: dict[str, Any] | None, dest: str) -> str:
    if not os.path.isdir(os.path.join(dest, package)):
        tmp = dest + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(installed(package), os.path.join(tmp, package),
                        ignore=shutil.ignore_patterns("__pycache__"))
        if cand and not cand.get("setting"):
            path = os.path.join(tmp, cand["path"])
            with open(path) as f:
                src = f.read().splitlines(keepends=True)
            src[cand["start_line"] - 1:cand["end_line"]] = [ln + "\n" for ln in cand["lines"]]
            with open(path, "w") as f:
                f.writelines(src)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
        os.rename(tmp, dest)
    return dest


# ------------------------------------------------------------------------------ inputs
def _leaves(x: Any) -> list[Any]:
    import torch
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for y in x for t in _leaves(y)]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in _leaves(x[k])]
    return []


def _map(f: Any, x: Any) -> Any:
    import torch
    if isinstance(x, torch.Tensor):
        return f(x)
    if isinstance(x, tuple):
        return tuple(_map(f, y) for y in x)
    if isinstance(x, list):
        return [_map(f, y) for y in x]
    return x


def _kind(a: Any) -> str:
    import torch
    if a.dtype == torch.bool:
        return "bool"
    if a.dtype == torch.uint8:
        return "uint8"
    if not a.is_floating_point():
        return "int"
    if bool(((a == 0) | (a == 1)).all()):
        return "binary_float"
    if bool(((a >= 0) & (a <= 1)).all()):
        return "unit"
    return "real"


def _draw(a: Any, shape: tuple[int, ...], scale: float, g: Any) -> Any:
    import torch
    k = _kind(a)
    if k == "bool":
        return torch.rand(shape, generator=g) < 0.4
    if k == "uint8":
        return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
    if k == "int":
        return torch.randint(0, int(a.max()) + 1, shape, generator=g, dtype=a.dtype)
    if k == "binary_float":
        return (torch.rand(shape, generator=g) > 0.5).to(a.dtype)
    if k == "unit":
        return torch.rand(shape, generator=g) ** scale
    return scale * torch.randn(shape, generator=g)


def _fresh_navit(args0: tuple[Any, ...], g: Any, scale: float) -> tuple[Any, ...]:
    import torch
    ch = args0[0][0][0].shape[0]
    groups = []
    for _ in range(int(torch.randint(1, 4, (1,), generator=g))):
        imgs = []
        for _ in range(int(torch.randint(1, 3, (1,), generator=g))):
            h, w = (int(v) for v in (16 * torch.randint(1, 3, (2,), generator=g)))
            imgs.append(scale * torch.randn(ch, h, w, generator=g))
        groups.append(imgs)
    return (groups,)


def make_inputs(key: str, cases: list[Any], phase: str) -> list[tuple[str, tuple[Any, ...]]]:
    import torch
    args0 = tuple(cases[0][0])
    if phase in ("core", "naninf"):
        out = [(f"case{i}", tuple(a)) for i, (a, _) in enumerate(cases)]
        leaves = _leaves(args0)
        fl = [t for t in leaves if t.is_floating_point()]

        def fill(v: float) -> Any:
            return _map(lambda t: torch.full_like(t, v) if t.dtype != torch.bool else
                        torch.full_like(t, bool(v)), args0)
        out.append(("zeros", fill(0)))
        out.append(("ones", fill(1)))
        if fl:
            out.append(("x50", _map(lambda t: t * 50.0 if t.is_floating_point() else t.clone(), args0)))
            first = fl[0]
            for name, val in (("nan", float("nan")), ("inf", float("inf"))):
                def put(t: Any, val: float = val) -> Any:
                    hit = t is first      # (identity tested before the clone)
                    t = t.clone()
                    if hit:
                        t.view(-1)[min(1, t.numel() - 1)] = val
                    return t
                out.append((name, _map(put, args0)))
            out.append(("neg", _map(lambda t: -t if t.is_floating_point() else t.clone(), args0)))
        if phase == "naninf":   # re-run of the NaN/inf inputs alone (see the log: a fixed bug)
            out = [(n, a) for n, a in out if n in ("nan", "inf")]
        return out
    # fresh draws
    g = torch.Generator().manual_seed(4049)
    out = []
    scales = [1.0, 0.3, 2.0, 4.0]
    for i in range(N_FRESH):
        s = scales[i % len(scales)]
        if key.endswith(":navit"):
            out.append((f"fresh{i}_x{s}", _fresh_navit(args0, g, s)))
            continue
        b0 = args0[0].shape[0]
        small = [1, 2, 3, 4, 5, 6, 8, 10]
        long_ = [1, 2, 3, 5, 8, 13, 20, 32]
        b = (small if args0[0].dim() >= 3 else long_)[i % 8]
        if key.startswith("torchmetrics:") and b < 2 and not key.endswith(("accuracy", "f1")):
            b = 2 if i % 2 else b   # keep some length-1 metric inputs, mostly 2+
        hw = [16, 32, 48]
        h, w = hw[i % 3], hw[(i + 1 + i // 3) % 3]
        new = []
        for a in args0:
            shape = list(a.shape)
            if a.dim() >= 1 and shape[0] == b0:
                shape[0] = b
            if a.dim() == 4:
                shape[2], shape[3] = h, w
            new.append(_draw(a, tuple(shape), s, g))
        if key.endswith(":odeint_event"):
            new[0] = torch.rand(new[0].shape, generator=g)   # the spec's y0 is in [0, 1)
        out.append((f"fresh{i}_b{b}_x{s}", tuple(new)))
    return out


# ------------------------------------------------------------------------------ one side
class CallTimeout(BaseException):
    pass


def _alarm(*_: Any) -> None:
    raise CallTimeout()


def _claim_build(key: str) -> tuple[Any, list[Any]]:
    import models
    import torch
    method = key.split(":")[1]
    m = models._ode_block(method, rtol=1e-3, atol=1e-4)
    if key.startswith("claim0:"):
        with torch.no_grad():
            m.func.net[2].weight.zero_()
            m.func.net[2].bias.zero_()
    cases = [((torch.zeros(2, 4),), {}), ((torch.zeros(1, 4),), {}),
             ((torch.randn(2, 4),), {}), ((torch.randn(3, 4),), {}), ((0.01 * torch.randn(2, 4),), {})]
    return m, cases


def run_side(pkgdir: str, package: str, key: str, phase: str, out: str, setting: str) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, REAL)
    import importlib

    import torch
    torch.set_num_threads(1)
    lib = torch.library.Library("torchvision", "DEF")   # what collect.shim_torchvision does
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    if setting:
        setattr(torch._dynamo.config, setting, True)
    import models
    mod = importlib.import_module(package)
    assert os.path.realpath(list(mod.__path__)[0]).startswith(os.path.realpath(pkgdir)), mod.__path__
    torch.manual_seed(0)
    if key.startswith("claim"):
        model, cases = _claim_build(key)
        inputs = [(f"y0_{['zeros2', 'zeros1', 'randn2', 'randn3', 'small2'][i]}", tuple(a))
                  for i, (a, _) in enumerate(cases)]
    else:
        model, cases = models.by_key()[key].build()
        inputs = make_inputs(key, cases, phase)
    model.eval()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    params = list(model.parameters())
    no_grad_mode = all(not t.is_floating_point() for t in _leaves(tuple(cases[0][0]))) and not params
    results: dict[str, Any] = {}
    t_all = time.perf_counter()
    for mode in ("eager", "compiled"):
        for grad in (False, True):
            if grad and no_grad_mode:
                continue   # no floating input and no parameter: nothing has a gradient
            for name, args in inputs:
                tag = f"{name}/{mode}/{'grad' if grad else 'nograd'}"
                model.load_state_dict(state)
                args_ = _map(lambda a: a.detach().clone().requires_grad_(grad and a.is_floating_point()), args)
                ins = [a for a in _leaves(args_) if a.is_floating_point()]
                if mode == "compiled":
                    torch._dynamo.reset()
                    fn = torch.compile(model, backend="eager")
                else:
                    fn = model
                torch.manual_seed(1)
                signal.alarm(CALL_TIMEOUT)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if grad:
                            model.zero_grad(set_to_none=True)
                            outs = _leaves(fn(*args_))
                            fl = [o for o in outs if o.is_floating_point() and o.requires_grad]
                            grads: list[Any] = []
                            if fl:
                                loss = sum(torch.nan_to_num(o, 0.0, 0.0, 0.0).sum() for o in fl)
                                loss.backward()
                                grads = [a.grad for a in ins] + [p.grad for p in params]
                            res = ("ok", [o.detach().clone() for o in outs],
                                   [None if x is None else x.detach().clone() for x in grads])
                        else:
                            with torch.no_grad():
                                outs = _leaves(fn(*args_))
                            res = ("ok", [o.detach().clone() for o in outs], [])
                except CallTimeout:
                    res = ("timeout", "timeout", "")
                except Exception as e:   # noqa: BLE001 - a raise is a result
                    res = ("raise", type(e).__name__, str(e).split("\n")[0][:200])
                finally:
                    signal.alarm(0)
                results[tag] = res
    results["_time"] = time.perf_counter() - t_all
    results["_inputs"] = {n: [(tuple(t.shape), str(t.dtype)) for t in _leaves(a)] for n, a in inputs}
    torch.save(results, out)


# ---------------------------------------------------------------------------- comparison
def same(a: Any, b: Any) -> bool:
    import torch
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point():
            na, nb = a.isnan(), b.isnan()
            return bool(torch.equal(na, nb) and torch.equal(torch.where(na, 0.0, a), torch.where(nb, 0.0, b)))
        return bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def same_result(h: Any, p: Any) -> bool:
    if h[0] != p[0]:
        return False
    if h[0] == "ok":
        return same(h[1], p[1]) and same(h[2], p[2])
    return h[1] == p[1]          # exceptions by type


def describe(h: Any, p: Any) -> str:
    import torch
    if h[0] == p[0] == "ok":
        def md(a: Any, b: Any) -> str:
            parts = []
            for i, (x, y) in enumerate(zip(a, b)):
                if same(x, y):
                    continue
                if x is None or y is None:
                    parts.append(f"[{i}] {'None' if x is None else 'tensor'} vs {'None' if y is None else 'tensor'}")
                elif x.shape != y.shape or x.dtype != y.dtype:
                    parts.append(f"[{i}] {tuple(x.shape)}/{x.dtype} vs {tuple(y.shape)}/{y.dtype}")
                else:
                    xf, yf = x.double(), y.double()
                    fin = torch.isfinite(xf) & torch.isfinite(yf)
                    d = float((xf[fin] - yf[fin]).abs().max()) if fin.any() else 0.0
                    parts.append(f"[{i}] max|d| {d:.3g}, nan {int(xf.isnan().sum())} vs {int(yf.isnan().sum())}, "
                                 f"inf {int(xf.isinf().sum())} vs {int(yf.isinf().sum())}")
            if len(a) != len(b):
                parts.append(f"len {len(a)} vs {len(b)}")
            return "; ".join(parts[:4]) + (f" (+{len(parts) - 4})" if len(parts) > 4 else "")
        o, g = md(h[1], p[1]), md(h[2], p[2])
        return f"outputs {{{o or 'equal'}}} grads {{{g or 'equal'}}}"
    def s(r: Any) -> str:
        return "ok" if r[0] == "ok" else f"{r[0]} {r[1]}: {r[2][:120]}"
    return f"head {s(h)} / patched {s(p)}"


def side(pkgdir: str, package: str, key: str, phase: str, out: str, setting: str) -> dict[str, Any]:
    import torch
    if not os.path.exists(out):
        env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
        p = subprocess.run([PY, __file__, "--side", pkgdir, package, key, phase, out, setting], env=env,
                           capture_output=True, text=True, timeout=7200)
        if p.returncode != 0:
            raise RuntimeError(f"{key} side failed: {p.stderr[-3000:]}")
    return torch.load(out, weights_only=False)


def distinct_edits() -> list[tuple[dict[str, Any], list[str]]]:
    with open(RESULTS) as f:
        data = json.load(f)
    seen: dict[Any, tuple[dict[str, Any], list[str]]] = {}
    for key, m in data["models"].items():
        for c in m.get("candidates", []):
            if not c.get("verified"):
                continue
            k = (("setting", c["setting"]) if c.get("setting") else
                 (c["path"], c["start_line"], c["end_line"], tuple(c["lines"])))
            seen.setdefault(k, (c, []))
            if key not in seen[k][1]:
                seen[k][1].append(key)
    return list(seen.values())


def package_of(key: str) -> str:
    if key.startswith("claim"):
        return "torchdiffeq"
    sys.path.insert(0, REAL)
    import models
    return models.by_key()[key].package


def edit_label(c: dict[str, Any]) -> str:
    if c.get("setting"):
        return f"setting {c['setting']}"
    return f"{c['path']}:{c['start_line']}-{c['end_line']}"


def compare(head: dict[str, Any], ctrl: dict[str, Any], pat: dict[str, Any]) -> tuple[int, int, int, list[str], list[str]]:
    n = eq = caused = 0
    caused_l, other_l = [], []
    for k in head:
        if k.startswith("_"):
            continue
        n += 1
        if same_result(head[k], pat[k]):
            eq += 1
            continue
        if same_result(head[k], ctrl[k]):
            caused += 1
            caused_l.append(f"{k}: {describe(head[k], pat[k])}")
        else:
            other_l.append(f"{k}: head not equal to itself ({describe(head[k], ctrl[k])}); "
                           f"head/patched {describe(head[k], pat[k])}")
    return n, eq, caused, caused_l, other_l


def nan_summary(res: dict[str, Any]) -> str:
    import torch
    rows = []
    for k, r in res.items():
        if k.startswith("_") or not k.endswith("/grad"):
            continue
        if r[0] != "ok":
            rows.append(f"{k}: {r[0]} {r[1]}")
            continue
        gi = [g for g in r[2] if g is not None]
        nn = sum(int(torch.isnan(g).sum()) for g in gi)
        rows.append(f"{k}: NaN grad entries {nn} of {sum(g.numel() for g in gi)}; y0 grad "
                    f"{'finite' if r[2] and r[2][0] is not None and bool(torch.isfinite(r[2][0]).all()) else 'NOT finite/None'}")
    return "\n      ".join(rows)


def run_claims() -> bool:
    import torch
    print("== step 2: named checks on torchdiffeq/_impl/misc.py:60-63 (_select_initial_step)")
    src = open(os.path.join(installed("torchdiffeq"), "_impl", "misc.py")).read().splitlines()
    assert src[59:63] == CLAIM_HEAD_LINES, src[59:63]
    print("   installed lines 60-63 read as expected:\n     " + "\n     ".join(CLAIM_HEAD_LINES))
    bad = False
    for key, names in CLAIM_RUNS:
        heads = {}
        for h in ("head", "ctrl"):
            d = make_copy("torchdiffeq", None, os.path.join(WORK, "pkg", "head_torchdiffeq"))
            heads[h] = side(d, "torchdiffeq", key, "claims", os.path.join(WORK, "res", f"{key}_{h}_claims.pt"), "")
        print(f"-- {key} (models._ode_block('{key.split(':')[1]}', rtol=1e-3, atol=1e-4)"
              f"{', last Linear weight and bias zeroed' if key.startswith('claim0') else ''}; "
              f"y0 zeros(2,4), zeros(1,4), randn(2,4), randn(3,4), 0.01*randn(2,4))")
        print("   head:\n      " + nan_summary(heads["head"]))
        for name in names:
            cand = CLAIM_EDITS[name]
            d = make_copy("torchdiffeq", cand, os.path.join(WORK, "pkg", f"{name}_torchdiffeq"))
            pat = side(d, "torchdiffeq", key, "claims", os.path.join(WORK, "res", f"{key}_{name}_claims.pt"), "")
            n, eq, caused, cl, ol = compare(heads["head"], heads["ctrl"], pat)
            bad |= bool(cl)
            print(f"   {name}: {eq} of {n} results equal to head; edit-caused differences {caused}")
            print("      " + nan_summary(pat))
            for x in cl:
                print(f"      DIFFER (edit-caused) {x}")
            for x in ol:
                print(f"      DIFFER (head nondeterministic) {x}")
    # why: the rms norm's sqrt at 0, in isolation
    y0 = torch.zeros(2, 4, requires_grad=True)
    d0 = (y0 / 1e-4).abs().pow(2).mean().sqrt().abs()
    g_where, = torch.autograd.grad(torch.where(d0 < 1e-5, torch.tensor(1e-6), 0.01 * d0 / 1.0), y0)
    print(f"   diagnostic: y0 = 0 -> d0 = _rms_norm(y0/scale) = {float(d0)}; grad of "
          f"where(d0 < 1e-5, 1e-6, 0.01*d0/1.0) w.r.t. y0 (d1 replaced by a safe 1.0) = "
          f"{g_where.flatten()[:4].tolist()} ... (the untaken branch's zero upstream grad times "
          f"sqrt'(0) = inf is NaN, and pow(2)'s 2*y0 = 0 does not cancel it: 0 * inf = NaN)")
    return bad


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--side":
        run_side(argv[1], argv[2], argv[3], argv[4], argv[5], argv[6] if len(argv) > 6 else "")
        return 0
    phase = argv[0]
    os.makedirs(os.path.join(WORK, "res"), exist_ok=True)
    t_all = time.perf_counter()
    if phase == "claims":
        bad = run_claims()
        print(f"claims done in {time.perf_counter() - t_all:.0f} s")
        return 1 if bad else 0
    edits = distinct_edits()
    # model order: as in the results JSON
    by_model: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for i, (c, keys) in enumerate(edits):
        for k in keys:
            by_model.setdefault(k, []).append((i, c))
    print(f"== phase {phase}: {len(edits)} distinct verified edits/settings over {len(by_model)} models")
    per_edit: dict[int, list[Any]] = {i: [] for i in range(len(edits))}
    order = [k for k in argv[1:] if k in by_model] or list(by_model)
    for key in order:
        items = by_model[key]
        package = package_of(key)
        t0 = time.perf_counter()
        hdir = make_copy(package, None, os.path.join(WORK, "pkg", f"head_{package}"))
        tag = key.replace(":", "_")
        try:
            head = side(hdir, package, key, phase, os.path.join(WORK, "res", f"{tag}_head_{phase}.pt"), "")
            ctrl = side(hdir, package, key, phase, os.path.join(WORK, "res", f"{tag}_ctrl_{phase}.pt"), "")
        except Exception as e:   # noqa: BLE001
            print(f"-- {key}: HEAD SIDE FAILED {e}", flush=True)
            continue
        hc = sum(1 for k in head if not k.startswith("_") and same_result(head[k], ctrl[k]))
        nh = sum(1 for k in head if not k.startswith("_"))
        print(f"-- {key} ({len(head['_inputs'])} inputs: {', '.join(head['_inputs'])}); head vs head "
              f"control: {hc} of {nh} equal; head side {head['_time']:.0f} s", flush=True)
        for k in head:
            if not k.startswith("_") and not same_result(head[k], ctrl[k]):
                print(f"   head nondeterministic: {k}: {describe(head[k], ctrl[k])}")
        for i, c in items:
            pdir = make_copy(package, c, os.path.join(WORK, "pkg", f"edit{i}_{package}"))
            try:
                pat = side(pdir, package, key, phase, os.path.join(WORK, "res", f"{tag}_edit{i}_{phase}.pt"),
                           c.get("setting") or "")
            except Exception as e:   # noqa: BLE001
                print(f"   edit{i} {edit_label(c)}: PATCHED SIDE FAILED {e}", flush=True)
                per_edit[i].append((key, None))
                continue
            n, eq, caused, cl, ol = compare(head, ctrl, pat)
            per_edit[i].append((key, (n, eq, caused, cl, ol)))
            print(f"   edit{i} {edit_label(c)}: {eq} of {n} equal; differ {n - eq} "
                  f"(edit-caused {caused}); patched side {pat['_time']:.0f} s", flush=True)
            for x in cl:
                print(f"      DIFFER (edit-caused) {x}")
            for x in ol:
                print(f"      DIFFER (head nondeterministic) {x}")
        print(f"   [{key} done in {time.perf_counter() - t0:.0f} s]", flush=True)
    print(f"== phase {phase} summary per edit")
    for i, (c, keys) in enumerate(edits):
        rs = per_edit[i]
        if not rs:
            continue
        ok = [r for _, r in rs if r]
        n = sum(r[0] for r in ok)
        eq = sum(r[1] for r in ok)
        ca = sum(r[2] for r in ok)
        print(f"edit{i} {edit_label(c)} [{c.get('title', '')[:70]}] on {', '.join(k for k, _ in rs)}: "
              f"{eq} of {n} equal, {n - eq} differ, {ca} edit-caused"
              + ("" if len(ok) == len(rs) else f"; {len(rs) - len(ok)} model(s) FAILED"))
    print(f"phase {phase} done in {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
