"""PR 3's inline text says: "under `fullgraph=True` torch captures it [.item()] as an unbacked
symbol instead". Check on torch 2.13 (no pt2bot code): a module storing loss.item() on self,
compiled with fullgraph=True, capture_scalar_outputs left at its default."""
import torch
torch.set_num_threads(1)
print(torch.__version__, "capture_scalar_outputs =", torch._dynamo.config.capture_scalar_outputs)
class M(torch.nn.Module):
    def forward(self, x):
        loss = (x * 2).mean()
        self.last = loss.item()
        return loss
for fg in (False, True):
    torch._dynamo.reset()
    m = M()
    try:
        out = torch.compile(m, backend="eager", fullgraph=fg)(torch.randn(4))
        print(f"fullgraph={fg}: OK, last={m.last!r} ({type(m.last).__name__})")
    except Exception as ex:
        print(f"fullgraph={fg}: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}")
