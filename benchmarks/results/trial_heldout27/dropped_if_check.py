"""Re-run, with no pt2bot code, of the fix pt2bot verified for the trial's PR 1 after the third-size
proof (d556e6a): `if unseen.any(): account = torch.where(unseen, -1, account)` with the `if` dropped.
Head (model_unseen_categories.py) and the fix, same weights, on batches 1 to 16 with seen and unseen
codes, eager and compiled (eager backend, batch marked dynamic as pt2bot.yml asks), and gradients;
then compiles counted over batches 2, 8, 4, 16 (CompileCounter). Run with the trial's venv (torch
2.13.0+cpu, tab-transformer-pytorch 0.6.1): python dropped_if_check.py model_unseen_categories.py"""
import importlib.util
import sys

import torch
from torch._dynamo.testing import CompileCounter

torch.set_num_threads(1)
src = open(sys.argv[1]).read()
old = "        if unseen.any():\n            account = torch.where(unseen, -1, account)\n"
assert src.count(old) == 1
fixed_src = src.replace(old, "        account = torch.where(unseen, -1, account)\n")


def load(text, name):
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(text, f"{name}.py", "exec"), mod.__dict__)
    return mod


head, fixed = load(src, "head_model").build(), load(fixed_src, "fixed_model").build()
fixed.load_state_dict(head.state_dict())
g = torch.Generator().manual_seed(0)
worst, n, unseen_cases = 0.0, 0, 0
compiled = torch.compile(fixed, backend="eager")
for b in (1, 2, 3, 5, 8, 16):
    for high in (3, 15):                      # 15: codes past every column's cardinality
        acc = torch.randint(0, high, (b, 5), generator=g)
        use = torch.randn(b, 6, generator=g)
        unseen_cases += int(bool((acc >= head.cardinalities).any()))
        with torch.no_grad():
            eh, ef, cf = head(acc, use), fixed(acc, use), compiled(acc, use)
        worst = max(worst, (eh - ef).abs().max().item(), (eh - cf).abs().max().item())
        n += 1
        # gradients of every parameter, head and fix (a zero where head has none counts)
        head.zero_grad(set_to_none=True); fixed.zero_grad(set_to_none=True)
        head(acc, use).sum().backward(); fixed(acc, use).sum().backward()
        for (name, p), q in zip(head.named_parameters(), fixed.parameters()):
            if (p.grad is None) != (q.grad is None):
                print("gradient None on one side only:", name, b, high)
            elif p.grad is not None:
                worst = max(worst, (p.grad - q.grad).abs().max().item())
print(f"{n} cases ({unseen_cases} with unseen codes): max abs diff eager, compiled and gradients {worst}")
for label, model in (("head", head), ("fix", fixed)):
    cnt = CompileCounter()
    f = torch.compile(model, backend=cnt)
    torch._dynamo.reset()
    for b in (2, 8, 4, 16):
        acc = torch.randint(0, 3, (b, 5), generator=g)
        use = torch.randn(b, 6, generator=g)
        torch._dynamo.mark_dynamic(acc, 0)
        torch._dynamo.mark_dynamic(use, 0)
        with torch.no_grad():
            f(acc, use)
        print(label, "after batch", b, "frames compiled", cnt.frame_count)
