"""Does base's RangeDopplerNet (model_base.py) export with the dims the PR reviews say base
exported with (`range = Dim('range', min=4)`, `doppler = Dim('doppler', min=4)`, batch dynamic),
and does it recompile on range x doppler in a plain compile loop with every dim marked dynamic?
No pt2bot code."""
import importlib.util, warnings
import torch
from torch.export import Dim
warnings.simplefilter("ignore")
spec = importlib.util.spec_from_file_location("mb", "model_base.py"); mb = importlib.util.module_from_spec(spec); spec.loader.exec_module(mb)
torch.manual_seed(0)
m = mb.RangeDopplerNet().eval()
z = torch.randn(2, 2, 16, 12, dtype=torch.cfloat)
for name, ds in (("batch only", {"z": {0: Dim("batch")}}),
                 ("batch, range, doppler as the reviews' Dims", {"z": {0: Dim("batch"), 2: Dim("range", min=4), 3: Dim("doppler", min=4)}})):
    try:
        ep = torch.export.export(m, (z,), dynamic_shapes=ds)
        z2 = torch.randn(3, 2, 24, 16, dtype=torch.cfloat)
        try:
            ok = torch.equal(ep.module()(z2), m(z2))
            print(f"export with {name}: ok; on [3, 2, 24, 16]: equal to eager {ok}")
        except Exception as e:  # noqa: BLE001
            print(f"export with {name}: ok; on [3, 2, 24, 16] raises {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    except Exception as e:  # noqa: BLE001
        print(f"export with {name}: raises {type(e).__name__}: {str(e).splitlines()[0][:300]}")
# plain compile loop, every dim of z marked dynamic
torch._dynamo.reset()
from torch._dynamo.utils import counters
c = torch.compile(m, backend="eager")
n = 0
for r in (16, 20, 24, 28):
    for d in (12, 16, 20):
        x = torch.randn(2, 2, r, d, dtype=torch.cfloat)
        torch._dynamo.mark_dynamic(x, 0); torch._dynamo.mark_dynamic(x, 2); torch._dynamo.mark_dynamic(x, 3)
        c(x); n += 1
print(f"{n} calls with every dim marked dynamic: frames compiled {counters['stats']['unique_graphs']}, "
      f"recompiles {sum(v for k, v in counters['recompiles'].items()) if counters['recompiles'] else 'n/a'}")
