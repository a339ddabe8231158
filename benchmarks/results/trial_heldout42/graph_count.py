"""Graphs and breaks per model file with torch._dynamo.explain (no pt2bot code), batch 4 then 8,
seed 0 model, one thread; also the eager-run frame count from the counters."""
import importlib.util, sys, torch, torch._dynamo
from torch._dynamo.utils import counters
torch.set_num_threads(1)
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("m", path); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    torch.manual_seed(0); m = mod.LongTailClassifier()
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(4, 16, generator=g), torch.randint(0, 8, (4,), generator=g)
    torch._dynamo.reset(); counters.clear()
    with torch.no_grad():
        e = torch._dynamo.explain(m)(x, y)
    print(f"{path.split('/')[-1]}: graphs {e.graph_count}, graph breaks {e.graph_break_count}, ops in graphs {e.op_count}; reasons: {[str(r.reason).splitlines()[0][:80] for r in e.break_reasons]}")
