"""Independent re-run of the sixteenth held-out batch's VERIFIED results (FrEIA, torchist), with no
pt2bot code. The batch has no verified edit; what the proofs verified are dynamo settings
(`capture_dynamic_output_shape_ops`), so this script re-runs those, and any verified edit a
JSON file holds, the same way heldout15_rerun.py re-ran edits.

    /work/venvs/realcode/bin/python benchmarks/results/heldout16_rerun.py \
        benchmarks/results/realcode_proof_heldout16.json benchmarks/results/realcode_proof_heldout16_matrix.json

For each verified candidate (the JSON is read only for `path`, `start_line`, `end_line`, `lines`,
`setting` and the models whose proof verified it):
1. an edit is applied by this script to a copy of the installed package (`start_line..end_line`
   replaced with `lines`); a setting is set (`torch._dynamo.config.<setting> = True`) in the
   patched side's process before anything is compiled, with the package unchanged;
2. `run` (a subprocess per side, `TORCH_LOGS=graph_breaks`): the package is imported from the
   side's directory (asserted), each model is built from models.py (seed 0, one thread, eval;
   numpy seeded by the FrEIA builders), and its spec cases plus extra inputs (zeros, 50 x randn,
   1e-6 x randn, batch 1, batch 9, a NaN, an inf, a NaN in a second input, a constant input,
   values all out of the bounds a model gives) run eager and under
   `torch.compile(backend=<eager backend counting graphs>)` after `torch._dynamo.reset()`, each
   under `no_grad` and with gradients of the summed (non-finite zeroed) floating outputs with
   respect to the floating inputs and every parameter. The state dict is put back before every
   call; every call is seeded. Results (or the exception's type and first line) are saved;
3. `direct`: torchist's `histogramdd` / `histogram` called directly on hand-made and random
   inputs (bounds given or from the data, weights, sparse, every value out of bounds, empty,
   NaN, inf, float64, 1-d, integer bins per dimension), eager at head, and compiled at head and
   with the setting, with and without gradients;
4. comparison: exact (`torch.equal` with equal NaN positions, dtype, shape; the same exception
   type and first line). Graph-break sites logged in the library's files are counted per side.

Prints the counts; exits 1 if any model result differs.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(os.path.dirname(HERE), "real_code")
PY = sys.executable


def installed(package: str) -> str:
    import importlib.util
    spec = importlib.util.find_spec(package)
    return spec.submodule_search_locations[0]


def make_patch(package: str, cand: dict[str, Any], dest: str) -> str:
    """A copy of the installed `package` under `dest`, with the candidate's lines replaced if it
    is an edit (a setting leaves the copy as installed)."""
    shutil.copytree(installed(package), os.path.join(dest, package))
    if cand.get("setting"):
        return dest
    path = os.path.join(dest, cand["path"])
    with open(path) as f:
        src = f.read().splitlines(keepends=True)
    new = [ln if ln.endswith("\n") else ln + "\n" for ln in cand["lines"]]
    src[cand["start_line"] - 1:cand["end_line"]] = new
    with open(path, "w") as f:
        f.writelines(src)
    return dest


def _flat(o: Any) -> list[Any]:
    import torch
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (tuple, list)):
        return [t for x in o for t in _flat(x)]
    if isinstance(o, dict):
        return [t for k in sorted(o) for t in _flat(o[k])]
    return []


def _extra_inputs(lib: str, cases: list[Any]) -> list[tuple[str, tuple[Any, ...]]]:
    import torch
    g = torch.Generator().manual_seed(123)
    args0 = cases[0][0]
    out: list[tuple[str, tuple[Any, ...]]] = []

    def like(a: Any, scale: float = 1.0, batch: int | None = None) -> Any:
        shape = list(a.shape)
        if batch is not None:
            shape[0] = batch
        return scale * torch.randn(shape, generator=g)

    out.append(("zeros", tuple(torch.zeros_like(a) for a in args0)))
    out.append(("large", tuple(like(a, scale=50.0) for a in args0)))
    out.append(("tiny", tuple(like(a, scale=1e-6) for a in args0)))
    out.append(("batch1", tuple(like(a, batch=1) for a in args0)))
    out.append(("batch9", tuple(like(a, batch=9) for a in args0)))
    a = [x.clone() for x in args0]
    a[0].view(-1)[1] = float("nan")
    out.append(("nan", tuple(a)))
    a = [x.clone() for x in args0]
    a[0].view(-1)[2] = float("inf")
    out.append(("inf", tuple(a)))
    if len(args0) > 1:
        a = [x.clone() for x in args0]
        a[1].view(-1)[0] = float("nan")
        out.append(("nan_second", tuple(a)))
    out.append(("constant", tuple(torch.full_like(a, 0.7) for a in args0)))
    out.append(("batch40", tuple(like(a, batch=40) for a in args0)))
    return out


def run_side(pkgdir: str, key: str, out: str, setting: str) -> None:
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, REAL)
    import importlib

    import torch
    torch.set_num_threads(1)
    if setting:
        setattr(torch._dynamo.config, setting, True)
    import models
    sp = models.by_key()[key]
    mod = importlib.import_module(sp.package)
    assert os.path.realpath(list(mod.__path__)[0]).startswith(os.path.realpath(pkgdir)), mod.__path__
    torch.manual_seed(0)
    model, cases = sp.build()
    model.eval()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    inputs = [(f"case{i}", tuple(a)) for i, (a, _) in enumerate(cases)] + _extra_inputs(sp.lib, cases)
    graphs = {"n": 0}

    def counting(gm: Any, ex: Any) -> Any:
        graphs["n"] += 1
        return gm.forward

    results: dict[str, Any] = {}
    times: dict[str, float] = {}
    for name, args in inputs:
        for mode in ("eager", "compiled"):
            for grad in (False, True):
                tag = f"{name}/{mode}/{'grad' if grad else 'nograd'}"
                model.load_state_dict(state)
                torch._dynamo.reset()
                fn = torch.compile(model, backend=counting) if mode == "compiled" else model
                args_ = tuple(a.detach().clone().requires_grad_(grad and a.is_floating_point())
                              for a in args)
                torch.manual_seed(1)
                t0 = time.perf_counter()
                try:
                    if grad:
                        model.zero_grad(set_to_none=True)
                        outs = _flat(fn(*args_))
                        fl = [o for o in outs if o.is_floating_point() and o.requires_grad]
                        grads: list[Any] = []
                        if fl:
                            loss = sum(torch.nan_to_num(o.float(), 0.0, 0.0, 0.0).sum() for o in fl)
                            loss.backward()
                            grads = [a.grad for a in args_] + [p.grad for p in model.parameters()]
                        res = ("ok", [o.detach() for o in outs],
                               [None if x is None else x.detach() for x in grads])
                    else:
                        with torch.no_grad():
                            outs = _flat(fn(*args_))
                        res = ("ok", [o.detach() for o in outs], [])
                except Exception as e:   # noqa: BLE001 - a raise is a result
                    res = ("raise", type(e).__name__, str(e).split("\n")[0][:300])
                times[tag] = time.perf_counter() - t0
                results[tag] = res
    results["_graphs"] = graphs["n"]
    results["_times"] = times
    torch.save(results, out)


# ------------------------------------------------------------------------------ direct calls
def _direct_cases() -> list[tuple[str, Any, dict[str, Any]]]:
    import torch
    g = torch.Generator().manual_seed(7)
    r = lambda *s: torch.randn(*s, generator=g)   # noqa: E731
    out: list[tuple[str, Any, dict[str, Any]]] = []
    out.append(("minmax_2d", r(20, 2), {"bins": 6}))
    out.append(("bounded_2d", r(20, 2), {"bins": 6, "low": -1.0, "upp": 1.0}))
    out.append(("bounded_weights", r(20, 2), {"bins": 4, "low": -1.0, "upp": 1.0,
                                              "weights": r(20).abs()}))
    out.append(("bounded_per_dim", r(30, 3), {"bins": [3, 4, 5], "low": [-1.0, -2.0, 0.0],
                                              "upp": [1.0, 2.0, 1.5]}))
    out.append(("all_out", r(10, 2) + 10.0, {"bins": 5, "low": -1.0, "upp": 1.0}))
    out.append(("all_out_weights", r(10, 2) + 10.0, {"bins": 5, "low": -1.0, "upp": 1.0,
                                                     "weights": r(10).abs()}))
    out.append(("one_in", torch.tensor([[0.1, 0.2], [5.0, 5.0], [9.0, -9.0]]),
                {"bins": 3, "low": -1.0, "upp": 1.0}))
    out.append(("empty", torch.zeros(0, 2), {"bins": 3, "low": -1.0, "upp": 1.0}))
    out.append(("nan_value", torch.tensor([[0.1, float("nan")], [0.3, 0.4], [-0.5, 0.5]]),
                {"bins": 3, "low": -1.0, "upp": 1.0}))
    out.append(("nan_minmax", torch.tensor([[0.1, float("nan")], [0.3, 0.4], [-0.5, 0.5]]),
                {"bins": 3}))
    out.append(("inf_value", torch.tensor([[0.1, float("inf")], [0.3, 0.4]]),
                {"bins": 3, "low": -1.0, "upp": 1.0}))
    out.append(("edge_values", torch.tensor([[-1.0, 1.0], [1.0, -1.0], [0.0, 0.0]]),
                {"bins": 2, "low": -1.0, "upp": 1.0}))
    out.append(("float64", r(15, 2).double(), {"bins": 4, "low": -1.0, "upp": 1.0}))
    out.append(("constant_minmax", torch.full((5, 2), 0.3), {"bins": 4}))
    out.append(("bad_bounds", r(5, 2), {"bins": 4, "low": 1.0, "upp": -1.0}))
    out.append(("sparse", r(25, 3), {"bins": 4, "low": -1.0, "upp": 1.0, "sparse": True}))
    out.append(("sparse_weights", r(25, 3), {"bins": 4, "low": -1.0, "upp": 1.0, "sparse": True,
                                             "weights": r(25).abs()}))
    out.append(("sparse_all_out", r(8, 2) + 10.0, {"bins": 4, "low": -1.0, "upp": 1.0,
                                                   "sparse": True}))
    out.append(("bound_true", r(12, 2).clamp(-1, 1), {"bins": 4, "low": -1.0, "upp": 1.0,
                                                      "bound": True}))
    out.append(("edges_tensor", r(12, 1), {"edges": torch.linspace(-1, 1, 5)}))
    for i in range(10):
        x = r(16 + 3 * i, 2) * (10.0 ** (i % 3 - 1))
        kw: dict[str, Any] = {"bins": 3 + i % 4, "low": -1.0, "upp": 1.0}
        if i % 2:
            kw["weights"] = r(x.shape[0]).abs()
        out.append((f"random{i}", x, kw))
    return out


def run_direct(pkgdir: str, out: str, setting: str) -> None:
    sys.path.insert(0, pkgdir)
    import torch
    torch.set_num_threads(1)
    if setting:
        setattr(torch._dynamo.config, setting, True)
    import torchist
    assert os.path.realpath(list(torchist.__path__)[0]).startswith(os.path.realpath(pkgdir))

    def call(x: Any, kw: dict[str, Any]) -> Any:
        h = torchist.histogramdd(x, **kw)
        return h.to_dense() if h.is_sparse else h

    results: dict[str, Any] = {}
    modes = ("eager", "compiled") if not setting else ("compiled",)
    for name, x, kw in _direct_cases():
        for mode in modes:
            for grad in (False, True):
                torch._dynamo.reset()
                f = torch.compile(call, backend="eager") if mode == "compiled" else call
                kw_ = dict(kw)
                w = None
                if "weights" in kw_:
                    w = kw_["weights"].detach().clone().requires_grad_(grad)
                    kw_["weights"] = w
                try:
                    o = f(x.clone(), kw_)
                    gw = None
                    if grad and w is not None and o.requires_grad:
                        o.sum().backward()
                        gw = w.grad
                    res = ("ok", o.detach(), gw)
                except Exception as e:   # noqa: BLE001
                    res = ("raise", type(e).__name__, str(e).split("\n")[0][:200])
                results[f"{name}/{mode}/{'grad' if grad else 'nograd'}"] = res
    torch.save(results, out)


def run_direct_sinkhorn(pkgdir: str, out: str) -> None:
    """torchist.metrics.sinkhorn_transport and em_distance called directly, eager and compiled,
    on random histograms at several regularisations, thresholds and iteration caps."""
    sys.path.insert(0, pkgdir)
    import torch
    torch.set_num_threads(1)
    from torchist import metrics
    assert os.path.realpath(os.path.dirname(metrics.__file__)).startswith(os.path.realpath(pkgdir))
    g = torch.Generator().manual_seed(11)
    cases = []
    for i, (n, gamma, thr, it, step) in enumerate([
            (4, 1.0, 1e-8, 1000, 100), (6, 10.0, 1e-6, 200, 20), (9, 100.0, 1e-8, 1000, 100),
            (5, 10.0, 1e-3, 50, 5), (8, 50.0, 0.0, 30, 10), (3, 1.0, 1e-2, 1000, 1),
            (7, 5.0, 1e-9, 300, 7), (10, 20.0, 1e-5, 100, 25)]):
        r = torch.rand(n, generator=g) + 0.05
        c = torch.rand(n, generator=g) + 0.05
        M = torch.rand(n, n, generator=g)
        cases.append((f"sinkhorn{i}", (r / r.sum(), c / c.sum(), M), dict(gamma=gamma, threshold=thr,
                                                                         max_iter=it, step=step)))
    for i in range(4):
        p = torch.rand(4, 4, generator=g) + 1e-3
        q = torch.rand(4, 4, generator=g) + 1e-3
        cases.append((f"emd{i}", (p / p.sum(), q / q.sum()), dict(gamma=10.0, max_iter=200, step=20,
                                                                 threshold=1e-6)))
    results: dict[str, Any] = {}
    for name, args, kw in cases:
        fn0 = metrics.sinkhorn_transport if name.startswith("sinkhorn") else metrics.em_distance
        fn = lambda *a, _f=fn0, _k=kw: _f(*a, **_k)   # noqa: E731
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            f = torch.compile(fn, backend="eager") if mode == "compiled" else fn
            t0 = time.perf_counter()
            try:
                o = f(*[a.clone() for a in args])
                res = ("ok", o.detach())
            except Exception as e:   # noqa: BLE001
                res = ("raise", type(e).__name__, str(e).split("\n")[0][:200])
            results[f"{name}/{mode}"] = (res, time.perf_counter() - t0)
    torch.save(results, out)


def direct_sinkhorn(cand: dict[str, Any]) -> list[str]:
    import torch
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(installed("torchist"), os.path.join(work, "head", "torchist"))
        pdir = make_patch("torchist", cand, os.path.join(work, "patched"))
        outs = []
        for d in (os.path.join(work, "head"), pdir):
            o = os.path.join(work, os.path.basename(d) + "_sink.pt")
            p = subprocess.run([PY, __file__, "--direct-sinkhorn", d, o], capture_output=True,
                               text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=1800)
            if p.returncode != 0:
                raise RuntimeError(p.stderr[-2000:])
            outs.append(torch.load(o, weights_only=False))
    h, pt = outs
    lines = []
    for k in h:
        (rh, th), (rp, tp) = h[k], pt[k]
        e = k.replace("/compiled", "/eager")
        diff = ""
        if rh[0] == "ok" and rp[0] == "ok":
            diff = f"max |patched - head| {float((rp[1] - rh[1]).abs().max()):.3g}"
        lines.append(f"{k}: equal {same(list(rh), list(rp))} ({diff}); patched equal to head's eager "
                     f"{same(list(h[e][0]), list(rp))}; time head {th:.3f} s, patched {tp:.3f} s")
    return lines


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


def breaks(log: str, package: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for p, ln in re.findall(r"Graph break.*? in user code at (\S+):(\d+)", log):
        i = p.rfind("/" + package + "/")
        if i < 0:
            continue
        s = f"{p[i + 1:]}:{ln}"
        found[s] = found.get(s, 0) + 1
    return found


def side(pkgdir: str, key: str, work: str, tag: str, setting: str) -> tuple[dict[str, Any], str]:
    import torch
    out = os.path.join(work, f"{tag}.pt")
    env = dict(os.environ, TORCH_LOGS="graph_breaks", PYTHONWARNINGS="ignore")
    p = subprocess.run([PY, __file__, "--side", pkgdir, key, out, setting], env=env,
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"{tag} failed: {p.stderr[-2000:]}")
    return torch.load(out, weights_only=False), p.stderr


def compare_model(package: str, key: str, cand: dict[str, Any], work: str) -> dict[str, Any]:
    setting = cand.get("setting") or ""
    pdir = make_patch(package, cand, os.path.join(work, "patched"))
    head, hlog = side(os.path.join(work, "head"), key, work, "head", "")
    pat, plog = side(pdir, key, work, "patched", setting)
    n = eq = 0
    diffs = []
    for k in head:
        if k.startswith("_"):
            continue
        n += 1
        if same(head[k], pat[k]):
            eq += 1
        else:
            diffs.append((k, head[k] if head[k][0] == "raise" else "ok",
                          pat[k] if pat[k][0] == "raise" else "ok"))
    # compiled against eager within each side (a setting changes compiled code only)
    ce = {"head": 0, "patched": 0}
    for s_, res in (("head", head), ("patched", pat)):
        for k in res:
            if "/compiled/" in k and same(res[k], res[k.replace("/compiled/", "/eager/")]):
                ce[s_] += 1
    target = f"{cand['path']}:{cand['start_line']}"
    hb, pb = breaks(hlog, package), breaks(plog, package)
    logdir = os.environ.get("RERUN_LOGS")
    if logdir:
        os.makedirs(logdir, exist_ok=True)
        tag = f"{key.split(':')[1]}_{os.path.basename(cand['path'])}_{cand['start_line']}"
        for side_, log in (("head", hlog), ("patched", plog)):
            with open(os.path.join(logdir, f"{tag}_{side_}.log"), "w") as f:
                f.write(log)
    ct = lambda r: sum(v for k, v in r["_times"].items() if "/compiled/" in k)   # noqa: E731
    return {"model": key, "results": n, "equal": eq, "differ": diffs,
            "graphs": (head["_graphs"], pat["_graphs"]),
            "compiled_eq_eager": ce, "compiled_s": (round(ct(head), 1), round(ct(pat), 1)),
            "target_head": hb.get(target, 0), "target_patched": pb.get(target, 0),
            "breaks_head": hb, "breaks_patched": pb,
            "new_breaks": {b: v for b, v in pb.items() if b not in hb},
            "gone": {b: v for b, v in hb.items() if b not in pb}}


def verified(paths: list[str]) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(file, candidate, models) per distinct verified edit or setting (a setting per site),
    over the JSON files."""
    seen: dict[tuple[Any, ...], tuple[str, dict[str, Any], list[str]]] = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for m in data["models"].values():
            for c in m.get("candidates", []):
                if not c.get("verified"):
                    continue
                # a setting is the same change whatever site it was proposed for: one re-run
                k = ((c["setting"],) if c.get("setting") else
                     (c["path"], c["start_line"], c["end_line"], tuple(c["lines"])))
                if k not in seen:
                    seen[k] = (os.path.basename(path), c, [])
                if m["model"] not in seen[k][2]:
                    seen[k][2].append(m["model"])
    return list(seen.values())


