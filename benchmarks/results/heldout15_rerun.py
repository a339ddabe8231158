"""Independent re-run of the fifteenth held-out batch's VERIFIED edits (zuko, torchcde), with no
pt2bot code: every candidate a proof accepted is applied by this script to a copy of the
installed library, and head (the installed package) and the patched copy are compared.

    /work/venvs/realcode/bin/python benchmarks/results/heldout15_rerun.py \
        benchmarks/results/realcode_proof_heldout15.json benchmarks/results/realcode_proof_heldout15_matrix.json

For each verified edit (a candidate with `verified` true that replaces lines; settings are
counted apart):
1. `patch`: the library's package is copied to a scratch directory and the candidate's
   `start_line..end_line` replaced with its `lines` (nothing else of the JSON is used);
2. `run` (a subprocess per side, `TORCH_LOGS=graph_breaks`): the package is imported from the
   side's directory (asserted), each model of the JSON that breaks on the edited file is built
   from models.py (seed 0, one thread, eval), and its spec cases plus extra inputs (zeros, a
   NaN, an inf, large values, batch 1, a larger batch; for torchcde also a longer series) run
   eager and under `torch.compile(backend=<eager backend counting graphs>)` after
   `torch._dynamo.reset()`, each under `no_grad` and with gradients of the summed (non-finite
   zeroed) outputs with respect to the tensor inputs and every parameter. Every call is seeded
   (samplers draw). Results (or the exception's type and text) are saved;
3. `direct`: the edited function is called directly, head's and the patch's, on hand-made and
   random inputs, eager and compiled;
4. comparison: exact (`torch.equal` with equal NaN positions, dtype, shape; equal exception
   type and text). Graph-break lines logged in the library's files are listed per side.

Prints the counts; exits 1 if any result differs.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(os.path.dirname(HERE), "real_code")
PY = sys.executable
PACKAGES = {"zuko": "zuko", "torchcde": "torchcde"}


# ------------------------------------------------------------------------------------ patching
def installed(package: str) -> str:
    import importlib.util
    spec = importlib.util.find_spec(package)
    return spec.submodule_search_locations[0]


def make_patch(package: str, cand: dict[str, Any], dest: str) -> str:
    """A copy of the installed `package` under `dest` with the candidate's lines replaced."""
    shutil.copytree(installed(package), os.path.join(dest, package))
    path = os.path.join(dest, cand["path"])
    with open(path) as f:
        src = f.read().splitlines(keepends=True)
    new = [ln if ln.endswith("\n") else ln + "\n" for ln in cand["lines"]]
    src[cand["start_line"] - 1:cand["end_line"]] = new
    with open(path, "w") as f:
        f.writelines(src)
    return dest


# --------------------------------------------------------------------------- one side's run
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

    def like(a: Any, fill: Any = None, scale: float = 1.0, batch: int | None = None) -> Any:
        shape = list(a.shape)
        if batch is not None:
            shape[0] = batch
        if fill is not None:
            return torch.full(shape, float(fill))
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
    if len(args0) > 1:   # zuko: a NaN in the context
        a = [x.clone() for x in args0]
        a[1].view(-1)[0] = float("nan")
        out.append(("nan_context", tuple(a)))
    if lib == "torchcde":
        x = args0[0]
        out.append(("long", (torch.randn(x.shape[0], x.shape[1] + 5, x.shape[2], generator=g),)))
        y = torch.randn(x.shape, generator=g)
        y[:, 0] = float("nan")     # a missing first observation in every channel
        out.append(("nan_first_row", (y,)))
        y = torch.randn(x.shape, generator=g)
        y[:, :, 0] = float("nan")  # a channel missing everywhere
        out.append(("nan_channel", (y,)))
    return out


def run_side(pkgdir: str, key: str, out: str) -> None:
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, REAL)
    import importlib

    import torch
    torch.set_num_threads(1)
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
                try:
                    if grad:
                        model.zero_grad(set_to_none=True)
                        outs = _flat(fn(*args_))
                        loss = sum(torch.nan_to_num(o.float(), 0.0, 0.0, 0.0).sum()
                                   for o in outs if o.is_floating_point() and o.requires_grad)
                        grads: list[Any] = []
                        if isinstance(loss, torch.Tensor) and loss.requires_grad:
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
                results[tag] = res
    results["_graphs"] = graphs["n"]
    torch.save(results, out)


