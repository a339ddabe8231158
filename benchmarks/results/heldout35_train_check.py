"""hand1 (heldout35_hand_edits.json) in training mode, with no pt2bot code: heldout35_rerun.py puts
every model in eval mode, so sm_block_train's training path (threshold_train, capacity factor
1.25, balance loss and router z-loss) was not compared there. Here the spec's model stays in
training mode; head is st-moe-pytorch as installed, the edit is safe_one_hot replaced in the
module's globals by the hand edit's function (what TopNGating.forward calls). Eager and compiled
(backend "eager"), outputs and the gradients of the summed outputs (input and every parameter),
on the spec's cases, 8 fresh batches of 1 to 8 sequences of 4 to 24 tokens, zeros, x 50, NaN and inf;
exact comparison (equal NaN positions). Also sm_tiny_lm in eval mode, eager against compiled on
head alone, no edit: which of its results differ (the re-run counted 31 of 48 compiled equal to
eager on both sides).

    /work/venvs/realcode/bin/python benchmarks/results/heldout35_train_check.py > benchmarks/results/heldout35_train_check.log
"""
import os
import sys

import torch
import torch.nn.functional as F
import torch._dynamo as dynamo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "real_code"))
import models  # noqa: E402
import st_moe_pytorch.st_moe_pytorch as smp  # noqa: E402

HEAD = smp.safe_one_hot


def hand(indexes, max_length):
    # an index at or past max_length lands in the one column cut off, as every index past it did
    return F.one_hot(indexes.clamp(max = max_length), max_length + 1)[..., :max_length]


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    na, nb = a.isnan(), b.isnan()
    return a.shape == b.shape and bool(torch.equal(na, nb) and torch.equal(torch.where(na, 0.0, a), torch.where(nb, 0.0, b)))


def run(model, fn, x, grad):
    x = x.clone().requires_grad_(grad)
    model.zero_grad(set_to_none=True)
    torch.manual_seed(1)
    try:
        with torch.set_grad_enabled(grad):
            out = fn(x)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            if grad:
                sum(torch.nan_to_num(o, 0.0, 0.0, 0.0).sum() for o in outs).backward()
                return [o.detach() for o in outs] + [x.grad] + [p.grad for p in model.parameters()]
            return [o.detach() for o in outs]
    except Exception as e:  # noqa: BLE001
        return [f"raise {type(e).__name__}"]


def inputs(cases):
    g = torch.Generator().manual_seed(5)
    xs = [("case%d" % i, a[0]) for i, (a, _) in enumerate(cases)]
    for i in range(8):
        xs.append((f"fresh{i}", torch.randn(1 + i, 4 + (i * 5) % 21, 16, generator=g) * (0.3 + i % 4)))
    x0 = cases[0][0][0]
    nan = x0.clone(); nan.view(-1)[1] = float("nan")
    inf = x0.clone(); inf.view(-1)[1] = float("inf")
    xs += [("zeros", torch.zeros_like(x0)), ("x50", x0 * 50), ("nan", nan), ("inf", inf)]
    return xs


def main():
    torch.manual_seed(0)
    sp = models.by_key()["st-moe-pytorch:sm_block_train"]
    model, cases = sp.build()
    model.train()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    n = ok = 0
    for compiled in (False, True):
        for grad in (False, True):
            res = {}
            for side, f in (("head", HEAD), ("hand1", hand)):
                smp.safe_one_hot = f
                dynamo.reset()
                fn = torch.compile(model, backend="eager") if compiled else model
                res[side] = []
                for name, x in inputs(cases):
                    model.load_state_dict(state)
                    res[side].append((name, run(model, fn, x, grad)))
            smp.safe_one_hot = HEAD
            bad = []
            for (name, a), (_, b) in zip(res["head"], res["hand1"]):
                n += 1
                eq = len(a) == len(b) and all((x == y) if isinstance(x, str) else (not isinstance(y, str) and same(x, y))
                                              for x, y in zip(a, b))
                ok += eq
                if not eq:
                    bad.append(name)
            print(f"sm_block_train, training mode, compiled={compiled} grad={grad}: "
                  f"{len(res['head']) - len(bad)} of {len(res['head'])} equal {bad or ''}", flush=True)
    print(f"training mode: hand1 against head {ok} of {n} equal")
    # sm_tiny_lm: head's own compiled-vs-eager differences
    torch.manual_seed(0)
    sp = models.by_key()["st-moe-pytorch:sm_tiny_lm"]
    model, cases = sp.build()
    model.eval()
    g = torch.Generator().manual_seed(5)
    ids = [("case0", cases[0][0][0]), ("case1", cases[1][0][0])] + [
        (f"fresh{i}", torch.randint(0, 50, (1 + i, 9), generator=g)) for i in range(4)]
    for grad in (False, True):
        dynamo.reset()
        comp = torch.compile(model, backend="eager")
        for name, t in ids:
            with torch.set_grad_enabled(grad):
                e, c = model(t), comp(t)
            d = [float((x - y).abs().max()) if x.shape == y.shape else "shape" for x, y in zip(e, c)]
            print(f"sm_tiny_lm eval grad={grad} {name}: eager vs compiled equal "
                  f"{[same(x.detach(), y.detach()) for x, y in zip(e, c)]}, max |diff| {d}")


if __name__ == "__main__":
    main()
