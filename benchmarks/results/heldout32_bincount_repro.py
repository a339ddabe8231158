"""heldout32_bincount_repro.py (no pt2bot code): torch-nl's linked-cell search with the batch's
verified PTC304 edit (torch_nl/linked_cell.py:181, `torch.bincount(bin_index_j, minlength=nbins)`
-> `torch.zeros(nbins, ...).scatter_add_(0, bin_index_j.long(), ones)`, "the same counts as
bincount where every value is below nbins") against the installed torch-nl 0.3, on one periodic
structure of 8 atoms in a cubic cell of side 3 (cutoff 1.8, as nl_linked_cell_mixed's crystal),
eager and compiled (backend "eager"): finite positions, then positions holding a NaN, an inf, a
-inf, and positions outside the cell (negative, x 50).

    /work/venvs/realcode/bin/python benchmarks/results/heldout32_bincount_repro.py \
        > benchmarks/results/heldout32_bincount_repro.log 2>&1
"""
import importlib
import os
import shutil
import sys
import tempfile

import torch

torch.set_num_threads(1)
SRC = os.path.dirname(importlib.util.find_spec("torch_nl").origin)
OLD = "    n_atom_j_per_bin = torch.bincount(bin_index_j, minlength=nbins)\n"
NEW = ("    n_atom_j_per_bin = torch.zeros(nbins, dtype=torch.long, device=bin_index_j.device)"
       ".scatter_add_(0, bin_index_j.long(), torch.ones_like(bin_index_j, dtype=torch.long))\n")


def load(patched: bool):
    d = tempfile.mkdtemp()
    shutil.copytree(SRC, os.path.join(d, "torch_nl"))
    if patched:
        p = os.path.join(d, "torch_nl", "linked_cell.py")
        s = open(p).read()
        assert s.count(OLD) == 1
        open(p, "w").write(s.replace(OLD, NEW))
    for m in [m for m in sys.modules if m == "torch_nl" or m.startswith("torch_nl.")]:
        del sys.modules[m]
    sys.path.insert(0, d)
    mod = importlib.import_module("torch_nl.linked_cell")
    sys.path.pop(0)
    assert mod.__file__.startswith(d)
    return mod.build_linked_cell_neighborhood


def run(fn, pos, cell, compiled):
    pbc = torch.ones(1, 3, dtype=torch.bool)
    n_atoms = torch.tensor([pos.shape[0]])
    f = torch.compile(fn, backend="eager") if compiled else fn
    try:
        m, b, s = f(pos, cell, pbc, 1.8, n_atoms, False)
        return f"ok: {m.shape[1]} pairs, pair sum {int(m.sum())}"
    except Exception as e:  # noqa: BLE001
        return f"raise {type(e).__name__}: {str(e).splitlines()[0][:150]}"


def main():
    print(f"torch {torch.__version__}, torch-nl from {SRC}")
    g = torch.Generator().manual_seed(0)
    pos0 = torch.rand(8, 3, generator=g, dtype=torch.float64) * 3.0
    cell = torch.eye(3, dtype=torch.float64) * 3.0
    cases = {"finite": pos0}
    for name, v in (("nan", float("nan")), ("inf", float("inf")), ("neg_inf", float("-inf"))):
        p = pos0.clone()
        p[1, 0] = v
        cases[name] = p
    cases["negative"] = -pos0
    cases["x50"] = pos0 * 50
    head, patched = load(False), load(True)
    differ = 0
    for compiled in (False, True):
        torch._dynamo.reset()
        for name, pos in cases.items():
            h, p = run(head, pos, cell, compiled), run(patched, pos, cell, compiled)
            same = h == p
            differ += not same
            print(f"{'compiled' if compiled else 'eager   '} {name:9s} {'same  ' if same else 'DIFFER'} "
                  f"head: {h}\n{'':25s}patched: {p}")
    print(f"{differ} of {2 * len(cases)} calls differ")


if __name__ == "__main__":
    main()
