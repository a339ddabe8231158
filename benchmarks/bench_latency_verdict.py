"""How often does `pt2bot review`'s latency verdict cry wolf, and how often does it catch a
real slowdown? Measured through the REAL measurement path.

Each comparison is what `pt2bot review` does for one model: base and head are two git
repositories holding a tiny model (`tinynet.py`, an MLP: 4 x Linear(256, 256) + ReLU,
batch 32); each side is measured by `pt2bot.smoke.run_models(..., phases=["latency"])`,
i.e. one `python -m pt2bot.smoke.worker` process per side per round, with torch.compile
backend "eager" (no inductor: keeps a process at a few seconds, and the eager backend's
per-call dynamo overhead is still in the timings). Rounds alternate exactly like
`pt2bot.pipeline._smoke_both`: round 0 head, base; round 1 head, base; round 2 base, head;
round 3 head, base ... and are pooled with `pt2bot.compare.pool_latency` (per-process
groups kept in `compiled_ms.rounds`). The verdict is `pt2bot.compare.compare_latency`.
Each worker also times the fixed reference workload (`reference_ms`, pt2bot.smoke.timing)
and the verdict divides each process's samples by its reference p10; rows labelled "raw"
replay the verdict without it (the statistic before the reference existed).
(Round 0 of a real review is the full smoke run, where latency is the last phase; here
every round runs only the latency phase — same for both sides, so no bias, but cheaper.)

  * A/A: base and head are byte-identical copies — any "significant" is a false alarm.
  * A/B: head's forward does extra real tensor work (`EXTRA` wide: h @ W1 (256 x E),
    relu, @ W2 (E x 256), added to h). `--calibrate` times both models in ONE process,
    interleaved (a first guess; cache sharing inflates it); the figure reported is the
    ratio of the quietest processes of the collection itself (`true_ratio`).

One repetition = one A/A review + one A/B review sharing base processes (see review_pair):
3 rounds x 3 workers = 9 worker processes (~6-12 s each here, mostly importing torch).
Raw per-process samples go to `--data` (resumable); `--evaluate` then replays the verdict
for 2, 3, 4 rounds and several samples-per-round (prefixes of what was collected: the
rounds schedule is prefix-stable, and samples are taken in order), so the statistic can be
tuned without re-running. Results (figures only) go to benchmarks/results/.

    .venv/bin/python benchmarks/bench_latency_verdict.py --calibrate
    nohup .venv/bin/python benchmarks/bench_latency_verdict.py --collect --reps 40 \\
        --data /tmp/pt2bot-lat.json > /tmp/pt2bot-lat.log 2>&1 &
    .venv/bin/python benchmarks/bench_latency_verdict.py --evaluate --data /tmp/pt2bot-lat.json

Sequential rounds (pipeline._smoke_both since the latency gate): the review stops adding
rounds for a model once its interval lies within the threshold band (looks after
2..`rounds`-1 rounds; a change is concluded at the last look only, pt2bot/stats.py). An
earlier design also stopped for a change, at O'Brien-Fleming-type shares of alpha; its
figures are in benchmarks/results/latency_sequential.md. `--evaluate` replays both
designs on the same processes: "fixed" (every round, alpha 0.05: the review before) and
"sequential" (`sequential()`: the looks as compare.latency_decided takes them), with the
Clopper-Pearson 95 % interval of each rate and the rounds used. Under load:

    nohup .venv/bin/python benchmarks/bench_latency_verdict.py --collect --reps 60 --rounds 3 \
        --repeats 50 --hogs 2 --ab-every 5 --lazy --data /tmp/lat/seq.json > /tmp/lat/seq.log 2>&1 &

`--hogs N`: N busy processes (`python -c 'while True: pass'`, one per core) beside the whole
collection, the noisy neighbour of a shared runner (the review's own latency gate plays no
part here: every comparison is timed). `--ab-every K`: the A/B review only in every K-th
repetition (the A/A in all). `--lazy`: an A/A-only repetition stops collecting once the
sequential method has decided, as the pipeline does (the fixed design is then judged on the
repetitions collected in full). The collection resumes from `--data`.

Targets: A/A false alarms <= 5 %, detection of the 25 % slowdown >= 90 %.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
from pt2bot.stats import FIRST_LOOK  # noqa: E402

EXTRA = 32          # width of the head's extra work: ~1.25x measured across processes (see README of results)
REPEATS = 200       # samples per process collected (evaluation uses prefixes)
WARMUP = 10
ROUNDS = 3

MODEL_SRC = '''\
import torch


class TinyNet(torch.nn.Module):
    EXTRA = {extra}   # width of extra work in forward (0: none)

    def __init__(self, dim: int = 256, depth: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(dim, dim) for _ in range(depth))
        if self.EXTRA:
            self.w1 = torch.nn.Linear(dim, self.EXTRA)
            self.w2 = torch.nn.Linear(self.EXTRA, dim)

    def forward(self, x):
        h = x
        for layer in self.layers:
            h = torch.relu(layer(h))
        if self.EXTRA:
            h = h + self.w2(torch.relu(self.w1(h)))
        return h
'''

CONFIG_YML = '''\
version: 1
models:
  - name: tiny
    entry: tinynet:TinyNet
    inputs:
      - {{name: x, shape: [batch, 256], dtype: float32}}
    shapes:
      batch: [32]
    export: false
run: {{device: cpu, backend: eager, warmup: {warmup}, repeats: {repeats}, threads: 1, rounds: {rounds}}}
thresholds:
  latency_regression_pct: 10
'''


def make_repo(root: str, extra: int) -> str:
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "tinynet.py"), "w") as fh:
        fh.write(MODEL_SRC.format(extra=extra))
    subprocess.run(["git", "init", "-q", root], check=True)
    subprocess.run(["git", "-C", root, "add", "."], check=True)
    subprocess.run(["git", "-C", root, "-c", "user.name=b", "-c", "user.email=b@x",
                    "commit", "-qm", "m"], check=True)
    return root


def load_bench_config(work: str, repeats: int, warmup: int, rounds: int) -> Any:
    from pt2bot.configfile import load_config

    path = os.path.join(work, "pt2bot.yml")
    with open(path, "w") as fh:
        fh.write(CONFIG_YML.format(repeats=repeats, warmup=warmup, rounds=rounds))
    return load_config(path)


def measure_side(config: Any, root: str, out: str) -> dict[str, Any]:
    from pt2bot.smoke import run_models

    return run_models(config, repo_root=root, out_dir=out, models=["tiny"], device="cpu",
                      phases=["latency"]).to_json()


def schedule(rounds: int) -> list[tuple[int, str]]:
    """(round, side) in the order pipeline._smoke_both runs them."""
    order = [(0, "head"), (0, "base")]
    for rnd in range(1, rounds):
        pair = [(rnd, "head"), (rnd, "base")]
        if rnd % 2 == 0:
            pair.reverse()
        order += pair
    return order


def compiled_rounds(results: dict[str, Any]) -> tuple[list[float], list[float]]:
    """The process's compiled samples and its reference-workload samples."""
    m = results["models"][0]
    if m.get("status") != "ok" or not m.get("latency"):
        raise RuntimeError(f"worker failed: {json.dumps(m)[:2000]}")
    case = m["latency"][0]
    return case["compiled_ms"]["samples"], (case.get("reference_ms") or {}).get("samples", [])


