"""Base (model_base.py), no pt2bot code: torch.compile (backend "eager") with the configured dims
marked dynamic (torch._dynamo.mark_dynamic on batch and atoms of atoms, coors and mask), as
run_base_model.json's shape_advice.compile.tried.mark_dynamic did, and maybe_mark_dynamic, and
plain torch.compile over the four shape cases."""
import importlib.util
import torch
import torch._dynamo as dynamo
spec = importlib.util.spec_from_file_location("mb", __file__.rsplit("/", 1)[0] + "/model_base.py")
mb = importlib.util.module_from_spec(spec); spec.loader.exec_module(mb)
torch.manual_seed(0)
m = mb.MolPropNet().eval()
def case(b, n):
    return (torch.randint(0, 10, (b, n)), torch.randn(b, n, 3), torch.rand(b, n) < 0.85)
cases = [case(b, n) for b in (2, 4) for n in (8, 12)]
for how in ("mark_dynamic", "maybe_mark_dynamic", "plain"):
    dynamo.reset()
    dynamo.utils.counters.clear()
    comp = torch.compile(m, backend="eager")
    try:
        with torch.no_grad():
            for args in cases:
                if how != "plain":
                    for t in args:
                        getattr(dynamo, how)(t, 0)
                        getattr(dynamo, how)(t, 1)
                out = comp(*args)
                assert torch.equal(out, m(*args))
        print(f"{how}: ok on 4 cases, equal to eager; graphs {dynamo.utils.counters['stats']['unique_graphs']}")
    except Exception as e:  # noqa: BLE001
        print(f"{how}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
