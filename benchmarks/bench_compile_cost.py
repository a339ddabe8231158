"""Compile cost as a reviewed metric: detection, A/A false alarms, and the overhead of
measuring graph coverage and compile cost.

    .venv/bin/python benchmarks/bench_compile_cost.py [--trials 20] [--detection-trials 10]
        [--backends aot_eager,eager] [--inductor-trials 2] [--overhead-rounds 15]
        [--out benchmarks/results/compile_cost]

Each trial runs base and head in fresh worker processes (`python -m pt2bot.smoke.worker`,
phases breaks + matrix, as `pt2bot run` does; the order alternates between trials) on the
fixture model tests/fixtures/models/stack.py, and judges head against base with
`pt2bot.compare.compare_compile` at the default threshold (30 %):

- detection: head doubles the layers (4 → 8 blocks; inductor 2 → 4 blocks, each block 8
  wider than the one before: inductor compiles one kernel set for identical blocks, so only
  distinct blocks make its compile costlier): the PR makes compile costlier, and must be
  reported. The measured CPU ratio says by how much it really is.
- A/A: head is the same model (4 blocks; inductor 2): any regression is a false alarm.

Inductor runs with a fresh cache directory per worker (both sides cold). `--fork`: each
worker is a child forked from the benchmark after it imported torch and pt2bot (what a fork
server does): the same compile, without paying `import torch` in every trial. Overhead: the
graph-break pass with and without the op counting (`measure_breaks(count_ops=)`), and the
compile probe on its own (its `start`/`finish` around no compile), in-process, alternating,
in CPU seconds of the process.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ROOT = os.path.join(REPO, "tests", "fixtures")
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

from bench_run import run_worker  # noqa: E402 - the one way the benchmarks start a worker

RUN = {"recompile_limit": 8, "warmup": 1, "repeats": 3, "threads": 1}


def spec(n_layer: int, backend: str, name: str = "stack", grow: int = 0) -> dict:
    return {"repo_root": ROOT, "device": "cpu", "phases": ["breaks", "matrix"],
            "log_path": None,
            "model": {"name": name, "entry": "models.stack:Stack",
                      "kwargs": {"n_layer": n_layer, "grow": grow}, "inputs": [{"shape": ["batch", 8]}],
                      "inputs_entry": None, "shapes": {"batch": [2, 4]}, "cases": None,
                      "dynamic": ["batch"], "export": False, "tolerance": {}},
            "run": {**RUN, "backend": backend}}


FORK = False    # --fork: workers forked from this process, torch already imported


def forked_worker(worker_spec: dict, cache: str) -> dict:
    """`run_worker`, in a child forked from this process (torch imported once, here, and
    never used before the fork: each child starts with no compiled code, as a worker does)."""
    from pt2bot.smoke.worker import measure

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "o.json")
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:      # the child: measure, write, leave without any cleanup of the parent's
            code = 1
            try:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
                with open(out, "w") as fh:
                    json.dump(measure(worker_spec), fh)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert status == 0, f"forked worker exited with {status}"
        with open(out) as fh:
            run = json.load(fh)
    run["_wall"] = time.perf_counter() - t0
    return run


def worker(n_layer: int, backend: str, grow: int = 0) -> dict:
    """One model in a fresh worker process with a fresh inductor cache; its RUN."""
    with tempfile.TemporaryDirectory() as d:
        run = (forked_worker if FORK else run_worker)(spec(n_layer, backend, grow=grow),
                                                      os.path.join(d, "inductor"))
    assert run["status"] == "ok" and not run["phase_errors"], run
    return run


def trials(backend: str, base_layers: int, head_layers: int, n: int, grow: int = 0) -> dict:
    from pt2bot.compare import compare_compile
    from pt2bot.results import ModelRun

    rows = []
    for t in range(n):
        order = ("base", "head") if t % 2 == 0 else ("head", "base")
        got = {side: worker(base_layers if side == "base" else head_layers, backend, grow)
               for side in order}
        c = compare_compile(ModelRun.from_json(got["base"]), ModelRun.from_json(got["head"]))
        b, h = got["base"]["compile_cost"], got["head"]["compile_cost"]
        rows.append({"trial": t, "order": order[0], "base_cpu_s": b["cpu_s"],
                     "head_cpu_s": h["cpu_s"], "cpu_ratio": h["cpu_s"] / b["cpu_s"],
                     "base_fx_nodes": b["fx_nodes"], "head_fx_nodes": h["fx_nodes"],
                     "base_kernels": b["kernels"], "head_kernels": h["kernels"],
                     "cache": [b["cache"], h["cache"]],
                     "regression": c["regression"], "basis": c["basis"],
                     "worker_wall_s": [got["base"]["_wall"], got["head"]["_wall"]]})
        print(f"  {backend} {base_layers}->{head_layers} trial {t}: cpu {b['cpu_s']:.3f} -> "
              f"{h['cpu_s']:.3f} (x{rows[-1]['cpu_ratio']:.2f}), fx {b['fx_nodes']} -> "
              f"{h['fx_nodes']}, regression {c['regression']}", flush=True)
    ratios = [r["cpu_ratio"] for r in rows]
    return {"backend": backend, "base_layers": base_layers, "head_layers": head_layers,
            "grow": grow,
            "trials": n, "reported": sum(r["regression"] for r in rows),
            "cpu_ratio_median": statistics.median(ratios), "cpu_ratio_min": min(ratios),
            "cpu_ratio_max": max(ratios), "rows": rows}


def overhead(rounds: int) -> dict:
    """In-process: the graph-break pass with and without op counting; the probe alone."""
    import torch

    from pt2bot.smoke.breaks import measure_breaks
    from pt2bot.smoke.compile_cost import CompileProbe
    from pt2bot.smoke.inputs import build_inputs, build_model
    from pt2bot.smoke.trace import RepoPaths

    torch.set_num_threads(1)
    paths = RepoPaths(ROOT)
    out: dict = {}
    for name, entry, kwargs in (("stack8", "models.stack:Stack", {"n_layer": 8}),
                                ("loop", "models.loop_layers:LoopLayers", {})):
        s = spec(8, "eager")["model"]
        s.update(entry=entry, kwargs=kwargs)
        model = build_model(entry, kwargs, paths)
        case = build_inputs(s, model, {"batch": 4}, "cpu", paths)
        times: dict[bool, list[float]] = {False: [], True: []}
        measure_breaks(model, case, paths, count_ops=True)          # warm-up
        for r in range(rounds):
            for count in ((False, True) if r % 2 == 0 else (True, False)):
                t0 = time.process_time()    # CPU: the machine is shared, wall is noise
                with torch.no_grad():
                    measure_breaks(model, case, paths, count_ops=count)
                times[count].append(time.process_time() - t0)
        off, on = statistics.median(times[False]), statistics.median(times[True])
        out[name] = {"breaks_pass_s": off, "with_op_count_s": on, "added_s": on - off,
                     "added_pct": (on / off - 1) * 100}
    probe = []
    for _ in range(rounds):
        t0 = time.process_time()
        CompileProbe("aot_eager").start().finish()
        probe.append(time.process_time() - t0)
    out["probe_s"] = statistics.median(probe)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20, help="A/A trials per backend")
    ap.add_argument("--detection-trials", type=int, default=10)
    ap.add_argument("--backends", default="aot_eager,eager")
    ap.add_argument("--inductor-trials", type=int, default=2)
    ap.add_argument("--inductor-grow", type=int, default=8)
    ap.add_argument("--inductor-kinds", default="detection,aa")
    ap.add_argument("--overhead-rounds", type=int, default=15)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "compile_cost"))
    ap.add_argument("--fork", action="store_true",
                    help="fork each worker from this process (torch imported once): faster")
    a = ap.parse_args()
    global FORK
    FORK = a.fork
    if FORK:   # import torch, dynamo and the worker once, before the forks (nothing compiled)
        import torch._dynamo  # noqa: F401
        import pt2bot.smoke.worker  # noqa: F401
    load = os.getloadavg()
    result: dict = {"load_before": load, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                    "workers": "forked" if FORK else "processes", "detection": [], "aa": []}
    runs = [(b, 4, 4, a.trials, "aa") for b in a.backends.split(",") if b]
    runs += [(b, 4, 8, a.detection_trials, "detection") for b in a.backends.split(",") if b]
    # inductor reuses an identical block's kernels: the blocks grow so that a deeper model
    # has kernels of its own to compile (--inductor-grow 0: identical blocks)
    runs += [("inductor", 2, 4, a.inductor_trials, "detection"),
             ("inductor", 2, 2, a.inductor_trials, "aa")]
    runs = [r for r in runs if r[0] != "inductor" or r[4] in a.inductor_kinds.split(",")]
    for backend, base_layers, head_layers, n, kind in runs:
        if n:
            grow = a.inductor_grow if backend == "inductor" else 0
            result[kind].append(trials(backend, base_layers, head_layers, n, grow))
    if a.overhead_rounds:
        result["overhead"] = overhead(a.overhead_rounds)
    result["load_after"] = os.getloadavg()
    with open(a.out + ".json", "w") as fh:
        json.dump(result, fh, indent=1)
    lines = [f"# Compile cost: detection and A/A ({result['started']}, load "
             f"{load[0]:.1f} → {result['load_after'][0]:.1f} on 2 cores, workers "
             f"{result['workers']})", "",
             "| backend | change | trials | reported | CPU ratio head/base median [min, max] |",
             "|---|---|---|---|---|"]
    for kind, rows in (("detection", result["detection"]), ("A/A", result["aa"])):
        for r in rows:
            grown = f", each {r['grow']} wider" if r.get("grow") else ""
            lines.append(f"| {r['backend']} | {kind}: {r['base_layers']} → {r['head_layers']} "
                         f"blocks{grown} | {r['trials']} | {r['reported']} | "
                         f"{r['cpu_ratio_median']:.2f} [{r['cpu_ratio_min']:.2f}, "
                         f"{r['cpu_ratio_max']:.2f}] |")
    if "overhead" in result:
        o = result["overhead"]
        lines += ["", "CPU seconds (median of alternating rounds, in-process):", "",
                  "| model | graph-break pass | with op counting | added |", "|---|---|---|---|"]
        for name in ("stack8", "loop"):
            x = o[name]
            lines.append(f"| {name} | {x['breaks_pass_s'] * 1e3:.0f} ms | "
                         f"{x['with_op_count_s'] * 1e3:.0f} ms | {x['added_s'] * 1e3:+.0f} ms "
                         f"({x['added_pct']:+.1f} %) |")
        lines.append(f"\nCompile probe (start + finish, no compile): {o['probe_s'] * 1e3:.1f} ms")
    with open(a.out + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
