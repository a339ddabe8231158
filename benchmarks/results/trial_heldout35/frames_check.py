"""PR 2's head (model_bonds.py), no pt2bot code: which frames dynamo compiles, and which run
eagerly, when the .item() at egnn_pytorch.py:249 breaks inside MolPropNet.forward's
`for layer in self.layers` loop (TORCH_LOGS=graph_breaks,graph_code on stderr)."""
import importlib.util
import torch
import torch._dynamo as dynamo
spec = importlib.util.spec_from_file_location("mb", __file__.rsplit("/", 1)[0] + "/model_bonds.py")
mb = importlib.util.module_from_spec(spec); spec.loader.exec_module(mb)
torch.manual_seed(0)
m = mb.MolPropNet().eval()
B, N = 2, 8
bonds = torch.rand(B, N, N) < 0.3
bonds = bonds | bonds.transpose(1, 2)
args = (torch.randint(0, 10, (B, N)), torch.randn(B, N, 3), torch.ones(B, N, dtype=torch.bool), bonds)
seen = []
def backend(gm, ex):
    seen.append(sorted({str(n.meta.get("stack_trace", "")).strip().splitlines()[-2].strip()[:90]
                        for n in gm.graph.nodes if n.meta.get("stack_trace")})[:3])
    return gm
dynamo.reset()
with torch.no_grad():
    torch.compile(m, backend=backend)(*args)
print("graphs compiled:", len(seen))
for i, s in enumerate(seen):
    print(f" graph {i}: first source lines {s}")