# ------------------------------------------------------------------------------ direct calls
def _direct_inputs() -> list[tuple[str, Any, Any]]:
    """(name, x, t) for torchcde's path functions: (batch, length, channels) values, t or None."""
    import torch
    g = torch.Generator().manual_seed(7)
    out: list[tuple[str, Any, Any]] = []
    r = lambda *s: torch.randn(*s, generator=g)   # noqa: E731
    out.append(("plain", r(2, 5, 3), None))
    out.append(("plain_t", r(2, 5, 3), torch.tensor([0.0, 0.5, 1.0, 2.0, 2.5])))
    out.append(("t_equal", r(2, 5, 3), torch.tensor([0.0, 0.5, 0.5, 2.0, 2.5])))
    out.append(("t_decreasing", r(2, 5, 3), torch.tensor([0.0, 1.0, 0.7, 2.0, 2.5])))
    out.append(("t_nan", r(2, 5, 3), torch.tensor([0.0, float("nan"), 1.0, 2.0, 2.5])))
    out.append(("t_inf", r(2, 5, 3), torch.tensor([0.0, 1.0, 2.0, 3.0, float("inf")])))
    out.append(("t_neginf_first", r(2, 5, 3), torch.tensor([float("-inf"), 1.0, 2.0, 3.0, 4.0])))
    out.append(("length2", r(3, 2, 2), None))
    out.append(("zeros", torch.zeros(2, 4, 3), None))
    out.append(("large", 1e6 * r(2, 6, 3), None))
    out.append(("float64", r(2, 5, 3).double(), None))
    out.append(("unbatched", r(6, 2), None))
    out.append(("batch1", r(1, 5, 2), None))
    out.append(("two_batch_dims", r(2, 2, 5, 2), None))
    x = r(2, 6, 3)
    x[0, 0, 1] = float("nan")
    out.append(("nan_first", x, None))
    x = r(2, 6, 3)
    x[1, 3, 2] = float("nan")
    x[0, 2:4, 1] = float("nan")
    out.append(("nan_middle", x, None))
    x = r(2, 6, 3)
    x[:, -1, 2] = float("nan")
    out.append(("nan_last", x, None))
    x = r(2, 6, 3)
    x[0, :, 1] = float("nan")
    out.append(("nan_channel", x, None))
    x = r(2, 6, 3)
    x[0, 3, 0] = float("nan")   # a NaN in what rectilinear reads as the time channel
    out.append(("nan_time_channel", x, None))
    out.append(("all_nan", torch.full((1, 4, 2), float("nan")), None))
    x = r(2, 6, 3)
    x[0, 2, 1] = float("inf")
    out.append(("inf_value", x, None))
    for i in range(12):
        x = r(2, 7, 3) * (10.0 ** (i % 4 - 1))
        x[..., 0] = torch.arange(7.0) + 0.1 * i
        mask = torch.rand(x.shape, generator=g) < 0.25
        mask[..., 0] = False
        x = torch.where(mask, torch.full_like(x, float("nan")), x) if i % 3 else x
        out.append((f"random{i}", x, None))
    return out


DIRECT_FOR = {   # edited file and first line -> the direct calls that reach it
    ("torchcde/misc.py", 87): ("validate_input_path", "linear_coeffs"),
    ("torchcde/interpolation_linear.py", 118): ("prepare_rectilinear", "linear_coeffs_rect"),
    ("torchcde/interpolation_linear.py", 158): ("linear_coeffs_rect",),
    ("torchcde/interpolation_linear.py", 169): ("linear_coeffs", "linear_coeffs_rect"),
}


def run_direct(pkgdir: str, out: str, which: str = "") -> None:
    """Direct calls of the functions the verified edits change, eager and compiled."""
    sys.path.insert(0, pkgdir)
    import warnings

    import torch
    torch.set_num_threads(1)
    import torchcde
    from torchcde import interpolation_linear, misc
    assert os.path.realpath(list(torchcde.__path__)[0]).startswith(os.path.realpath(pkgdir))

    fns = {
        "validate_input_path": lambda x, t: misc.validate_input_path(x, t),
        "prepare_rectilinear": lambda x, t: interpolation_linear._prepare_rectilinear_interpolation(x, 0),
        "linear_coeffs": lambda x, t: torchcde.linear_interpolation_coeffs(x, t=t),
        "linear_coeffs_rect": lambda x, t: torchcde.linear_interpolation_coeffs(x, rectilinear=0),
    }
    results: dict[str, Any] = {}
    for fname, fn in fns.items():
        if which and fname not in which.split(","):
            continue
        for name, x, t in _direct_inputs():
            for mode in ("eager", "compiled"):
                for grad in (False, True):
                    torch._dynamo.reset()
                    f = torch.compile(fn, backend="eager") if mode == "compiled" else fn
                    xx = x.detach().clone().requires_grad_(grad)
                    tt = None if t is None else t.clone()
                    with warnings.catch_warnings(record=True) as w:
                        warnings.simplefilter("always")
                        try:
                            o = f(xx, tt)
                            gx = None
                            if grad and o.requires_grad:
                                torch.nan_to_num(o, 0.0, 0.0, 0.0).sum().backward()
                                gx = xx.grad
                            res = ("ok", o.detach(), gx,
                                   bool(o.data_ptr() == xx.data_ptr()))   # the input returned as is
                        except Exception as e:   # noqa: BLE001
                            res = ("raise", type(e).__name__, str(e).split("\n")[0][:200])
                    warned = sorted({str(m.message)[:60] for m in w
                                     if "begins with missing values" in str(m.message)})
                    results[f"{fname}/{name}/{mode}/{'grad' if grad else 'nograd'}"] = (res, warned)
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