def direct(setting: str) -> tuple[int, int, int, list[tuple[str, str, str]]]:
    """torchist's histogramdd called directly: head eager against the compiled calls with the
    setting; (calls, equal, equal compiled at head, the differing ones)."""
    import torch
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(installed("torchist"), os.path.join(work, "head", "torchist"))
        outs = []
        for s_ in ("", setting):
            o = os.path.join(work, f"direct_{s_ or 'head'}.pt")
            p = subprocess.run([PY, __file__, "--direct", os.path.join(work, "head"), o, s_],
                               capture_output=True, text=True,
                               env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=1800)
            if p.returncode != 0:
                raise RuntimeError(p.stderr[-2000:])
            outs.append(torch.load(o, weights_only=False))
    h, s = outs
    show = lambda r: (f"raises {r[1]}: {r[2][:100]}" if r[0] == "raise"   # noqa: E731
                      else f"ok {tuple(r[1].shape)} {r[1].dtype}")
    diffs, n, eq, eq_head = [], 0, 0, 0
    for k in s:
        e = k.replace("/compiled/", "/eager/")
        n += 1
        eq_head += same(list(h[k]), list(h[e]))
        if same(list(h[e]), list(s[k])):
            eq += 1
        else:
            diffs.append((k, "eager head " + show(h[e]) + " | compiled head " + show(h[k]),
                          show(s[k])))
    return n, eq, eq_head, diffs


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--side":
        run_side(argv[1], argv[2], argv[3], argv[4] if len(argv) > 4 else "")
        return 0
    if argv and argv[0] == "--direct-sinkhorn":
        run_direct_sinkhorn(argv[1], argv[2])
        return 0
    if argv and argv[0] == "--direct":
        run_direct(argv[1], argv[2], argv[3] if len(argv) > 3 else "")
        return 0
    cands = verified(argv)
    total = total_eq = 0
    bad = False
    settings_done = set()
    for src, cand, keys in cands:
        package = cand["path"].split("/")[0]
        what = f"setting {cand['setting']}" if cand.get("setting") else "edit"
        if cand.get("setting"):
            cand = dict(cand, path=f"{package}/(setting)", start_line=0)
        print(f"== {cand['path']}:{cand['start_line']} {what} ({src}; models {keys})")
        if not cand.get("setting"):
            print("   " + "\n   ".join(cand["lines"]))
        for key in keys:
            with tempfile.TemporaryDirectory() as work:
                shutil.copytree(installed(package), os.path.join(work, "head", package))
                r = compare_model(package, key, cand, work)
            total += r["results"]
            total_eq += r["equal"]
            bad |= bool(r["differ"])
            print(f"   {key}: {r['equal']} of {r['results']} equal; graphs {r['graphs'][0]} -> "
                  f"{r['graphs'][1]}; compiled equal to eager {r['compiled_eq_eager']} (of "
                  f"{r['results'] // 2} each); compiled time {r['compiled_s'][0]} s -> "
                  f"{r['compiled_s'][1]} s; breaks logged at the target line {r['target_head']} -> "
                  f"{r['target_patched']}; sites gone {r['gone']}; new sites {r['new_breaks']}; "
                  f"other sites' counts {[(b, r['breaks_head'][b], r['breaks_patched'][b]) for b in r['breaks_head'] if b in r['breaks_patched'] and r['breaks_head'][b] != r['breaks_patched'][b]]}",
                  flush=True)
            for d in r["differ"]:
                print(f"   DIFFER {d}")
        if not cand.get("setting") and cand["path"] == "torchist/metrics.py":
            for line in direct_sinkhorn(cand):
                print("   direct " + line)
        if cand.get("setting") and package == "torchist" and cand["setting"] not in settings_done:
            settings_done.add(cand["setting"])
            n, eq, eqh, diffs = direct(cand["setting"])
            print(f"   direct histogramdd calls: compiled with the setting equal to head's eager in "
                  f"{eq} of {n} (compiled at head: {eqh} of {n})")
            for k, h, p_ in diffs:
                print(f"   DIRECT DIFFER {k}: {h} / with the setting {p_}")
    print(f"verified candidates: {len(cands)}; model results: {total_eq} of {total} equal")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
