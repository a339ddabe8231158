"""Minimal repro (no pt2bot code): the verified PTC304 candidate for
fast_bss_eval/torch/hungarian.py:279 against the library's own line, in eager, on random square
cost matrices, with scipy's linear_sum_assignment as the reference.

head:      state.C[~state.row_uncovered] += minval
candidate: state.C.copy_(torch.where(~state.row_uncovered, state.C + minval, state.C))

`~state.row_uncovered` has shape (n,); against C of shape (n, m) torch.where broadcasts it over
the LAST dim, so the candidate adds minval to the covered COLUMNS, not the covered rows (and
raises where n != m). 200 random matrices per size, one in four rounded to whole numbers (ties).

    /work/venvs/realcode/bin/python benchmarks/results/heldout30_hungarian_where.py \
        > benchmarks/results/heldout30_hungarian_where.log
"""
import os
import shutil
import signal
import sys
import tempfile

import numpy as np
import scipy.optimize
import torch

import fast_bss_eval.torch.hungarian as head_mod

src = open(head_mod.__file__).read()
old = "        state.C[~state.row_uncovered] += minval\n"
new = "        state.C.copy_(torch.where(~state.row_uncovered, state.C + minval, state.C))\n"
assert src.count(old) == 1
tmp = tempfile.mkdtemp()
with open(os.path.join(tmp, "hungarian_cand.py"), "w") as f:
    f.write(src.replace(old, new))
sys.path.insert(0, tmp)
import hungarian_cand as cand_mod  # noqa: E402


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout()


signal.signal(signal.SIGALRM, _alarm)


def run(mod, c):
    signal.alarm(5)
    try:
        r, k = mod.linear_sum_assignment(c.clone())
        return ("ok", r.tolist(), k.tolist())
    except Timeout:
        return ("timeout (5 s, the step4/step6 loop does not end)",)
    except Exception as e:  # noqa: BLE001
        return ("raised " + type(e).__name__ + ": " + str(e).splitlines()[0],)
    finally:
        signal.alarm(0)


g = torch.Generator().manual_seed(0)
for n, m in ((2, 2), (3, 3), (4, 4), (2, 3), (3, 5)):
    stats = {"equal": 0, "differ": 0}
    first = None
    opt_head = opt_cand = 0
    trials = 200
    for t in range(trials):
        c = torch.randn(n, m, generator=g)
        if t % 4 == 0:
            c = c.round()   # ties, as a loss matrix of equal SDRs has
        h, p = run(head_mod, c), run(cand_mod, c)
        ri, ci = scipy.optimize.linear_sum_assignment(c.numpy())
        best = float(c.numpy()[ri, ci].sum())
        cost = lambda res: float(c.numpy()[res[1], res[2]].sum()) if res[0] == "ok" else None  # noqa: E731
        opt_head += cost(h) is not None and abs(cost(h) - best) < 1e-5
        opt_cand += cost(p) is not None and abs(cost(p) - best) < 1e-5
        stats["raised"] = stats.get("raised", 0) + (p[0].startswith("raised"))
        if h == p:
            stats["equal"] += 1
        else:
            stats["differ"] += 1
            if first is None:
                first = (c.tolist(), h, p, best)
    print(f"{n}x{m}: {stats['equal']} of {trials} equal, {stats['differ']} differ "
          f"({stats.get('raised', 0)} of them the candidate raising); "
          f"optimal (scipy's cost): head {opt_head} of {trials}, candidate {opt_cand} of {trials}")
    if first:
        print(f"   first difference: cost {first[0]}\n   head {first[1]}\n   candidate {first[2]}\n"
              f"   scipy's optimal cost {first[3]:.4f}")

# The same at the library's API: si_sdr_pit_loss (3 sources, batch 4, 256 samples), head's
# Hungarian against the candidate's (swapped into fast_bss_eval.torch.helpers, which imported it
# by name), eager. The PIT loss is the loss of the best assignment: a suboptimal one is larger.
import fast_bss_eval  # noqa: E402
import fast_bss_eval.torch.helpers as helpers  # noqa: E402

g = torch.Generator().manual_seed(1)
n_diff = n_larger = 0
example = None
for t in range(50):
    ref = torch.randn(4, 3, 256, generator=g)
    # an untrained separator: estimates only weakly related to the references
    est = 0.2 * ref[:, torch.randperm(3, generator=g)] + torch.randn(4, 3, 256, generator=g)
    helpers.linear_sum_assignment = head_mod.linear_sum_assignment
    lh = fast_bss_eval.si_sdr_pit_loss(est, ref)
    helpers.linear_sum_assignment = cand_mod.linear_sum_assignment
    lc = fast_bss_eval.si_sdr_pit_loss(est, ref)
    if not torch.equal(lh, lc):
        n_diff += 1
        n_larger += bool((lc.sum(-1) > lh.sum(-1) + 1e-4).any())
        if example is None:
            example = (lh, lc)
print(f"si_sdr_pit_loss, 3 sources, 50 batches of 4: {n_diff} batches differ, {n_larger} with a larger "
      f"loss (a worse assignment) under the candidate")
if example:
    print(f"   e.g. head {example[0].tolist()}\n   candidate {example[1].tolist()}")
