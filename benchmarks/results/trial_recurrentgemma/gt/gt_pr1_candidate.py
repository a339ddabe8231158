"""Ground truth, no pt2bot code, for pr1's candidate (review_pr1/report.json fixes.candidates[0]).
For TREE in (main, pr1-nan-guard, pr1-candidate): griffin_decode / griffin, grad on:
eager forward+backward, and compiled (eager backend) forward+backward. Fresh process per tree.
Usage: gt_pr1_candidate.py TREE"""
import sys, traceback
tree = sys.argv[1]
sys.path.insert(0, tree)
import torch
torch.set_num_threads(1)
import pt2bot_models as m

def run(model, inputs, b, s, compiled):
  torch.manual_seed(0)
  net = m.build_griffin()
  torch.manual_seed(1)
  kw = inputs(b, s)
  f = torch.compile(net, backend="eager") if compiled else net
  try:
    logits, _ = f(**kw)
  except Exception as e:
    return f"forward raised {type(e).__name__}: {str(e)[:150]}"
  try:
    logits.float().sum().backward()
    g = sum(p.grad.abs().sum().item() for p in net.parameters() if p.grad is not None)
    return f"forward ok, logits sum {logits.sum().item():.6f}; backward ok, sum|grad| {g:.6f}"
  except Exception as e:
    return f"forward ok, logits sum {logits.sum().item():.6f}; backward raised {type(e).__name__}: {str(e)[:160]}"

for name, inputs, b, s in [("griffin_decode", m.griffin_decode_inputs, 2, 1), ("griffin", m.griffin_inputs, 2, 8)]:
  for compiled in (False, True):
    torch._dynamo.reset()
    print(f"{tree.split('/')[-1]} {name} b={b} s={s} {'compiled(eager backend)' if compiled else 'eager'}: {run(name, inputs, b, s, compiled)}", flush=True)