def breaks(log: str, package: str) -> dict[str, int]:
    """How many times a graph break was logged at each line of the library (TORCH_LOGS=graph_breaks:
    the site of "Graph break ... in user code at FILE:LINE", the innermost user frame)."""
    found: dict[str, int] = {}
    for p, ln in re.findall(r"Graph break.*? in user code at (\S+):(\d+)", log):
        i = p.rfind("/" + package + "/")
        if i < 0:
            continue
        s = f"{p[i + 1:]}:{ln}"
        found[s] = found.get(s, 0) + 1
    return found


def to_head(site: str, cand: dict[str, Any]) -> str:
    """A patched file's line as head's line number (lines after the edit shift by its length)."""
    path, ln = site.rsplit(":", 1)
    n = int(ln)
    if path != cand["path"]:
        return site
    start, end = cand["start_line"], cand["end_line"]
    new_end = start + len(cand["lines"]) - 1
    if n > new_end:
        return f"{path}:{n - (new_end - end)}"
    if n >= start:
        return f"{path}:edit{n - start + 1}"   # a break inside the edited lines
    return site


def side(pkgdir: str, key: str, work: str, tag: str) -> tuple[dict[str, Any], str]:
    import torch
    out = os.path.join(work, f"{tag}.pt")
    env = dict(os.environ, TORCH_LOGS="graph_breaks", PYTHONWARNINGS="ignore")
    p = subprocess.run([PY, __file__, "--side", pkgdir, key, out], env=env,
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"{tag} failed: {p.stderr[-2000:]}")
    return torch.load(out, weights_only=False), p.stderr


def compare_model(package: str, key: str, cand: dict[str, Any], work: str) -> dict[str, Any]:
    pdir = make_patch(package, cand, os.path.join(work, "patched"))
    head, hlog = side(os.path.join(work, "head"), key, work, "head")
    pat, plog = side(pdir, key, work, "patched")
    n = eq = 0
    diffs = []
    for k in head:
        if k.startswith("_"):
            continue
        n += 1
        if same(head[k], pat[k]):
            eq += 1
        else:
            diffs.append(k)
    target = f"{cand['path']}:{cand['start_line']}"
    hb = breaks(hlog, package)
    pb: dict[str, int] = {}
    for k, v in breaks(plog, package).items():
        pb[to_head(k, cand)] = pb.get(to_head(k, cand), 0) + v
    logdir = os.environ.get("RERUN_LOGS")
    if logdir:
        os.makedirs(logdir, exist_ok=True)
        tag = f"{key.split(':')[1]}_{os.path.basename(cand['path'])}_{cand['start_line']}"
        for side_, log in (("head", hlog), ("patched", plog)):
            with open(os.path.join(logdir, f"{tag}_{side_}.log"), "w") as f:
                f.write(log)
    return {"model": key, "results": n, "equal": eq, "differ": diffs,
            "graphs": (head["_graphs"], pat["_graphs"]),
            "target_head": hb.get(target, 0), "target_patched": pb.get(target, 0),
            "breaks_head": hb, "breaks_patched": pb,
            "new_breaks": {b: v for b, v in pb.items() if b not in hb},
            "gone": {b: v for b, v in hb.items() if b not in pb}}


