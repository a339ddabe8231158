"""Direct calls of three verified edits of the eighteenth held-out batch, head against patched,
with no pt2bot code (the edits are read from the JSON files as heldout18_rerun.py reads them):

- pyro/ops/stats.py:460 (`b = (bs * weights).sum().item()` -> `b = (bs * weights).sum()`):
  what `fit_generalized_pareto` returns (documented as "tuple of floats (k, sigma)"), eager and
  compiled, on data and on data with a NaN, and what a caller that builds a tensor of the pair
  gets (the spec's own call);
- piq/utils/common.py:100-101 (the min check's assert -> `torch._assert_async` when compiling):
  what piq.psnr and piq.ssim raise on images outside [0, data_range] or with a NaN, eager and
  compiled, and what `python -O` would do;
- pyro/distributions/sine_skewed.py:97 (the "Total skewness weight" warning skipped when
  compiling): which warnings SineSkewed(...).log_prob gives for a skewness summing above one.

    /work/venvs/realcode/bin/python benchmarks/results/heldout18_direct.py \\
        benchmarks/results/realcode_proof_heldout18.json > benchmarks/results/heldout18_direct.log
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from heldout18_rerun import make_copy  # noqa: E402 - the same copy-and-patch as the re-run

PY = sys.executable
EDITS = {("pyro/ops/stats.py", 460), ("piq/utils/common.py", 100),
         ("pyro/distributions/sine_skewed.py", 97)}


def show(x: Any) -> str:
    import torch
    if isinstance(x, torch.Tensor):
        return f"Tensor({x.tolist()}, dtype={x.dtype})"
    if isinstance(x, tuple):
        return "(" + ", ".join(show(v) for v in x) + ")"
    if isinstance(x, float):
        return f"float({x!r})"
    return repr(x)


def call(f: Any, *a: Any) -> str:
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            out = show(f(*a))
        except Exception as e:   # noqa: BLE001 - a raise is a result
            out = f"raises {type(e).__name__}: {str(e).splitlines()[0][:110]}"
    lib = [str(w.message)[:60] for w in ws if "/pyro/" in (w.filename or "") or "/piq/" in (w.filename or "")]
    return out + (f"; warns {lib}" if lib else "")


def side(pkgdirs: list[str]) -> None:
    for d in pkgdirs:
        sys.path.insert(0, d)
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "real_code"))
    import collect
    collect.shim_torchvision()   # piq imports torchvision's pure-Python parts, beside the CPU torch
    import piq
    import pyro.distributions as dist
    from pyro.ops import stats
    for mod in (piq, dist):
        assert any(os.path.realpath(p).startswith(tuple(os.path.realpath(d) for d in pkgdirs))
                   for p in mod.__path__), mod.__path__
    g = torch.Generator().manual_seed(3)
    x = torch.rand(2, 3, 16, 16, generator=g)
    y = torch.rand(2, 3, 16, 16, generator=g)
    X = torch.rand(40, generator=g).exp()

    def gpd(X: Any) -> Any:
        return stats.fit_generalized_pareto(X)

    def gpd_tensor(X: Any) -> Any:
        return torch.tensor(stats.fit_generalized_pareto(X))

    def psnr(a: Any, b: Any) -> Any:
        return piq.psnr(a, b, data_range=1.0)

    def ssim(a: Any, b: Any) -> Any:
        return piq.ssim(a, b, kernel_size=5, data_range=1.0)

    def skewed(loc: Any, skew: Any, v: Any) -> Any:
        base = dist.SineBivariateVonMises(loc[..., 0], loc[..., 1], torch.tensor(2.0), torch.tensor(3.0),
                                          torch.tensor(0.2))
        return dist.SineSkewed(base, skew).log_prob(v)

    below = x.clone(); below[0, 0, 0, 0] = -0.25
    above = x.clone(); above[1, 2, 3, 4] = 1.5
    nan = x.clone(); nan[0, 1, 2, 3] = float("nan")
    loc = torch.zeros(3, 2)
    v = torch.rand(3, 2, generator=g)
    Xnan = X.clone(); Xnan[7] = float("nan")
    cases = [("fit_generalized_pareto(X) -> (k, sigma)", gpd, (X,)),
             ("fit_generalized_pareto(X with a NaN)", gpd, (Xnan,)),
             ("torch.tensor(fit_generalized_pareto(X))", gpd_tensor, (X,)),
             ("psnr, in range", psnr, (x, y)), ("psnr, a pixel -0.25", psnr, (below, y)),
             ("psnr, a pixel 1.5", psnr, (above, y)), ("psnr, a NaN pixel", psnr, (nan, y)),
             ("ssim, a pixel -0.25", ssim, (below, y)), ("ssim, a NaN pixel", ssim, (nan, y)),
             ("SineSkewed log_prob, skewness sum 0.6", skewed, (loc, torch.full((3, 2), 0.3), v)),
             ("SineSkewed log_prob, skewness sum 1.4", skewed, (loc, torch.full((3, 2), 0.7), v))]
    for name, f, a in cases:
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            ff = torch.compile(f, backend="eager") if mode == "compiled" else f
            print(f"{name} [{mode}]: {call(ff, *a)}", flush=True)


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--side":
        side(argv[1:])
        return 0
    cands = {}
    for path in argv:
        for m in json.load(open(path))["models"].values():
            for c in m.get("candidates", []):
                if c.get("verified") and not c.get("setting") and (c["path"], c["start_line"]) in EDITS:
                    cands[(c["path"], c["start_line"])] = c
    assert set(cands) == EDITS, sorted(cands)
    work = tempfile.mkdtemp(prefix="h18direct_")
    outs = {}
    for label in ("head", "patched"):
        dirs = []
        for package in ("pyro", "piq"):
            d = os.path.join(work, f"{label}_{package}")
            make_copy(package, None, d)
            if label == "patched":
                for (p, _), c in cands.items():
                    if p.startswith(package + "/"):
                        path = os.path.join(d, c["path"])
                        src = open(path).read().splitlines(keepends=True)
                        src[c["start_line"] - 1:c["end_line"]] = [ln + "\n" for ln in c["lines"]]
                        open(path, "w").writelines(src)
            dirs.append(d)
        p = subprocess.run([PY, __file__, "--side", *dirs], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=1200)
        if p.returncode:
            print(p.stderr[-3000:])
            return 2
        outs[label] = p.stdout.splitlines()
    for (p, s), c in sorted(cands.items()):
        print(f"edit {p}:{s}-{c['end_line']}:\n    " + "\n    ".join(c["lines"]))
    ndiff = 0
    for h, pt in zip(outs["head"], outs["patched"]):
        name, hv = h.split(": ", 1)
        pv = pt.split(": ", 1)[1]
        same = hv == pv
        ndiff += not same
        print(f"{'same  ' if same else 'DIFFER'} {name}\n         head:    {hv}\n         patched: {pv}")
    print(f"{ndiff} of {len(outs['head'])} direct calls differ")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
