"""PR 2: what a user would have wanted instead of the (unverified) torch.cond sketch: no branch.
cross_entropy's 'mean' over ignore_index is sum / count; all targets -1 gives 0/0 = NaN.
`sum / count.clamp(min=1)` gives 0 there and is one graph. Compared with head's early return
(eager) on the trial's train_mha_L inputs, all -1 and none -1. No pt2bot code."""
import sys, itertools, torch, torch.nn.functional as F
torch.set_num_threads(1)
sys.path.insert(0, ".")
import pt2bot_models as pm
def head_loss(logits, targets):
    if (targets == -1).all():
        return logits.sum() * 0.0
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
def branchless(logits, targets):
    t = targets.view(-1)
    s = F.cross_entropy(logits.view(-1, logits.size(-1)), t, ignore_index=-1, reduction="sum")
    return s / (t != -1).sum().clamp(min=1)
m = pm.tiny_gpt(sequence_len=64, vocab_size=256, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, window_pattern="L")
cb = torch.compile(branchless, backend="eager", fullgraph=True)
n = eq = 0; maxdiff = 0.0
for b, s in itertools.product([2, 3], [16, 33, 64]):
    for mode in ("as made", "all -1", "none -1"):
        inp = pm.train_v256(b, s); idx, tg = inp["idx"], inp["targets"].clone()
        if mode == "all -1": tg[:] = -1
        if mode == "none -1": tg = torch.where(tg < 0, torch.zeros_like(tg), tg)
        logits = m(idx).detach().requires_grad_(True)
        a = head_loss(logits, tg); ga, = torch.autograd.grad(a, logits)
        c = cb(logits, tg); gc, = torch.autograd.grad(c, logits)
        n += 1; same = torch.equal(a, c) and torch.equal(ga, gc); eq += same
        maxdiff = max(maxdiff, (a - c).abs().item(), (ga - gc).abs().max().item())
        print(f"b={b} s={s} {mode}: head={a.item():.8f} branchless={c.item():.8f} loss+grad bit-equal={same}")
print(f"{eq}/{n} bit-equal; max abs difference {maxdiff:.3g}")
