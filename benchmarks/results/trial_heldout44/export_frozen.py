"""PR 1's exported program (torch.export.export, as pt2bot's export check and as truth_check's
claims export it, the model in training mode) against eager: does the exported program still draw
a new CutMix box and ratio on each call? No pt2bot code; one thread, seed 0 weights."""
import importlib.util, random, sys
import numpy, torch
torch.set_num_threads(1)
spec = importlib.util.spec_from_file_location("m", sys.argv[1]); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
torch.manual_seed(0)
m = mod.SoftLabelClassifier().train()
g = torch.Generator().manual_seed(0)
x = torch.rand(4, 3, 32, 32, generator=g); t = torch.nn.functional.one_hot(torch.arange(4) % 4, 4).float()
for s in (0,):
    torch.manual_seed(s); random.seed(s); numpy.random.seed(s)
ep = torch.export.export(m, (x, t), dynamic_shapes=({0: torch.export.Dim("batch")}, {0: torch.export.Dim("batch")}))
em = ep.module()
print("exported graph's ops:", sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"}))
for s in (0, 1, 2, 3):
    torch.manual_seed(s); random.seed(s); numpy.random.seed(s)
    le, _ = m(x, t)
    torch.manual_seed(s); random.seed(s); numpy.random.seed(s)
    lx, _ = em(x, t)
    print(f"seed {s}: eager loss {le.item():.6f}  exported loss {lx.item():.6f}")