def verified_edits(paths: list[str]) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(file, candidate, models) per distinct verified edit, over the JSON files."""
    seen: dict[tuple[Any, ...], tuple[str, dict[str, Any], list[str]]] = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for m in data["models"].values():
            for c in m.get("candidates", []):
                if not c.get("verified") or not c.get("lines") and c.get("start_line") is None:
                    continue
                if c.get("setting") or c.get("kind") == "setting":
                    continue
                k = (c["path"], c["start_line"], c["end_line"], tuple(c["lines"]))
                if k not in seen:
                    seen[k] = (os.path.basename(path), c, [])
                if m["model"] not in seen[k][2]:
                    seen[k][2].append(m["model"])
    return list(seen.values())


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--side":
        run_side(argv[1], argv[2], argv[3])
        return 0
    if argv and argv[0] == "--direct":
        run_direct(argv[1], argv[2], argv[3] if len(argv) > 3 else "")
        return 0
    direct_only = "--direct-only" in argv
    argv = [a for a in argv if a != "--direct-only"]
    edits = verified_edits(argv)
    total = total_eq = 0
    total_direct = [0, 0]
    bad = False
    report = []
    for src, cand, keys in edits:
        package = cand["path"].split("/")[0]
        print(f"== {cand['path']}:{cand['start_line']}-{cand['end_line']} ({src}; {cand.get('rule')}: "
              f"{cand.get('title', '')[:80]})")
        print("   " + "\n   ".join(cand["lines"]))
        for key in ([] if direct_only else keys):
            with tempfile.TemporaryDirectory() as work:
                shutil.copytree(installed(package), os.path.join(work, "head", package))
                r = compare_model(package, key, cand, work)
            total += r["results"]
            total_eq += r["equal"]
            bad |= bool(r["differ"])
            print(f"   {key}: {r['equal']} of {r['results']} equal; graphs {r['graphs'][0]} -> "
                  f"{r['graphs'][1]}; breaks logged at the target line {r['target_head']} -> "
                  f"{r['target_patched']}; sites gone {r['gone']}; new sites {r['new_breaks']}; "
                  f"other sites' counts {[(b, r['breaks_head'][b], r['breaks_patched'][b]) for b in r['breaks_head'] if b in r['breaks_patched'] and r['breaks_head'][b] != r['breaks_patched'][b]]}")
            if r["differ"]:
                print(f"   DIFFER: {r['differ']}")
            report.append(r)
        if package == "torchcde":
            dn, deq, ddiff = direct(package, cand)
            total_direct[0] += dn
            total_direct[1] += deq
            print(f"   direct calls: {deq} of {dn} equal (value, gradient, the input returned as is, "
                  f"the rectilinear warning)")
            print(f"   direct calls differing, by what differs: "
                  f"{DIRECT_PARTS[(cand['path'], cand['start_line'])]}")
            for k, h, p_ in ddiff:
                print(f"   DIFFER {k}: head {h} / patched {p_}")
            bad |= bool(ddiff)
    print(f"verified edits: {len(edits)}; model results: {total_eq} of {total} equal; "
          f"direct calls: {total_direct[1]} of {total_direct[0]} equal")
    return 1 if bad else 0


def _show(r: Any) -> str:
    res, warned = r
    if res[0] == "raise":
        return f"raises {res[1]}: {res[2][:90]}" + (f" (warned {warned})" if warned else "")
    return (f"ok, gradient {'None' if res[2] is None else 'a tensor'}, returns the input as is: "
            f"{res[3]}" + (", warned" if warned else ", no warning"))


DIRECT_PARTS: dict[tuple[str, int], dict[str, int]] = {}


def direct(package: str, cand: dict[str, Any]) -> tuple[int, int, list[tuple[str, str, str]]]:
    import torch
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(installed(package), os.path.join(work, "head", package))
        pdir = make_patch(package, cand, os.path.join(work, "patched"))
        outs = []
        for d in (os.path.join(work, "head"), pdir):
            o = os.path.join(work, os.path.basename(d) + "_direct.pt")
            which = ",".join(DIRECT_FOR.get((cand["path"], cand["start_line"]), ()))
            p = subprocess.run([PY, __file__, "--direct", d, o, which], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=1800)
            if p.returncode != 0:
                raise RuntimeError(p.stderr[-2000:])
            outs.append(torch.load(o, weights_only=False))
    h, pt = outs
    diffs = [(k, _show(h[k]), _show(pt[k])) for k in h if not same(list(h[k]), list(pt[k]))]
    # what differs, apart: the value (or the exception), the input's gradient, whether the input
    # tensor itself is returned, the rectilinear warning
    parts = {"value": 0, "gradient": 0, "input returned as is": 0, "warning": 0}
    for k in h:
        (rh, wh), (rp, wp) = h[k], pt[k]
        if rh[0] != "ok" or rp[0] != "ok":
            parts["value"] += not same(list(rh), list(rp))
        else:
            parts["value"] += not same(rh[1], rp[1])
            parts["gradient"] += not same(rh[2], rp[2])
            parts["input returned as is"] += rh[3] != rp[3]
        parts["warning"] += wh != wp
    DIRECT_PARTS[(cand["path"], cand["start_line"])] = parts
    return len(h), len(h) - len(diffs), diffs


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
