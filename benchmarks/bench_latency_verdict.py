"""How often does the latency verdict cry wolf, and how often does it catch a real slowdown?

On this (noisy, shared, 2-core) machine, a tiny real torch model — a 3-layer MLP, plain
eager under `torch.inference_mode()`, 1 thread — is timed in SEPARATE processes, in
alternating rounds, the way `pt2bot review` measures base and head:

    repetition r:  A  B  A'  |  B  A'  A  |  A'  A  B   (order rotated every round)

A and A' are the same code (an A/A pair: any "significant" verdict is a false alarm).
B is A plus extra work equal to 25 % of A's own cost, calibrated inside the process (a busy
wait of 0.25 x the median of 100 calibration calls), so B is 1.25x A whatever the
machine's mood. Each process records SAMPLES per-call timings after warm-up.

Phase 1 (`--collect`) writes the raw timings to a JSON file; phase 2 (default) reads them
and evaluates `pt2bot.stats.compare_samples` under several settings (rounds used, samples
per round, flat vs per-round bootstrap), so the statistics can be tuned without re-running.

    python benchmarks/bench_latency_verdict.py --collect --reps 40 --data /tmp/lat.json
    python benchmarks/bench_latency_verdict.py --data /tmp/lat.json

Targets (issue 4): A/A false alarms <= 5 %, detection of the 25 % slowdown >= 90 %.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

WARMUP = 10
SAMPLES = 60
SLOWDOWN = 0.25


def worker(variant: str, samples: int) -> None:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256)).eval()
    x = torch.randn(32, 256)
    clock = time.perf_counter
    with torch.inference_mode():
        for _ in range(WARMUP):
            model(x)
        extra = 0.0
        if variant == "B":
            cal = []
            for _ in range(100):
                t0 = clock()
                model(x)
                cal.append(clock() - t0)
            cal.sort()
            extra = SLOWDOWN * cal[len(cal) // 2]
        out = []
        for _ in range(samples):
            t0 = clock()
            model(x)
            if extra:
                end = clock() + extra
                while clock() < end:
                    pass
            out.append((clock() - t0) * 1e3)
    json.dump({"variant": variant, "samples_ms": out}, sys.stdout)


def run_worker(variant: str, samples: int) -> list[float]:
    proc = subprocess.run([sys.executable, __file__, "--worker", variant, "--samples",
                           str(samples)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)["samples_ms"]


def collect(reps: int, rounds: int, samples: int, path: str) -> None:
    data = {"reps": [], "samples": samples, "rounds": rounds, "slowdown": SLOWDOWN,
            "model": "MLP 3x256, batch 32, eager, inference_mode, 1 thread"}
    if os.path.exists(path):
        with open(path) as fh:
            data = json.load(fh)
    variants = ["A", "B", "A2"]
    t_start = time.time()
    while len(data["reps"]) < reps:
        r = len(data["reps"])
        rep = {"A": [], "B": [], "A2": []}
        for k in range(rounds):
            shift = (r + k) % 3
            for v in variants[shift:] + variants[:shift]:
                rep[v].append(run_worker("B" if v == "B" else "A", samples))
        data["reps"].append(rep)
        with open(path + ".tmp", "w") as fh:
            json.dump(data, fh)
        os.replace(path + ".tmp", path)
        print(f"rep {r + 1}/{reps} done, {time.time() - t_start:.0f}s", file=sys.stderr)


def evaluate(path: str) -> dict:
    """False alarms and detections per setting.

    A/A pairs: A vs A' of each repetition (interleaved), plus A of repetition i vs A' of
    repetition j != i (same code, measured minutes apart: harsher, and more pairs).
    A/B pairs: A vs B of each repetition.
    """
    from pt2bot.stats import compare_samples

    with open(path) as fh:
        data = json.load(fh)
    reps = data["reps"]
    settings = [(rounds, n, q, thr) for rounds in (2, 3, 4) for n in (20, 60)
                for q in (0.5, 0.1) for thr in (10.0,)]
    rows = []
    for rounds, n, q, thr in settings:
        def side(rep: dict, v: str) -> list:
            return [x for g in rep[v][:rounds] for x in g[:n]]

        def sig(a: list, b: list) -> tuple[bool, float]:
            out = compare_samples(a, b, threshold_pct=thr, quantile=q, n_boot=1000)
            return out["significant"], out["ratio"]

        inter = sum(sig(side(r, "A"), side(r, "A2"))[0] for r in reps)
        cross_pairs = [(i, j) for i in range(len(reps)) for j in range(len(reps)) if i != j]
        cross = sum(sig(side(reps[i], "A"), side(reps[j], "A2"))[0] for i, j in cross_pairs)
        ab = [sig(side(r, "A"), side(r, "B")) for r in reps]
        det = sum(s and ratio > 1 for s, ratio in ab)
        rows.append({"rounds": rounds, "samples": n, "statistic": "median" if q == 0.5 else
                     f"p{round(q * 100)}", "threshold_pct": thr, "reps": len(reps),
                     "aa_interleaved_pct": round(100 * inter / len(reps), 1),
                     "aa_cross_pairs": len(cross_pairs),
                     "aa_cross_pct": round(100 * cross / max(1, len(cross_pairs)), 1),
                     "detection_pct": round(100 * det / len(reps), 1),
                     "median_ratio_B": sorted(r for _, r in ab)[len(ab) // 2]})
    return {"model": data.get("model"), "slowdown": data.get("slowdown"), "rows": rows}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", choices=("A", "B"))
    ap.add_argument("--samples", type=int, default=SAMPLES)
    ap.add_argument("--collect", action="store_true")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--data", default="/tmp/pt2bot-latency-bench.json")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.samples)
        return 0
    if args.collect:
        collect(args.reps, args.rounds, args.samples, args.data)
    result = evaluate(args.data)
    print(f"{'rounds':>6} {'samples':>7} {'stat':>6} {'thr%':>5} {'reps':>4} "
          f"{'A/A inter%':>10} {'A/A cross%':>10} {'(pairs)':>7} {'detect%':>8} {'ratio B':>8}")
    for r in result["rows"]:
        print(f"{r['rounds']:>6} {r['samples']:>7} {r['statistic']:>6} {r['threshold_pct']:>5} "
              f"{r['reps']:>4} {r['aa_interleaved_pct']:>10} {r['aa_cross_pct']:>10} "
              f"{r['aa_cross_pairs']:>7} {r['detection_pct']:>8} {r['median_ratio_B']:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
