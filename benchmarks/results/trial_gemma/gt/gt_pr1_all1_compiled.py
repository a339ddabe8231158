"""PR 1 on gemma2_lm's inputs all 1: head eager, head compiled, candidate c0 eager and compiled
(eager backend), fresh inputs for every call, and once with one input dict reused (no pt2bot code).
usage: python gt_pr1_all1_compiled.py HEAD_REPO C0_REPO"""
import sys, importlib
import torch; torch.set_num_threads(1)
import torch._dynamo

def fill(inp, v, keep=()):
    """keep: names left as the factory made them (e.g. the float masks, the nested caches)"""
    def f(t):
        if isinstance(t, torch.Tensor):
            return t if t.dtype == torch.bool else torch.full_like(t, v)
        if isinstance(t, list): return [f(x) for x in t]
        if isinstance(t, tuple): return tuple(f(x) for x in t)
        if isinstance(t, dict): return {k: f(x) for k, x in t.items()}
        return t
    return {k: (x if k in keep else f(x)) for k, x in inp.items()}

def load(repo):
    for k in [k for k in sys.modules if k == "gemma" or k.startswith("gemma.") or k == "pt2bot_models"]:
        del sys.modules[k]
    sys.path.insert(0, repo)
    P = importlib.import_module("pt2bot_models")
    sys.path.pop(0)
    return P

res = {}
for tag, repo in (("head", sys.argv[1]), ("c0", sys.argv[2])):
    P = load(repo)
    m = P.build_lm()
    torch._dynamo.reset()
    cm = torch.compile(m, backend="eager")
    for mode, f in (("eager", m), ("compiled", cm)):
        torch.manual_seed(0)
        res[(tag, mode)] = m(**fill(P.lm_inputs(2, 4), 1)) if mode == "eager" else cm(**fill(P.lm_inputs(2, 4), 1))
    shared = fill(P.lm_inputs(2, 4), 1)
    torch.manual_seed(0); a = m(**shared)
    torch.manual_seed(0); b = m(**shared)
    res[(tag, "eager, 2nd call on a reused input dict")] = b
    for keep in (("mask", "local_mask"), ("kv_caches",), ("mask", "local_mask", "kv_caches")):
        for mode, f in (("eager", m), ("compiled", cm)):
            torch.manual_seed(0)
            res[(tag, f"{mode}, all 1 but {'+'.join(keep)} kept")] = f(**fill(P.lm_inputs(2, 4), 1, keep))
for k, v in res.items():
    ref = res[("head", k[1])] if "kept" in k[1] else res[("head", "eager")]
    d = max(float((x.float() - y.float()).abs().max()) for x, y in zip(ref, v))
    print(f"{k[0]:5s} {k[1]:52s} tokens {v[0].tolist()}  max abs diff vs head {'(same variant)' if 'kept' in k[1] else 'eager'} {d:.4g}")
