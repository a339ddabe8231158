"""The 11 inductor-with-grad cases where head and the suggestion both return a loss but differ
(suggestion_check_pr4_inductor.log): how far apart, and how far is each from eager? One case,
train_gqa_SL512 b=2 s=3 (the first listed), and b=3 s=64... no pt2bot code."""
import os, sys, torch
sys.argv = [sys.argv[0], "inductor"]
exec(open(os.path.join(os.path.dirname(__file__), "suggestion_check.py")).read().split("inductor = len(sys.argv)")[0])
kw = CFGS["train_gqa_SL512"]
mh, ms = build(gh, kw), build(gs, kw)
ref = {k: v.clone() for k, v in mh.state_dict().items()}; ms.load_state_dict(ref)
me = build(gh, kw); me.load_state_dict(ref)
torch._dynamo.reset()
ch, cs = torch.compile(mh), torch.compile(ms)
for b, s in [(2, 3), (2, 64)]:
    inp = make_inputs(b, s, kw["vocab_size"], "random", "third")
    res = {}
    for tag, fn, m in (("eager", me, me), ("head_inductor", ch, mh), ("sugg_inductor", cs, ms)):
        r = run(fn, m, inp, True); res[tag] = r
    def md(a, b):
        l = (a[1] - b[1]).abs().item()
        g = max(((x - y).abs().max().item() for x, y in zip(a[2], b[2]) if x is not None), default=0.0)
        return f"loss {l:.3g}, grads max {g:.3g}"
    print(f"b={b} s={s}: head vs sugg: {md(res['head_inductor'], res['sugg_inductor'])}; "
          f"head vs eager: {md(res['head_inductor'], res['eager'])}; sugg vs eager: {md(res['sugg_inductor'], res['eager'])}", flush=True)
