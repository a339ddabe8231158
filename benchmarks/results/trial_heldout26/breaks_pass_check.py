"""Does the break pass's failure come from pt2bot's op counting (count_ops) rather than from torch.compile?

pt2bot's own measure_breaks (the worker's break pass) on the trial's model and its first shape case
(batch 2), under no_grad, with and without count_ops, run in the trial's venv once per branch:
    for br in main impute-missing; do git -C repo checkout -q $br; echo "== $br"; \
        venv/bin/python breaks_pass_check.py; done > breaks_pass_check.log
"""
import sys, torch
sys.path.insert(0, '/tmp/trial26/repo')
from densityscore.model import FlowScorer
from pt2bot.smoke.breaks import measure_breaks
from pt2bot.smoke import breaks as B
torch.manual_seed(0)
m = FlowScorer().eval()
x = torch.randn(2, 6)
class Case:  # the first shape case, as the worker passes it
    args, kwargs = (x,), {}
from pt2bot.smoke.location import RepoPaths
for count_ops in (True, False):
    try:
        with torch.no_grad():
            r = measure_breaks(m, Case, RepoPaths('/tmp/trial26/repo'), count_ops=count_ops)
        print("count_ops", count_ops, "ok: graphs", r["graph_count"], "breaks",
              [(b["path"], b["line"], b["gb"]) for b in r["graph_breaks"]])
    except Exception as e:
        print("count_ops", count_ops, "raised", type(e).__name__, str(e).split("\n")[0][:160])
