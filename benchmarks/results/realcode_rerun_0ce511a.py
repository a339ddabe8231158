"""An independent re-run of the four sites the real-code proof verified for the first time at
0ce511a (benchmarks/results/realcode_proof_0ce511a.json), with no pt2bot code: each verified
edit is applied, as its lines say, to a copy of its library, and head's copy and the patched
one are run side by side in fresh processes on inputs of our own, eager and compiled (eager
backend), outputs compared bit for bit (NaN equal to NaN).

    /work/venvs/realcode/bin/python benchmarks/results/realcode_rerun_0ce511a.py

- torchvision 0.28.0 `_functional_tensor.py:871` (bincount as `scatter_add_`) and `:875-881` (the
  equalize early return with a stand-in divisor), through `F.equalize` on uint8 images: random,
  flat (one value: `step == 0`), two values, all 0, all 255, 1 to 3 channels, a batch;
- torchmetrics 1.9.0 `utilities/data.py:206` (bincount as `scatter_add_`), through
  `multiclass_accuracy`, `multiclass_f1_score` and `multiclass_confusion_matrix`, on random
  predictions and targets, some classes absent, all one class;
- torchdiffeq 0.2.5 `_impl/solvers.py:104` (the grid `assert` kept in compiled code), through
  `odeint(method="rk4")` on linear ODEs over increasing grids, and on a grid that does not
  increase (head raises in eager; so must the patched code, and compiled too).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "realcode_proof_0ce511a.json")
EDITS = {  # (model of the results file, candidate id) per edit
    "torchvision": [("torchvision:functional_v1", "c0"), ("torchvision:functional_v1", "c3")],
    "torchmetrics": [("torchmetrics:multiclass_accuracy", "c0")],
    "torchdiffeq": [("torchdiffeq:odeint_rk4", "c2")],
}

RUN = r'''
import sys, torch
torch.manual_seed(0)
torch.set_num_threads(1)
lib, compiled, out = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
results = []

def call(fn, *a):
    f = torch.compile(fn, backend="eager") if compiled else fn
    if compiled:
        # torchmetrics resolves a lazy flag (is torch_xla installed?) through importlib.metadata
        # on its first call, which dynamo cannot trace (InternalTorchDynamoError, head's code
        # too): one eager call first, as any run before compiling makes
        try:
            fn(*a)
        except Exception:
            pass
    try:
        return f(*a)
    except Exception as e:
        return f"raised {type(e).__name__}"

sys.path.insert(0, sys.argv[4])
import collect; collect.shim_torchvision()   # torchvision's pure-Python parts, beside the CPU torch
if lib == "torchvision":
    from torchvision.transforms import functional as F
    g = torch.Generator().manual_seed(1)
    imgs = [torch.randint(0, 256, (c, 8, 8), dtype=torch.uint8, generator=g) for c in (1, 3)]
    imgs += [torch.full((3, 8, 8), v, dtype=torch.uint8) for v in (0, 7, 255)]
    imgs += [torch.randint(0, 2, (3, 8, 8), dtype=torch.uint8, generator=g) * 200,
             torch.randint(0, 256, (2, 3, 8, 8), dtype=torch.uint8, generator=g)]
    two = torch.full((3, 8, 8), 10, dtype=torch.uint8); two[0, 0, 0] = 11
    imgs.append(two)
    for img in imgs:
        results.append(call(F.equalize, img))
elif lib == "torchmetrics":
    from torchmetrics.functional.classification import (multiclass_accuracy, multiclass_confusion_matrix,
                                                        multiclass_f1_score)
    g = torch.Generator().manual_seed(2)
    for n, c in ((16, 3), (40, 5), (7, 4), (32, 10)):
        preds, target = torch.randint(0, c, (n,), generator=g), torch.randint(0, c, (n,), generator=g)
        for p, t in ((preds, target), (preds, torch.zeros_like(target)), (torch.zeros_like(preds), target),
                     (preds.clamp(max=1), target.clamp(max=1))):
            results.append(call(lambda p, t: multiclass_accuracy(p, t, num_classes=c), p, t))
            results.append(call(lambda p, t: multiclass_f1_score(p, t, num_classes=c, average="macro"), p, t))
            results.append(call(lambda p, t: multiclass_confusion_matrix(p, t, num_classes=c), p, t))
elif lib == "torchdiffeq":
    from torchdiffeq import odeint
    g = torch.Generator().manual_seed(3)
    for d, n in ((2, 5), (3, 9), (4, 3)):
        a = torch.randn(d, d, generator=g) * 0.3
        y0 = torch.randn(d, generator=g)
        t = torch.linspace(0, 1, n)
        results.append(call(lambda y0, t: odeint(lambda s, y: y @ a, y0, t, method="rk4",
                                                 options={"step_size": 0.1}), y0, t))
    results.append(call(lambda y0, t: odeint(lambda s, y: -y, y0, t, method="rk4", options={"step_size": 0.1}),
                        torch.ones(2), torch.tensor([0.0, 0.5, 0.25])))
torch.save(results, out)
'''


def patched_copy(lib: str, dest: str) -> None:
    import importlib.util
    src = os.path.dirname(importlib.util.find_spec(lib).origin)
    shutil.copytree(src, os.path.join(dest, lib))
    data = json.load(open(RESULTS))
    # later lines first, so that earlier line numbers stay right
    cands = [next(c for c in data["models"][m]["candidates"] if c["id"] == cid) for m, cid in EDITS[lib]]
    for c in sorted(cands, key=lambda c: -c["start_line"]):
        path = os.path.join(dest, c["path"])
        lines = open(path).read().split("\n")
        lines[c["start_line"] - 1:c["end_line"]] = c["lines"]
        open(path, "w").write("\n".join(lines))


def run(lib: str, root: str | None, compiled: bool, out: str) -> None:
    env = {**os.environ, "PYTHONPATH": root or ""}
    real = os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks", "real_code")
    done = subprocess.run([sys.executable, "-c", RUN, lib, "1" if compiled else "0", out, real], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{lib} ({root or 'head'}, compiled={compiled}) failed:\n{done.stderr[-2000:]}")


def same(a, b) -> bool:
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(torch.nan_to_num(a, nan=0.5),
                                                                           torch.nan_to_num(b, nan=0.5)) and \
            torch.equal(torch.isnan(a), torch.isnan(b))
    return type(a) is type(b) and a == b


def main() -> int:
    import torch
    bad = 0
    for lib in EDITS:
        with tempfile.TemporaryDirectory() as tmp:
            patched_copy(lib, tmp)
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
