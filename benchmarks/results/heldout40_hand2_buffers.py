"""Held-out batch 40, hand2 (torchbnn batchnorm.py:109-127, heldout40_hand_edits.json): the running
statistics, which heldout40_rerun.py does not compare (outputs and gradients only). Head's installed
batchnorm.py and a copy with hand2 applied; BayesBatchNorm2d(momentum=None) in training, 6 batches of
random sizes (and one with a NaN), eager and compiled (backend eager); running_mean, running_var and
num_batches_tracked compared exactly and by max |diff| after each call. No pt2bot code.
    /work/venvs/realcode/bin/python benchmarks/results/heldout40_hand2_buffers.py > benchmarks/results/heldout40_hand2_buffers.log 2>&1
"""
import importlib.util, json, os, shutil, sys, tempfile
import torch
torch.set_num_threads(1)
here = os.path.dirname(os.path.abspath(__file__))
cand = [c for c in json.load(open(os.path.join(here, "heldout40_hand_edits.json")))["models"]
        ["torchbnn:bnn_cnn_cumavg_train"]["candidates"] if c["id"] == "hand2"][0]
src = os.path.dirname(importlib.util.find_spec("torchbnn").origin)
tmp = tempfile.mkdtemp()
shutil.copytree(src, os.path.join(tmp, "torchbnn"))
e = cand["edits"][0]
p = os.path.join(tmp, e["path"])
lines = open(p).read().splitlines(keepends=True)
lines[e["start_line"] - 1:e["end_line"]] = [ln + "\n" for ln in e["lines"]]
open(p, "w").writelines(lines)
import torchbnn as head_bnn
sys.modules.pop("torchbnn"); [sys.modules.pop(k) for k in list(sys.modules) if k.startswith("torchbnn.")]
sys.path.insert(0, tmp)
import torchbnn as hand_bnn
assert hand_bnn.__file__.startswith(tmp)
g = torch.Generator().manual_seed(5)
batches = [torch.randn(b, 6, s, s, generator=g) * sc + off for b, s, sc, off in
           ((4, 10, 1.0, 0.0), (6, 14, 2.0, 1.0), (1, 8, 0.5, -3.0), (8, 12, 10.0, 0.0), (3, 10, 1.0, 100.0))]
nanb = torch.randn(4, 6, 10, 10, generator=g); nanb[0, 2, 3, 3] = float("nan"); batches.append(nanb)
for mode in ("eager", "compiled"):
    mods = []
    for lib in (head_bnn, hand_bnn):
        torch.manual_seed(0)
        bn = lib.BayesBatchNorm2d(prior_mu=0, prior_sigma=0.1, num_features=6, momentum=None).train()
        lib.utils.freeze(bn)
        torch._dynamo.reset()
        mods.append((bn, torch.compile(bn, backend="eager") if mode == "compiled" else bn))
    for i, x in enumerate(batches):
        outs = [f(x.clone()) for _, f in mods]
        (h, _), (k, _) = mods
        rep = []
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            a, b = getattr(h, name), getattr(k, name)
            eq = torch.equal(torch.nan_to_num(a, 1e9), torch.nan_to_num(b, 1e9)) and torch.equal(a.isnan(), b.isnan())
            fin = torch.isfinite(a.float()) & torch.isfinite(b.float())
            d = float((a.float()[fin] - b.float()[fin]).abs().max()) if fin.any() else 0.0
            rep.append(f"{name} {'equal' if eq else 'DIFFER'} (max |diff| {d:.3g}, NaN {int(a.float().isnan().sum())}/{int(b.float().isnan().sum())})")
        oeq = torch.equal(outs[0].isnan(), outs[1].isnan()) and torch.equal(torch.nan_to_num(outs[0]), torch.nan_to_num(outs[1]))
        print(f"{mode} call {i} {tuple(x.shape)}: output {'equal' if oeq else 'DIFFER'}; " + "; ".join(rep))
