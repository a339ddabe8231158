"""pt2bot's own break pass (pt2bot.smoke.breaks.measure_breaks, as a review's worker runs it) on four of
the batch's flowtorch models, their first case, under no_grad, with and without count_ops (the ATen op
counter for graph coverage, on in the worker). Paths are None: the library is site-packages here.

    PYTHONPATH=/work/h26 /work/venvs/realcode/bin/python benchmarks/results/heldout26_breaks_pass_models.py \
        > benchmarks/results/heldout26_breaks_pass_models.log
"""
import sys, torch
sys.path.insert(0,'/work/h26/benchmarks/real_code'); sys.path.insert(0,'/work/h26')
import collect; collect.shim_torchvision()
import models
from pt2bot.smoke.breaks import measure_breaks
from pt2bot.smoke.location import RepoPaths
import flowtorch, os
for key in ["flowtorch:maf_density","flowtorch:composed_flow","flowtorch:elementwise_stack","flowtorch:flow_vi_posterior"]:
    sp=models.by_key()[key]; torch.manual_seed(0); m,cases=sp.build(); m.eval()
    class Case: args, kwargs = cases[0]
    for co in (True, False):
        try:
            with torch.no_grad(): r=measure_breaks(m, Case, RepoPaths(os.path.dirname(flowtorch.__path__[0])), count_ops=co)
            print(key, co, "ok", r["graph_count"], [(b["path"],b["line"],b["gb"]) for b in r["graph_breaks"]])
        except Exception as e: print(key, co, "raised", type(e).__name__, str(e)[:100])
