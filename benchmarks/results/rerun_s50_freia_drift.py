"""FrEIA edit (rerun_s50_edits.json, the last edit): IResNetLayer.lipschitz_correction called N
times (as the i-ResNet step does once per training step) with spectral_norm_max=0.99 and 0.8, on
weights within the bound, head vs patched copy, each in its own process; no pt2bot code.

    OMP_NUM_THREADS=1 /work/venvs/realcode/bin/python benchmarks/results/rerun_s50_freia_drift.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
N = 2000


def side(pkgdir, snm):
    sys.path.insert(0, pkgdir)
    import torch
    torch.set_num_threads(1)
    import FrEIA.modules as Fm
    assert Fm.__file__.startswith(pkgdir), Fm.__file__
    torch.manual_seed(0)
    layer = Fm.IResNetLayer([(4,)], internal_size=8, lipschitz_iterations=4, lipschitz_batchsize=3,
                            spectral_norm_max=snm)
    with torch.no_grad():
        for lin in layer.layers:
            lin.weight.mul_(0.2)          # within the bound
    w0 = [lin.weight.detach().clone() for lin in layer.layers]
    torch.manual_seed(1)
    for _ in range(N):
        layer.lipschitz_correction()
    w = [lin.weight.detach().clone() for lin in layer.layers]
    print(json.dumps([float((a - b).abs().max() / b.abs().max()) for a, b in zip(w, w0)]
                     + [float(w[0].flatten()[0]), float(w0[0].flatten()[0])]))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        side(sys.argv[1], float(sys.argv[2]))
        raise SystemExit(0)
    import importlib.util
    src = importlib.util.find_spec("FrEIA").submodule_search_locations[0]
    edit = json.load(open(os.path.join(HERE, "rerun_s50_edits.json")))[-1]
    work = tempfile.mkdtemp()
    for name, e in (("head", None), ("patched", edit)):
        d = os.path.join(work, name)
        shutil.copytree(src, os.path.join(d, "FrEIA"))
        if e:
            p = os.path.join(d, e["path"])
            lines = open(p).read().splitlines(keepends=True)
            lines[e["start_line"] - 1:e["end_line"]] = [ln + "\n" for ln in e["lines"]]
            open(p, "w").writelines(lines)
    for snm in (0.8, 0.99):
        for name in ("head", "patched"):
            out = subprocess.run([sys.executable, __file__, os.path.join(work, name), str(snm)],
                                 capture_output=True, text=True).stdout.strip()
            r = json.loads(out)
            print(f"spectral_norm_max={snm} {name}: after {N} lipschitz_correction calls, max relative "
                  f"change of the 3 weight matrices vs before {r[:3]}; weight[0][0,0] {r[4]!r} -> {r[3]!r}")
    shutil.rmtree(work)
