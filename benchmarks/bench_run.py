"""Benchmark the smoke worker: overhead vs bare torch calls, cold vs warm inductor cache,
eager vs inductor backend for break counting.

    .venv/bin/python benchmarks/bench_run.py [--models clean,loop,size] [--rounds 3]

CPU only, tiny fixture models (tests/fixtures/models). Timings on a shared machine are noisy:
each figure is the median of `--rounds` alternating rounds (worker, bare, bare, worker, ...).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ROOT = os.path.join(REPO, "tests", "fixtures")
sys.path.insert(0, REPO)

MODELS = {
    "clean": ("models.clean:Clean", [{"shape": ["batch", 8]}]),
    "loop": ("models.loop_layers:LoopLayers", [{"shape": ["batch", 8]}]),
    "size": ("models.size_branch:SizeBranch", [{"shape": ["batch", 8]}]),
}
SHAPES = {"batch": [2, 4, 8, 16]}
RUN = {"backend": "eager", "recompile_limit": 8, "warmup": 3, "repeats": 20, "threads": 1}


def spec(name: str, phases: list[str], run: dict | None = None) -> dict:
    entry, inputs = MODELS[name]
    return {"repo_root": ROOT, "device": "cpu", "phases": phases, "log_path": None,
            "model": {"name": name, "entry": entry, "kwargs": {}, "inputs": inputs,
                      "inputs_entry": None, "shapes": SHAPES, "cases": None,
                      "dynamic": ["batch"], "export": True, "tolerance": {}},
            "run": {**RUN, **(run or {})}}


def bare(name: str) -> float:
    """The torch calls the worker makes, without its bookkeeping."""
    import torch
    from torch.export import Dim

    from pt2bot.smoke.entry import build_model, load_entry

    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    t0 = time.perf_counter()
    model = build_model(load_entry(MODELS[name][0], ROOT), {}).eval()
    xs = [torch.randn(b, 8, generator=torch.Generator().manual_seed(0)) for b in SHAPES["batch"]]
    with torch.no_grad():
        eager = [model(x) for x in xs]
        torch._dynamo.reset()
        torch.compile(model, backend="eager")(xs[0])          # breaks
        torch._dynamo.reset()
        c = torch.compile(model, backend="eager")               # matrix
        for x, e in zip(xs, eager):
            x = x.detach()
            torch._dynamo.maybe_mark_dynamic(x, 0)
            torch.allclose(c(x), e, rtol=1e-4, atol=1e-5)
        torch._dynamo.reset()
        try:                                                    # export
            with contextlib.redirect_stderr(io.StringIO()):
                ep = torch.export.export(model, (xs[0],),
                                         dynamic_shapes={"x": {0: Dim("batch", min=1)}})
            for x, e in zip(xs, eager):
                torch.allclose(ep.module()(x), e, rtol=1e-4, atol=1e-5)
        except Exception:  # noqa: BLE001 - the worker also spends draft_export here
            pass
    torch._dynamo.reset()
    c = torch.compile(model, backend="eager")                   # latency
    with torch.inference_mode():
        for x in xs:
            x = x.detach()
            torch._dynamo.maybe_mark_dynamic(x, 0)
            for _ in range(RUN["warmup"]):
                model(x), c(x)
            for _ in range(RUN["repeats"]):
                t = time.perf_counter(); model(x); _ = time.perf_counter() - t  # noqa: E702
                t = time.perf_counter(); c(x); _ = time.perf_counter() - t  # noqa: E702
    torch._dynamo.reset()
    return time.perf_counter() - t0


def worker(name: str) -> float:
    from pt2bot.smoke.worker import measure

    t0 = time.perf_counter()
    run = measure(spec(name, ["breaks", "matrix", "export", "latency"]))
    assert run["status"] == "ok" and not run["phase_errors"], run
    return time.perf_counter() - t0


def run_worker(worker_spec: dict, cache: str) -> dict:
    """A worker process (`python -m pt2bot.smoke.worker`) on a spec; its RUN, with `_wall`."""
    with tempfile.TemporaryDirectory() as d:
        sp, out = os.path.join(d, "s.json"), os.path.join(d, "o.json")
        with open(sp, "w") as fh:
            json.dump(worker_spec, fh)
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pt2bot.smoke.worker", sp, out], env=env,
                       check=True, cwd=REPO, capture_output=True)
        wall = time.perf_counter() - t0
        with open(out) as fh:
            run = json.load(fh)
    run["_wall"] = wall
    return run


def compile_in_subprocess(name: str, cache: str, backend: str, phases: list[str]) -> dict:
    return run_worker(spec(name, phases, {"backend": backend}), cache)


def break_counting(name: str, backend: str) -> float:
    import torch

    from pt2bot.smoke.entry import build_model, load_entry

    model = build_model(load_entry(MODELS[name][0], ROOT), {}).eval()
    x = torch.randn(4, 8)
    torch._dynamo.reset()
    t0 = time.perf_counter()
    with torch.no_grad():
        torch.compile(model, backend=backend)(x)
    dt = time.perf_counter() - t0
    torch._dynamo.reset()
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="clean,loop,size")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-inductor", action="store_true")
    a = ap.parse_args()
    names = a.models.split(",")
    import torch
    torch.set_num_threads(1)
    worker(names[0]), bare(names[0])     # first dynamo use in a process costs seconds
    print(f"torch {torch.__version__}, {os.cpu_count()} cpus, shapes {SHAPES}, {RUN}")
    print("\n1) worker measure() (4 phases, eager backend) vs the bare torch calls")
    print(f"{'model':8} {'worker s':>9} {'bare s':>8} {'overhead':>9}")
    for n in names:
        w, b = [], []
        for r in range(a.rounds):
            if r % 2 == 0:
                w.append(worker(n)); b.append(bare(n))  # noqa: E702
            else:
                b.append(bare(n)); w.append(worker(n))  # noqa: E702
        mw, mb = statistics.median(w), statistics.median(b)
        print(f"{n:8} {mw:9.3f} {mb:8.3f} {100 * (mw - mb) / mb:8.1f}%")
    if a.skip_inductor:
        return
    print("\n2) inductor compile (matrix phase, fresh worker process), cold vs warm cache")
    print(f"{'model':8} {'cold s':>8} {'warm s':>8} {'proc cold':>10} {'proc warm':>10}")
    for n in names[:2]:
        with tempfile.TemporaryDirectory() as cache:
            cold = compile_in_subprocess(n, cache, "inductor", ["matrix"])
            warm = compile_in_subprocess(n, cache, "inductor", ["matrix"])
        print(f"{n:8} {cold['compile_s']['cold']:8.2f} {warm['compile_s']['warm']:8.2f} "
              f"{cold['_wall']:10.2f} {warm['_wall']:10.2f}")
    print("\n3) break counting: one call compiled with eager vs inductor (in process, "
          "cold inductor cache)")
    print(f"{'model':8} {'eager s':>8} {'inductor s':>11} {'saved':>7}")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        for n in names:
            e = statistics.median(break_counting(n, "eager") for _ in range(a.rounds))
            i = break_counting(n, "inductor")
            print(f"{n:8} {e:8.3f} {i:11.3f} {100 * (i - e) / i:6.1f}%")


if __name__ == "__main__":
    main()
