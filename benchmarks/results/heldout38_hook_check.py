"""hand5 (coco-lm's discriminator hook registered in __init__) where the re-run harness cannot see it:
each coco-lm model with a hook, built fresh and compiled (backend "eager") before any eager call, as a
training script compiles a new model; head's copy and hand5's copy of the package, each in its own
process, no pt2bot code. Prints the graph-break sites dynamo logs in coco_lm_pytorch.py on the first two
compiled calls (case 0, then case 1) and whether the losses equal eager ones from a fresh model.

    /work/venvs/realcode/bin/python benchmarks/results/heldout38_hook_check.py > benchmarks/results/heldout38_hook_check.log
"""
import json, os, subprocess, sys, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import heldout38_rerun as R
SIDE = r'''
import os, sys, re, warnings, logging
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[3])
import torch
torch.set_num_threads(1)
import collect; collect.shim_torchvision()
import models, coco_lm_pytorch
assert coco_lm_pytorch.__file__.startswith(sys.argv[1])
sp = models.by_key()[sys.argv[2]]
def fresh():
    torch.manual_seed(0); m, cases = sp.build(); m.eval(); return m, cases
m, cases = fresh()
f = torch.compile(m, backend="eager")
comp = []
for a, kw in cases:
    torch.manual_seed(1); comp.append(f(*a, **kw).detach())
m2, _ = fresh()
eag = []
for a, kw in cases:
    torch.manual_seed(1); eag.append(m2(*a, **kw).detach())
print("EQUAL", [bool(torch.equal(x, y)) for x, y in zip(comp, eag)])
'''
out = []
keys = ["coco-lm-pytorch:coco_readme_xt", "coco-lm-pytorch:coco_random_tokens",
        "coco-lm-pytorch:coco_padded_crop", "coco-lm-pytorch:coco_user_encoders"]
hand5 = [c for c in json.load(open(os.path.join(HERE, "heldout38_hand_edits.json")))["models"][keys[0]]["candidates"]
         if c["id"] == "hand5"][0]
w = tempfile.mkdtemp(prefix="h38hook_")
side = os.path.join(w, "side.py"); open(side, "w").write(SIDE)
for key in keys:
    for name, cand in (("head", None), ("hand5", hand5)):
        d = R.make_copy("coco_lm_pytorch", cand, os.path.join(w, f"{name}_{key.split(':')[1]}"))
        env = dict(os.environ, TORCH_LOGS="graph_breaks", PYTHONWARNINGS="ignore")
        p = subprocess.run([sys.executable, side, d, key, R.REAL], env=env, capture_output=True, text=True)
        sites = {}
        for m in __import__("re").finditer(r"Graph break.*? in user code at \S+/coco_lm_pytorch\.py:(\d+)", p.stderr):
            sites[m.group(1)] = sites.get(m.group(1), 0) + 1
        eq = [l for l in p.stdout.splitlines() if l.startswith("EQUAL")]
        print(f"{key} {name}: rc {p.returncode}; breaks logged in coco_lm_pytorch.py by line {dict(sorted(sites.items(), key=lambda kv: int(kv[0])))}; "
              f"compiled losses equal to a fresh model's eager ones {eq[0][6:] if eq else p.stderr[-300:]}", flush=True)
