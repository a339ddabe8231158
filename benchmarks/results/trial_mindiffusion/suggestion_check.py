"""Re-run, with no pt2bot code, of the suggestion pt2bot verified on minDiffusion (cloneofsimo/minDiffusion at
00a3c80; the trial PR's mindiffusion/unet.py is given to this script as head, and the same file with the suggestion
applied by hand as the fix). Usage: python suggestion_check.py HEAD_UNET.py FIXED_UNET.py"""
import importlib.util
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


head, fixed = load(sys.argv[1], "head_unet"), load(sys.argv[2], "fixed_unet")
torch.manual_seed(0)
h = head.NaiveUnet(3, 3, n_feat=32).eval()
f = fixed.NaiveUnet(3, 3, n_feat=32).eval()
f.load_state_dict(h.state_dict())
fc = torch.compile(f, fullgraph=True, backend="eager")
worst, branch = 0.0, 0
cases = []
for b, side in [(2, 32), (4, 32), (1, 64), (3, 32)]:
    x = torch.randn(b, 3, side, side)
    for t in (torch.rand(b),                                 # a training time in [0, 1)
              torch.randint(1, 1001, (b,)).float(),          # integer timesteps: head's branch
              torch.full((b,), 1.0), torch.zeros(b),         # the test's edge: max == 1 is not > 1
              torch.tensor([0.5] + [500.0] * (b - 1))):       # a mix in one batch
        branch += int(bool(t.max() > 1))
        with torch.no_grad():
            eh, ef, cf = h(x, t), f(x, t), fc(x, t)
        worst = max(worst, (eh - ef).abs().max().item(), (eh - cf).abs().max().item())
        cases.append(tuple(eh.shape))
# gradients with respect to the input and the time, on a case that takes the branch
x = torch.randn(2, 3, 32, 32, requires_grad=True)
t = torch.tensor([3.0, 700.0], requires_grad=True)
gh = torch.autograd.grad(h(x, t).square().sum(), (x, t))
x2, t2 = x.detach().clone().requires_grad_(), t.detach().clone().requires_grad_()
gf = torch.autograd.grad(fc(x2, t2).square().sum(), (x2, t2))
gworst = max((a - b).abs().max().item() for a, b in zip(gh, gf))
print(f"{len(cases)} cases ({branch} taking head's branch): max abs diff eager and fullgraph-compiled {worst}; "
      f"gradients (x, t) max abs diff {gworst}")
