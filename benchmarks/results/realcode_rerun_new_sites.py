"""An independent re-run of the sites the real-code proof verifies for the first time in this
session's results file (`RESULTS`, given on the command line), with no pt2bot code: each
verified edit is applied, as its lines say, to a copy of its library, and head's copy and the
patched one are run side by side in fresh processes on inputs of our own, eager and compiled
(eager backend), outputs and input gradients compared bit for bit (NaN equal to NaN).

    /work/venvs/realcode/bin/python benchmarks/results/realcode_rerun_new_sites.py RESULTS

- kornia 0.8.2 `filters/canny.py:285` (the function's own `is_exporting()` branch, a
  `torch.while_loop`, taken when compiling too), through `kornia.filters.canny` with and without
  hysteresis, on random images, flat ones and a step edge, gradients of the magnitude and edges
  with respect to the image;
- torchvision 0.28.0 `transforms/functional.py:701` (`lstsq(...).solution` as `linalg.solve`),
  through `_get_perspective_coeffs` on random quadrilaterals and `F.perspective` on images;
- torchdiffeq 0.2.5 `_impl/misc.py:88` (the step-size chain as nested `torch.where`) and
  `_impl/rk_common.py:284` (the step's underflow `assert` kept in compiled code), through `odeint`
  with dopri5 and adaptive_heun on linear ODEs, and direct calls of `_optimal_step_size` with an
  error ratio of 0, below 1, 1 and above 1.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

EDITS = {  # lib: [(model of the results file, path, first line of the verified edit)]
    "kornia": [("kornia:canny", "kornia/filters/canny.py", 285)],
    "torchvision": [("torchvision:transforms_v1", "torchvision/transforms/functional.py", 701)],
    "torchdiffeq": [("torchdiffeq:odeint_dopri5", "torchdiffeq/_impl/misc.py", 88),
                    ("torchdiffeq:odeint_dopri5", "torchdiffeq/_impl/rk_common.py", 284)],
}

RUN = r'''
import sys, torch
torch.manual_seed(0)
torch.set_num_threads(1)
lib, compiled, out = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
results = []

def call(fn, *a, grad=False):
    f = torch.compile(fn, backend="eager") if compiled else fn
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

sys.path.insert(0, sys.argv[4])
import collect; collect.shim_torchvision()   # torchvision's pure-Python parts, beside the CPU torch
if lib == "kornia":
    import kornia
    g = torch.Generator().manual_seed(1)
    imgs = [torch.rand(b, c, s, s, generator=g) for b, c, s in ((1, 3, 16), (2, 1, 24), (2, 3, 32))]
    imgs.append(torch.full((1, 3, 16, 16), 0.5))
    step = torch.zeros(1, 1, 16, 16); step[..., 8:] = 1.0
    imgs.append(step)
    for img in imgs:
        for hyst in (True, False):
            results.append(call(lambda x: kornia.filters.canny(x, hysteresis=hyst), img, grad=True))
elif lib == "torchvision":
    from torchvision.transforms import functional as F
    g = torch.Generator().manual_seed(2)
    for _ in range(8):
        start = [[0, 0], [31, 0], [31, 31], [0, 31]]
        end = [[int(x + d) for x, d in zip(p, torch.randint(-6, 7, (2,), generator=g).tolist())] for p in start]
        results.append(call(lambda: torch.tensor(F._get_perspective_coeffs(start, end))))
        img = torch.rand(3, 32, 32, generator=g)
        results.append(call(lambda x: F.perspective(x, start, end), img))
elif lib == "torchdiffeq":
    from torchdiffeq import odeint
    from torchdiffeq._impl.misc import _optimal_step_size
    g = torch.Generator().manual_seed(3)
    for method in ("dopri5", "adaptive_heun"):
        for d in (2, 3, 5):
            a = torch.randn(d, d, generator=g) * 0.5
            y0 = torch.randn(d, generator=g)
            t = torch.linspace(0, 1, 4)
            results.append(call(lambda y0: odeint(lambda s, y: y @ a, y0, t, method=method, rtol=1e-4, atol=1e-5),
                                y0, grad=True))
    for ratio in (0.0, 0.5, 1.0, 3.0):
        results.append(call(lambda r: _optimal_step_size(torch.tensor(0.1), r, 0.9, torch.tensor(10.0),
                                                         torch.tensor(0.2), 5), torch.tensor(ratio)))
torch.save(results, out)
'''


def patched_copy(lib: str, dest: str, results: str) -> None:
    import importlib.util
    src = os.path.dirname(importlib.util.find_spec(lib).origin)
    shutil.copytree(src, os.path.join(dest, lib))
    data = json.load(open(results))
    cands = [next(c for c in data["models"][m]["candidates"]
                  if c["path"] == path and c["start_line"] == line and c["verified"] and not c.get("setting"))
             for m, path, line in EDITS[lib]]
    # later lines first, so that earlier line numbers stay right
    for c in sorted(cands, key=lambda c: -c["start_line"]):
        print(f"{lib}: {c['path']}:{c['start_line']}-{c['end_line']} {c['title'][:80]}")
        path = os.path.join(dest, c["path"])
        lines = open(path).read().split("\n")
        lines[c["start_line"] - 1:c["end_line"]] = c["lines"]
        open(path, "w").write("\n".join(lines))


def run(lib: str, root: str | None, compiled: bool, out: str) -> None:
    env = {**os.environ, "PYTHONPATH": root or ""}
    here = os.path.dirname(os.path.abspath(__file__))
    real = os.path.join(os.path.dirname(os.path.dirname(here)), "benchmarks", "real_code")
    done = subprocess.run([sys.executable, "-c", RUN, lib, "1" if compiled else "0", out, real], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{lib} ({root or 'head'}, compiled={compiled}) failed:\n{done.stderr[-2000:]}")


def same(a, b) -> bool:
    import torch
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(torch.nan_to_num(a, nan=0.5),
                                                                           torch.nan_to_num(b, nan=0.5)) and \
            torch.equal(torch.isnan(a), torch.isnan(b))
    return type(a) is type(b) and a == b


def main() -> int:
    import torch
    results = sys.argv[1]
    bad = 0
    for lib in EDITS:
        with tempfile.TemporaryDirectory() as tmp:
            patched_copy(lib, tmp, results)
            runs = {}
            for side, root in (("head", None), ("patched", tmp)):
                for compiled in (False, True):
                    out = os.path.join(tmp, f"{side}{int(compiled)}.pt")
                    run(lib, root, compiled, out)
                    runs[side, compiled] = torch.load(out, weights_only=False)
            head = runs["head", False]
            for key, got in runs.items():
                equal = sum(same(h, g) for h, g in zip(head, got))
                raised = sum(isinstance(g, str) for g in got)
                print(f"{lib:12s} {key[0]:8s} {'compiled' if key[1] else 'eager':8s} "
                      f"{equal} of {len(head)} equal to head's eager ({raised} raised)")
                bad += equal != len(head)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
