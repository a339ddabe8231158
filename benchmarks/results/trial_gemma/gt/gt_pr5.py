"""PR5's verified suggestion vs head, no pt2bot code. usage: python gt_pr5.py REPO
eager and compiled (eager backend) on the shape cases, and with NaN / inf / 1e38 put into weights."""
import sys; sys.path.insert(0, sys.argv[1])
import torch; torch.set_num_threads(1)
import torch._dynamo
import pt2bot_models as P
cases = [(b, s) for b in (2, 3) for s in (4, 8)]
def run(f, inp):
    torch.manual_seed(0)
    try:
        t, l = f(**inp); return ("ok", t.tolist(), float(l.double().sum()))
    except Exception as e:
        return ("raises", type(e).__name__, str(e).splitlines()[0][:80])
n = []
def be(gm, ex): n.append(1); return gm.forward
m = P.build_lm()
cm = torch.compile(m, backend=be)
for b, s in cases:
    print(f"case b={b} s={s}: eager {run(m, P.lm_inputs(b, s))} | compiled {run(cm, P.lm_inputs(b, s))} | graphs so far {len(n)}")
for name, val, where in (("NaN", float("nan"), "one"), ("inf", float("inf"), "one"), ("1e38", 1e38, "one"), ("NaN", float("nan"), "row")):
    m2 = P.build_lm()
    with torch.no_grad():
        w = m2.model.norm.weight
        if where == "one": w.view(-1)[0] = val
        else: m2.embedder.weight[:] = val
    torch._dynamo.reset()
    cm2 = torch.compile(m2, backend="eager")
    print(f"{name} in {'final norm weight[0]' if where == 'one' else 'all embedder weights'}: eager {run(m2, P.lm_inputs(2, 4))} | compiled {run(cm2, P.lm_inputs(2, 4))}")
