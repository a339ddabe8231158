"""Ground truth for a suggested edit, no pt2bot code: run ESM2 (tiny, seed 0) from the current checkout, eager
and compiled (eager backend), on the shape cases and on weights that put NaN / inf / -inf / huge values into
the logits; save outputs and gradients (sum of finite logits... backward through logits.sum()) to OUT.pt.
usage: python gt_fix_outputs.py OUT.pt MODEL"""
import os, sys, copy
sys.path.insert(0, os.getcwd())
import torch
torch.set_num_threads(1)
import pt2bot_fixtures as f
out, name = sys.argv[1], sys.argv[2]
inputs = {"esm2": f.padded_tokens, "esm2_contacts": f.unpadded_tokens_contacts}[name]

def variants(m0):
    yield "clean", m0
    for tag, val in (("nan_bias", float("nan")), ("inf_bias", float("inf")), ("neginf_bias", float("-inf"))):
        m = copy.deepcopy(m0)
        with torch.no_grad(): m.lm_head.bias[5] = val
        yield tag, m
    m = copy.deepcopy(m0)
    with torch.no_grad(): m.embed_tokens.weight[4:].mul_(1e30)   # overflow through the layers
    yield "huge_embed", m
    m = copy.deepcopy(m0)
    with torch.no_grad(): m.lm_head.bias.zero_(); m.lm_head.dense.weight.zero_(); m.lm_head.dense.bias.zero_()
    yield "zero_head", m

res = {}
torch.manual_seed(0)
base = f.tiny_esm2().eval()
for tag, m in variants(base):
    for b in (2, 4):
        for s in (16, 32):
            kw = inputs(b, s)
            # eager with grad
            mm = copy.deepcopy(m)
            o = mm(**kw)
            lg = o["logits"]
            lg.sum().backward()
            g = {n: p.grad.clone() for n, p in mm.named_parameters() if p.grad is not None}
            res[(tag, b, s, "eager")] = {"logits": lg.detach(), "grads": g, **({"contacts": o["contacts"].detach()} if "contacts" in o else {})}
            # compiled, eager backend, no grad
            torch._dynamo.reset()
            mc = copy.deepcopy(m)
            with torch.no_grad():
                oc = torch.compile(mc, backend="eager")(**kw)
            res[(tag, b, s, "compiled")] = {"logits": oc["logits"]}
torch.save(res, out)
print("saved", len(res), "results to", out)
