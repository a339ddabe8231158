"""Check pt2bot's run against dynamo directly (no pt2bot code): eager backend, one thread,
TORCH_LOGS=graph_breaks,recompiles (set by the caller). Usage: dynamo_check.py MODEL MARK
(MARK 1: mark_dynamic on batch and seq, the dims pt2bot.yml declares dynamic; 0: plain
torch.compile as nanochat's scripts do, but without dynamic=False). The same cases in the
same order as pt2bot.yml. Then torch.export with the declared dims (Dim) and with Dim.AUTO,
and TORCH_LOGS=+dynamic-style location of the guard that bounds seq (via
TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED, set by the caller when wanted)."""
import sys, itertools, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
import pt2bot_models as pm
from torch.export import Dim

CFG = {
  "train_mha_L": (dict(sequence_len=64, vocab_size=256, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, window_pattern="L"), pm.train_v256, [2, 3], [16, 33, 64]),
  "train_gqa_SL": (dict(sequence_len=128, vocab_size=100, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, window_pattern="SL"), pm.train_v100, [2, 4], [32, 128]),
  "train_gqa_SL512": (dict(sequence_len=512, vocab_size=100, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, window_pattern="SL"), pm.train_v100, [2, 3], [64, 160]),
  "logits_gqa_1layer": (dict(sequence_len=32, vocab_size=64, n_layer=1, n_head=2, n_kv_head=1, n_embd=32, window_pattern="L"), pm.logits_v64, [1, 3], [8, 17, 32]),
}
name, mark = sys.argv[1], sys.argv[2] == "1"
kw, inputs, B, S = CFG[name]
torch.manual_seed(0)
m = pm.tiny_gpt(**kw)
c = torch.compile(m, backend="eager")
def eq(a, b):
    return torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
for b, s in itertools.product(B, S):
    inp = inputs(b, s)
    if mark:
        for t in inp.values():
            torch._dynamo.mark_dynamic(t, 0); torch._dynamo.mark_dynamic(t, 1)
    try:
        y = c(**inp); e = m(**inp)
        print(f"case b={b} s={s}: equal={eq(y, e)}", flush=True)
    except Exception as ex:
        print(f"case b={b} s={s}: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}", flush=True)
inp = inputs(B[0], S[0])
for spec in ("declared", "AUTO"):
    ds = {k: ({0: Dim("batch"), 1: Dim("seq")} if spec == "declared" else {0: Dim.AUTO, 1: Dim.AUTO}) for k in inp}
    try:
        ep = torch.export.export(m, (), inp, dynamic_shapes=ds)
        print(f"export {spec}: OK; range_constraints:", ep.range_constraints, flush=True)
        for b, s in itertools.product(B, S):
            ii = inputs(b, s)
            try:
                print(f"  ep b={b} s={s}: equal={eq(ep.module()(**ii), m(**ii))}")
            except Exception as ex:
                print(f"  ep b={b} s={s}: {type(ex).__name__}: {str(ex).splitlines()[0][:200]}")
    except Exception as ex:
        print(f"export {spec}: {type(ex).__name__}: {str(ex)[:1200]}", flush=True)
