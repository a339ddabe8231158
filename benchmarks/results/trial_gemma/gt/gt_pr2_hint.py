"""Does dynamo's/pt2bot's hint (use | instead of `or`) remove the PR2 break? (no pt2bot code)"""
import torch; torch.set_num_threads(1)
import torch._dynamo
def head(logits, temperatures):
    if temperatures is None or (temperatures == 0).all():
        return logits.argmax(-1)
    return (logits / temperatures[:, None]).softmax(-1).argmax(-1)
def hinted(logits, temperatures):
    if (temperatures is None) | (temperatures == 0).all():
        return logits.argmax(-1)
    return (logits / temperatures[:, None]).softmax(-1).argmax(-1)
for f in (head, hinted):
    torch._dynamo.reset()
    n = []
    def be(gm, ex): n.append(1); return gm.forward
    torch.compile(f, backend=be)(torch.randn(2, 8), torch.full((2,), 0.8))
    print(f.__name__, "graphs:", len(n))
