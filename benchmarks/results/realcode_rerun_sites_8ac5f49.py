"""An independent re-run of five sites the real-code proof verifies in a results file (`RESULTS`,
given on the command line), with no pt2bot code: each verified edit is applied, as its lines say,
to its own copy of its library, and head's copy and the patched one are run side by side in
fresh processes on inputs of our own, eager and compiled (eager backend, `torch._dynamo.reset()`
before every call so that no call falls back to eager for hitting the recompile limit), outputs
and input gradients compared bit for bit (NaN equal to NaN). An input's gradient is "none" where
the output does not depend on it (`autograd.grad`'s None): "none" against a tensor, even of
zeros, is a difference, shown with max abs difference inf and both values.

    /work/venvs/realcode/bin/python benchmarks/results/realcode_rerun_sites_8ac5f49.py RESULTS [EDIT...]

- torchdiffeq 0.2.5 `_impl/rk_common.py:284` (the step's two asserts kept in eager, and
  `torch._assert_async` when compiling), through `odeint` with dopri5 and adaptive_heun on
  linear ODEs `f(t, y) = A @ y` (sizes 2, 3 and 4, float32 and float64) on increasing,
  unevenly spaced and decreasing time grids, gradients of the solution with respect to y0; and
  one call per method with a NaN in y0, where only "raised or not" is compared (head raises
  AssertionError; the patched code, compiled, raises RuntimeError from `_assert_async`);
- torchdiffeq 0.2.5 `_impl/solvers.py:176` (`_linear_interp`'s early returns as nested
  `torch.where`), through `odeint(method="rk4", options=dict(step_size=...))` on linear ODEs with
  time grids whose points do (linspace(0, 1, 5), step 0.25) and do not (step 0.1, 0.3; t = [0,
  0.3, 0.7]) fall on step boundaries, gradients with respect to y0; and direct calls of
  `FixedGridODESolver._linear_interp(None, t0, t1, y0, y1, t)` with t equal to t0, equal to t1,
  strictly between, float32 and float64, gradients with respect to all five tensors (a result's
  items: the output, then the gradients of t0, t1, y0, y1, t); and one call with
  t0 == t1 == t (the integrator never makes one; listed apart, not a proof's input);
- torchvision 0.28.0 `transforms/_functional_tensor.py:922` (`normalize`'s zero-std
  `ValueError` kept in eager, `torch._assert_async` when compiling), through
  `torchvision.transforms.functional.normalize` on random images (C, H, W) and (N, C, H, W),
  float32 and float64, several mean/std lists, gradients with respect to the image, one
  in-place call; and a std list with a 0.0 (float32) and one whose 1e-8 becomes 0 in float16,
  where only "raised or not" is compared;
- torchvision 0.28.0 `transforms/functional.py:1195` and `transforms/v2/functional/_geometry.py:674`
  (`isinstance(shear, (numbers.Number, (list, tuple)))` flattened), through
  `torchvision.transforms.functional.affine` and `torchvision.transforms.v2.functional.affine`
  on random images, bilinear and nearest, shear as a float, an int, a list of one and of two
  floats, a tuple, gradients with respect to the image; and shear as a string, a dict, a 0-d
  tensor (TypeError) and a list of three (ValueError), compared as results ("raised X").
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

EDITS = {  # name: (lib, [(model of the results file, path, first line of the verified edit)])
    "rk_common": ("torchdiffeq", [("torchdiffeq:odeint_dopri5", "torchdiffeq/_impl/rk_common.py", 284)]),
    "solvers": ("torchdiffeq", [("torchdiffeq:odeint_rk4", "torchdiffeq/_impl/solvers.py", 176)]),
    # the second early return alone (lines 178-181), verified where the first is refused since
    "solvers_178": ("torchdiffeq", [("torchdiffeq:odeint_rk4", "torchdiffeq/_impl/solvers.py", 178)]),
    "normalize": ("torchvision", [("torchvision:functional_v1",
                                   "torchvision/transforms/_functional_tensor.py", 922)]),
    "affine_v1": ("torchvision", [("torchvision:transforms_v1", "torchvision/transforms/functional.py", 1195)]),
    "affine_v2": ("torchvision", [("torchvision:transforms_v2",
                                   "torchvision/transforms/v2/functional/_geometry.py", 674)]),
}

RUN = r'''
import sys, torch
torch.manual_seed(0)
torch.set_num_threads(1)
edit, compiled, out = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
results = []   # (label, value, compare "raised or not" only)

def call(fn, *a, grad=False):
    if compiled:
        torch._dynamo.reset()
        f = torch.compile(fn, backend="eager")
    else:
        f = fn
    a = [x.detach().clone().requires_grad_(grad) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
         for x in a]
    try:
        got = f(*a)
    except Exception as e:
        return f"raised {type(e).__name__}"
    if not grad:
        return got
    outs = [o for o in (got if isinstance(got, (tuple, list)) else [got]) if isinstance(o, torch.Tensor)]
    loss = sum(o.float().sum() for o in outs if o.requires_grad)
    grads = torch.autograd.grad(loss, [x for x in a if isinstance(x, torch.Tensor) and x.requires_grad],
                                allow_unused=True)
    return [o.detach() for o in outs] + [g if g is not None else "none" for g in grads]

def add(label, value, raise_only=False):
    results.append((label, value, raise_only))

sys.path.insert(0, sys.argv[4])
import collect; collect.shim_torchvision()   # torchvision's pure-Python parts, beside the CPU torch
if edit == "rk_common":
    from torchdiffeq import odeint
    g = torch.Generator().manual_seed(3)
    grids = {"linspace(0,1,4)": [0.0, 1 / 3, 2 / 3, 1.0], "[0,.3,.7,1.5]": [0.0, 0.3, 0.7, 1.5],
             "[0,-.5,-1]": [0.0, -0.5, -1.0]}
    odes = []
    for d, dtype in ((2, torch.float32), (3, torch.float32), (4, torch.float64)):
        odes.append((d, dtype, (torch.randn(d, d, generator=g) * 0.5).to(dtype), torch.randn(d, generator=g).to(dtype)))
    for method in ("dopri5", "adaptive_heun"):
        for d, dtype, a, y0 in odes:
            for name, grid in grids.items():
                t = torch.tensor(grid, dtype=dtype)
                add(f"{method} d={d} {str(dtype)[6:]} t={name}",
                    call(lambda y0: odeint(lambda s, y: a @ y, y0, t, method=method, rtol=1e-5, atol=1e-6),
                         y0, grad=True))
        a, y0 = odes[1][2], odes[1][3].clone()
        y0[1] = float("nan")
        add(f"{method} d=3 y0 with NaN", call(lambda y0: odeint(lambda s, y: a @ y, y0, torch.linspace(0, 1, 4),
                                                                method=method), y0, grad=True), True)
elif edit in ("solvers", "solvers_178"):
    from torchdiffeq import odeint
    from torchdiffeq._impl.solvers import FixedGridODESolver
    g = torch.Generator().manual_seed(4)
    odes = [(d, dtype, (torch.randn(d, d, generator=g) * 0.5).to(dtype), torch.randn(d, generator=g).to(dtype))
            for d, dtype in ((2, torch.float32), (3, torch.float64))]
    for d, dtype, a, y0 in odes:
        for tname, grid in (("linspace(0,1,5)", torch.linspace(0, 1, 5)), ("[0,.3,.7]", torch.tensor([0.0, 0.3, 0.7]))):
            for step in (0.25, 0.1, 0.3):
                t = grid.to(dtype)
                add(f"rk4 d={d} {str(dtype)[6:]} t={tname} step={step}",
                    call(lambda y0: odeint(lambda s, y: a @ y, y0, t, method="rk4", options=dict(step_size=step)),
                         y0, grad=True))
    interp = lambda t0, t1, y0, y1, t: FixedGridODESolver._linear_interp(None, t0, t1, y0, y1, t)
    for dtype in (torch.float32, torch.float64):
        y0, y1 = torch.randn(3, generator=g).to(dtype), torch.randn(3, generator=g).to(dtype)
        t0, t1 = torch.tensor(0.2, dtype=dtype), torch.tensor(0.7, dtype=dtype)
        for name, t in (("t=t0", 0.2), ("t=t1", 0.7), ("t0<t<t1", 0.45), ("t0<t<t1", 0.3)):
            add(f"_linear_interp {str(dtype)[6:]} {name} ({t})",
                call(interp, t0, t1, y0, y1, torch.tensor(t, dtype=dtype), grad=True))
    add("_linear_interp float32 t0=t1=t (extra: the integrator never makes it)",
        call(interp, torch.tensor(0.5), torch.tensor(0.5), y0.float(), y1.float(), torch.tensor(0.5), grad=True))
elif edit == "normalize":
    from torchvision.transforms import functional as F
    g = torch.Generator().manual_seed(5)
    stats = [([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]), ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
             ([0.0], [2.0]), ([-1.0, 0.0, 1.0], [1e-8, 3.0, 0.1])]
    for shape in ((3, 8, 8), (2, 3, 5, 7)):
        for dtype in (torch.float32, torch.float64):
            img = torch.rand(*shape, generator=g).to(dtype)
            for mean, std in stats:
                add(f"{tuple(shape)} {str(dtype)[6:]} mean={mean} std={std}",
                    call(lambda x: F.normalize(x, mean, std), img, grad=True))
    img = torch.rand(3, 6, 6, generator=g)
    add("inplace=True", call(lambda x: F.normalize(x, [0.1, 0.2, 0.3], [0.3, 0.2, 0.1], inplace=True), img))
    add("std=[0.2, 0.0, 0.3] float32", call(lambda x: F.normalize(x, [0.5] * 3, [0.2, 0.0, 0.3]), img, grad=True), True)
    add("std=[1e-8, 1, 1] float16 (0 after conversion)",
        call(lambda x: F.normalize(x, [0.5] * 3, [1e-8, 1.0, 1.0]), img.half()), True)
elif edit in ("affine_v1", "affine_v2"):
    if edit == "affine_v1":
        from torchvision.transforms import functional as F
    else:
        from torchvision.transforms.v2 import functional as F
    from torchvision.transforms import InterpolationMode
    g = torch.Generator().manual_seed(6)
    shears = [12.5, 7, [8.0], [5.0, -3.0], (4.0, 2.0), [0.0, 0.0]]
    for interp in (InterpolationMode.BILINEAR, InterpolationMode.NEAREST):
        for shape in ((3, 16, 16), (2, 1, 12, 20)):
            img = torch.rand(*shape, generator=g)
            for shear in shears:
                add(f"{interp.value} {tuple(shape)} shear={shear!r}",
                    call(lambda x: F.affine(x, angle=15.0, translate=[2, -1], scale=1.1, shear=shear,
                                            interpolation=interp), img, grad=interp == InterpolationMode.BILINEAR))
    img = torch.rand(3, 16, 16, generator=g)
    for shear in ("10", {"x": 1.0}, torch.tensor(3.0), [1.0, 2.0, 3.0]):
        add(f"shear={shear!r}", call(lambda x: F.affine(x, angle=15.0, translate=[2, -1], scale=1.1, shear=shear),
                                     img))
torch.save(results, out)
'''


def patched_copy(edit: str, dest: str, results: str) -> None:
    import importlib.util
    lib, sites = EDITS[edit]
    src = os.path.dirname(importlib.util.find_spec(lib).origin)
    shutil.copytree(src, os.path.join(dest, lib))
    data = json.load(open(results))
    cands = [next(c for c in data["models"][m]["candidates"]
                  if c["path"] == path and c["start_line"] == line and c["verified"] and not c.get("setting"))
             for m, path, line in sites]
    # later lines first, so that earlier line numbers stay right
    for c in sorted(cands, key=lambda c: -c["start_line"]):
        print(f"{edit}: {c['path']}:{c['start_line']}-{c['end_line']} {c['title'][:80]}")
        path = os.path.join(dest, c["path"])
        lines = open(path).read().split("\n")
        lines[c["start_line"] - 1:c["end_line"]] = c["lines"]
        open(path, "w").write("\n".join(lines))


def run(edit: str, root: str | None, compiled: bool, out: str) -> None:
    env = {**os.environ, "PYTHONPATH": root or ""}
    here = os.path.dirname(os.path.abspath(__file__))
    real = os.path.join(os.path.dirname(os.path.dirname(here)), "benchmarks", "real_code")
    done = subprocess.run([sys.executable, "-c", RUN, edit, "1" if compiled else "0", out, real], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{edit} ({root or 'head'}, compiled={compiled}) failed:\n{done.stderr[-2000:]}")


def same(a, b) -> bool:
    import torch
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(torch.nan_to_num(a, nan=0.5),
                                                                           torch.nan_to_num(b, nan=0.5)) and \
            torch.equal(torch.isnan(a), torch.isnan(b))
    return type(a) is type(b) and a == b


def max_diff(a, b) -> float:
    """Largest absolute difference over the tensors two results share (NaN against NaN: 0; NaN
    against a number, or tensors that differ in kind: inf)."""
    import torch
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return math.inf
        return max((max_diff(x, y) for x, y in zip(a, b)), default=0.0)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return math.inf
        if a.numel() == 0:
            return 0.0
        x, y = a.double(), b.double()
        d = (x - y).abs()
        d = torch.where(torch.isnan(x) & torch.isnan(y), 0.0, d)
        d = torch.where(torch.isnan(x) ^ torch.isnan(y), math.inf, d)
        d = torch.where((x == y), 0.0, d)   # equal infinities
        return float(d.max())
    return 0.0 if type(a) is type(b) and a == b else math.inf


def short(v) -> str:
    import torch
    if isinstance(v, torch.Tensor):
        return f"tensor {v.tolist()}" if v.numel() <= 6 else f"tensor of shape {tuple(v.shape)}"
    return repr(v)


def describe(a, b) -> str:
    """Where two results (output tensors, then input gradients, or "none" for an unused input)
    differ: the items' indices, with the max abs difference or both values."""
    if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)):
        return f"{short(a)} vs {short(b)}"
    parts = []
    for i, (x, y) in enumerate(zip(a, b)):
        if not same(x, y):
            d = max_diff(x, y)
            parts.append(f"item {i}: " + (f"max abs difference {d:.3g}" if math.isfinite(d) else
                                          f"{short(x)} vs {short(y)}"))
    return "; ".join(parts)


