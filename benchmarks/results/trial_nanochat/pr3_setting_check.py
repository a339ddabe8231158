"""PR 3: would torch's hint, capture_scalar_outputs=True, have held? (pt2bot: "tried, not
verified: the review's fix budget ran out".) No pt2bot code: train_mha_L's cases, eager backend,
mark_dynamic on batch and seq as pt2bot.yml declares, graph breaks counted by TORCH_LOGS; the
loss and the stored self.last_loss compared with eager, bit for bit."""
import sys, itertools, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
import pt2bot_models as pm
torch._dynamo.config.capture_scalar_outputs = True
kw = dict(sequence_len=64, vocab_size=256, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, window_pattern="L")
torch.manual_seed(0)
m = pm.tiny_gpt(**kw)
c = torch.compile(m, backend="eager")
n = same = 0
for b, s in itertools.product([2, 3], [16, 33, 64]):
    inp = pm.train_v256(b, s)
    for t in inp.values():
        torch._dynamo.mark_dynamic(t, 0); torch._dynamo.mark_dynamic(t, 1)
    y = c(**inp); ly = m.last_loss
    e = m(**inp); le = m.last_loss
    n += 1; same += int(torch.equal(y, e) and ly == le and type(ly) is type(le))
    print(f"b={b} s={s}: loss equal={torch.equal(y, e)} last_loss compiled={ly!r} ({type(ly).__name__}) eager={le!r}")
print(f"{same}/{n} the same")
