"""Held-out batch 39: what the two posted verified edits (PTC201, a compiled-only torch._assert_async in
place of a raising check) change for a caller, with no pt2bot code. heldout39_rerun.log finds
focal-loss-torch's edit (focal_loss.py:77) differing from head on 20 compiled results (NaN or inf
inputs: head AssertionError, the edit RuntimeError), head's two runs agreeing; the re-run's inputs
never reach coral-pytorch's range check (dataset.py:45), whose labels stay in range. Here both
libraries' files are copied, the proof's posted edit applied to the copy (lines as in
realcode_proof_heldout39_matrix.json), and one input that fails each check is run, eager and
compiled (backend "eager"), head and edit, each in its own process; then a caller's own handler of
the exception head documents (`except AssertionError` around the loss, `except ValueError` around
the label conversion) is run the same way.

    /work/venvs/realcode/bin/python benchmarks/results/heldout39_assert_repro.py > benchmarks/results/heldout39_assert_repro.log
"""
import json, os, shutil, subprocess, sys, tempfile, textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
proof = json.load(open(os.path.join(HERE, "realcode_proof_heldout39_matrix.json")))


def cand(key):
    return next(c for c in proof["models"][key]["candidates"] if c.get("verified") and not c.get("setting"))


def site_packages():
    import importlib.util
    return os.path.dirname(importlib.util.find_spec("coral_pytorch").submodule_search_locations[0])


SP = site_packages()
work = tempfile.mkdtemp(prefix="h39repro_")
for side in ("head", "edit"):
    for pkg in ("coral_pytorch", "focal_loss"):
        shutil.copytree(os.path.join(SP, pkg), os.path.join(work, side, pkg))
for key in ("coral-pytorch:coral_mlp_train", "focal-loss-torch:focal_multiclass"):
    c = cand(key)
    path = os.path.join(work, "edit", c["path"])
    src = open(path).read().splitlines(keepends=True)
    src[c["start_line"] - 1:c["end_line"]] = [ln + "\n" for ln in c["lines"]]
    open(path, "w").write("".join(src))
    print(f"{key}: posted edit {c['path']}:{c['start_line']}-{c['end_line']} ->")
    print(textwrap.indent("\n".join(c["lines"]), "    "))

CHILD = r'''
import sys, torch, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
import coral_pytorch, focal_loss
assert coral_pytorch.__file__.startswith(sys.argv[1]) and focal_loss.__file__.startswith(sys.argv[1])
from coral_pytorch.dataset import levels_from_labelbatch
from focal_loss.focal_loss import FocalLoss
mode, case = sys.argv[2], sys.argv[3]

def focal(p, t):
    return FocalLoss(gamma=0.7)(p, t)

def focal_caller(p, t):            # a training step that skips a bad batch, as head documents it
    try:
        return focal(p, t)
    except AssertionError:
        return torch.zeros(())

def levels(y):
    return levels_from_labelbatch(y, num_classes=5)

def levels_caller(y):              # a data pipeline that drops a batch with a bad label
    try:
        return levels(y)
    except ValueError:
        return torch.zeros(len(y), 4)

probs = torch.softmax(torch.randn(4, 5, generator=torch.Generator().manual_seed(0)), -1)
probs_nan = probs.clone(); probs_nan[1, 2] = float("nan")
target = torch.tensor([0, 1, 2, 3])
calls = {"focal_nan": (focal, (probs_nan, target)), "focal_ok": (focal, (probs, target)),
         "focal_caller_nan": (focal_caller, (probs_nan, target)),
         "levels_5": (levels, (torch.tensor([0, 5, 2]),)), "levels_ok": (levels, (torch.tensor([0, 4, 2]),)),
         "levels_caller_5": (levels_caller, (torch.tensor([0, 5, 2]),))}
fn, args = calls[case]
if mode == "compiled":
    fn = torch.compile(fn, backend="eager")
try:
    out = fn(*args)
    print("ok", out.tolist() if out.numel() < 20 else out.shape)
except Exception as e:
    print("raises", type(e).__name__ + ":", str(e).split("\n")[0][:160])
'''
open(os.path.join(work, "child.py"), "w").write(CHILD)
print()
for case in ("focal_ok", "focal_nan", "focal_caller_nan", "levels_ok", "levels_5", "levels_caller_5"):
    for mode in ("eager", "compiled"):
        res = {}
        for side in ("head", "edit"):
            p = subprocess.run([sys.executable, os.path.join(work, "child.py"), os.path.join(work, side), mode, case],
                               capture_output=True, text=True, timeout=300)
            res[side] = (p.stdout.strip() or p.stderr.strip().splitlines()[-1])
        tag = "same" if res["head"] == res["edit"] else "DIFFER"
        print(f"{case:17s} {mode:8s} {tag:6s} head: {res['head']}")
        print(f"{'':17s} {'':8s} {'':6s} edit: {res['edit']}")
shutil.rmtree(work)