def review_pair(config: Any, base_root: str, same_root: str, slow_root: str, out: str,
                rounds: int, rep: int, with_ab: bool = True, lazy: bool = False,
                samples: int = 50) -> dict[str, Any]:
    """One A/A review and one A/B review sharing the base processes.

    The pipeline's schedule is followed with base = A; every head slot runs two processes
    back to back, A' (same code) and B (slowed), their order alternating, so each review
    sees exactly the pipeline's order of base and head processes. Returns, per review,
    base/head sample lists per round (process). `with_ab` False: the A/A review alone
    (no B processes; the rep has no "ab"). `lazy` (A/A alone): stop collecting once the
    sequential method has decided, as the pipeline does (fewer rounds are stored).
    """
    empty = lambda: [[] for _ in range(rounds)]  # noqa: E731
    got = {v: (empty(), empty()) for v in ("base", "same", "slow")}   # (compiled, reference)
    roots = {"base": base_root, "same": same_root, "slow": slow_root}

    def measure(v: str, rnd: int) -> None:
        c, r = compiled_rounds(measure_side(config, roots[v], os.path.join(out, v, str(rnd))))
        got[v][0][rnd], got[v][1][rnd] = c, r

    def result(k: int) -> dict[str, Any]:
        return {kind: {"base": got["base"][0][:k], "head": got[v][0][:k],
                       "base_ref": got["base"][1][:k], "head_ref": got[v][1][:k]}
                for kind, v in (("aa", "same"), ("ab", "slow")) if with_ab or kind == "aa"}

    order = schedule(rounds)
    for i, (rnd, side) in enumerate(order):
        heads = ["same", "slow"] if (rep + rnd) % 2 == 0 else ["slow", "same"]
        if not with_ab:
            heads = ["same"]
        for v in (["base"] if side == "base" else heads):
            measure(v, rnd)
        end_of_round = i + 1 == len(order) or order[i + 1][0] != rnd
        if lazy and not with_ab and end_of_round and FIRST_LOOK <= rnd + 1 < rounds:
            if sequential(result(rnd + 1)["aa"], rounds, samples)[1] == rnd + 1:
                return result(rnd + 1)
    return result(rounds)


