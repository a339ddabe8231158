"""recompile_check.py (no pt2bot code): the base model's one recompile (guard `n == 8` in the frame
resumed after torch-nl's break) with the size read as `n` before the break (model_base.py) and as
`pos.shape[0]` after it (model_base_n_after.py): frames compiled over atoms 8, 12, 16, 20
(the factory's inputs), torch.compile(backend="eager") with pos marked dynamic as pt2bot's
`dynamic: [atoms]` does, one call per size."""
import importlib.util
import sys

import torch
import torch._dynamo.utils as du

sys.path.insert(0, ".")
import data  # noqa: E402


def run(path):
    spec = importlib.util.spec_from_file_location(path[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    model = mod.PairPotential().eval()
    torch._dynamo.reset()
    du.counters.clear()
    fn = torch.compile(model, backend="eager")
    with torch.no_grad():
        for n in (8, 12, 16, 20):
            pos, cell = data.make_inputs(n)
            torch._dynamo.mark_dynamic(pos, 0)
            e, _ = fn(pos, cell)
            assert torch.equal(e, model(pos, cell)[0])
    print(f"{path}: frames compiled {du.counters['stats']['unique_graphs']}, "
          f"calls to the compiler {du.counters['stats']['calls_captured']}")


for p in ("model_base.py", "model_base_n_after.py"):
    run(p)
