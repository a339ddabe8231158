"""Ground truth: does ESM-2's rotary cache (_seq_len_cached) make compiled ESM-2 recompile per sequence
length in a long-lived process? Compiled calls only (no eager calls on the same module), batch 2,
tokens marked dynamic on both dims as pt2bot marks them; lengths 16,32,24,40,48,56,64,16,32,72,80 (past the recompile limit)."""
import os, sys
sys.path.insert(0, os.getcwd())
import torch, torch._dynamo.testing
torch.set_num_threads(1)
torch._logging.set_logs(recompiles=True, graph_breaks=True)
import pt2bot_fixtures as f
torch.manual_seed(0)
m = f.tiny_esm2().eval()
cnt = torch._dynamo.testing.CompileCounter()
cm = torch.compile(m, backend=cnt)
with torch.no_grad():
    for s in (16, 32, 24, 40, 48, 56, 64, 16, 32, 72, 80):
        kw = f.padded_tokens(2, s)
        torch._dynamo.mark_dynamic(kw["tokens"], 0); torch._dynamo.mark_dynamic(kw["tokens"], 1)
        cm(**kw)
        print(f"seq={s}: graphs compiled so far {cnt.frame_count}", flush=True)
