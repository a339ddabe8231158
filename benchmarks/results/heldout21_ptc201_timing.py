"""How long the refused PTC201 candidate for hypll's stats.py:218 takes to compile, and what it
returns, with no pt2bot code: the candidate's line (copied from realcode_proof_heldout21.json)
applied to a copy of hypll, hyp_mlp_batchnorm's first spec case run eager on head and compiled
(backend eager) on the patched copy, one thread, in a subprocess per side with a wall limit.

    /work/venvs/realcode/bin/python benchmarks/results/heldout21_ptc201_timing.py [LIMIT_S]
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(os.path.dirname(HERE), "real_code")
KEY = "hypll:hyp_mlp_batchnorm"


def side(pkgdir: str, mode: str, out: str) -> None:
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, REAL)
    import torch
    torch.set_num_threads(1)
    import models
    import hypll
    assert os.path.realpath(hypll.__path__[0]).startswith(os.path.realpath(pkgdir))
    sp = models.by_key()[KEY]
    torch.manual_seed(0)
    model, cases = sp.build()
    model.eval()
    fn = torch.compile(model, backend="eager") if mode == "compiled" else model
    t0 = time.perf_counter()
    with torch.no_grad():
        y = fn(*cases[0][0])
    torch.save({"y": y, "s": time.perf_counter() - t0}, out)


def main() -> int:
    if sys.argv[1:2] == ["--side"]:
        side(*sys.argv[2:5])
        return 0
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    import importlib.util

    import torch
    cand = next(c for c in json.load(open(os.path.join(HERE, "realcode_proof_heldout21.json")))
                ["models"][KEY]["candidates"] if c["rule"] == "PTC201")
    work = tempfile.mkdtemp(prefix="h21ptc_")
    src = importlib.util.find_spec("hypll").submodule_search_locations[0]
    res = {}
    try:
        for name, patch, mode in (("head_eager", False, "eager"), ("head_compiled", False, "compiled"),
                                  ("patched_compiled", True, "compiled")):
            d = os.path.join(work, name)
            shutil.copytree(src, os.path.join(d, "hypll"))
            if patch:
                p = os.path.join(d, cand["path"])
                lines = open(p).read().splitlines(keepends=True)
                lines[cand["start_line"] - 1:cand["end_line"]] = [ln + "\n" for ln in cand["lines"]]
                open(p, "w").writelines(lines)
            out = os.path.join(d, "out.pt")
            t0 = time.perf_counter()
            try:
                subprocess.run([sys.executable, __file__, "--side", d, mode, out], timeout=limit,
                               capture_output=True, check=True)
                r = torch.load(out, weights_only=False)
                res[name] = r["y"]
                print(f"{name}: first call {r['s']:.1f} s (process {time.perf_counter() - t0:.1f} s)")
            except subprocess.TimeoutExpired:
                print(f"{name}: no result within {limit} s")
        if "patched_compiled" in res:
            a, b = res["head_eager"], res["patched_compiled"]
            print(f"patched compiled equal to head eager: {torch.equal(a, b)}; max |diff| "
                  f"{(a - b).abs().max().item():.3g}")
        print(f"head compiled equal to head eager: {torch.equal(res['head_eager'], res['head_compiled'])}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
