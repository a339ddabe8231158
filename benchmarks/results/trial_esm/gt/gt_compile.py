"""Ground truth without pt2bot: dynamo (eager backend, 1 thread) over the shape matrix.
usage: python gt_compile.py MODEL [plain|mark_dynamic]  (run from an esm checkout)"""
import os, sys, logging
sys.path.insert(0, os.getcwd())
import torch
import torch._dynamo.testing
torch.set_num_threads(1)
torch._logging.set_logs(graph_breaks=True, recompiles=True)
import pt2bot_fixtures as f

name, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "plain")
build = {"esm2": f.tiny_esm2, "esm2_contacts": f.tiny_esm2, "esm1b": f.tiny_esm1b}[name]
inputs = {"esm2": f.padded_tokens, "esm2_contacts": f.unpadded_tokens_contacts, "esm1b": f.padded_tokens}[name]
torch.manual_seed(0)
m = build().eval()
import copy
m_ref = copy.deepcopy(m)  # eager reference on its own copy: eager calls must not touch the compiled module's caches
torch._dynamo.reset()
cnt = torch._dynamo.testing.CompileCounter()
cm = torch.compile(m, backend=cnt, dynamic=(True if mode == "dynamic_true" else None))
with torch.no_grad():
    for b in (2, 4):
        for s in (16, 32):
            kw = inputs(b, s)
            if mode == "mark_dynamic_reset":  # put the rotary caches back as built before each case
                from esm.rotary_embedding import RotaryEmbedding
                for mod in m.modules():
                    if isinstance(mod, RotaryEmbedding):
                        mod._seq_len_cached = mod._cos_cached = mod._sin_cached = None
            if mode == "maybe_mark_dynamic":  # pt2bot's "marked weakly" for a model whose mark_dynamic raises
                torch._dynamo.maybe_mark_dynamic(kw["tokens"], 0); torch._dynamo.maybe_mark_dynamic(kw["tokens"], 1)
            if mode.startswith("mark_dynamic"):
                torch._dynamo.mark_dynamic(kw["tokens"], 0); torch._dynamo.mark_dynamic(kw["tokens"], 1)
            try:
                out = cm(**kw)
                ref = m_ref(**kw)
                ok = all(torch.allclose(out[k], ref[k], atol=1e-5, equal_nan=True) for k in ("logits",) + (("contacts",) if "contacts" in ref else ()))
                print(f"case batch={b} seq={s}: ok, equal to eager={ok}", flush=True)
            except Exception as e:
                print(f"case batch={b} seq={s}: {type(e).__name__}: {str(e)[:300]}", flush=True)
print(f"{name} {mode}: frame_count(graphs compiled)={cnt.frame_count} op_count={cnt.op_count}")
