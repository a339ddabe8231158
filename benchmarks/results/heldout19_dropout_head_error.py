"""Why tensorly-torch:tensor_dropout_train is a head_error in realcode_proof_heldout19*.json, with no
pt2bot code: the model (models.py, seed 0, eval mode; its tensor dropout hooks have drop_test=True)
runs in eager, and torch.compile (eager backend) of it raises before any graph runs, on tltorch's
`torch.bernoulli(<float probabilities>, out=<bool tensor>)` in tensor_hooks/_tensor_dropout.py:
fake-tensor propagation refuses a float -> bool cast into `out` that eager performs. The same
call alone, outside tltorch, shows the eager/compiled split.

    /work/venvs/realcode/bin/python benchmarks/results/heldout19_dropout_head_error.py \
        2>/dev/null > benchmarks/results/heldout19_dropout_head_error.log
"""
import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "real_code"))
import torch  # noqa: E402

torch.set_num_threads(1)
import models  # noqa: E402

sp = models.by_key()["tensorly-torch:tensor_dropout_train"]
torch.manual_seed(0)
model, cases = sp.build()
model.eval()
args, kwargs = cases[0]
torch.manual_seed(1)
with torch.no_grad():
    print("eager:", tuple(model(*args, **kwargs).shape))
torch.manual_seed(1)
try:
    with torch.no_grad():
        torch.compile(model, backend="eager")(*args, **kwargs)
    print("compiled: ran")
except Exception as e:  # noqa: BLE001 - the result
    tb = traceback.extract_tb(e.__traceback__)
    print("compiled: raised", type(e).__name__, str(e).splitlines()[0][:200])
    for line in str(e).splitlines():
        if "bernoulli" in line or "cast" in line:
            print("   ", line.strip()[:300])
    for line in str(e).splitlines():
        if "_tensor_dropout.py" in line:
            print("    at", line.strip()[:200])


def alone(p: torch.Tensor) -> torch.Tensor:
    return torch.bernoulli(p, out=torch.empty(p.shape, dtype=torch.bool))


p = torch.full((7,), 0.6)
torch.manual_seed(1)
print("alone, eager:", alone(p).dtype)
torch._dynamo.reset()
try:
    torch.compile(alone, backend="eager")(p)
    print("alone, compiled: ran")
except Exception as e:  # noqa: BLE001 - the result
    print("alone, compiled: raised", type(e).__name__, str(e).splitlines()[0][:200])
