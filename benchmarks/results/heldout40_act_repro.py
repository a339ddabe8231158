"""Held-out batch 40: what the posted PTC101 edit of pytorch-adaptive-computation-time's ACT loop
(models.py:157, `if not torch.compiler.is_compiling() and not continuing_mask.any().item():`,
verified by realcode_proof_heldout40_matrix.json on three models) changes, with no pt2bot code.

The installed models.py is copied twice, as `act_head` and `act_patched` (the posted line put in
place of line 157); both run eager and compiled (torch.compile(backend="eager")), one thread.
1. time per call after the first (compile) call, AdaptiveGRUCell at the library's default time_limit
   (100) and the parity task's (20), with the graphs' operation counts (a counting backend that runs
   the graph as traced, as backend="eager" does);
2. a cell whose hidden state grows (a relu RNNCell with a recurrent weight of spectral norm > 1,
   which AdaptiveCellWrapper accepts: any RNNCellBase): head halts every element at step 1 or 2,
   the patched compiled loop keeps stepping the cell after every element has halted, its hidden
   overflows to inf, and the masked sum `total_hidden + (combined_mask * hidden)` adds 0 * inf;
3. the same with gradients.
    /work/venvs/realcode/bin/python benchmarks/results/heldout40_act_repro.py > benchmarks/results/heldout40_act_repro.log 2>&1
"""
import importlib.util
import os
import sys
import tempfile
import time

import torch

torch.set_num_threads(1)
src = os.path.join(os.path.dirname(importlib.util.find_spec("pytorch_adaptive_computation_time").origin), "models.py")
lines = open(src).read().splitlines(keepends=True)
assert lines[156].strip() == "if not continuing_mask.any().item():", lines[156]
patched = lines[:]
patched[156] = "            if not torch.compiler.is_compiling() and not continuing_mask.any().item():\n"
tmp = tempfile.mkdtemp()
mods = {}
for name, text in (("act_head", lines), ("act_patched", patched)):
    p = os.path.join(tmp, name + ".py")
    open(p, "w").writelines(text)
    spec = importlib.util.spec_from_file_location(name, p)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    mods[name] = m
print("torch", torch.__version__)


def counted(cell):
    n = [0]
    cell._cell.register_forward_hook(lambda *_: n.__setitem__(0, n[0] + 1))
    return n


def fmt(t):
    return "finite" if bool(torch.isfinite(t).all()) else f"{int(torch.isnan(t).sum())} NaN, {int(torch.isinf(t).sum())} inf of {t.numel()}"


print("\n1. time per call (AdaptiveGRUCell(8, 32), halting bias -1 (default), x ~ randn(16, 8), no gradients; "
      "the steps each element took, as returned, and the graph's operation count)")
for limit in (20, 100):
    for side in ("act_head", "act_patched"):
        torch.manual_seed(0)
        cell = mods[side].AdaptiveGRUCell(8, 32, time_penalty=1e-3, time_limit=limit).eval()
        x = torch.randn(16, 8)
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            ops = []
            def backend(gm, ex):
                ops.append(sum(1 for nd in gm.graph.nodes if nd.op == "call_function" or nd.op == "call_method" or nd.op == "call_module"))
                return gm.forward
            f = torch.compile(cell, backend=backend) if mode == "compiled" else cell
            t0 = time.perf_counter()
            with torch.no_grad():
                out = f(x)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            for _ in range(20):
                with torch.no_grad():
                    out = f(x)
            dt = (time.perf_counter() - t0) / 20
            print(f"   time_limit {limit:3d} {side:11s} {mode:8s}: steps returned max {int(out[2].max())}, "
                  f"graphs {len(ops)} ops {ops}, first call {first:.2f} s, then {1e3 * dt:.2f} ms per call")

print("\n2. a cell whose hidden state grows: AdaptiveCellWrapper(RNNCell(4+1, 16, relu)), weight_hh = 3 * I, "
      "halting bias +4 (every element halts at step 1), time_limit 100")
for side in ("act_head", "act_patched"):
    torch.manual_seed(0)
    rnn = torch.nn.RNNCell(5, 16, nonlinearity="relu")
    with torch.no_grad():
        rnn.weight_hh.copy_(3 * torch.eye(16))
    cell = mods[side].AdaptiveCellWrapper(rnn, time_penalty=1e-3, initial_halting_bias=4.0, time_limit=100).eval()
    x = torch.randn(6, 4)
    for mode in ("eager", "compiled"):
        torch._dynamo.reset()
        f = torch.compile(cell, backend="eager") if mode == "compiled" else cell
        with torch.no_grad():
            h, cost, steps = f(x)
        print(f"   {side:11s} {mode:8s}: hidden {fmt(h)}, |hidden| max {float(h[torch.isfinite(h)].abs().max()) if torch.isfinite(h).any() else float('nan'):.4g}, "
              f"ponder cost {float(cost):.6g}, steps {steps.flatten().tolist()}")

print("\n3. the same with gradients (loss = hidden.sum() + ponder cost)")
for side in ("act_head", "act_patched"):
    torch.manual_seed(0)
    rnn = torch.nn.RNNCell(5, 16, nonlinearity="relu")
    with torch.no_grad():
        rnn.weight_hh.copy_(3 * torch.eye(16))
    cell = mods[side].AdaptiveCellWrapper(rnn, time_penalty=1e-3, initial_halting_bias=4.0, time_limit=100)
    x = torch.randn(6, 4)
    for mode in ("eager", "compiled"):
        torch._dynamo.reset()
        cell.zero_grad(set_to_none=True)
        f = torch.compile(cell, backend="eager") if mode == "compiled" else cell
        h, cost, steps = f(x)
        (h.sum() + cost).backward()
        bad = {n: fmt(p.grad) for n, p in cell.named_parameters() if p.grad is not None and not bool(torch.isfinite(p.grad).all())}
        print(f"   {side:11s} {mode:8s}: loss {float(h.sum() + cost):.6g}, non-finite parameter gradients: {bad or 'none'}")
