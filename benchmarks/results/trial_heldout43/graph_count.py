"""Graphs and breaks per model file with torch._dynamo.explain (no pt2bot code), batch 2, seed 0
model in training mode, one thread."""
import importlib.util, sys, torch, torch._dynamo
torch.set_num_threads(1)
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("m", path); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    torch.manual_seed(0); m = mod.CloudDecoder().train()
    g = torch.Generator().manual_seed(0)
    z, t = torch.randn(2, 8, generator=g), torch.randn(2, 6, 3, generator=g)
    torch._dynamo.reset()
    e = torch._dynamo.explain(m)(z, t)
    print(f"{path.split('/')[-1]}: graphs {e.graph_count}, graph breaks {e.graph_break_count}, ops in graphs {e.op_count}; reasons: {[str(r.reason).splitlines()[0][:80] for r in e.break_reasons]}")
