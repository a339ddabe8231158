"""PR 4's evidence: "equal with values a check may refuse (-1, 0, 1e3, 1e6; head raised on -1,
1e3, 1e6) injected". The check is on the logits; the model's only tensor inputs are token ids
(and targets). What does head raise on ids -1, 1e3, 1e6? No pt2bot code; head = the PR's tree."""
import sys, torch
sys.path.insert(0, ".")
import pt2bot_models as pm
m = pm.tiny_gpt(sequence_len=32, vocab_size=64, n_layer=1, n_head=2, n_kv_head=1, n_embd=32, window_pattern="L")
for v in (-1, 0, 1000, 1000000):
    idx = pm.logits_v64(1, 8)["idx"]; idx[0, 3] = v
    try:
        m(idx); print(f"idx with {v}: ok")
    except Exception as ex:
        print(f"idx with {v}: {type(ex).__name__}: {str(ex).splitlines()[0][:150]}")
m2 = pm.tiny_gpt(sequence_len=64, vocab_size=256, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, window_pattern="L")
for v in (-1, 0, 1000, 1000000):
    inp = pm.train_v256(2, 16); inp["targets"][0, 5] = v
    try:
        print(f"targets with {v}: ok, loss {m2(**inp).item():.4f}")
    except Exception as ex:
        print(f"targets with {v}: {type(ex).__name__}: {str(ex).splitlines()[0][:150]}")
