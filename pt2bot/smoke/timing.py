"""Phase "latency": eager vs compiled per case, compile time, peak memory.

On a shared CPU runner single calls are noisy, so: a fixed thread count, inference mode,
warm-up (which also absorbs the per-shape recompiles), then eager and compiled samples in
interleaved, alternating order (A B, B A, ...) so drift hits both sides alike. CUDA uses
event pairs and synchronises. `compile_s` is the first compiled call: `warm` when every graph
it compiled came from the on-disk caches, else `cold` (pt2bot/smoke/compile_times.py).

Each case also times a fixed reference workload (`reference_ms`: small matmuls, the same in
every process and every commit), interleaved with the model's calls. On a shared machine
whole processes land in a slow mode (a busy neighbour on the sibling hyperthread: +30 to
+100 %, steady within the process); the reference slows with them, so the verdict can
compare model time per unit of reference time across processes
(benchmarks/bench_latency_verdict.py).
"""
from __future__ import annotations

import os
import resource
import time
from typing import Any, Callable

from pt2bot.smoke.inputs import CaseInputs
from pt2bot.results import summarise
from pt2bot.smoke.matrix import compile_configured, mark_dims
from pt2bot.smoke.compile_times import cache_delta, compile_times, is_warm
from pt2bot.smoke.trace import reset_dynamo


def _timer(device: str) -> Callable[[Callable[[], Any]], float]:
    import torch

    if device == "cuda":
        def time_cuda(fn: Callable[[], Any]) -> float:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            return float(start.elapsed_time(end))
        return time_cuda

    def time_cpu(fn: Callable[[], Any]) -> float:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    return time_cpu


def reference_work(device: str) -> Callable[[], Any]:
    """A fixed, model-independent workload of roughly a tenth of a millisecond on a CPU core."""
    import torch

    g = torch.Generator().manual_seed(0)
    a = torch.randn(64, 128, generator=g).to(device)
    w = torch.randn(128, 128, generator=g).to(device) / 16

    def ref() -> Any:
        h = a
        for _ in range(4):
            h = torch.relu(h @ w)
        return h
    return ref


def maxrss_mb() -> float:
    """This process's peak resident set size (Linux reports KiB, macOS bytes)."""
    v = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return v / (1024 * 1024) if os.uname().sysname == "Darwin" else v / 1024


def measure_latency(model: Any, cases: list[CaseInputs], model_spec: dict[str, Any],
                    run_cfg: dict[str, Any], device: str,
                    rss_baseline_mb: float | None = None) -> dict[str, Any]:
    """`latency`, `compile_s`, `peak_mem_mb` (+ `peak_mem_method`)."""
    import torch

    from torch._dynamo.utils import counters

    reset_dynamo()
    compiled = compile_configured(model, run_cfg)
    dynamic = set(model_spec.get("dynamic") or ())
    warmup = max(1, int(run_cfg.get("warmup") or 3))
    repeats = max(1, int(run_cfg.get("repeats") or 20))
    timer = _timer(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    rss0 = rss_baseline_mb if rss_baseline_mb is not None else maxrss_mb()
    latency: list[dict[str, Any]] = []
    compile_s: float | None = None
    warm = False
    # inference mode, as a deployed model runs, unless the model differentiates inside its
    # forward (`grad:`), which needs autograd on
    with torch.enable_grad() if model_spec.get("grad") else torch.inference_mode():
        for i, case in enumerate(cases):
            marked = mark_dims(case, dynamic, relaxed=set(dynamic))   # never raise here

            def eager() -> Any:
                return model(*case.args, **case.kwargs)

            def comp() -> Any:
                return compiled(*marked.args, **marked.kwargs)
            ref = reference_work(device)
            if i == 0:
                lookups0 = dict(counters["inductor"])
                t0 = time.perf_counter()
                comp()
                sync()
                compile_s = time.perf_counter() - t0
                warm = is_warm(*cache_delta(lookups0, counters["inductor"]))
            for _ in range(warmup):
                eager()
                comp()
                ref()
            sync()
            e_ms: list[float] = []
            c_ms: list[float] = []
            r_ms: list[float] = []
            calls = ((eager, e_ms), (comp, c_ms), (ref, r_ms))
            for r in range(repeats):
                # rotate the order so no call always follows the same one
                for k in range(3):
                    fn, into = calls[(r + k) % 3]
                    into.append(timer(fn))
            latency.append({"shape": dict(case.shape), "eager_ms": summarise(e_ms).to_json(),
                            "compiled_ms": summarise(c_ms).to_json(),
                            "reference_ms": summarise(r_ms).to_json()})
    if device == "cuda":
        peak = torch.cuda.max_memory_allocated() / (1024 * 1024)
        method = "cuda_max_memory_allocated"
    else:
        peak = max(0.0, maxrss_mb() - rss0)
        method = "ru_maxrss_delta"
    reset_dynamo()
    return {
        "latency": latency,
        "compile_s": compile_times(compile_s, warm),
        "peak_mem_mb": round(peak, 2),
        "peak_mem_method": method,
    }