def start_hogs(n: int) -> list[subprocess.Popen]:
    """`n` busy processes (one per core: the noisy neighbour of a shared runner)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for h in hogs:
        h.kill()
        h.wait()


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average {os.getloadavg()}"


def loadavg() -> float:
    return os.getloadavg()[0]


def collect(args: argparse.Namespace) -> None:
    data: dict[str, Any] = {"reps": [], "repeats": args.repeats, "warmup": args.warmup,
                            "rounds": args.rounds, "extra": args.extra,
                            "model": "TinyNet 4x Linear(256,256)+ReLU, batch 32, backend eager, "
                                     "1 thread, latency phase of the real worker"}
    if os.path.exists(args.data):
        with open(args.data) as fh:
            data = json.load(fh)
    data["lazy"] = bool(args.lazy) or data.get("lazy", False)
    work = tempfile.mkdtemp(prefix="pt2bot-latbench-")
    config = load_bench_config(work, data["repeats"], data["warmup"], data["rounds"])
    base = make_repo(os.path.join(work, "base"), 0)
    same = make_repo(os.path.join(work, "same"), 0)
    slow = make_repo(os.path.join(work, "slow"), data["extra"])
    t0 = time.time()
    hogs = start_hogs(args.hogs)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    data.setdefault("uptime", []).append(uptime())
    try:
        while len(data["reps"]) < args.reps:
            r = len(data["reps"])
            load0 = loadavg()
            rep = review_pair(config, base, same, slow, os.path.join(work, "out", str(r)),
                              data["rounds"], r, with_ab=r % args.ab_every == 0,
                              lazy=args.lazy, samples=data["repeats"])
            rep["load"] = [round(load0, 2), round(loadavg(), 2)]
            rep["hogs"] = args.hogs
            data["reps"].append(rep)
            with open(args.data + ".tmp", "w") as fh:
                json.dump(data, fh)
            os.replace(args.data + ".tmp", args.data)
            print(f"rep {r + 1}/{args.reps} {time.time() - t0:.0f}s load {rep['load']}",
                  file=sys.stderr, flush=True)
    finally:
        stop_hogs(hogs)
    data["uptime"].append(uptime())
    data["collect_s"] = data.get("collect_s", 0) + round(time.time() - t0)
    with open(args.data, "w") as fh:
        json.dump(data, fh)


def pooled(side: list[list[float]], ref: list[list[float]] | None, rounds: int,
           n: int) -> dict[str, Any]:
    """The model entry the pipeline would hold after pool_latency over `rounds` rounds."""
    from pt2bot.compare import pool_latency
    from pt2bot.stats import summarise_samples

    def res(k: int) -> dict[str, Any]:
        case = {"shape": {"batch": 32}, "eager_ms": summarise_samples(side[k][:n]),
                "compiled_ms": summarise_samples(side[k][:n])}
        if ref is not None:
            case["reference_ms"] = summarise_samples(ref[k][:n])
        return {"models": [{"name": "tiny", "status": "ok", "latency": [case]}]}

    first = res(0)
    for k in range(1, rounds):
        pool_latency(first, res(k))     # pools eager, compiled and reference samples alike
    return first["models"][0]


def verdict(rep: dict[str, Any], rounds: int, n: int, threshold: float,
            stats_kw: dict[str, Any] | None = None) -> dict[str, Any]:
    from pt2bot.compare import compare_latency

    use_ref = (stats_kw or {}).get("reference", True)
    b = pooled(rep["base"], rep.get("base_ref") if use_ref else None, rounds, n)
    h = pooled(rep["head"], rep.get("head_ref") if use_ref else None, rounds, n)
    kw = {k: v for k, v in (stats_kw or {}).items() if k != "reference"}
    if kw:   # tuning: call the statistic directly with non-default knobs
        from pt2bot.results import LatencyRow
        from pt2bot.stats import compare_samples
        be, he = LatencyRow.from_json(b["latency"][0]), LatencyRow.from_json(h["latency"][0])

        def grouped(t):
            return t.grouped() if t is not None else []
        return compare_samples(grouped(be.compiled_ms), grouped(he.compiled_ms),
                               threshold_pct=threshold,
                               base_reference=grouped(be.reference_ms) or None,
                               head_reference=grouped(he.reference_ms) or None, **kw)
    from pt2bot.results import ModelRun
    return compare_latency(ModelRun.from_json(b), ModelRun.from_json(h),
                           threshold_pct=threshold)[0]


def sequential(rep: dict[str, Any], max_rounds: int, n: int,
               threshold: float = 10.0) -> tuple[dict[str, Any], int]:
    """The pipeline's sequential rounds replayed on one review's processes: looks after
    FIRST_LOOK..max_rounds rounds (compare.latency_decided's rule); (verdict, rounds used)."""
    from pt2bot.stats import decided

    have = min(len(rep["base"]), len(rep["head"]))
    for k in range(min(FIRST_LOOK, max_rounds), max_rounds + 1):
        v = verdict(rep, k, n, threshold)
        if k >= have or k == max_rounds or decided({**v, "threshold_pct": threshold}):
            return v, k
    return v, max_rounds


def clopper_pearson(x: int, n: int, conf: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided interval of a binomial rate x/n."""
    from math import comb

    def cdf(k: int, p: float) -> float:
        return sum(comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))

    def solve(f: Any) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) else (lo, mid)
        return (lo + hi) / 2
    a = (1 - conf) / 2
    upper = 1.0 if x >= n else solve(lambda p: cdf(x, p) > a)
    lower = 0.0 if x <= 0 else solve(lambda p: 1 - cdf(x - 1, p) < a)
    return lower, upper


def joined(reps: list[dict[str, Any]], extra_rounds: int) -> list[dict[str, Any]]:
    """Longer reviews from consecutive repetitions: rep 2k's rounds plus the first
    `extra_rounds` rounds of rep 2k+1 (same alternating base/head order, the next minute).
    Non-overlapping, so half as many reviews; an estimate for `rounds` > collected."""
    out = []
    for k in range(0, len(reps) - 1, 2):
        a, b = reps[k], reps[k + 1]
        out.append({kind: {side: a[kind][side] + b[kind][side][:extra_rounds]
                           for side in ("base", "head", "base_ref", "head_ref")}
                    for kind in ("aa", "ab")})
    return out


def evaluate(data: dict[str, Any], settings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for s in settings:
        reps = data["reps"]
        rounds = s["rounds"]
        if rounds > data["rounds"]:
            reps = joined(reps, rounds - data["rounds"])
        # lazily collected repetitions hold fewer rounds; A/A-only ones have no "ab"
        aa = [verdict(r["aa"], rounds, s["samples"], 10.0, s.get("kw")) for r in reps
              if len(r["aa"]["base"]) >= rounds]
        ab = [verdict(r["ab"], rounds, s["samples"], 10.0, s.get("kw")) for r in reps
              if "ab" in r and len(r["ab"]["base"]) >= rounds]
        if not aa:
            continue
        fa = sum(v["significant"] for v in aa)
        fa_slower = sum(v["significant"] and v["direction"] == "slower" for v in aa)
        det = sum(v["significant"] and v["direction"] == "slower" for v in ab)
        ratios_b = sorted(v["ratio"] for v in ab if v["ratio"] is not None)
        ratios_a = sorted(v["ratio"] for v in aa if v["ratio"] is not None)
        n, n_ab = len(aa), max(1, len(ab))
        rows.append({"rounds": rounds, "samples": s["samples"],
                     "stat": s.get("label", "default"), "reviews": n, "reviews_ab": len(ab),
                     "false_alarms": fa, "false_alarm_pct": round(100 * fa / n, 1),
                     "false_alarms_slower": fa_slower,
                     "detected": det, "detection_pct": round(100 * det / n_ab, 1),
                     "aa_ratio_range": [ratios_a[0], ratios_a[-1]] if ratios_a else None,
                     "ab_ratio_median": ratios_b[len(ratios_b) // 2] if ratios_b else None,
                     "ab_ratio_range": [ratios_b[0], ratios_b[-1]] if ratios_b else None})
    return rows


def evaluate_sequential(data: dict[str, Any], samples: int) -> list[dict[str, Any]]:
    """Before (a fixed `rounds` rounds, alpha 0.05) and after (sequential looks from
    FIRST_LOOK to `rounds`, stopping early for "unchanged" only: pt2bot/stats.py) on the
    same processes. The fixed design needs every round: lazily collected A/A repetitions
    that stopped early count for the sequential method only."""
    k_max = data["rounds"]
    rows = []
    # "full": the repetitions collected with every round (those with an A/B review; an A/A
    # repetition collected lazily has every round only when it was undecided, a biased subset)
    for method, which in (("fixed", "full"), ("sequential", "full"), ("sequential", "all")):
        out: dict[str, Any] = {"method": method, "reviews": which, "max_rounds": k_max,
                               "samples": samples}
        for kind in ("aa", "ab"):
            reps = [r[kind] for r in data["reps"]
                    if kind in r and (which == "all" or "ab" in r or not data.get("lazy"))]
            if method == "fixed":
                got = [(verdict(r, k_max, samples, 10.0), k_max) for r in reps]
            else:
                got = [sequential(r, k_max, samples) for r in reps]
            n = len(got)
            sig = sum(v["significant"] for v, _ in got)
            slower = sum(v["significant"] and v["direction"] == "slower" for v, _ in got)
            lo, hi = clopper_pearson(sig if kind == "aa" else slower, n) if n else (None, None)
            out[kind] = {"reviews": n, "significant": sig, "slower": slower,
                         "rate_pct": round(100 * (sig if kind == "aa" else slower) / n, 1)
                         if n else None,
                         "cp95": [round(100 * lo, 1), round(100 * hi, 1)] if n else None,
                         "mean_rounds": round(sum(k for _, k in got) / n, 2) if n else None,
                         "rounds_used": {str(k): sum(1 for _, j in got if j == k)
                                         for k in sorted({j for _, j in got})}}
        rows.append(out)
    return rows


def true_ratio(data: dict[str, Any]) -> dict[str, float]:
    """The injected slowdown as measured in the quietest processes: the best (lowest)
    per-process p10 of B over that of A, and the same at the 5th best process."""
    def p10(g: list[float]) -> float:
        return sorted(g)[int(0.1 * (len(g) - 1))]
    a = sorted(p10(g) for r in data["reps"] for g in r["aa"]["base"] + r["aa"]["head"])
    b = sorted(p10(g) for r in data["reps"] if "ab" in r for g in r["ab"]["head"])
    if not b:
        return {"best_process": None, "fifth_best": None, "process_p10_spread_A": []}
    return {"best_process": round(b[0] / a[0], 3), "fifth_best": round(b[4] / a[8], 3)
            if len(b) > 4 and len(a) > 8 else None,
            "process_p10_spread_A": [round(x / a[0], 2) for x in a]}


def calibrate(extra: int, n: int) -> None:
    """Both models in one process, calls interleaved: the ratio the A/B test should see."""
    code = f'''
import sys, time, statistics, torch
sys.path.insert(0, {os.path.join(REPO, "benchmarks")!r})
torch.set_num_threads(1)
ns = {{}}
exec({MODEL_SRC.format(extra=0)!r}, ns); A = ns["TinyNet"]().eval()
ns = {{}}
exec({MODEL_SRC.format(extra=extra)!r}, ns); B = ns["TinyNet"]().eval()
ca, cb = torch.compile(A, backend="eager"), torch.compile(B, backend="eager")
x = torch.randn(32, 256)
ta, tb = [], []
with torch.inference_mode():
    for _ in range(20): ca(x); cb(x)
    for i in range({n}):
        for f, t in ((ca, ta), (cb, tb)) if i % 2 == 0 else ((cb, tb), (ca, ta)):
            t0 = time.perf_counter(); f(x); t.append((time.perf_counter() - t0) * 1e3)
ta.sort(); tb.sort()
q = lambda xs, p: xs[int(p * (len(xs) - 1))]
print(f"A median {{statistics.median(ta):.4f}} ms p10 {{q(ta, .1):.4f}} | "
      f"B median {{statistics.median(tb):.4f}} ms p10 {{q(tb, .1):.4f}} | "
      f"ratio median {{statistics.median(tb) / statistics.median(ta):.3f}} "
      f"p10 {{q(tb, .1) / q(ta, .1):.3f}}")
'''
    print(f"EXTRA={extra} load {loadavg():.2f}")
    subprocess.run([sys.executable, "-c", code], check=True)
    print(f"load after {loadavg():.2f}")


DEFAULT_SETTINGS = ([{"rounds": r, "samples": n} for r in (2, 3, 4, 6) for n in (20, 50, 200)]
                    + [{"rounds": r, "samples": n, "label": "raw", "kw": {"reference": False}}
                       for r in (3, 6) for n in (20, 200)])
TUNE_SETTINGS = [{"rounds": r, "samples": n, "label": f"{'ref' if ref else 'raw'} q={q}",
                  "kw": {"quantile": q, "reference": ref}}
                 for ref in (True, False) for r in (2, 3, 6) for n in (20, 200)
                 for q in (0.5, 0.1)]


def settings_for(tune: bool) -> list[dict[str, Any]]:
    return DEFAULT_SETTINGS + (TUNE_SETTINGS if tune else [])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--collect", action="store_true")
    ap.add_argument("--evaluate", action="store_true")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--repeats", type=int, default=REPEATS)
    ap.add_argument("--warmup", type=int, default=WARMUP)
    ap.add_argument("--extra", type=int, default=EXTRA)
    ap.add_argument("--data", default="/tmp/pt2bot-latency-bench.json")
    ap.add_argument("--hogs", type=int, default=0,
                    help="busy processes beside the collection (one per core: noisy neighbours)")
    ap.add_argument("--lazy", action="store_true",
                    help="A/A-only repetitions stop collecting once the sequential method decides")
    ap.add_argument("--ab-every", type=int, default=1,
                    help="run the A/B review in every k-th repetition only (the A/A in all)")
    ap.add_argument("--tune", action="store_true", help="also evaluate other statistics")
    ap.add_argument("--samples", type=int, default=0,
                    help="samples per process the sequential evaluation uses (0: all)")
    ap.add_argument("--out", help="write the evaluation (figures only) to this JSON file")
    args = ap.parse_args()
    if args.calibrate:
        calibrate(args.extra, 2000)
        return 0
    if args.collect:
        collect(args)
    if args.evaluate or args.collect:
        with open(args.data) as fh:
            data = json.load(fh)
        settings = [st for st in settings_for(args.tune) if st["rounds"] <= data["rounds"]]
        rows = evaluate(data, settings)
        seq = evaluate_sequential(data, args.samples or data["repeats"])
        tr = true_ratio(data)
        loads = [x for r in data["reps"] for x in r["load"]]
        n_ab = sum(1 for r in data["reps"] if "ab" in r)
        lines = [
            f"repetitions: {len(data['reps'])} A/A reviews, {n_ab} of them with an A/B review "
            f"beside (up to {data['rounds']} rounds collected"
            + ("; A/A-only repetitions stopped once the sequential method decided"
               if data.get("lazy") else "") + f"), {data['repeats']} samples per process, "
            f"warm-up {data['warmup']}, busy neighbours: {data['reps'][0].get('hogs', 0)} "
            f"(`python -c 'while True: pass'`), model: {data['model']}",
            f"load average (1 min) at the start/end of each repetition: min {min(loads):.2f}, "
            f"median {sorted(loads)[len(loads) // 2]:.2f}, max {max(loads):.2f}",
            "uptime at start/end: " + " | ".join(data.get("uptime", [])),
            f"collection wall time: {data.get('collect_s', '?')} s",
            f"A/B slowdown in the quietest processes (raw p10, B over A): best process "
            f"{tr['best_process']}, 5th-best B / 9th-best A {tr['fifth_best']}",
            "",
            "Before (fixed rounds) and after (sequential rounds) on the same processes. "
            "A/A: any significant verdict is a false alarm; A/B: detected = significant "
            "and slower. cp95: Clopper-Pearson 95 % interval of the rate.",
            "",
            "| method | A/A reviews | false alarms | rate | cp95 | A/A mean rounds | "
            "A/B reviews | detected | rate | cp95 | A/B mean rounds |",
            "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|",
        ]
        for r in seq:
            aa, ab = r["aa"], r["ab"]
            lines.append(f"| {r['method']} ({r['reviews']} reviews, max {r['max_rounds']}) | "
                         f"{aa['reviews']} | "
                         f"{aa['significant']} ({aa['slower']} slower) | {aa['rate_pct']} % | "
                         f"{aa['cp95']} | {aa['mean_rounds']} | {ab['reviews']} | "
                         f"{ab['slower']} | {ab['rate_pct']} % | {ab['cp95']} | "
                         f"{ab['mean_rounds']} |")
        lines += ["", "rounds used (sequential, all reviews): A/A "
                  + json.dumps(seq[2]["aa"]["rounds_used"])
                  + ", A/B " + json.dumps(seq[2]["ab"]["rounds_used"]),
                  "full reviews: collected with every round (the repetitions with an A/B "
                  "review); all reviews: also the A/A-only repetitions, collected until the "
                  "sequential method decided.", "",
                  "Fixed-round settings (prefixes of what was collected; reviews with every "
                  "round only):", "",
                  "| rounds | samples/process | stat | A/A N | A/A false alarms | (slower) | "
                  "A/B N | A/B detected | A/A ratio range | A/B ratio median |",
                  "|---:|---:|---|---:|---:|---:|---:|---:|---|---:|"]
        for r in rows:
            lines.append(f"| {r['rounds']} | {r['samples']} | {r['stat']} | {r['reviews']} | "
                         f"{r['false_alarms']} ({r['false_alarm_pct']} %) | "
                         f"{r['false_alarms_slower']} | {r['reviews_ab']} | "
                         f"{r['detected']} ({r['detection_pct']} %) | "
                         f"{r['aa_ratio_range']} | {r['ab_ratio_median']} |")
        print("\n".join(lines))
        if args.out:
            summary = {k: v for k, v in data.items() if k != "reps"}
            summary.update(n_reps=len(data["reps"]), load=loads, rows=rows, sequential=seq,
                           true_ratio={k: v for k, v in tr.items() if k != "process_p10_spread_A"})
            with open(args.out, "w") as fh:
                json.dump(summary, fh, indent=1)
            with open(os.path.splitext(args.out)[0] + ".md", "w") as fh:
                fh.write("# Latency verdict quality (benchmarks/bench_latency_verdict.py)\n\n")
                fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
