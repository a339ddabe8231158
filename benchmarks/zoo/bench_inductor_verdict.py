"""The latency verdict's quality with the INDUCTOR backend, on real zoo models.

benchmarks/bench_latency_verdict.py measures it for the eager backend on a synthetic MLP;
this reuses its machinery (the pipeline's round schedule, `review_pair`, pooling, the
shipped verdict `compare_latency`, `evaluate`, `true_ratio`) with:
  * one zoo model per run (benchmarks/zoo/models.py; default llama and vit), one shape case,
    built into three one-model zoo repositories: base, same (a byte-identical copy: A/A) and
    slow (the model followed by EXTRA chained Linear(64, 64) + tanh on a fixed buffer:
    A/B, calibrated to about 1.2x; the true ratio is measured from the collection itself);
  * `run.backend: inductor`, 50 samples per process, warm-up 10, 1 thread, 3 rounds, the
    inductor cache shared by every process (warm after the first compile, as in CI with
    `run.cache_dir` cached).

    /work/venvs/zoo/bin/python benchmarks/zoo/bench_inductor_verdict.py --calibrate llama
    /work/venvs/zoo/bin/python benchmarks/zoo/bench_inductor_verdict.py --collect \\
        --model llama --extra 8 --reps 5 --data /tmp/zoo-ind-llama.json
    /work/venvs/zoo/bin/python benchmarks/zoo/bench_inductor_verdict.py --evaluate \\
        --data /tmp/zoo-ind-llama.json --data /tmp/zoo-ind-vit.json \\
        --out benchmarks/zoo/results/inductor_verdict.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "benchmarks"))

import bench_latency_verdict as blv  # noqa: E402
from generate import build_repo  # noqa: E402
from models import MODELS, ZooModel  # noqa: E402

SLOW = '''

class Slow(Net):
    """The injected slowdown: EXTRA chained Linear(64, 64) + tanh on a fixed buffer."""
    EXTRA = {extra}

    def __init__(self) -> None:
        super().__init__()
        self.extra = torch.nn.ModuleList(torch.nn.Linear(64, 64) for _ in range(self.EXTRA))
        self.register_buffer("probe", torch.randn(16, 64))

    def forward(self, {arg}):
        out = super().forward({arg})
        h = self.probe
        for lin in self.extra:
            h = torch.tanh(lin(h))
        return out + 0.0 * h.mean()
'''


def variant(m: ZooModel, extra: int) -> ZooModel:
    """`m` with one shape case (the first value of each dim); with `extra`, slowed."""
    one = {k: [v[0]] for k, v in m.shapes.items()}
    src = m.source
    if extra:
        if "class Net(" not in src:
            raise SystemExit(f"{m.name}: no Net class to slow down")
        arg = m.inputs.split("name: ", 1)[1].split(",", 1)[0]
        src = src.replace("    return Net().eval()\n", "    return Slow().eval()\n")
        src += SLOW.format(extra=extra, arg=arg)
    return dataclasses.replace(m, shapes=one, source=src)


def make_repos(work: str, m: ZooModel, extra: int) -> dict[str, str]:
    roots = {}
    for v, e in (("base", 0), ("same", 0), ("slow", extra)):
        roots[v] = os.path.join(work, v)
        build_repo(roots[v], [variant(m, e)], backend="inductor", rounds=3, repeats=blv.REPEATS,
                   warmup=blv.WARMUP)
    return roots


def measure_side_for(name: str):
    from pt2bot.smoke import run_models

    def measure_side(config: Any, root: str, out: str) -> dict[str, Any]:
        res = run_models(config, repo_root=root, out_dir=out, models=[name], device="cpu",
                         phases=["latency"]).to_json()
        res["models"][0]["name"] = "tiny"    # blv's pooling names the model "tiny"
        return res
    return measure_side


def calibrate(name: str, extras: list[int], n: int) -> None:
    """Base and each slowed variant compiled with inductor in ONE process, interleaved."""
    m = next(x for x in MODELS if x.name == name)
    work = tempfile.mkdtemp(prefix="zoo-ind-cal-")
    code = ["import sys, time, statistics, torch", "torch.set_num_threads(1)",
            f"sys.path.insert(0, {work!r})", "import zoo_shim  # noqa: F401", "fns = {}"]
    for e in [0, *extras]:
        v = variant(m, e)
        d = os.path.join(work, f"v{e}")
        os.makedirs(d)
        src = v.source.replace("from zoo.layers import", "from layers import")
        with open(os.path.join(d, f"m{e}.py"), "w") as fh:
            fh.write(src)
        code.append(f"sys.path.insert(0, {d!r}); import m{e}; "
                    f"fns[{e}] = torch.compile(m{e}.build())")
    with open(os.path.join(work, "zoo_shim.py"), "w") as fh:
        from generate import INIT, LAYERS
        fh.write(INIT)
    with open(os.path.join(work, "layers.py"), "w") as fh:
        fh.write(LAYERS)
    shape = [v[0] for v in m.shapes.values()]
    if "int64" in m.inputs:
        code.append(f"x = torch.randint(0, 100, {shape})")
    else:
        dims = m.inputs.split("shape: [", 1)[1].split("]", 1)[0].split(", ")
        full = [shape[0] if d == "batch" else int(d) for d in dims]
        code.append(f"x = torch.randn({full})")
    code.append(f'''
t = {{k: [] for k in fns}}
with torch.inference_mode():
    for f in fns.values():
        for _ in range(10): f(x)
    for i in range({n}):
        for k in (list(fns) if i % 2 == 0 else list(fns)[::-1]):
            t0 = time.perf_counter(); fns[k](x); t[k].append(time.perf_counter() - t0)
for k in fns:
    print(f"EXTRA={{k}}: median {{statistics.median(t[k]) * 1e3:.3f}} ms, "
          f"ratio {{statistics.median(t[k]) / statistics.median(t[0]):.3f}}")
''')
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "cache"))
    subprocess.run([sys.executable, "-c", "\n".join(code)], check=True, env=env)


def collect(args: argparse.Namespace) -> None:
    m = next(x for x in MODELS if x.name == args.model)
    data: dict[str, Any] = {"reps": [], "repeats": blv.REPEATS, "warmup": blv.WARMUP,
                            "rounds": blv.ROUNDS, "extra": args.extra,
                            "model": f"zoo {m.name} ({m.library}), one case "
                                     f"{ {k: v[0] for k, v in m.shapes.items()} }, backend "
                                     f"inductor, 1 thread, latency phase of the real worker"}
    if os.path.exists(args.data):
        with open(args.data) as fh:
            data = json.load(fh)
    work = tempfile.mkdtemp(prefix=f"zoo-ind-{m.name}-")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(work, "inductor-cache"))
    roots = make_repos(work, m, data["extra"])
    from pt2bot.configfile import load_config
    config = load_config(os.path.join(roots["base"], "pt2bot.yml"))
    blv.measure_side = measure_side_for(m.name)     # review_pair measures through this
    t0 = time.time()
    while len(data["reps"]) < args.reps:
        r = len(data["reps"])
        load0 = os.getloadavg()[0]
        rep = blv.review_pair(config, roots["base"], roots["same"], roots["slow"],
                              os.path.join(work, "out", str(r)), data["rounds"], r)
        rep["load"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
        data["reps"].append(rep)
        with open(args.data + ".tmp", "w") as fh:
            json.dump(data, fh)
        os.replace(args.data + ".tmp", args.data)
        print(f"{m.name} rep {r + 1}/{args.reps} {time.time() - t0:.0f}s load {rep['load']}",
              file=sys.stderr, flush=True)


def evaluate(paths: list[str], out: str | None) -> None:
    settings = [{"rounds": 3, "samples": 50}, {"rounds": 2, "samples": 50},
                {"rounds": 3, "samples": 20}]
    summary: dict[str, Any] = {"models": {}}
    pooled_reps: list[dict[str, Any]] = []
    lines = []
    for p in paths:
        with open(p) as fh:
            data = json.load(fh)
        rows = blv.evaluate(data, settings)
        tr = blv.true_ratio(data)
        loads = [x for r in data["reps"] for x in r["load"]]
        summary["models"][data["model"]] = {
            "extra": data["extra"], "reps": len(data["reps"]), "rows": rows, "load": loads,
            "true_ratio": {k: v for k, v in tr.items() if k != "process_p10_spread_A"}}
        pooled_reps += data["reps"]
        lines.append(f"{data['model']}: {len(data['reps'])} reps, EXTRA={data['extra']}, "
                     f"true A/B ratio (quietest process) {tr['best_process']}, load "
                     f"{min(loads):.1f}-{max(loads):.1f}")
        for r in rows:
            lines.append(f"  rounds {r['rounds']} samples {r['samples']}: A/A false alarms "
                         f"{r['false_alarms']}/{r['reviews']}, A/B detected "
                         f"{r['detected']}/{r['reviews']}, A/B ratio median "
                         f"{r['ab_ratio_median']}, A/A range {r['aa_ratio_range']}")
    print("\n".join(lines))
    if out:
        with open(out, "w") as fh:
            json.dump(summary, fh, indent=1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calibrate", metavar="MODEL")
    ap.add_argument("--extras", default="4,8,16")
    ap.add_argument("--collect", action="store_true")
    ap.add_argument("--evaluate", action="store_true")
    ap.add_argument("--model", default="llama")
    ap.add_argument("--extra", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--data", action="append", default=[])
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.calibrate:
        calibrate(args.calibrate, [int(x) for x in args.extras.split(",")], 1000)
        return 0
    if args.collect:
        args.data = args.data[0] if args.data else f"/tmp/zoo-ind-{args.model}.json"
        collect(args)
        return 0
    if args.evaluate:
        evaluate(args.data, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
