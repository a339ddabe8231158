"""Graph count of one batch-20 model with several of heldout20_hand_edits.json's edits applied
together (no pt2bot code): the package copied as heldout20_rerun.py copies it, the named hand
edits applied to the copy, the model built from models.py (seed 0, eval mode) and
torch._dynamo.explain run on each of its spec cases.

    /work/venvs/realcode/bin/python benchmarks/results/heldout20_hand_combined.py e2cnn:c8_regular_cnn hand2 hand4
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import heldout20_rerun as R  # noqa: E402 - the harness beside this file

d = json.load(open(os.path.join(HERE, 'heldout20_hand_edits.json')))
cands = {c['id']: c for m in d['models'].values() for c in m['candidates']}
work = tempfile.mkdtemp()
dest = os.path.join(work, 'pk')
package = R.models_package(sys.argv[1])
R.make_copy(package, None, dest)
for hid in sys.argv[2:]:
    c = cands[hid]
    path = os.path.join(dest, c['path'])
    src = open(path).read().splitlines(keepends=True)
    src[c['start_line'] - 1:c['end_line']] = [ln + '\n' for ln in c['lines']]
    open(path, 'w').writelines(src)
sys.path.insert(0, dest)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'real_code'))
import importlib

import models
import torch

assert importlib.import_module(package).__path__[0].startswith(dest)
torch.manual_seed(0)
m, cases = models.by_key()[sys.argv[1]].build()
m.eval()
for args, kw in cases:
    torch._dynamo.reset()
    ex = torch._dynamo.explain(m)(*args, **kw)
    print(sys.argv[1], 'edits', sys.argv[2:] or 'none', 'case', [tuple(a.shape) for a in args],
          'graphs', ex.graph_count, 'breaks', ex.graph_break_count)
shutil.rmtree(work)
