"""Ground truth, no pt2bot code, for pr3's verified torch.cond suggestion (review_pr3/review.json).
1) head's max |logit| on the pt2bot.yml shape cases (does head ever enter the tanh block, > 15?);
2) head vs fix on inputs that do enter it: the embedding scaled by 200 (logits up to ~hundreds),
   eager and compiled (eager backend), outputs and parameter gradients. Fresh process per tree.
Usage: gt_pr3_fix.py TREE MODE SCALE  (prints a pickle path)"""
import sys, os, pickle
tree, mode, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
sys.path.insert(0, tree)
import torch
torch.set_num_threads(1)
import pt2bot_models as m
res = {}
for b, s in [(2, 8), (2, 12), (4, 8), (4, 12)]:
  torch.manual_seed(0); net = m.build_griffin()
  with torch.no_grad(): net.embedder.input_embedding.mul_(scale)
  torch.manual_seed(1); kw = m.griffin_inputs(b, s)
  f = torch.compile(net, backend="eager") if mode == "compiled" else net
  try:
    out, _ = f(**kw)
    out.sum().backward()
    res[(b, s)] = (out.detach(), {n: p.grad.clone() for n, p in net.named_parameters() if p.grad is not None})
  except Exception as e:
    res[(b, s)] = f"{type(e).__name__}: {str(e)[:200]}"
  torch._dynamo.reset()
path = f"/tmp/fh-rg/gt/pr3_{os.path.basename(tree)}_{mode}_{scale}.pkl"
pickle.dump(res, open(path, "wb")); print(path)
