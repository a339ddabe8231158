"""Batch 24: what the verified edit at torchcfm/optimal_transport.py:88 (PTC201,
`if not torch.compiler.is_compiling() and not np.all(np.isfinite(p)):`) changes that
heldout24_rerun.py did not see. The block it keeps out of compiled code only prints a diagnostic
("ERROR: p is not finite", the plan, the cost's mean and max, the two batches). The re-run's
compiled calls share one torch.compile per side, and its NaN inputs come after 30 other inputs
of 1 to 24 rows: there it found the printed text equal on all 160 calls of this model. With no fresh draws
(`H24_FRESH=0 H24_CAND=c0 H24_MODEL=torchcfm:sb_cfm_sinkhorn_score`, 6 calls before the NaN
inputs; heldout24_rerun_sb_nofresh.log) the same harness finds it: "PRINTS differ on 4 of 64
calls", nan_first and nan_last, compiled, with and without gradients, head printing the
diagnostic and the edit ''. So after the 24 fresh batch sizes get_map was apparently no longer
compiled (recompiled past dynamo's limit: is_compiling() False, the edit a no-op). A fresh compile
shows the difference too, in one call of sb_cfm_sinkhorn_score (ot.sinkhorn, whose plan a NaN makes
non-finite; ot.emd instead returns a uniform plan, so the exact-OT models never enter the block)
on its first case with a NaN in x0, eager then compiled (backend="eager"), torch and numpy seeded
(1), for head, the verified edit and hand1 (heldout24_hand_edits.json). All three raise
ValueError('probabilities contain NaN') from np.random.choice, eager and compiled.

    /work/venvs/realcode/bin/python benchmarks/results/heldout24_print_check.py head|edit88|hand1
"""
import contextlib
import importlib.util
import io
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
variant = sys.argv[1]
site = os.path.dirname(os.path.dirname(importlib.util.find_spec('torchcfm').origin)) + '/'
dest = f'/tmp/h24print/{variant}'
if not os.path.exists(dest):
    shutil.copytree(site + 'torchcfm', dest + '/torchcfm')
    if variant != 'head':
        d = json.load(open(os.path.join(HERE, 'heldout24_hand_edits.json')))
        if variant == 'hand1':
            c = d['models']['torchcfm:sb_cfm_sinkhorn_score']['candidates'][0]
        else:
            c = json.load(open(os.path.join(HERE, 'realcode_proof_heldout24.json')))['models']['torchcfm:ot_plan_argmax_pairing']['candidates'][0]
        p = dest + '/' + c['path']; src = open(p).read().splitlines(keepends=True)
        src[c['start_line']-1:c['end_line']] = [l + '\n' for l in c['lines']]
        open(p, 'w').writelines(src)
sys.path.insert(0, dest); sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'real_code'))
import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)
import models  # noqa: E402

sp = models.by_key()['torchcfm:sb_cfm_sinkhorn_score']
torch.manual_seed(0); model, cases = sp.build(); model.eval()
x0, x1 = cases[0][0]; x0 = x0.clone(); x0.view(-1)[1] = float('nan')
for mode in ('eager', 'compiled'):
    fn = torch.compile(model, backend='eager') if mode == 'compiled' else model
    torch.manual_seed(1); np.random.seed(1)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), torch.no_grad():
        try: r = fn(x0, x1)
        except Exception as e: r = repr(e)[:100]
    print(f'--- {variant} {mode}: {r}'); print(buf.getvalue()[:1200] or "(nothing printed)")
