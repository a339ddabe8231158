"""Independent re-run of the seventeenth held-out batch's VERIFIED results (nflows 0.14,
pytorch-metric-learning 2.9.0), with no pt2bot code: every verified edit, and the verified dynamo
settings, each applied by this script and run against the unpatched library.

    /work/venvs/realcode/bin/python benchmarks/results/heldout17_rerun.py \
        benchmarks/results/realcode_proof_heldout17.json \
        benchmarks/results/realcode_proof_heldout17_matrix.json > benchmarks/results/heldout17_rerun.log

For each distinct verified candidate in the JSON files (read only for `path`, `start_line`,
`end_line`, `lines`, `setting`, and the models whose proof verified it):
1. a copy of the installed package; an edit replaces `start_line..end_line` of `path` with
   `lines`; a setting leaves the package as installed and sets `torch._dynamo.config.<setting> =
   True` in the patched side's process before anything is compiled;
2. each side is a subprocess (`TORCH_LOGS=graph_breaks`) that imports the package from its copy
   (asserted), builds the model from models.py (seed 0, one thread, eval mode) and runs it on the
   spec's cases plus 24 freshly drawn inputs (batch sizes 1 to 24, scales 0.3 to 4; for the
   metric-learning models random integer labels over the spec's classes) and 4 edge inputs
   (zeros, 50 x randn, a NaN, an inf in the first input): eager and compiled
   (`torch.compile(model, backend="eager")`, compiled once per side and gradient mode, so shapes
   recompile as in training), each without gradients and with the gradients of the summed
   (non-finite zeroed) floating outputs with respect to the floating inputs and all parameters.
   The state dict is put back and torch is seeded (1) before every call (the flows draw samples);
3. head and patched are compared exactly (`torch.equal` with equal NaN positions, dtype and
   shape; the same exception type and first message line), with the max |difference| where
   they differ; graph-break sites logged in the library's files are counted per side;
4. `direct`: the three checks the proofs rewrote to `torch._assert_async` (the rational-quadratic
   and quadratic spline domain checks, Sigmoid's inverse) are called directly on inputs inside
   and outside their domain, eager and compiled, head and patched: what each raises.

Prints per candidate and model; exits 1 if any model result differs between head and patched.
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
N_FRESH = 24


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


def _inputs(cases: list[Any]) -> list[tuple[str, tuple[Any, ...]]]:
    """The spec's cases, N_FRESH fresh draws shaped like the first case with other batch sizes
    and scales, and edge inputs."""
    import torch
    g = torch.Generator().manual_seed(2024)
    args0 = cases[0][0]
    out = [(f"case{i}", tuple(a)) for i, (a, _) in enumerate(cases)]
    batches = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]
    scales = [0.3, 1.0, 2.0, 4.0]

    def draw(b: int, scale: float) -> tuple[Any, ...]:
        new = []
        for a in args0:
            if a.is_floating_point():
                new.append(scale * torch.randn((b,) + tuple(a.shape[1:]), generator=g))
            else:   # integer labels: random over the classes the spec's case uses
                k = int(a.max()) + 1
                new.append(torch.randint(0, k, (b,), generator=g, dtype=a.dtype))
        return tuple(new)

    for i in range(N_FRESH):
        b, s = batches[i % len(batches)], scales[i % len(scales)]
        out.append((f"fresh{i}_b{b}_x{s}", draw(b, s)))
    b0 = args0[0].shape[0]
    out.append(("zeros", tuple(torch.zeros_like(a) if a.is_floating_point() else a for a in args0)))
    out.append(("large", tuple(50.0 * torch.randn(a.shape, generator=g) if a.is_floating_point()
                               else a for a in args0)))
    for name, val in (("nan", float("nan")), ("inf", float("inf"))):
        a = [x.clone() for x in args0]
        a[0].view(-1)[min(1, a[0].numel() - 1)] = val
        out.append((name, tuple(a)))
    assert b0 >= 1
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
    inputs = _inputs(cases)
    results: dict[str, Any] = {}
    times = {"eager": 0.0, "compiled": 0.0}
    for mode in ("eager", "compiled"):
        for grad in (False, True):
            torch._dynamo.reset()
            fn = torch.compile(model, backend="eager") if mode == "compiled" else model
            for name, args in inputs:
                tag = f"{name}/{mode}/{'grad' if grad else 'nograd'}"
                model.load_state_dict(state)
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
                            loss = sum(torch.nan_to_num(o, 0.0, 0.0, 0.0).sum() for o in fl)
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
                times[mode] += time.perf_counter() - t0
                results[tag] = res
    results["_times"] = times
    torch.save(results, out)


# ------------------------------------------------------------------------------ direct calls
def run_direct(pkgdir: str, out: str) -> None:
    """The three domain checks rewritten to torch._assert_async, called directly."""
    sys.path.insert(0, pkgdir)
    import torch
    torch.set_num_threads(1)
    import nflows
    assert os.path.realpath(list(nflows.__path__)[0]).startswith(os.path.realpath(pkgdir))
    from nflows.transforms.nonlinearities import Sigmoid
    from nflows.transforms.splines.quadratic import quadratic_spline
    from nflows.transforms.splines.rational_quadratic import rational_quadratic_spline
    g = torch.Generator().manual_seed(5)
    sig = Sigmoid()

    def rq(x: Any) -> Any:
        n = x.shape[0]
        return rational_quadratic_spline(x, torch.randn(n, 4, generator=torch.Generator().manual_seed(6)),
                                         torch.randn(n, 4, generator=torch.Generator().manual_seed(7)),
                                         torch.randn(n, 5, generator=torch.Generator().manual_seed(8)),
                                         left=-1.0, right=1.0, bottom=-1.0, top=1.0)

    def quad(x: Any) -> Any:
        n = x.shape[0]
        return quadratic_spline(x, torch.randn(n, 4, generator=torch.Generator().manual_seed(6)),
                                torch.randn(n, 5, generator=torch.Generator().manual_seed(7)))

    def siginv(x: Any) -> Any:
        return sig.inverse(x.view(-1, 1))

    fns = {"rq_spline": (rq, -1.0, 1.0), "quadratic_spline": (quad, 0.0, 1.0),
           "sigmoid_inverse": (siginv, 0.0, 1.0)}
    results: dict[str, Any] = {}
    for fname, (f, lo, hi) in fns.items():
        xs = {"inside": lo + (hi - lo) * torch.rand(7, generator=g),
              "edges": torch.tensor([lo, hi, (lo + hi) / 2]),
              "below": torch.cat([lo + (hi - lo) * torch.rand(4, generator=g), torch.tensor([lo - 0.5])]),
              "above": torch.cat([torch.tensor([hi + 0.1]), lo + (hi - lo) * torch.rand(4, generator=g)]),
              "nan": torch.tensor([float("nan"), (lo + hi) / 2])}
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            ff = torch.compile(f, backend="eager") if mode == "compiled" else f
            for xname, x in xs.items():
                try:
                    o = _flat(ff(x.clone()))
                    res = ("ok", [t.detach() for t in o])
                except Exception as e:   # noqa: BLE001
                    res = ("raise", type(e).__name__, str(e).split("\n")[0][:200])
                results[f"{fname}/{xname}/{mode}"] = res
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


def side(pkgdir: str, key: str, out: str, setting: str) -> tuple[dict[str, Any], str]:
    import torch
    env = dict(os.environ, TORCH_LOGS="graph_breaks", PYTHONWARNINGS="ignore")
    p = subprocess.run([PY, __file__, "--side", pkgdir, key, out, setting], env=env,
                       capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{key} side failed: {p.stderr[-3000:]}")
    return torch.load(out, weights_only=False), p.stderr


def verified(paths: list[str]) -> list[tuple[list[str], dict[str, Any], list[str]]]:
    seen: dict[tuple[Any, ...], tuple[list[str], dict[str, Any], list[str]]] = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for m in data["models"].values():
            for c in m.get("candidates", []):
                if not c.get("verified"):
                    continue
                k = ((c["setting"],) if c.get("setting") else
                     (c["path"], c["start_line"], c["end_line"], tuple(c["lines"])))
                if k not in seen:
                    seen[k] = ([], c, [])
                if os.path.basename(path) not in seen[k][0]:
                    seen[k][0].append(os.path.basename(path))
                if m["model"] not in seen[k][2]:
                    seen[k][2].append(m["model"])
    return list(seen.values())


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--side":
        run_side(argv[1], argv[2], argv[3], argv[4] if len(argv) > 4 else "")
        return 0
    if argv and argv[0] == "--direct":
        run_direct(argv[1], argv[2])
        return 0
    import torch
    cands = verified(argv)
    work = tempfile.mkdtemp(prefix="h17rerun_")
    heads: dict[str, tuple[dict[str, Any], dict[str, int]]] = {}
    total = total_eq = 0
    bad = False
    t_all = time.perf_counter()
    try:
        for srcs, cand, keys in cands:
            package = (cand["path"].split("/")[0] if cand.get("path") else "")
            if cand.get("setting"):
                print(f"== setting {cand['setting']} ({', '.join(srcs)}; models {keys})")
            else:
                print(f"== {cand['path']}:{cand['start_line']}-{cand['end_line']} edit "
                      f"({cand.get('rule')}; {', '.join(srcs)}; models {keys})")
                print("   " + "\n   ".join(cand["lines"]))
            for key in keys:
                package = key.split(":")[0].replace("-", "_")
                if key not in heads:
                    hdir = make_copy(package, None, os.path.join(work, "head_" + key.replace(":", "_")))
                    res, log = side(hdir, key, os.path.join(hdir, "out.pt"), "")
                    heads[key] = (res, breaks(log, package))
                head, hb = heads[key]
                pdir = make_copy(package, cand, tempfile.mkdtemp(dir=work, prefix="patched_"))
                pat, plog = side(pdir, key, os.path.join(pdir, "out.pt"), cand.get("setting") or "")
                pb = breaks(plog, package)
                n = eq = 0
                differ = []
                for k in head:
                    if k.startswith("_"):
                        continue
                    n += 1
                    if same(head[k], pat[k]):
                        eq += 1
                    else:
                        h, p = head[k], pat[k]
                        if h[0] == p[0] == "ok":
                            differ.append(f"{k}: outputs max |diff| {maxdiff(h[1], p[1]):.3g}, "
                                          f"grads max |diff| {maxdiff(h[2], p[2]):.3g}")
                        else:
                            differ.append(f"{k}: head {h[0] if h[0] == 'ok' else h[1:]} / "
                                          f"patched {p[0] if p[0] == 'ok' else p[1:]}")
                ce = {"head": 0, "patched": 0}
                for s_, res in (("head", head), ("patched", pat)):
                    for k in res:
                        if "/compiled/" in k and same(res[k], res[k.replace("/compiled/", "/eager/")]):
                            ce[s_] += 1
                total += n
                total_eq += eq
                bad |= bool(differ)
                tgt_lines = ({f"{cand['path']}:{ln}" for ln in range(cand["start_line"], cand["end_line"] + 1)}
                             if not cand.get("setting") else set())
                th = sum(v for b, v in hb.items() if b in tgt_lines)
                tp = sum(v for b, v in pb.items() if b in tgt_lines)
                print(f"   {key}: {eq} of {n} results equal (inputs {n // 4}: eager and compiled, "
                      f"with and without gradients); compiled equal to eager {ce} (of {n // 2} "
                      f"each); breaks logged on the replaced lines {th} -> {tp}; "
                      f"break sites gone {sorted(b for b in hb if b not in pb)}; new "
                      f"{sorted(b for b in pb if b not in hb)}; all logged breaks "
                      f"{sum(hb.values())} -> {sum(pb.values())}; compiled time "
                      f"{head['_times']['compiled']:.1f} s -> {pat['_times']['compiled']:.1f} s",
                      flush=True)
                for d in differ:
                    print(f"   DIFFER {d}")
        # the rewritten domain checks, called directly
        asserts = [c for _, c, _ in cands if not c.get("setting") and "_assert_async" in "".join(c["lines"])
                   and c["path"].startswith("nflows/")]
        if asserts:
            print("== direct calls of the nflows checks rewritten to torch._assert_async "
                  f"({', '.join(c['path'] + ':' + str(c['start_line']) for c in asserts)}), all applied together")
            hdir = make_copy("nflows", None, os.path.join(work, "direct_head"))
            pdir = os.path.join(work, "direct_patched")
            make_copy("nflows", asserts[0], pdir)
            for c in asserts[1:]:
                path = os.path.join(pdir, c["path"])
                with open(path) as f:
                    src = f.read().splitlines(keepends=True)
                src[c["start_line"] - 1:c["end_line"]] = [ln + "\n" for ln in c["lines"]]
                with open(path, "w") as f:
                    f.writelines(src)
            outs = []
            for d in (hdir, pdir):
                o = os.path.join(d, "direct.pt")
                p = subprocess.run([PY, __file__, "--direct", d, o], capture_output=True, text=True,
                                   env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=1800)
                if p.returncode != 0:
                    raise RuntimeError(p.stderr[-3000:])
                outs.append(torch.load(o, weights_only=False))
            h, pt = outs
            show = lambda r: "ok" if r[0] == "ok" else f"raises {r[1]}: {r[2][:90]}"   # noqa: E731
            for k in h:
                print(f"   {k}: head {show(h[k])} | patched {show(pt[k])} | equal {same(list(h[k]), list(pt[k]))}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"verified candidates: {len(cands)}; model results: {total_eq} of {total} equal; "
          f"{time.perf_counter() - t_all:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