def raised(v) -> str | None:
    return v[len("raised "):] if isinstance(v, str) and v.startswith("raised ") else None


def main() -> int:
    import torch
    results = sys.argv[1]
    only = sys.argv[2:]   # edit names to run (default: all)
    bad = 0
    for edit, (lib, _) in EDITS.items():
        if only and edit not in only:
            continue
        began = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            patched_copy(edit, tmp, results)
            runs = {}
            for side, root in (("head", None), ("patched", tmp)):
                for compiled in (False, True):
                    out = os.path.join(tmp, f"{side}{int(compiled)}.pt")
                    run(edit, root, compiled, out)
                    runs[side, compiled] = torch.load(out, weights_only=False)
        took = time.perf_counter() - began
        head = runs["head", False]
        pairs = [(key, ("head", False)) for key in runs if key != ("head", False)]
        pairs.append((("patched", True), ("head", True)))
        for key, ref_key in pairs:
            ref, got = runs[ref_key], runs[key]
            assert [r[0] for r in ref] == [r[0] for r in got]
            equal, notes = 0, []
            for (label, r, raise_only), (_, v, _) in zip(ref, got):
                if raise_only:
                    ok = (raised(r) is None) == (raised(v) is None)
                    equal += ok
                    if not ok:
                        notes.append(f"    {label}: raised or not differ ({r!r} vs {v!r})")
                elif same(r, v):
                    equal += 1
                else:
                    notes.append(f"    {label}: differs, max abs difference {max_diff(r, v):.3g} "
                                 f"({describe(r, v)})")
            n_raised = sum(raised(v) is not None for _, v, _ in got)
            print(f"{edit:10s} {key[0]:8s} {'compiled' if key[1] else 'eager':8s} vs {ref_key[0]} "
                  f"{'compiled' if ref_key[1] else 'eager':8s}: {equal} of {len(ref)} equal "
                  f"({n_raised} raised)")
            for line in notes:
                print(line)
            bad += equal != len(ref)
        for i, (label, _, raise_only) in enumerate(head):
            kinds = {f"{s} {'compiled' if c else 'eager'}": raised(runs[s, c][i][1]) for s, c in runs}
            if raise_only or any(kinds.values()):
                print(f"    exceptions, {label}{' (raised or not only)' if raise_only else ''}: "
                      + ", ".join(f"{k}: {v or 'none'}" for k, v in kinds.items()))
        print(f"{edit:10s} {len(head)} inputs, 4 runs, {took:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
