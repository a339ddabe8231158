"""PTC101 says: under fullgraph=True torch captures .item() as an unbacked symbol. True on this torch? (no pt2bot code)"""
import torch; torch.set_num_threads(1)
def f(x):
    n = int(x.max().item()) + 1
    return x[:n] * 2
def g(x):
    return x * x.sum().item()
for fn in (g, f):
    torch._dynamo.reset()
    try:
        out = torch.compile(fn, backend="eager", fullgraph=True)(torch.arange(6.0))
        print(fn.__name__, "fullgraph=True compiled OK:", out.tolist())
    except Exception as e:
        print(fn.__name__, "fullgraph=True raised", type(e).__name__, str(e).splitlines()[0][:200])
print("capture_scalar_outputs default:", torch._dynamo.config.capture_scalar_outputs)
