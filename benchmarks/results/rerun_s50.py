"""Independent re-run (no pt2bot code) of the 8 edits pt2bot verified for session 50
(benchmarks/results/rerun_s50_edits.json: tltorch 0.5.0, tntorch 1.1.2, FrEIA), adapted from
heldout19_rerun.py's harness.

    OMP_NUM_THREADS=1 /work/venvs/realcode/bin/python benchmarks/results/rerun_s50.py \
        benchmarks/results/rerun_s50_edits.json > benchmarks/results/rerun_s50.log

For each edit and each model it was accepted on:
1. a copy of the installed package (temp dir put first on sys.path, asserted), the edit
   replacing start_line..end_line of `path` by `lines` (each edit alone on a clean copy);
2. each side is a subprocess (TORCH_LOGS=graph_breaks, one thread) that builds the model from
   models.py (seed 0, eval mode) and runs it on the spec's cases, S50_FRESH (default 6) fresh
   draws of other sizes/scales, the edge inputs (all 0, all 1, x50 randn, negated, a NaN and an
   inf in the first/last floating input), and with the model's floating state all 0 (on case0 and
   ones: tags `w0_*`); eager and compiled (torch.compile(backend="eager"), fullgraph=False), with
   and without the gradients of the summed outputs w.r.t. inputs and parameters; state dict put
   back and torch seeded (1) before every call. On tntorch, eager calls also record the shape of
   every tn.truncated_svd result (the ranks chosen), compared apart;
3. head runs twice (two processes): a result head does not reproduce is reported apart;
   patched vs head exactly (torch.equal with NaN positions), else max |diff| and whether within
   1e-6 relative; the graph breaks logged on the edited lines counted per side.
4. direct library checks (`--direct`), head twice and each edit's patched copy: tntorch ranks of
   round_tt / truncated_svd / round_tucker on random tensors over an eps sweep, and on eps crafted
   so that a tail sum of squared singular values sits exactly on the float32 rounding of the
   error bound (where a float threshold and a tensor threshold can round differently); the
   verbose=True prints (labels); FrEIA's IResNetLayer.lipschitz_correction on normal, all-0 and
   x50 weights, several spectral_norm_max, float32 and float64 (default dtype float64).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(os.path.dirname(HERE), "real_code")
PY = sys.executable
N_FRESH = int(os.environ.get("S50_FRESH", "6"))


def installed(package: str) -> str:
    import importlib.util
    return importlib.util.find_spec(package).submodule_search_locations[0]


def make_copy(package: str, cand: dict[str, Any] | None, dest: str) -> str:
    shutil.copytree(installed(package), os.path.join(dest, package))
    if cand and not cand.get("setting"):
        path = os.path.join(dest, cand["path"])
        with open(path) as f:
            src = f.read().splitlines(keepends=True)
        src[cand["start_line"] - 1:cand["end_line"]] = [ln + "\n" for ln in cand["lines"]]
        with open(path, "w") as f:
            f.writelines(src)
    return dest


# ------------------------------------------------------------------------------ one side
def _flat(o: Any) -> list[Any]:
    import torch
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (tuple, list)):
        return [t for x in o for t in _flat(x)]
    if isinstance(o, dict):
        return [t for k in sorted(o) for t in _flat(o[k])]
    return []


def _kind(a: Any) -> str:
    import torch
    if a.dtype == torch.bool:
        return "bool"
    if not a.is_floating_point():
        return "int"
    fin = a[torch.isfinite(a)]
    if fin.numel() < a.numel():
        return "nan_marked"
    if fin.numel() and bool((fin == fin.round()).all()) and bool((fin >= 0).all()):
        return "whole"
    if fin.numel() and bool((fin >= 0).all()) and bool((fin <= 1).all()):
        return "unit_interval"
    if a.dim() >= 2 and a.shape[-1] == 3 and bool(((a.norm(dim=-1) - 1).abs() < 1e-5).all()):
        return "unit_norm"
    return "real"


def _draw_like(a: Any, size: int | None, dim: int, scale: float, g: Any) -> Any:
    import torch
    shape = list(a.shape)
    if size is not None:
        shape[dim] = size
    shape = tuple(shape)
    k = _kind(a)
    if k == "bool":
        return torch.rand(shape, generator=g) < 0.4
    if k == "int":
        return torch.randint(0, int(a.max()) + 1, shape, generator=g, dtype=a.dtype)
    if k == "whole":
        return torch.randint(0, int(a.max()) + 1, shape, generator=g).to(a.dtype)
    if k == "unit_interval":
        return torch.rand(shape, generator=g) ** scale
    if k == "unit_norm":
        v = torch.randn(shape, generator=g)
        return v / v.norm(dim=-1, keepdim=True)
    v = scale * torch.randn(shape, generator=g)
    if k == "nan_marked":
        v[torch.rand(shape, generator=g) < 0.33] = float("nan")
    return v


# the dim the fresh draws vary, where it is not the first: tucker_tt_compress's first dim is the
# size of its learnable 4x4 projection (a larger one cannot be projected)
VARY_DIM = {"tntorch:tucker_tt_compress": -1}


def _inputs(cases: list[Any], key: str = "") -> list[tuple[str, tuple[Any, ...]]]:
    """The spec's cases, N_FRESH fresh draws shaped like the first case with other sizes of the
    varied dim and scales, and edge inputs."""
    import torch
    g = torch.Generator().manual_seed(2024)
    args0 = cases[0][0]
    dim = VARY_DIM.get(key, 0)
    b0 = args0[0].shape[dim]
    out = [(f"case{i}", tuple(a)) for i, (a, _) in enumerate(cases)]
    batches = [1, 2, 3, 5, 8, 12]
    scales = [0.3, 1.0, 2.0, 4.0]
    for i in range(N_FRESH):
        b, s = batches[i % len(batches)], scales[i % len(scales)]
        new = tuple(_draw_like(a, b if a.dim() and a.shape[dim] == b0 else None,
                               dim, s, g) for a in args0)
        out.append((f"fresh{i}_b{b}_x{s}", new))
    fl = [j for j, a in enumerate(args0) if a.is_floating_point()]
    if not fl:
        return out
    out.append(("zeros", tuple(torch.zeros_like(a) if a.is_floating_point() else a for a in args0)))
    out.append(("ones", tuple(torch.ones_like(a) if a.is_floating_point() else a for a in args0)))
    out.append(("large", tuple(50.0 * torch.randn(a.shape, generator=g) if a.is_floating_point()
                               else a for a in args0)))
    out.append(("negated", tuple(-a if j == fl[0] else a for j, a in enumerate(args0))))
    for where, j in (("first", fl[0]), ("last", fl[-1])):
        for name, val in (("nan", float("nan")), ("inf", float("inf"))):
            a = [x.clone() for x in args0]
            a[j].view(-1)[min(1, a[j].numel() - 1)] = val
            out.append((f"{name}_{where}", tuple(a)))
    return out


class CallTimeout(BaseException):
    """A call that ran past CALL_TIMEOUT: a result."""


def _alarm(*_: Any) -> None:
    raise CallTimeout()


# seconds one call may run (0: no limit, the default)
# `S50_OUTPUTS=0,1`: only these outputs are kept, compared and summed for the gradients, and
# `S50_MODEL=lib:name`: only this model is run (the supplementary run on tucker_tt_compress
# without its CP-ALS outputs, which head does not reproduce across processes)
KEEP = [int(i) for i in os.environ.get("S50_OUTPUTS", "").split(",") if i.strip()]
ONLY = os.environ.get("S50_MODEL", "")
# `S50_CAND=hand5`: only the candidate with this id (hand edits) is run
ONLY_CAND = os.environ.get("S50_CAND", "")
CALL_TIMEOUT = int(os.environ.get("S50_CALL_TIMEOUT", "0"))


def run_side(pkgdir: str, key: str, out: str, setting: str) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, REAL)
    import importlib

    import torch
    torch.set_num_threads(1)
    import collect
    collect.shim_torchvision()   # as collect.py does before any model is built
    import models
    sp = models.by_key()[key]
    mod = importlib.import_module(sp.package)
    assert os.path.realpath(list(mod.__path__)[0]).startswith(os.path.realpath(pkgdir)), mod.__path__
    torch.manual_seed(0)
    model, cases = sp.build()
    model.eval()
    # `S50_STATE=file.pt`: the first side saves its state dict there and every later side loads
    # it (tensorly-torch:tensor_lasso's factorized weights are torch.empty memory, not seeded)
    sfile = os.environ.get("S50_STATE", "")
    if sfile and os.path.exists(sfile):
        model.load_state_dict(torch.load(sfile))
    elif sfile:
        torch.save(model.state_dict(), sfile)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    zstate = {k: (torch.zeros_like(v) if v.is_floating_point() else v.clone()) for k, v in state.items()}
    inputs = [(n, a, state) for n, a in _inputs(cases, key)]
    inputs += [("w0_" + n, a, zstate) for n, a, _ in inputs if n in ("case0", "ones")]
    # `S50_EXTRA=file.pt` (a list of first inputs, for S50_MODEL's model): crafted inputs
    if os.environ.get("S50_EXTRA"):
        inputs += [(f"crafted{i}", (x,) + tuple(cases[0][0][1:]), state)
                   for i, x in enumerate(torch.load(os.environ["S50_EXTRA"]))]
    # the ranks tntorch's truncated_svd chooses (eager calls only: a Python-side record)
    rank_log: list[Any] = []
    if sp.package == "tntorch":
        tn = mod
        orig = tn.truncated_svd

        def probe(*a: Any, **k: Any) -> Any:
            r = orig(*a, **k)
            if RECORD[0]:
                rank_log.append((tuple(r[0].shape), tuple(r[1].shape)))
            return r
        tn.truncated_svd = probe
    results: dict[str, Any] = {}
    ranks: dict[str, Any] = {}
    times = {"eager": 0.0, "compiled": 0.0}
    warned: dict[str, Any] = {}
    for mode in ("eager", "compiled"):
        for grad in (False, True):
            torch._dynamo.reset()
            fn = torch.compile(model, backend="eager") if mode == "compiled" else model
            for name, args, st in inputs:
                tag = f"{name}/{mode}/{'grad' if grad else 'nograd'}"
                model.load_state_dict(st)
                args_ = tuple(a.detach().clone().requires_grad_(grad and a.is_floating_point())
                              for a in args)
                torch.manual_seed(1)
                t0 = time.perf_counter()
                wctx = warnings.catch_warnings(record=True)
                caught = wctx.__enter__()
                warnings.simplefilter("always")
                signal.alarm(CALL_TIMEOUT)
                rank_log.clear()
                RECORD[0] = mode == "eager"
                try:
                    if grad:
                        model.zero_grad(set_to_none=True)
                        outs = _flat(fn(*args_))
                        outs = [outs[i] for i in KEEP] if KEEP else outs
                        fl = [o for o in outs if (o.is_floating_point() or o.is_complex()) and o.requires_grad]
                        grads: list[Any] = []
                        if fl:
                            loss = sum(torch.nan_to_num(o.real if o.is_complex() else o, 0.0, 0.0, 0.0).sum()
                                       for o in fl)
                            loss.backward()
                            grads = [a.grad for a in args_] + [p.grad for p in model.parameters()]
                        res = ("ok", [o.detach() for o in outs],
                               [None if x is None else x.detach() for x in grads])
                    else:
                        with torch.no_grad():
                            outs = _flat(fn(*args_))
                        outs = [outs[i] for i in KEEP] if KEEP else outs
                        res = ("ok", [o.detach() for o in outs], [])
                except Exception as e:   # noqa: BLE001 - a raise is a result
                    res = ("raise", type(e).__name__, str(e).split("\n")[0][:300])
                except CallTimeout:
                    res = ("timeout", CALL_TIMEOUT)
                finally:
                    signal.alarm(0)
                    RECORD[0] = False
                    wctx.__exit__(None, None, None)
                times[mode] += time.perf_counter() - t0
                results[tag] = res
                if mode == "eager":
                    ranks[tag] = list(rank_log)
                warned[tag] = sorted({(w.category.__name__, str(w.message).split("\n")[0][:120])
                                      for w in caught if f"/{sp.package}/" in (w.filename or "")})
    results["_times"] = times
    results["_warned"] = warned
    results["_ranks"] = ranks
    torch.save(results, out)


RECORD = [False]


# ------------------------------------------------------------------------- direct checks
def _crafted_eps_round80(M: Any, float_delta: bool) -> list[float]:
    """eps values for truncated_svd(M, eps=e) where head's threshold (eps * norm.item())**2, a
    Python float compared in float32, and the edit's (eps * norm)**2, a float32 tensor, fall on
    different sides of one of the tail sums of squared singular values."""
    import torch
    S = torch.linalg.svd(M)[1] ** 2
    c = torch.cumsum(S[torch.arange(len(S) - 1, -1, -1)], dim=0)
    n = torch.norm(M)
    found = []
    for k in range(len(c) - 1):
        ck = float(c[k])
        if ck <= 0:
            continue
        e0 = (ck ** 0.5) / n.item()
        for j in range(-3000, 3001):
            e = e0 * (1 + j * 2.0 ** -30)
            h = bool((c[k:k + 1] <= (e * n.item()) ** 2)[0])
            p = bool((c[k:k + 1] <= (e * n) ** 2)[0])
            if h != p:
                found.append(e)
                break
        if len(found) >= 3:
            break
    return found


def run_direct(pkgdir: str, lib: str, out: str) -> None:
    import contextlib
    import importlib
    import io
    sys.path.insert(0, pkgdir)
    import torch
    torch.set_num_threads(1)
    mod = importlib.import_module(lib)
    assert os.path.realpath(list(mod.__path__)[0]).startswith(os.path.realpath(pkgdir)), mod.__path__
    res: dict[str, Any] = {}

    def rec(tag: str, f: Any) -> None:
        try:
            res[tag] = ("ok", f())
        except Exception as e:   # noqa: BLE001
            res[tag] = ("raise", type(e).__name__, str(e).split("\n")[0][:200])

    if lib == "tntorch":
        tn = mod
        g = torch.Generator().manual_seed(5)
        xs = []
        for shape in ((6, 8, 10), (5, 5, 5, 5), (4, 12)):
            for kind in ("randn", "lowrank"):
                if kind == "randn":
                    x = torch.randn(*shape, generator=g)
                else:
                    vs = [torch.randn(n, 2, generator=g) for n in shape]
                    x = torch.einsum(",".join(f"{chr(97 + i)}z" for i in range(len(shape))) + "->"
                                     + "".join(chr(97 + i) for i in range(len(shape))), *vs)
                    x = x + 0.01 * torch.randn(*shape, generator=g)
                xs.append((f"{kind}{shape}", x))
        xs.append(("zeros(6,8,10)", torch.zeros(6, 8, 10)))
        xs.append(("ones(6,8,10)", torch.ones(6, 8, 10)))
        eps_list = [0, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9]

        def tt_out(t: Any) -> Any:
            return ([tuple(c.shape) for c in t.cores],
                    [None if u is None else tuple(u.shape) for u in t.Us], t.torch())
        for name, x in xs:
            for e in eps_list:
                rec(f"Tensor(x,eps={e}) {name}", lambda: tt_out(tn.Tensor(x, eps=e)))
                rec(f"round_tt(eps={e}) full {name}", lambda: (lambda t: (t.round_tt(eps=e), tt_out(t))[1])(tn.Tensor(x)))
                rec(f"round_tucker(eps={e}) {name}", lambda: tt_out(tn.round_tucker(tn.Tensor(x, ranks_tucker=3), eps=e)))
                if x.dim() == 2:
                    rec(f"truncated_svd(eps={e}) {name}",
                        lambda: [r for r in tn.truncated_svd(x, eps=e)])
                    rec(f"truncated_svd(eps={e},eig) {name}",
                        lambda: [r for r in tn.truncated_svd(x, eps=e, algorithm="eig")])
            # gradients through round_tt / eps-Tensor
            def grads() -> Any:
                xx = x.clone().requires_grad_()
                t = tn.Tensor(xx, eps=0.1)
                t.torch().sum().backward()
                return xx.grad
            rec(f"grad Tensor(x,eps=0.1) {name}", grads)
        # crafted boundary eps for round.py:80 (truncated_svd's eps path), computed with plain
        # torch ops (no library code), so both sides get the same values
        for name, x in xs:
            if x.dim() != 2:
                continue
            for e in _crafted_eps_round80(x, True):
                rec(f"crafted80 truncated_svd(eps={e!r}) {name}",
                    lambda: [r for r in tn.truncated_svd(x, eps=e)])
        # crafted boundary eps for tensor.py:2051 (round_tt's delta): record M and delta of the
        # first truncated_svd call of round_tt, then set eps so that delta**2 (float64) lies just
        # below a float32 tail sum c that is its float32 rounding
        orig = tn.truncated_svd
        seen: list[Any] = []

        def probe(M: Any, delta: Any = None, **k: Any) -> Any:
            seen.append((M.detach().clone(), delta))
            return orig(M, delta=delta, **k)
        for name, x in xs:
            if x.dim() < 3 or not bool(x.abs().sum() > 0):
                continue
            e0 = 0.1
            t = tn.Tensor(x)
            tn.truncated_svd = probe
            seen.clear()
            t.round_tt(eps=e0)
            tn.truncated_svd = orig
            M, d0 = seen[0]
            ratio = (float(d0 if not isinstance(d0, torch.Tensor) else d0.reshape(-1)[0].item())) / e0
            S = torch.linalg.svd(M)[1] ** 2
            c = torch.cumsum(S[torch.arange(len(S) - 1, -1, -1)], dim=0)
            for k in range(min(3, len(c) - 1)):
                ck = float(c[k])
                if ck <= 0:
                    continue
                for frac in (0.25, -0.25):
                    d = ck - frac * ck * 2.0 ** -24   # within half a float32 ulp of c_k
                    e = d ** 0.5 / ratio
                    rec(f"crafted2051 round_tt(eps={e!r}) {name} (c_{k}, d {'below' if frac > 0 else 'above'})",
                        lambda: (lambda t: (t.round_tt(eps=e), tt_out(t))[1])(tn.Tensor(x)))
                    rec(f"crafted2051 Tensor(x,eps={e!r}) {name} (c_{k}, d {'below' if frac > 0 else 'above'})",
                        lambda: tt_out(tn.Tensor(x, eps=e)))
        # verbose prints (labels only: the times differ)
        def verb(f: Any) -> Any:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                r = f()
            return [ln.split(":")[0] for ln in buf.getvalue().splitlines()], r
        M = xs[4][1]
        x3 = xs[0][1]
        for vb in (False, True):
            rec(f"verbose={vb} truncated_svd svd", lambda: verb(lambda: list(tn.truncated_svd(M, eps=0.1, verbose=vb))))
            rec(f"verbose={vb} truncated_svd eig", lambda: verb(lambda: list(tn.truncated_svd(M, eps=0.1, verbose=vb, algorithm="eig"))))
            rec(f"verbose={vb} round_tt", lambda: verb(lambda: (lambda t: (t.round_tt(eps=0.1, verbose=vb), tt_out(t))[1])(tn.Tensor(x3))))
    elif lib == "FrEIA":
        import FrEIA.modules as Fm
        for dt in (torch.float32, torch.float64):
            torch.set_default_dtype(dt)
            for snm in (0.8, 0.9, 0.5, 0.7, 0.95, 0.99, 1.0, 0.3, 0.007):
                for wname in ("normal", "zeros", "x50", "x0.01"):
                    for conv in (False, True):
                        def one() -> Any:
                            torch.manual_seed(0)
                            dims = [(3, 5, 5)] if conv else [(4,)]
                            layer = Fm.IResNetLayer(dims, internal_size=8, lipschitz_iterations=4,
                                                    lipschitz_batchsize=3, spectral_norm_max=snm)
                            with torch.no_grad():
                                for lin in layer.layers:
                                    if wname == "zeros":
                                        lin.weight.zero_()
                                    elif wname == "x50":
                                        lin.weight.mul_(50)
                                    elif wname == "x0.01":
                                        lin.weight.mul_(0.01)
                            torch.manual_seed(1)
                            hist = []
                            for _ in range(3):
                                layer.lipschitz_correction()
                                hist.append([lin.weight.detach().clone() for lin in layer.layers])
                            return hist
                        rec(f"{dt} snm={snm} {wname} {'conv' if conv else 'linear'} lipschitz_correction x3", one)
            torch.set_default_dtype(torch.float32)
        # compiled lipschitz_correction against eager (float32, default 0.8)
        for wname in ("normal", "zeros", "x50"):
            def comp() -> Any:
                torch.manual_seed(0)
                layer = Fm.IResNetLayer([(4,)], internal_size=8, lipschitz_iterations=4, lipschitz_batchsize=3)
                with torch.no_grad():
                    for lin in layer.layers:
                        if wname == "zeros":
                            lin.weight.zero_()
                        elif wname == "x50":
                            lin.weight.mul_(50)
                torch._dynamo.reset()
                f = torch.compile(layer.lipschitz_correction, backend="eager")
                torch.manual_seed(1)
                f()
                return [lin.weight.detach().clone() for lin in layer.layers]
            rec(f"compiled lipschitz_correction {wname}", comp)
    torch.save(res, out)


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
            return bool(torch.equal(na, nb)
                        and torch.equal(torch.where(na, 0.0, a), torch.where(nb, 0.0, b)))
        return bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def maxdiff(a: Any, b: Any) -> float:
    """Max |a - b| over the finite entries of same-shaped float tensors (nan if not comparable)."""
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or not a.is_floating_point():
            return float("nan") if not same(a, b) else 0.0
        fin = torch.isfinite(a) & torch.isfinite(b)
        return float((a[fin] - b[fin]).abs().max()) if fin.any() else 0.0
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        ds = [maxdiff(x, y) for x, y in zip(a, b)]
        return max(ds) if ds else 0.0
    return 0.0 if same(a, b) else float("nan")


def breaks(log: str, package: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for p, ln in re.findall(r"Graph break.*? in user code at (\S+):(\d+)", log):
        i = p.rfind("/" + package + "/")
        if i >= 0:
            s = f"{p[i + 1:]}:{ln}"
            found[s] = found.get(s, 0) + 1
    return found


def models_package(key: str) -> str:
    sys.path.insert(0, REAL)
    import models
    return models.by_key()[key].package


def side(pkgdir: str, key: str, out: str, mode: str = "--side") -> tuple[dict[str, Any], str]:
    import torch
    env = dict(os.environ, TORCH_LOGS="graph_breaks", PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    if os.environ.get("S50_SHARE_STATE") and mode == "--side":
        env["S50_STATE"] = os.path.join(os.path.dirname(pkgdir.rstrip("/")),
                                        "state_" + key.replace(":", "_") + ".pt")
    p = subprocess.run([PY, __file__, mode, pkgdir, key, out], env=env,
                       capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{key} side failed: {p.stderr[-3000:]}")
    return torch.load(out, weights_only=False), p.stderr


def reldiff(a: Any, b: Any) -> float:
    """max |a-b| / max(|a|, tiny) over finite entries (nan if not comparable)."""
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or not a.is_floating_point() or not same(a.isnan(), b.isnan()):
            return float("nan") if not same(a, b) else 0.0
        fin = torch.isfinite(a) & torch.isfinite(b)
        if not torch.equal(a[~fin], b[~fin]) if (~fin).any() else False:
            return float("inf")
        if not fin.any():
            return 0.0
        d = (a[fin].double() - b[fin].double()).abs()
        return float((d / a[fin].double().abs().clamp_min(1e-30)).max())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        ds = [reldiff(x, y) for x, y in zip(a, b)]
        return max(ds) if ds else 0.0
    return 0.0 if same(a, b) else float("nan")


def _out_idx(a: Any, b: Any) -> list[int]:
    if not (a[0] == b[0] == "ok") or len(a[1]) != len(b[1]):
        return []
    return [i for i, (x, y) in enumerate(zip(a[1], b[1])) if not same(x, y)]


def _describe(h: Any, p: Any) -> str:
    if h[0] == p[0] == "ok":
        if isinstance(h[1], list) and len(h) == 3:
            return (f"outputs {_out_idx(h, p)} differ, max |diff| {maxdiff(h[1], p[1]):.3g} "
                    f"(rel {reldiff(h[1], p[1]):.3g}); grads max |diff| {maxdiff(h[2], p[2]):.3g} "
                    f"(rel {reldiff(h[2], p[2]):.3g})")
        return f"max |diff| {maxdiff(h[1], p[1]):.3g} (rel {reldiff(h[1], p[1]):.3g})"
    return f"head {h[0] if h[0] == 'ok' else h[1:]} / patched {p[0] if p[0] == 'ok' else p[1:]}"


def _shapes(v: Any) -> Any:
    """the shapes in a direct result (ranks), or the printed labels"""
    import torch
    if isinstance(v, torch.Tensor):
        return tuple(v.shape)
    if isinstance(v, (list, tuple)):
        return [_shapes(x) for x in v]
    return v


def compare(head: dict[str, Any], head2: dict[str, Any], pat: dict[str, Any], label: str) -> tuple[int, int, int, list[str], list[str]]:
    n = eq = unrep = 0
    differ, unrep_differ = [], []
    for k in head:
        if k.startswith("_"):
            continue
        n += 1
        rep = same(head[k], head2[k])
        unrep += not rep
        if same(head[k], pat[k]):
            eq += 1
            continue
        more = ""
        if "/compiled/" in k:
            ek = k.replace("/compiled/", "/eager/")
            more = (f"; head compiled==eager {same(head[k], head[ek])}, patched compiled==eager "
                    f"{same(pat[k], pat[ek])}; eager head==patched {same(head[ek], pat[ek])}")
        if label == "direct" and head[k][0] == pat[k][0] == "ok":
            hs, ps = _shapes(head[k][1]), _shapes(pat[k][1])
            if hs != ps:
                more += f"; SHAPES/RANKS head {hs} / patched {ps}"
        line = f"{k}: {_describe(head[k], pat[k])}{more}"
        if rep:
            differ.append(line)
        else:
            unrep_differ.append(line + f" (head's second run: {_describe(head[k], head2[k])})")
    return n, eq, unrep, differ, unrep_differ


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--side":
        run_side(argv[1], argv[2], argv[3], "")
        return 0
    if argv and argv[0] == "--direct":
        run_direct(argv[1], argv[2], argv[3])
        return 0
    with open(argv[0]) as f:
        edits = json.load(f)
    only_edit = os.environ.get("S50_EDIT", "")
    work = tempfile.mkdtemp(prefix="s50rerun_")
    heads: dict[str, Any] = {}
    dheads: dict[str, Any] = {}
    total = total_eq = total_unrep = total_attr = 0
    bad = False
    t_all = time.perf_counter()
    print(f"S50_FRESH={N_FRESH}; torch {__import__('torch').__version__}", flush=True)
    try:
        for ei, cand in enumerate(edits):
            if only_edit and str(ei) not in only_edit.split(","):
                continue
            print(f"\n== edit {ei}: {cand['path']}:{cand['start_line']}-{cand['end_line']} -> "
                  f"({cand['title'][:90]}); models {cand['models']}")
            print("   " + "\n   ".join(cand["lines"]))
            ecount = [0, 0, 0, 0]   # results, equal, head-reproducible differ, unreproducible
            package = cand["path"].split("/")[0]
            head_lines = {f"{cand['path']}:{ln}" for ln in range(cand["start_line"], cand["end_line"] + 1)}
            pat_lines = {f"{cand['path']}:{ln}" for ln in range(cand["start_line"], cand["start_line"] + len(cand["lines"]))}
            for key in cand["models"]:
                if ONLY and key != ONLY:
                    continue
                if key not in heads:
                    hdir = make_copy(package, None, os.path.join(work, "head_" + key.replace(":", "_")))
                    res, log = side(hdir, key, os.path.join(hdir, "out.pt"))
                    h2dir = make_copy(package, None, os.path.join(work, "head2_" + key.replace(":", "_")))
                    res2, _ = side(h2dir, key, os.path.join(h2dir, "out.pt"))
                    heads[key] = (res, breaks(log, package), res2)
                head, hb, head2 = heads[key]
                pdir = make_copy(package, cand, tempfile.mkdtemp(dir=work, prefix="patched_"))
                pat, plog = side(pdir, key, os.path.join(pdir, "out.pt"))
                pb = breaks(plog, package)
                n, eq, unrep, differ, unrep_differ = compare(head, head2, pat, "model")
                # the ranks truncated_svd chose, eager calls
                hr, hr2, pr = head.get("_ranks", {}), head2.get("_ranks", {}), pat.get("_ranks", {})
                rdiff = [k for k in hr if hr[k] != pr.get(k) and hr[k] == hr2.get(k)]
                runrep = [k for k in hr if hr[k] != hr2.get(k)]
                ce = {"head": 0, "patched": 0}
                for s_, res in (("head", head), ("patched", pat)):
                    for k in res:
                        if "/compiled/" in k and same(res[k], res[k.replace("/compiled/", "/eager/")]):
                            ce[s_] += 1
                total += n
                total_eq += eq
                total_unrep += unrep
                total_attr += len(differ)
                ecount[0] += n
                ecount[1] += eq
                ecount[2] += len(differ)
                ecount[3] += len(unrep_differ)
                bad |= bool(differ) or bool(rdiff)
                th = sum(v for b, v in hb.items() if b in head_lines)
                tp = sum(v for b, v in pb.items() if b in pat_lines)
                print(f"   {key}: {eq} of {n} results equal ({n // 4} inputs x eager/compiled x "
                      f"grad/nograd); head's own two runs differ on {unrep}; patched differs where "
                      f"head reproduces on {len(differ)}; truncated_svd shapes (ranks) recorded on "
                      f"{sum(1 for k in hr if hr[k])} eager calls: differ {len(rdiff)} (head "
                      f"unreproducible {len(runrep)}); compiled==eager {ce} (of {n // 2}); breaks on "
                      f"the edited lines {th} -> {tp}; sites gone {sorted(b for b in hb if b not in pb)}; "
                      f"new {sorted(b for b in pb if b not in hb)}; all breaks {sum(hb.values())} -> "
                      f"{sum(pb.values())}", flush=True)
                for d in differ:
                    print(f"   DIFFER {d}")
                for d in unrep_differ:
                    print(f"   differ where head is not reproducible: {d}")
                for k in rdiff[:10]:
                    print(f"   RANKS DIFFER {k}: head {hr[k]} / patched {pr.get(k)}")
                hw, pw = head.get("_warned", {}), pat.get("_warned", {})
                wdiff = [k for k in hw if hw[k] != pw.get(k)]
                if wdiff:
                    print(f"   library warnings differ on {len(wdiff)} of {len(hw)} calls, e.g. "
                          + "; ".join(f"{k}: head {hw[k]} / patched {pw.get(k)}" for k in wdiff[:3]))
            # direct library checks
            if package in ("tntorch", "FrEIA") and not ONLY:
                if package not in dheads:
                    hd = make_copy(package, None, os.path.join(work, "dhead_" + package))
                    r1, _ = side(hd, package, os.path.join(hd, "out.pt"), "--direct")
                    hd2 = make_copy(package, None, os.path.join(work, "dhead2_" + package))
                    r2, _ = side(hd2, package, os.path.join(hd2, "out.pt"), "--direct")
                    dheads[package] = (r1, r2)
                r1, r2 = dheads[package]
                pdir = make_copy(package, cand, tempfile.mkdtemp(dir=work, prefix="dpatched_"))
                rp, _ = side(pdir, package, os.path.join(pdir, "out.pt"), "--direct")
                n, eq, unrep, differ, unrep_differ = compare(r1, r2, rp, "direct")
                ecount[0] += n
                ecount[1] += eq
                ecount[2] += len(differ)
                ecount[3] += len(unrep_differ)
                bad |= bool(differ)
                print(f"   direct {package} checks: {eq} of {n} equal; head's own runs differ on "
                      f"{unrep}; patched differs where head reproduces on {len(differ)}", flush=True)
                for d in differ:
                    print(f"   DIFFER direct {d}")
                for d in unrep_differ:
                    print(f"   differ (direct) where head is not reproducible: {d}")
                for k in r1:
                    if k.startswith("verbose=True") and r1[k][0] == "ok":
                        print(f"   {k}: printed labels head {r1[k][1][0]} / patched "
                              f"{rp[k][1][0] if rp[k][0] == 'ok' else rp[k]}")
            print(f"   EDIT {ei} TOTAL: {ecount[1]} of {ecount[0]} equal; {ecount[2]} differ where head "
                  f"reproduces; {ecount[3]} differ where head does not reproduce", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nmodel results: {total_eq} of {total} equal; {total_unrep} not reproduced by head's "
          f"second run; {total_attr} differ where head reproduces; {time.perf_counter() - t_all:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
