"""Recompile reasons per model file (no pt2bot code): seed 0 model in training mode, one thread,
torch.compile(backend='eager'), batch 2 then 4 with the batch dim marked weakly
(maybe_mark_dynamic, as pt2bot's review says it measured), TORCH_LOGS=recompiles on stderr."""
import importlib.util, sys, torch
torch.set_num_threads(1)
spec = importlib.util.spec_from_file_location("m", sys.argv[1]); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
torch.manual_seed(0); m = mod.CloudDecoder().train()
cm = torch.compile(m, backend="eager")
g = torch.Generator().manual_seed(0)
for b in (2, 4):
    z, t = torch.randn(b, 8, generator=g), torch.randn(b, 6, 3, generator=g)
    torch._dynamo.maybe_mark_dynamic(z, 0); torch._dynamo.maybe_mark_dynamic(t, 0)
    print(f"--- batch {b}", file=sys.stderr, flush=True)
    cm(z, t)
