"""PTC101's first advice on PR 3's line ("keep it a tensor (drop `.item()`)"), followed literally:
`if logit_scale > 100:`. Does the break go? No pt2bot code; eager backend, one thread."""
import torch
torch.set_num_threads(1)


def head(s):
    logit_scale = s.exp()
    if logit_scale.item() > 100:
        logit_scale = torch.clamp(logit_scale, max=100)
    return logit_scale * 2


def dropped_item(s):
    logit_scale = s.exp()
    if logit_scale > 100:
        logit_scale = torch.clamp(logit_scale, max=100)
    return logit_scale * 2


for f in (head, dropped_item):
    torch._dynamo.reset()
    expl = []
    def be(gm, ex):
        expl.append(len(gm.graph.nodes)); return gm.forward
    try:
        torch.compile(f, backend=be, fullgraph=True)(torch.tensor(2.0))
        print(f.__name__, ": fullgraph compile OK")
    except Exception as e:
        print(f.__name__, ": fullgraph compile fails:", type(e).__name__, str(e).splitlines()[0][:160])
