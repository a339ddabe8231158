"""Ground truth for a fix candidate: run the models of REPO (a checkout) eagerly, one thread,
on the shape cases and on guard inputs; save outputs (and decoder gradients) to OUT.pt.
usage: python gt_outputs.py REPO OUT.pt   (compare with gt_compare.py)"""
import sys, copy
repo, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, repo)
import torch
torch.set_num_threads(1)
import pt2bot_models as P

def fill(inp, v):
    """every float and int tensor (nested too) set to v; bool masks kept; None kept"""
    def f(t):
        if isinstance(t, torch.Tensor):
            return t if t.dtype == torch.bool else torch.full_like(t, v)
        if isinstance(t, list): return [f(x) for x in t]
        if isinstance(t, tuple): return tuple(f(x) for x in t)
        if isinstance(t, dict): return {k: f(x) for k, x in t.items()}
        return t
    return {k: f(x) for k, x in inp.items()}

res = {}
cases = [(b, s) for b in (2, 3) for s in (4, 8)]
for name, build, make in (("lm", P.build_lm, P.lm_inputs), ("decoder", P.build_decoder, P.decoder_inputs)):
    variants = {f"case b={b} s={s}": (lambda b=b, s=s: make(b, s)) for b, s in cases}
    variants["all0"] = lambda: fill(make(2, 4), 0)
    variants["all1"] = lambda: fill(make(2, 4), 1)
    if name == "decoder":
        def inj(val, where="first"):
            def g():
                i = make(2, 4); h = i["hidden_states"].clone()
                if where == "first": h.view(-1)[0] = val
                else: h[:] = val
                i["hidden_states"] = h; return i
            return g
        variants["hidden NaN one"] = inj(float("nan"))
        variants["hidden inf one"] = inj(float("inf"))
        variants["hidden -inf one"] = inj(float("-inf"))
        variants["hidden 1e6 one"] = inj(1e6)
        variants["hidden NaN all"] = inj(float("nan"), "all")
    for vname, mk in variants.items():
        for wname in (["weights ok", "weights NaN one"] if name != "" else ["weights ok"]):
            m = build()
            if wname == "weights NaN one":
                with torch.no_grad():
                    for p in m.parameters():
                        if p.is_floating_point(): p.view(-1)[0] = float("nan")
            inp = mk()
            torch.manual_seed(0)
            grads = None
            try:
                if name == "decoder":
                    inp["hidden_states"] = inp["hidden_states"].clone().requires_grad_(True)
                    y = m(**inp)
                    y.nan_to_num(0, 0, 0).sum().backward()
                    grads = {"input": inp["hidden_states"].grad}
                    grads.update({n: p.grad for n, p in m.named_parameters() if p.grad is not None})
                    o = (y.detach(),)
                else:
                    o = m(**inp)
                r = {"out": [t.detach().clone() for t in o], "grads": grads, "err": None}
            except Exception as e:
                r = {"out": None, "grads": None, "err": f"{type(e).__name__}: {str(e)[:200]}"}
            res[f"{name} | {vname} | {wname}"] = r
torch.save(res, out)
print("saved", len(res), "runs to", out)
