"""An independent re-run, with no pt2bot code, of torchvision 0.28.0's four crop and erase
sizes that pt2bot keeps as tensors (`area * torch.empty(1).uniform_(...).item()`, then
`math.sqrt(area_kept * aspect_ratio)`): head, the float32 form the proof verified before (the
`.item()` dropped) and the float64 form it tries first now (`.item()` as `.double()`). Each
side is a copy of the installed package, its line replaced, in its own process; every call
seeds torch's generator with its own seed, so the three draw the same numbers. The sizes
chosen, (i, j, h, w) or RandomErasing's (i, j, h, w) and its value's shape, are compared call
for call.

    S51_SIZE=2048 /work/venvs/realcode/bin/python benchmarks/results/rerun_s51_crop.py [CALLS]
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

# the image's side: the larger, the more draws land where float32 rounding moves a size
SIZE = int(os.environ.get("S51_SIZE", "2048"))
SITES = [  # (file, line, what calls it)
    ("transforms/transforms.py", 946, "v1 RandomResizedCrop.get_params"),
    ("transforms/transforms.py", 1699, "v1 RandomErasing.get_params"),
    ("transforms/v2/_augment.py", 110, "v2 RandomErasing.make_params"),
    ("transforms/v2/_geometry.py", 286, "v2 RandomResizedCrop.make_params"),
]
SHIM = """import torch
_lib = torch.library.Library("torchvision", "DEF")
_lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
"""
SIDE = SHIM + r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import torch, torchvision
assert torchvision.__file__.startswith(sys.argv[1]), torchvision.__file__
from torchvision import transforms as T
from torchvision.transforms import v2
n = int(sys.argv[2])
size = int(sys.argv[3])
img = torch.zeros(3, size, size)
out = {k: [] for k in ("v1crop", "v1erase", "v2erase", "v2crop")}
e2 = v2.RandomErasing(p=1.0, value=0)
c2 = v2.RandomResizedCrop(32)
for s in range(n):
    torch.manual_seed(s); out["v1crop"].append(list(T.RandomResizedCrop.get_params(img, (0.08, 1.0), (3 / 4, 4 / 3))))
    torch.manual_seed(s); i, j, h, w, v = T.RandomErasing.get_params(img, (0.02, 0.33), (0.3, 3.3), value=[0])
    out["v1erase"].append([i, j, h, w])
    torch.manual_seed(s); p = e2.make_params([img]); out["v2erase"].append([p["i"], p["j"], p["h"], p["w"]])
    torch.manual_seed(s); p = c2.make_params([img]); out["v2crop"].append([p["top"], p["left"], p["height"], p["width"]])
print(json.dumps(out))
'''


def side(dest: str, form: str | None, n: int) -> dict:
    pkg = os.path.dirname(importlib.util.find_spec("torchvision").origin)
    shutil.copytree(pkg, os.path.join(dest, "torchvision"), symlinks=True)
    for rel, line, _what in SITES if form is not None else ():
        path = os.path.join(dest, "torchvision", rel)
        with open(path) as fh:
            lines = fh.readlines()
        assert ".uniform_(" in lines[line - 1] and lines[line - 1].rstrip().endswith(".item()"), lines[line - 1]
        lines[line - 1] = lines[line - 1].rstrip()[: -len(".item()")] + form + "\n"
        with open(path, "w") as fh:
            fh.writelines(lines)
    proc = subprocess.run([sys.executable, "-c", SIDE, dest, str(n), str(SIZE)], capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    work = tempfile.mkdtemp(prefix="s51crop_")
    try:
        head = side(os.path.join(work, "head"), None, n)
        head2 = side(os.path.join(work, "head2"), None, n)
        print(f"torchvision 0.28.0; {n} seeded calls of each of 4 functions on a {SIZE} x {SIZE} image; "
              f"head's two runs equal: {head == head2}")
        for form, name in (("", "float32 (`.item()` dropped)"), (".double()", "float64 (`.double()`)")):
            got = side(os.path.join(work, name.split()[0]), form, n)
            for key in head:
                diff = [k for k, (a, b) in enumerate(zip(head[key], got[key])) if a != b]
                eg = f"; e.g. seed {diff[0]}: head {head[key][diff[0]]}, patched {got[key][diff[0]]}" if diff else ""
                print(f"{name:28s} {key}: {n - len(diff)} of {n} equal{eg}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
