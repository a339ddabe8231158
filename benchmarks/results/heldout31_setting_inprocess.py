"""heldout31_setting_repro.py part 3's sequence replayed in one process (no pt2bot code):
te_accuracy_macro_topk built from models.py with or without capture_dynamic_output_shape_ops set
first, then any of: its cases eager without gradients (e), eager with (g), compiled without (c);
then a dynamo reset and one compiled call with gradients. Prints whether the logits require grad.
    for s in 1 0; do for st in x e g c eg ec gc egc; do
      /work/venvs/realcode/bin/python benchmarks/results/heldout31_setting_inprocess.py $s $st; done; done
"""
import logging
import os
import sys
import warnings
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "real_code"))
import collect; collect.shim_torchvision()
import torch
logging.disable(logging.WARNING); warnings.filterwarnings("ignore")
torch.set_num_threads(1)
setting = sys.argv[1] == "1"; steps = sys.argv[2]
torch._dynamo.config.capture_dynamic_output_shape_ops = setting
import models
sp=[s for s in models.SPECS if s.name=='te_accuracy_macro_topk'][0]
torch.manual_seed(0); m,cases=sp.build(); m.eval()
ins=[c[0] for c in cases]
def call(fn, x, y, grad):
    x = x.clone().requires_grad_(grad)
    if grad: return fn(x, y)
    with torch.no_grad(): return fn(x, y)
if "e" in steps:
    for x,y in ins: call(m,x,y,False)
if "g" in steps:
    for x,y in ins: call(m,x,y,True)
if "c" in steps:
    torch._dynamo.reset(); cm=torch.compile(m, backend="eager")
    for x,y in ins: call(cm,x,y,False)
torch._dynamo.reset(); cm=torch.compile(m, backend="eager")
o = call(cm, *ins[0], True)
print(f"setting={setting} steps={steps}: compiled logits.requires_grad={o[0].requires_grad}")
