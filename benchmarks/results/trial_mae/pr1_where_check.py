"""PR 1 (guard-empty-mask): the two branchless rewrites a user reaches for, against head, with no
pt2bot code. PTC201's message says "use torch.where(cond, a, b)"; the plain one divides by zero in
the branch it does not select. From the MAE checkout:  python pr1_where_check.py
"""
import os, sys, subprocess, importlib.util, tempfile; sys.path.insert(0, os.getcwd())
import torch
torch.set_num_threads(1); torch._dynamo.config.recompile_limit = 1000
src = subprocess.check_output(["git", "show", "guard-empty-mask:models_mae.py"], text=True)
old = """        if num_masked == 0:  # mask_ratio=0 (reconstruction eval): no removed patch, mean over all
            return loss.mean()
        loss = (loss * mask).sum() / num_masked  # mean loss on removed patches
"""
assert old in src
variants = {
    "head": src,
    "where_plain": src.replace(old, "        loss = torch.where(num_masked == 0, loss.mean(), (loss * mask).sum() / num_masked)\n"),
    "where_clamp": src.replace(old, "        loss = torch.where(num_masked == 0, loss.mean(), (loss * mask).sum() / num_masked.clamp(min=1))\n"),
}
tmp = tempfile.mkdtemp(); mods = {}
for k, s in variants.items():
    p = os.path.join(tmp, f"mae_{k}.py"); open(p, "w").write(s)
    spec = importlib.util.spec_from_file_location(f"mae_{k}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); mods[k] = m
cfg = dict(img_size=32, patch_size=8, embed_dim=32, depth=1, num_heads=2, decoder_embed_dim=32, decoder_depth=1, decoder_num_heads=2, norm_pix_loss=True)
def run(k, compiled, r, x):
    torch.manual_seed(0); m = mods[k].MaskedAutoencoderViT(**cfg).train()
    f = torch.compile(m, backend="eager") if compiled else m
    torch.manual_seed(3); loss, pred, mask = f(x, mask_ratio=r); loss.backward()
    g = torch.cat([p.grad.flatten() for p in m.parameters() if p.grad is not None])
    return loss.detach(), g
for compiled in (False, True):
    for r in (0.0, 0.5, 0.75, 0.95):
        x = torch.randn(2, 3, 32, 32)
        hl, hg = run("head", compiled, r, x)
        for k in ("where_plain", "where_clamp"):
            l, g = run(k, compiled, r, x)
            print(f"{'compiled' if compiled else 'eager   '} ratio {r}: {k}: loss equal {torch.equal(l, hl)}, grads equal {torch.equal(g, hg)}, NaN grads {int(g.isnan().sum())} of {g.numel()} (head {int(hg.isnan().sum())})")
