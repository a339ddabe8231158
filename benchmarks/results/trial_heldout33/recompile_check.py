"""How often each variant of the trial's model compiles in a plain torch.compile loop, with no
pt2bot code: the review refused PR 1's torch.where candidate (c0) for "a new recompile on shape case
batch=4, depth=8 (... 5 recompiles there, head 2)", and failed PR 2 on "7 new recompiles over the
shape matrix" whose listed guards are all size changes in unfoldNd's frames.

Each variant: torch.compile(model, backend=<a counting eager backend>), called without gradients
on volumes [batch, 1, depth, 8, 8] over the sizes (2, 8), (2, 12), (4, 8), (4, 12), (3, 16), (1, 8),
(2, 8), three fresh uniform draws in [-1, 1) at each size (the values differ on every call), then
the same 21 calls again. Counted: graphs compiled (backend calls) after the first pass and after
the second, and every recompile reason dynamo logs (TORCH_LOGS=recompiles, read from its logger),
grouped by the frame and the kind of guard; `hit config.recompile_limit` is reported when logged.

    /work/venvs/realcode/bin/python recompile_check.py > recompile_check.log 2> /dev/null
"""
import collections
import importlib.util
import logging
import os
import re

import torch
import torch._dynamo

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)
SIZES = [(2, 8), (2, 12), (4, 8), (4, 12), (3, 16), (1, 8), (2, 8)]


class Grab(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def load(fname):
    spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(HERE, fname))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(fname):
    torch._dynamo.reset()
    mod = load(fname)
    torch.manual_seed(0)
    model = mod.VolumePatchClassifier().eval()
    n = [0]

    def backend(gm, example_inputs):
        n[0] += 1
        return gm.forward

    fn = torch.compile(model, backend=backend)
    grab = Grab()
    torch._logging.set_logs(recompiles=True)
    for name in ("torch._dynamo", "torch._dynamo.guards", "torch._dynamo.convert_frame"):
        logging.getLogger(name).addHandler(grab)
    g = torch.Generator().manual_seed(7)
    after = []
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            with torch.no_grad():
                for b, d in SIZES:
                    for _ in range(3):
                        fn(torch.rand(b, 1, d, 8, 8, generator=g) * 2 - 1)
            after.append(n[0])
    torch._logging.set_logs()
    for name in ("torch._dynamo", "torch._dynamo.guards", "torch._dynamo.convert_frame"):
        logging.getLogger(name).removeHandler(grab)
    kinds = collections.Counter()
    limit = 0
    for msg in grab.records:
        if "recompile_limit" in msg:
            limit += 1
        m = re.search(r"Recompiling function (\S+) in (\S+)", msg)
        if not m:
            continue
        fnname, where = m.groups()
        reason = msg.split("triggered by the following guard failure(s):")[-1].strip().splitlines()
        first = reason[0] if reason else ""
        first = re.sub(r"^- \d+/\d+: ", "", first.strip())
        kind = ("size" if "size mismatch" in first else "value of a float/int" if re.search(r"== -?[0-9.]+(e-?\d+)?$", first) else first[:80])
        kinds[(fnname, os.path.basename(where), kind)] += 1
    print(f"== {fname}: graphs compiled {after[0]} after the first 21 calls, {after[1]} after 42; "
          f"{sum(kinds.values())} recompiles logged; recompile_limit hit {limit} time(s)")
    for (f, w, k), c in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"   {c:3d} recompiles of {f} ({w}): {k}")
    vals = [m for m in grab.records if "Recompiling" in m and "==" in m]
    if vals:
        print("   e.g.:", " | ".join(vals[-1].strip().splitlines()[-2:])[:300])


if __name__ == "__main__":
    print(f"torch {torch.__version__}; sizes {SIZES}, 3 draws each, twice")
    for f in ("model_base.py", "model_nan_guard.py", "model_nan_guard_c0.py", "model_minmax.py",
              "model_minmax_hand.py"):
        check(f)
