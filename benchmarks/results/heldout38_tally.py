"""How many of the re-run harness's results are 'ok' and how many raise (and what), on head, for a
model: the harness's own run_side on an unedited copy (H38_FRESH=8, as the re-run)."""
import collections, os, sys, tempfile
sys.path.insert(0, "/work/h38/benchmarks/results")
os.environ.setdefault("H38_FRESH", "8")
import heldout38_rerun as R
import torch
key = sys.argv[1]
w = tempfile.mkdtemp(prefix="h38tally_")
d = R.make_copy(R.models_package(key), None, os.path.join(w, "h"))
res, _ = R.side(d, key, os.path.join(d, "out.pt"), "")
c = collections.Counter()
for k, v in res.items():
    if k.startswith("_"): continue
    c[v[0] if v[0] != "raise" else f"raise {v[1]}: {v[2][:90]}"] += 1
print(key, dict(c))
print("  ok inputs (eager, nograd):", sorted(k.split("/")[0] for k, v in res.items() if not k.startswith("_") and k.endswith("/eager/nograd") and v[0] == "ok"))
