"""Ground truth without pt2bot: compile a model of REPO (a checkout) with dynamo's eager
backend over the shape matrix, one thread; count graphs, breaks, recompiles.
usage: TORCH_LOGS=graph_breaks,recompiles python gt_compile.py REPO MODEL [--dynamic]"""
import sys, os, copy
repo, model = sys.argv[1], sys.argv[2]
sys.path.insert(0, repo)
import torch
torch.set_num_threads(1)
import torch._dynamo
if os.environ.get("CAPTURE"): torch._dynamo.config.capture_scalar_outputs = True; print("capture_scalar_outputs = True")
import pt2bot_models as P

build, make = {"lm": (P.build_lm, P.lm_inputs), "decoder": (P.build_decoder, P.decoder_inputs)}[model]
m = build()
graphs = []
def counter(gm, ex):
    graphs.append(len(gm.graph.nodes)); return gm.forward
torch._dynamo.reset()
cm = torch.compile(m, backend=counter)
cases = [(b, s) for b in (2, 3) for s in (4, 8)]
for b, s in cases:
    torch.manual_seed(0)
    ref = m(**make(b, s))
    inp = make(b, s)
    if "--dynamic" in sys.argv:
        for k in ("input_token_ids", "hidden_states"):
            if k in inp:
                torch._dynamo.mark_dynamic(inp[k], 0); torch._dynamo.mark_dynamic(inp[k], 1)
    torch.manual_seed(0)
    out = cm(**inp)
    ref = ref if isinstance(ref, tuple) else (ref,); out = out if isinstance(out, tuple) else (out,)
    eq = all(torch.equal(a, b2) for a, b2 in zip(ref, out))
    print(f"case batch={b} seq={s}: graphs so far {len(graphs)}, compiled==eager: {eq}", flush=True)
if model == "decoder":
    # gradients, compiled vs eager, fresh inputs each call
    for b, s in cases:
        gs = []
        for f in (m, cm):
            inp = make(b, s); inp["hidden_states"] = inp["hidden_states"].clone().requires_grad_(True)
            m.zero_grad(); f(**inp).sum().backward()
            gs.append([inp["hidden_states"].grad.clone()] + [p.grad.clone() for p in m.parameters() if p.grad is not None])
        print(f"grads batch={b} seq={s}: compiled == eager: {all(torch.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(*gs))} ({len(gs[0])} tensors)")
print("total graphs compiled (frames+recompiles):", len(graphs), "nodes:", graphs)
