"""Held-out batch 22: is the refusal of PTC201's keep-the-check edit at tad_dftd3/disp.py:146-150
the edit's? No pt2bot code: the edit (the refused candidate's lines, copied from
realcode_proof_heldout22.json) is applied to a copy of the installed package by this script.

    /work/venvs/realcode/bin/python benchmarks/results/heldout22_disp146_check.py \
        > benchmarks/results/heldout22_disp146_check.log

The proof refused it on four models: "differs from head on an input with values a check refuses
(-1, 0, 1e3, 1e6, NaN) in `numbers`: compiled, where `is_compiling()` is true". tad_dftd3's
atomic_c6 itself switches on torch.compiler.is_compiling() (a sum over the elements present,
from torch.unique, in eager; over all elements when compiling), and the two differ when an atomic
number is -1 (an index from the end in one, no element in the other). This runs head (the package
as installed) and patched (the edit), eager and compiled (backend="eager"), on the spec's first
case of each model with the last atom's number set to each value, and prints energies and forces
against head's eager ones and head's compiled ones.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(os.path.dirname(HERE), "real_code")
MODELS = ["tad-dftd3:d3bj_energy_forces", "tad-dftd3:d3bj_defaults_per_call",
          "tad-dftd3:d3bj_atm_force_matching", "tad-dftd3:d3_stress_virial"]
VALUES = [-1, 0, 5, 1000, 1000000]
EDIT = (146, 150, [
    "        if torch.compiler.is_compiling():",
    "            torch._assert_async(torch.logical_not(torch.max(numbers) >= defaults.MAX_ELEMENT), "
    "'No D3 parameters available for Z > ... (...).')",
    "        elif torch.max(numbers) >= defaults.MAX_ELEMENT:",
    "            raise ValueError(",
    "                f\"No D3 parameters available for Z > {defaults.MAX_ELEMENT-1} \"",
    "                f\"({pse.Z2S[defaults.MAX_ELEMENT]}).\"",
    "            )"])


def side(pkgdir: str, out: str) -> None:
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, REAL)
    import torch
    torch.set_num_threads(1)
    import models
    import tad_dftd3
    assert tad_dftd3.__file__.startswith(pkgdir), tad_dftd3.__file__
    res = {}
    for key in MODELS:
        sp = models.by_key()[key]
        torch.manual_seed(0)
        model, cases = sp.build()
        model.eval()
        args0 = cases[0][0]
        for v in VALUES:
            args = [a.clone() for a in args0]
            args[0][..., -1] = v
            for mode in ("eager", "compiled"):
                torch._dynamo.reset()
                fn = torch.compile(model, backend="eager") if mode == "compiled" else model
                try:
                    with torch.enable_grad():
                        o = fn(*[a.clone() for a in args])
                    res[(key, v, mode)] = ("ok", [t.detach() for t in o])
                except Exception as e:   # noqa: BLE001 - a raise is a result
                    res[(key, v, mode)] = ("raise", type(e).__name__)
    torch.save(res, out)


def diff(a, b) -> str:
    if a[0] != "ok" or b[0] != "ok":
        return "equal" if a == b else f"{a[0] if a[0] == 'ok' else a[1]} / {b[0] if b[0] == 'ok' else b[1]}"
    d = max(float((x - y).abs().max()) for x, y in zip(a[1], b[1]))
    return "equal" if d == 0 else f"max |diff| {d:.3g}"


def main() -> int:
    if sys.argv[1:2] == ["--side"]:
        side(sys.argv[2], sys.argv[3])
        return 0
    import importlib.util

    import torch
    src = importlib.util.find_spec("tad_dftd3").submodule_search_locations[0]
    work = tempfile.mkdtemp(prefix="h22d146_")
    try:
        out = {}
        for name in ("head", "patched"):
            d = os.path.join(work, name)
            shutil.copytree(src, os.path.join(d, "tad_dftd3"))
            if name == "patched":
                p = os.path.join(d, "tad_dftd3", "disp.py")
                lines = open(p).read().splitlines(keepends=True)
                s, e, new = EDIT
                assert "if torch.max(numbers) >= defaults.MAX_ELEMENT:" in lines[s - 1]
                lines[s - 1:e] = [ln + "\n" for ln in new]
                open(p, "w").writelines(lines)
            env = dict(os.environ, PYTHONWARNINGS="ignore")
            subprocess.run([sys.executable, __file__, "--side", d, os.path.join(d, "out.pt")],
                           env=env, check=True, capture_output=True)
            out[name] = torch.load(os.path.join(d, "out.pt"), weights_only=False)
        h, p = out["head"], out["patched"]
        for key in MODELS:
            for v in VALUES:
                he, hc = h[(key, v, "eager")], h[(key, v, "compiled")]
                pe, pc = p[(key, v, "eager")], p[(key, v, "compiled")]
                print(f"{key} last Z={v}: head compiled vs head eager {diff(hc, he)}; patched eager vs "
                      f"head eager {diff(pe, he)}; patched compiled vs head eager {diff(pc, he)}; "
                      f"patched compiled vs head compiled {diff(pc, hc)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
