"""Ground truth, no pt2bot code: griffin_decode's paste-ready export from `pt2bot run`
(run_main/results.json models[griffin_decode].shape_advice.code.python), pasted verbatim
with model/args/kwargs set up as pt2bot.yml does; then the same spec with the NamedTuples kept."""
import sys; sys.path.insert(0, "/tmp/fh-rg/gt/trees/main")
import torch; torch.set_num_threads(1)
import pt2bot_models as m
torch.manual_seed(0); model = m.build_griffin().eval()
torch.manual_seed(1); kwargs = m.griffin_decode_inputs(2); args = ()
# --- pasted verbatim ---
from torch.export import Dim

batch = Dim('batch')
dynamic_shapes = {'tokens': {0: batch}, 'segment_pos': {0: batch}, 'cache': {'blocks.0': ({0: batch}, {0: batch}), 'blocks.1': ({0: batch}, {0: batch}, {0: batch}), 'blocks.2': ({0: batch}, {0: batch})}}
# args, kwargs: example inputs with every dynamic dim at least 2 (torch specialises a size of 1)
try:
  ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
  print("paste-ready spec (plain tuples): export OK")
except Exception as e:
  print("paste-ready spec (plain tuples): export FAILED", type(e).__name__, " ".join(str(e).split())[:500])
# --- the same spec with each block's NamedTuple type kept ---
ds2 = {k: v for k, v in dynamic_shapes.items()}
ds2["cache"] = {k: type(kwargs["cache"][k])(*v) for k, v in dynamic_shapes["cache"].items()}
try:
  ep = torch.export.export(model, args, kwargs, dynamic_shapes=ds2)
  print("spec with NamedTuples: export OK")
  torch.manual_seed(1); kw4 = m.griffin_decode_inputs(4); torch.manual_seed(1); kw4b = m.griffin_decode_inputs(4)
  print("  batch=4: max|diff| vs eager", (ep.module()(**kw4)[0] - model(**kw4b)[0]).abs().max().item())
except Exception as e:
  print("spec with NamedTuples: export FAILED", type(e).__name__, " ".join(str(e).split())[:500])
