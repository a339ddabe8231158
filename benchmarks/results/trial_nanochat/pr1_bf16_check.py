"""PR 1 (cbf30c8 reverted): is it a no-op on CPU fp32 (what pt2bot ran) and not in bf16 (what
nanochat trains in on CUDA)? NANOCHAT_DTYPE set by the caller. Base = master's gpt.py, head = the
PR's, loaded as separate modules; same weights; train_mha_L's config and inputs. No pt2bot code."""
import importlib.util, os, sys, torch
torch.set_num_threads(1)
sys.path.insert(0, os.environ["BASE_DIR"])
import pt2bot_models as pm
def load(tag, d):
    spec = importlib.util.spec_from_file_location(f"gpt_{tag}", os.path.join(d, "nanochat", "gpt.py"))
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
gb, gh = load("base", os.environ["BASE_DIR"]), load("head", os.environ["HEAD_DIR"])
kw = dict(sequence_len=64, vocab_size=256, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, window_pattern="L")
torch.manual_seed(0); mb = gb.GPT(gb.GPTConfig(**kw)); mb.init_weights()
mh = gh.GPT(gh.GPTConfig(**kw)); mh.load_state_dict(mb.state_dict()); mh.init_weights(); mh.load_state_dict(mb.state_dict())
with torch.no_grad():
    mb.lm_head.weight.normal_(0, 0.5); mh.lm_head.weight.copy_(mb.lm_head.weight)  # a trained-like logit scale
print("COMPUTE_DTYPE", gb.COMPUTE_DTYPE)
with torch.no_grad():
    for b, s in [(2, 16), (3, 64)]:
        idx = pm.logits_v64(b, s)["idx"]
        lb, lh = mb(idx), mh(idx)
        inp = pm.train_v256(b, s)
        print(f"b={b} s={s}: logits equal={torch.equal(lb, lh)} max abs diff={(lb - lh).abs().max().item():.3g}; "
              f"loss base={mb(**inp).item():.6f} head={mh(**inp).item():.6f}")
