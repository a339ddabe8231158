"""The paste-ready export of griffin_decode from `pt2bot run` at 005a285 (pt2bot's results),
pasted verbatim after the model and inputs are built as pt2bot.yml does (no pt2bot code)."""
import sys; sys.path.insert(0, "/tmp/fh-rg/gt/trees/main")
import torch; torch.set_num_threads(1)
import pt2bot_models as m
torch.manual_seed(0); model = m.build_griffin().eval()
torch.manual_seed(1); kwargs = m.griffin_decode_inputs(2); args = ()
code = open("/tmp/rgpc/rg_paste.py (decode_pasteready.py here)").read()
exec(code)
print("pasted verbatim: export OK")
torch.manual_seed(1); kw4 = m.griffin_decode_inputs(4); torch.manual_seed(1); kw4b = m.griffin_decode_inputs(4)
print("batch=4: max|diff| vs eager", (ep.module()(**kw4)[0] - model(**kw4b)[0]).abs().max().item())
