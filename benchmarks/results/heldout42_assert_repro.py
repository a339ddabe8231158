"""Plain-torch repro (no pt2bot code) of what heldout42_rerun.log finds for PTC201's verified edit
of recsys-metrics' range check (recsys_metrics/utils.py:42-43): the edit keeps the check in
compiled code as `torch._assert_async(...)` under `torch.compiler.is_compiling()` and the original
`raise ValueError` in eager. On a target the check refuses (a -1 in a 0/1 target), head raises
ValueError in eager and compiled (dynamo breaks the graph at the `if` and runs the raise eagerly);
the edit raises ValueError in eager and RuntimeError in compiled code. A caller that catches
ValueError (as input validation is caught) sees a different exception once the model is compiled.

    /work/venvs/realcode/bin/python benchmarks/results/heldout42_assert_repro.py > benchmarks/results/heldout42_assert_repro.log 2>&1
"""
import torch

torch.set_num_threads(1)


def head(preds, target):           # utils.py:42-43 as released, then hit_rate's arithmetic
    if target.max() > 1 or target.min() < 0:
        raise ValueError('`target` must contain binary values')
    _, idx = preds.topk(3, dim=-1)
    return (target.take_along_dim(idx, dim=-1).sum(-1) > 0).float().mean()


def edited(preds, target):         # PTC201's verified lines 42-43, the rest unchanged
    if torch.compiler.is_compiling():
        torch._assert_async(torch.logical_not((target.max() > 1) | (target.min() < 0)),
                            '`target` must contain binary values')
    elif target.max() > 1 or target.min() < 0:
        raise ValueError('`target` must contain binary values')
    _, idx = preds.topk(3, dim=-1)
    return (target.take_along_dim(idx, dim=-1).sum(-1) > 0).float().mean()


def call(fn, *a):
    try:
        return f"ok {fn(*a).item():.4f}"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"


print("torch", torch.__version__)
g = torch.Generator().manual_seed(0)
preds = torch.randn(4, 8, generator=g)
good = (torch.rand(4, 8, generator=g) < 0.3).long()
for name, target in [("valid 0/1 target", good),
                     ("a -1 in the target", torch.where(torch.arange(8) == 5, -1, good)),
                     ("a 2 in the target", torch.where(torch.arange(8) == 5, 2, good))]:
    for label, fn in (("head", head), ("edited", edited)):
        torch._dynamo.reset()
        c = torch.compile(fn, backend="eager")
        print(f"{name:<20} {label:<6} eager: {call(fn, preds, target):<55} compiled: {call(c, preds, target)}")
