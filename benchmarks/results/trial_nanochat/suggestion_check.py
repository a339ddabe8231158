"""PR 4's verified suggestion (review_pr4.json, nanochat/gpt.py:516-517) against head, with no
pt2bot code. Head: the PR's gpt.py (HEAD_DIR); suggestion: a copy with the ```suggestion block
applied verbatim (SUGG_DIR, pr4_suggestion_applied.diff). Both gpt.py files are loaded as
separate modules beside the same nanochat.common / flash_attention.

Inputs: tiny GPTs as pt2bot.yml configures them (MHA "L", GQA "SL" at sequence_len 512, GQA
1 layer); batch 1..3, seq 2..160 (up to sequence_len; 2 is the shortest the training forward
accepts); token ids random, all 0, all vocab-1, mixed with 0 and vocab-1; targets none -1,
a third -1, all -1 (and no targets: the logits forward). The model has no float input: floats
go in through the weights, so lm_head's (and once wte's) weight is set to: as initialised,
zeros, NaN at one entry, +inf at one entry, -inf at one entry, all 1e30, all 1e-40, negated.
Modes: eager no_grad, eager with grad (loss or logits.sum() backward, every parameter's
.grad compared, None distinct from zeros), torch.compile(backend="eager") no_grad and with grad,
and (argv[1] == "inductor") torch.compile() with inductor on a subset, as nanochat trains.
Compared exactly: outputs (torch.equal, NaN positions equal), exception type and message."""
import importlib.util, itertools, os, sys, torch
torch.set_num_threads(1)
HEAD_DIR, SUGG_DIR = os.environ["HEAD_DIR"], os.environ["SUGG_DIR"]
sys.path.insert(0, HEAD_DIR)
import nanochat.common  # noqa: F401  (same file on both sides)

def load(tag, d):
    spec = importlib.util.spec_from_file_location(f"gpt_{tag}", os.path.join(d, "nanochat", "gpt.py"))
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
gh, gs = load("head", HEAD_DIR), load("sugg", SUGG_DIR)

CFGS = {
  "train_mha_L": dict(sequence_len=64, vocab_size=256, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, window_pattern="L"),
  "train_gqa_SL512": dict(sequence_len=512, vocab_size=100, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, window_pattern="SL"),
  "logits_gqa_1layer": dict(sequence_len=32, vocab_size=64, n_layer=1, n_head=2, n_kv_head=1, n_embd=32, window_pattern="L"),
}
SHAPES = {"train_mha_L": [(1, 2), (2, 16), (3, 33), (2, 64)],
          "train_gqa_SL512": [(2, 3), (2, 64), (3, 160)],
          "logits_gqa_1layer": [(1, 2), (1, 17), (3, 8), (3, 32)]}
WEIGHTS = ["init", "zeros", "nan1", "posinf1", "neginf1", "huge", "tiny", "negated", "wte_nan1"]

def build(mod, kw):
    torch.manual_seed(0)
    m = mod.GPT(mod.GPTConfig(**kw)); m.init_weights(); return m

def set_weights(m, how, ref):
    m.load_state_dict(ref)
    with torch.no_grad():
        w = m.lm_head.weight
        if how == "zeros": w.zero_()
        elif how == "nan1": w[3, 5] = float("nan")
        elif how == "posinf1": w[3, 5] = float("inf")
        elif how == "neginf1": w[3, 5] = float("-inf")
        elif how == "huge": w.fill_(1e30)
        elif how == "tiny": w.fill_(1e-40)
        elif how == "negated": w.neg_()
        elif how == "wte_nan1": m.transformer.wte.weight[1, 0] = float("nan")

def make_inputs(b, s, vocab, ids, tg):
    g = torch.Generator().manual_seed(b * 1000 + s)
    idx = torch.randint(0, vocab, (b, s), generator=g)
    if ids == "zeros": idx.zero_()
    elif ids == "top": idx.fill_(vocab - 1)
    elif ids == "mixed": idx[:, ::2] = 0; idx[:, 1::2] = vocab - 1
    out = {"idx": idx}
    if tg is not None:
        t = torch.randint(0, vocab, (b, s), generator=g)
        if tg == "third": t[:, : max(1, s // 3)] = -1
        elif tg == "all": t.fill_(-1)
        out["targets"] = t
    return out

def run(fn, model, inp, grad):
    model.zero_grad(set_to_none=True)
    try:
        if grad:
            y = fn(**inp); (y if y.dim() == 0 else y.float().sum()).backward()
            grads = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
            return ("ok", y.detach().clone(), grads)
        with torch.no_grad():
            return ("ok", fn(**inp).clone(), None)
    except Exception as ex:
        return ("raise", type(ex).__name__, str(ex).splitlines()[0][:160])

def same_t(a, b):
    if a is None or b is None: return a is None and b is None
    return a.shape == b.shape and torch.equal(torch.nan_to_num(a, 0.0, 1.0, -1.0), torch.nan_to_num(b, 0.0, 1.0, -1.0)) \
        and torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(torch.isinf(a), torch.isinf(b))

def same(r1, r2):
    if r1[0] != r2[0]: return False
    if r1[0] == "raise": return r1[1:] == r2[1:]
    if not same_t(r1[1], r2[1]): return False
    if r1[2] is None: return True
    return len(r1[2]) == len(r2[2]) and all(same_t(a, b) for a, b in zip(r1[2], r2[2]))

def desc(r):
    return f"raises {r[1]}: {r[2]}" if r[0] == "raise" else f"ok {tuple(r[1].shape)}"

inductor = len(sys.argv) > 1 and sys.argv[1] == "inductor"
total = diff = 0
diffs = {}
for name, kw in CFGS.items():
    mh, ms = build(gh, kw), build(gs, kw)
    ref = {k: v.clone() for k, v in mh.state_dict().items()}
    ms.load_state_dict(ref)
    modes = ["eager", "eager_grad", "compiled", "compiled_grad"] if not inductor else ["inductor", "inductor_grad"]
    for mode in modes:
        torch._dynamo.reset()
        be = "inductor" if mode.startswith("inductor") else "eager"
        fh = mh if mode.startswith("eager") else torch.compile(mh, backend=be)
        fs = ms if mode.startswith("eager") else torch.compile(ms, backend=be)
        grad = mode.endswith("_grad")
        shapes = SHAPES[name] if not inductor else SHAPES[name][:2]
        weights = WEIGHTS if not inductor else ["init", "nan1", "posinf1"]
        tgs = ([None] if name.startswith("logits") else ["none", "third", "all"]) if not inductor else \
              ([None] if name.startswith("logits") else ["third"])
        for (b, s), w, ids, tg in itertools.product(shapes, weights, ["random", "zeros", "top", "mixed"], tgs):
            set_weights(mh, w, ref); set_weights(ms, w, ref)
            inp = make_inputs(b, s, kw["vocab_size"], ids, tg)
            r1, r2 = run(fh, mh, inp, grad), run(fs, ms, inp, grad)
            total += 1
            if not same(r1, r2):
                diff += 1
                key = (mode, desc(r1)[:90], desc(r2)[:90])
                diffs.setdefault(key, []).append(f"{name} b={b} s={s} w={w} ids={ids} tg={tg}")
        print(f"{name} {mode}: {total} comparisons so far, {diff} differ", flush=True)
print(f"\n{total} comparisons, {diff} differ")
for (mode, d1, d2), cases in diffs.items():
    print(f"- {mode}: head {d1} | suggestion {d2}: {len(cases)} cases, e.g. {cases[0]}")
