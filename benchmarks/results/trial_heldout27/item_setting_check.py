"""PR 2 (`self.unseen_rate = (...).float().mean().item()`) under the setting pt2bot verified,
torch._dynamo.config.capture_scalar_outputs = True: is the attribute the dashboard reads after a
compiled call what eager gives, and how many graphs/breaks are there?"""
import sys, torch, importlib.util
torch.set_num_threads(1)
torch._dynamo.config.capture_scalar_outputs = True
src = open(sys.argv[1]).read()
spec = importlib.util.spec_from_loader("m", loader=None); m = importlib.util.module_from_spec(spec)
exec(compile(src, "model_unseen_rate.py", "exec"), m.__dict__)
model = m.build()
from torch._dynamo.testing import CompileCounter
cnt = CompileCounter()
f = torch.compile(model, backend=cnt)
g = torch.Generator().manual_seed(0)
for b, high in ((2, 3), (8, 3), (5, 3)):
    acc = torch.randint(0, high, (b, 5), generator=g); use = torch.randn(b, 6, generator=g)
    with torch.no_grad():
        e = model(acc, use); re_ = model.unseen_rate
        y = f(acc, use); rc = model.unseen_rate
    print(f"batch {b} codes<{high}: eager unseen_rate {re_!r} compiled {rc!r} ({type(rc).__name__}); outputs equal {torch.equal(y, e)}; frames {cnt.frame_count}")
