"""PR3 ground truth: eager outputs of the current checkout on unpadded and padded batches, saved for comparison
(base vs PR3 head: the PR passes an all-False mask where base passed None)."""
import os, sys
sys.path.insert(0, os.getcwd())
import torch
torch.set_num_threads(1)
import pt2bot_fixtures as f
res = {}
for name, build in (("esm2", f.tiny_esm2), ("esm1b", f.tiny_esm1b)):
    torch.manual_seed(0)
    m = build().eval()
    for fn in (f.padded_tokens, f.unpadded_tokens_contacts):
        for b in (2, 4):
            for s in (16, 32):
                kw = fn(b, s)
                kw["return_contacts"] = True
                with torch.no_grad():
                    o = m(**kw, repr_layers=[0, 1, 2])
                res[(name, fn.__name__, b, s)] = {"logits": o["logits"], "contacts": o["contacts"], "attentions": o["attentions"], **{f"repr{k}": v for k, v in o["representations"].items()}}
torch.save(res, sys.argv[1])
