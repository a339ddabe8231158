"""Recompiles of the trial's churn model, base, head and the 'drop the branch' candidate (c0),
compiled with the eager backend, batch marked dynamic as pt2bot.yml asks, shape cases 2 then 8."""
import sys, torch, importlib.util, logging
torch.set_num_threads(1)
which = sys.argv[1]  # base, head or c0; sys.argv[2]: model_base.py or model_unseen_categories.py
src = open(sys.argv[2]).read()
if which == "c0":
    src = src.replace("        if unseen.any():\n            account = torch.where(unseen, -1, account)\n",
                      "        account = torch.where(unseen, -1, account)\n")
spec = importlib.util.spec_from_loader("m", loader=None); m = importlib.util.module_from_spec(spec)
exec(compile(src, f"model_{which}.py", "exec"), m.__dict__)
model = m.build()
from torch._dynamo.testing import CompileCounter
cnt = CompileCounter()
f = torch.compile(model, backend=cnt)
g = torch.Generator().manual_seed(0)
outs = []
for b in (2, 8):
    acc = torch.randint(0, 3, (b, 5), generator=g); use = torch.randn(b, 6, generator=g)
    torch._dynamo.mark_dynamic(acc, 0); torch._dynamo.mark_dynamic(use, 0)
    with torch.no_grad():
        y = f(acc, use); e = model(acc, use)
    outs.append(torch.equal(y, e))
    print(which, "batch", b, "frames compiled so far", cnt.frame_count, "equal to eager", torch.equal(y, e))
