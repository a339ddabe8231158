"""`pt2bot review --all` against its floor: the bare torch work that yields the same facts.

    /work/main/.venv/bin/python benchmarks/bench_floor.py [--repeat 1] [--models a,b,c]
        [--rounds 3] [--data out.json] [--pt2bot before=DIR --pt2bot after=DIR]

(The figures in the README: `--no-warm --pt2bot before=<git archive of 69992df>
--pt2bot after=<git archive of 3b3311e> --data benchmarks/results/floor.json`, ~31 min at a
load of 9-15 on 2 cores.)

The floor, per model and side (base and head), is ONE process that imports torch, builds the
model, makes one eager call per shape case, one compile over the cases with dynamo's structured
trace and the graph_breaks/recompiles logs on (breaks and recompiles together), one export with
the dynamic dims (checked against eager on every case), and the timed calls the latency
protocol makes (eager, compiled and the reference workload per case: one warm-up, then
`rounds` x `repeats` samples each, all in this one process). No pt2bot code runs in it.

pt2bot's side is the real CLI, `pt2bot review --all --base main` of a one-commit PR in a
generated git repository, with the same backend (aot_eager), the same threads (1), the same
inductor cache directory, and every phase on but shape advice and fix verification, which are
measured on their own (`run.shape_advice: false`, `fixes: {verify: false}`; `--old-config`
leaves the keys out for a pt2bot from before them). Floor and review are interleaved (floor, review,
review, floor, ...), so drift in the machine's load hits both alike.

The models: the bundled example's `tiny_encoder` (examples/zoo) and real-library models built
tiny (benchmarks/real_code/models.py's specs): an x-transformers decoder, vector-quantize-pytorch's
VectorQuantize, local-attention's LocalTransformer. The libraries come from the real-code venv
(`--site`, appended to sys.path by the generated model module; torch is this interpreter's).

Where the difference goes, phase by phase (seconds summed over models and sides):
- `start`: processes before any model work. pt2bot: each first-run segment's wall minus its
  workers' own `duration_s` (interpreter start, pt2bot's imports, supervision); floor: each
  process's wall minus its own timed work.
- `import+build+eager`: pt2bot: `duration_s` minus the phases (torch import, model and inputs,
  eager calls, coverage); floor: the same without coverage.
- `compile`: pt2bot: the breaks + matrix phases; floor: its one compile over the cases.
- `export`: the export phases, plus the review's run that locates a head failure with
  `draft_export` where its report needs it / the floor's export, checked on every case.
- `latency`: the latency phase of the first run / the floor's timed calls.
- `latency rounds`: pt2bot's extra latency-only processes (rounds 1..R-1, both sides); the
  floor has none.
- `review's own`: diff, static checks, worktrees, compare, render: the review's total minus its
  smoke stage.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SITE = "/work/venvs/realcode/lib/python3.11/site-packages"

# name → entry, kwargs, inputs (pt2bot.yml's form), shapes, dynamic dims
MODELS: dict[str, dict[str, Any]] = {
    "tiny_encoder": {
        "entry": "zoo.encoder:TinyEncoder", "kwargs": {"vocab": 100, "dim": 32, "depth": 2},
        "inputs": [{"name": "tokens", "shape": ["batch", "seq"], "dtype": "int64", "low": 0,
                    "high": 100}],
        "shapes": {"batch": [2, 8], "seq": [16, 32]}, "dynamic": ["batch", "seq"]},
    "xt_decoder": {
        "entry": "zoo.real:xt_decoder", "kwargs": {},
        "inputs": [{"name": "x", "shape": ["batch", "seq"], "dtype": "int64", "low": 0,
                    "high": 64}],
        "shapes": {"batch": [2, 3], "seq": [16, 24]}, "dynamic": ["batch", "seq"]},
    "vq": {
        "entry": "zoo.real:vq", "kwargs": {},
        "inputs": [{"name": "x", "shape": ["batch", "seq", 16], "dtype": "float32"}],
        "shapes": {"batch": [2, 3], "seq": [8, 12]}, "dynamic": ["batch", "seq"]},
    "local_transformer": {
        "entry": "zoo.real:local_transformer", "kwargs": {},
        "inputs": [{"name": "x", "shape": ["batch", "seq"], "dtype": "int64", "low": 0,
                    "high": 32}],
        "shapes": {"batch": [2, 3], "seq": [16, 24]}, "dynamic": ["batch", "seq"]},
}
DEFAULT_MODELS = "tiny_encoder,xt_decoder,vq"

REAL_PY = '''\
"""Tiny real-library models (benchmarks/real_code/models.py's specs); the libraries come
from the real-code venv, appended to the path (torch stays this interpreter's)."""
import sys

SITE = {site!r}
if SITE not in sys.path:
    sys.path.append(SITE)


def xt_decoder():
    from x_transformers import Decoder, TransformerWrapper
    return TransformerWrapper(num_tokens=64, max_seq_len=32,
                              attn_layers=Decoder(dim=32, depth=2, heads=2, attn_dim_head=16))


def vq():
    from vector_quantize_pytorch import VectorQuantize
    return VectorQuantize(dim=16, codebook_size=32, decay=0.8, commitment_weight=1.)


def local_transformer():
    from local_attention import LocalTransformer
    return LocalTransformer(num_tokens=32, max_seq_len=64, dim=16, depth=1, heads=2,
                            dim_head=8, causal=True, local_attn_window_size=4)
'''

# The floor's one process per model and side: torch only, no pt2bot.
FLOOR_PY = r'''
import contextlib, importlib, io, itertools, json, sys, time
t_start = time.perf_counter()
spec = json.load(open(sys.argv[1]))
import torch
import torch._dynamo   # what torch.compile imports on first use: part of the import here
torch.set_num_threads(1)
t_import = time.perf_counter()
mod, _, fn = spec["entry"].partition(":")
model = getattr(importlib.import_module(mod), fn)(**spec["kwargs"]).eval()
names = list(spec["shapes"])
cases = [dict(zip(names, c)) for c in itertools.product(*spec["shapes"].values())]
dynamic = set(spec["dynamic"])
g = torch.Generator().manual_seed(0)

def inputs(case):
    out = []
    for inp in spec["inputs"]:
        shape = [case[d] if isinstance(d, str) else d for d in inp["shape"]]
        if inp["dtype"] == "int64":
            out.append(torch.randint(inp.get("low", 0), inp["high"], shape, generator=g))
        else:
            out.append(torch.randn(*shape, generator=g))
    return out

def axes(inp):
    return {ax: d for ax, d in enumerate(inp["shape"]) if isinstance(d, str) and d in dynamic}

def close(a, b):
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and (not a.is_floating_point()
                                       or torch.allclose(a, b, rtol=1e-3, atol=1e-4))
    if isinstance(a, (tuple, list)):
        return all(close(x, y) for x, y in zip(a, b))
    return True

args = [inputs(c) for c in cases]
with torch.no_grad():
    eager = [model(*a) for a in args]
t_eager = time.perf_counter()
facts = {}
compiled = torch.compile(model, backend=spec["backend"])
with torch.no_grad():
    for a, e in zip(args, eager):
        marked = [t.detach() for t in a]
        for t, inp in zip(marked, spec["inputs"]):
            for ax in axes(inp):
                torch._dynamo.maybe_mark_dynamic(t, ax)
        facts.setdefault("compiled_match", []).append(close(e, compiled(*marked)))
t_compile = time.perf_counter()
from torch.export import Dim
dims = {d: Dim(d, min=2, max=1 << 20) for d in dynamic}
ex = args[-1]
shapes = tuple({ax: dims[d] for ax, d in axes(inp).items()} or None for inp in spec["inputs"])
try:
    with contextlib.redirect_stderr(io.StringIO()):
        ep = torch.export.export(model, tuple(ex), dynamic_shapes=shapes)
    em = ep.module()
    with torch.no_grad():
        facts["export"] = all(close(e, em(*a)) for a, e in zip(args, eager))
except Exception as exc:
    facts["export"] = type(exc).__name__
t_export = time.perf_counter()
ga = torch.Generator().manual_seed(0)
ra = torch.randn(64, 128, generator=ga)
rw = torch.randn(128, 128, generator=ga) / 16

def ref():
    h = ra
    for _ in range(4):
        h = torch.relu(h @ rw)
    return h

samples = 0
with torch.no_grad():
    for a in args:
        calls = (lambda: model(*a), lambda: compiled(*a), ref)
        for _ in range(spec["warmup"]):
            for c in calls:
                c()
        times = [[], [], []]
        for r in range(spec["rounds"] * spec["repeats"]):
            for k in range(3):
                i = (r + k) % 3
                t0 = time.perf_counter()
                calls[i]()
                times[i].append(time.perf_counter() - t0)
        samples += sum(map(len, times))
t_end = time.perf_counter()
json.dump({"import": t_import - t_start, "build_eager": t_eager - t_import,
           "compile": t_compile - t_eager, "export": t_export - t_compile,
           "latency": t_end - t_export, "inner": t_end - t_start, "samples": samples,
           "facts": facts}, open(sys.argv[2], "w"))
'''


def sh(cwd: str, *args: str) -> str:
    return subprocess.run(list(args), cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def config_text(names: list[str], a: argparse.Namespace, cache: str) -> str:
    lines = ["version: 1", "static: {paths: [zoo/]}", "models:"]
    for n in names:
        m = MODELS[n]
        lines += [f"  - name: {n}", f"    entry: {m['entry']}",
                  f"    kwargs: {json.dumps(m['kwargs'])}",
                  f"    inputs: {json.dumps(m['inputs'])}",
                  f"    shapes: {json.dumps(m['shapes'])}",
                  f"    dynamic: {json.dumps(m['dynamic'])}"]
    lines.append(f"run: {{device: cpu, backend: {a.backend}, threads: 1, jobs: 1, timeout_s: 900, "
                 f"rounds: {a.rounds}, warmup: {a.warmup}, repeats: {a.repeats}, "
                 f"cache_dir: {json.dumps(cache)}"
                 + ("" if a.old_config else ", shape_advice: false") + "}")
    if not a.old_config:
        # measured on their own: the floor has neither (a pt2bot from before them rejects
        # these keys: --old-config)
        lines.append("fixes: {verify: false}")
    return "\n".join(lines) + "\n"


def build_repo(repo: str, names: list[str], a: argparse.Namespace, cache: str,
               current: str) -> None:
    """main: the example's zoo + the real-library module; the PR: a touched shared layer.

    The repository holds a `pt2bot` symlink to `current` (itself a link the benchmark points at
    the pt2bot being measured): workers import pt2bot from the repository first (their
    PYTHONPATH), so each side of a before/after comparison runs its own worker code, in the
    base worktree too, whatever pt2bot the interpreter has installed."""
    os.makedirs(os.path.join(repo, "zoo"))
    os.symlink(current, os.path.join(repo, "pt2bot"))
    for f in ("__init__.py", "encoder.py", "layers.py", "mlp.py"):
        shutil.copy(os.path.join(TOP, "examples", "zoo", f), os.path.join(repo, "zoo", f))
    with open(os.path.join(repo, "zoo", "real.py"), "w") as fh:
        fh.write(REAL_PY.format(site=a.site))
    with open(os.path.join(repo, "pt2bot.yml"), "w") as fh:
        fh.write(config_text(names, a, cache))
    sh(repo, "git", "init", "-q", "-b", "main")
    sh(repo, "git", "-c", "user.name=b", "-c", "user.email=b@b", "add", "-A")
    sh(repo, "git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "main")
    sh(repo, "git", "checkout", "-qb", "pr")
    with open(os.path.join(repo, "zoo", "layers.py"), "a") as fh:
        fh.write("\n# touched by the PR\n")
    if a.pr == "data":
        # A changed file that is not Python code turns the latency gate off (pt2bot/latency_gate.py):
        # every model is timed, as the floor is. With `--pr comment` the gate finds nothing that
        # can change speed and times nothing.
        with open(os.path.join(repo, "notes.txt"), "w") as fh:
            fh.write("touched by the PR\n")
        sh(repo, "git", "add", "notes.txt")
    sh(repo, "git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam", "pr")


def worker_env(repo: str, cache: str) -> dict[str, str]:
    """What pt2bot's workers get (smoke/env.py's scrub_env), for the floor's processes."""
    sys.path.insert(0, TOP)
    from pt2bot.smoke.env import scrub_env
    return scrub_env(os.environ, repo_root=repo, threads=1, cache_dir=cache)


def run_floor(repo: str, names: list[str], a: argparse.Namespace, cache: str,
              work: str) -> dict[str, Any]:
    """One process per model and side (2 sides), serially, as the review runs them."""
    env = worker_env(repo, cache)
    per: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for side in ("head", "base"):
        for n in names:
            m = MODELS[n]
            spec = {**m, "backend": a.backend, "warmup": a.warmup, "repeats": a.repeats,
                    "rounds": max(1, a.rounds)}
            sp, out = os.path.join(work, "floor.json"), os.path.join(work, "floor.out.json")
            with open(sp, "w") as fh:
                json.dump(spec, fh)
            trace = os.path.join(work, "trace", f"{n}-{side}")
            shutil.rmtree(trace, ignore_errors=True)
            penv = {**env, "TORCH_TRACE": trace, "TORCH_LOGS": "graph_breaks,recompiles"}
            t = time.perf_counter()
            with open(os.path.join(work, f"floor-{n}-{side}.log"), "w") as log:
                subprocess.run([sys.executable, "-c", FLOOR_PY, sp, out], cwd=repo, env=penv,
                               check=True, stdout=log, stderr=subprocess.STDOUT)
            wall = time.perf_counter() - t
            with open(out) as fh:
                r = json.load(fh)
            per.append({"model": n, "side": side, "wall": wall, **r})
    total = time.perf_counter() - t0
    phases = {
        "start": sum(p["wall"] - p["inner"] for p in per),
        "import+build+eager": sum(p["import"] + p["build_eager"] for p in per),
        "compile": sum(p["compile"] for p in per),
        "export": sum(p["export"] for p in per),
        "latency": sum(p["latency"] for p in per),
        "latency rounds": 0.0,
        "review's own": 0.0,
    }
    return {"total": total, "phases": phases, "processes": len(per), "per": per}


_SEGMENT = re.compile(r"pt2bot: smoke (head|base) \(.*?\)( latency round (\d+)| export location)?$")


def point(current: str, top: str) -> None:
    """The repository's pt2bot link now leads to `top`'s pt2bot."""
    tmp = current + ".new"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.join(top, "pt2bot"), tmp)
    os.replace(tmp, current)


def run_review(repo: str, a: argparse.Namespace, out: str, top: str = TOP) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    env["PYTHONPATH"] = top   # the CLI of the pt2bot measured
    lines: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pt2bot", "review", "--all", "--base", "main",
                             "--out", out], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            lines.append((time.perf_counter() - t0, line.rstrip("\n")))
        proc.wait()
    except BaseException:
        os.killpg(proc.pid, signal.SIGTERM)
        raise
    total = time.perf_counter() - t0
    with open(os.path.join(out, "report.json")) as fh:
        report = json.load(fh)
    stages = report["timings"]
    runs: dict[str, list[dict[str, Any]]] = {}
    for side in ("head", "base"):
        with open(os.path.join(out, f"{side}.json")) as fh:
            runs[side] = json.load(fh)["models"]
    # segments: each run_models call, from its log line to the next one (the last ends with
    # the smoke stage)
    # round -1: the export phase again where a failure needs locating (draft_export)
    marks = [(t, m.group(1), -1 if m.group(2) == " export location" else int(m.group(3) or 0))
             for t, line in lines if (m := _SEGMENT.search(line))]
    smoke_end = marks[0][0] + stages.get("smoke", 0.0) if marks else 0.0
    seg = [(side, rnd, (marks[k + 1][0] if k + 1 < len(marks) else smoke_end) - t)
           for k, (t, side, rnd) in enumerate(marks)]
    first = sum(d for _side, rnd, d in seg if rnd == 0)
    rounds = sum(d for _side, rnd, d in seg if rnd > 0)
    locate = sum(d for _side, rnd, d in seg if rnd < 0)
    models = [m for side in runs.values() for m in side]
    dur = sum(float(m.get("duration_s") or 0.0) for m in models)
    ph = {k: sum(float((m.get("phase_s") or {}).get(k, 0.0)) for m in models)
          for k in ("breaks", "matrix", "export", "latency")}
    phases = {
        "start": first - dur,
        "import+build+eager": dur - sum(ph.values()),
        "compile": ph["breaks"] + ph["matrix"],
        "export": ph["export"] + locate,
        "latency": ph["latency"],
        "latency rounds": rounds,
        "review's own": total - stages.get("smoke", 0.0),
    }
    statuses = {f"{m['name']}/{side}": m["status"] for side, ms in runs.items() for m in ms}
    facts = {f"{m['name']}/{side}": {
        "graph_breaks": len(m.get("graph_breaks") or []),
        "recompiles": (m.get("recompiles") or {}).get("count"),
        "export_ok": (m.get("export") or {}).get("ok"),
        "export_kind": (m.get("export") or {}).get("kind"),
        "export_path": (m.get("export") or {}).get("path"),
        "phase_errors": [e.get("phase") for e in m.get("phase_errors") or []]}
        for side, ms in runs.items() for m in ms}
    return {"total": total, "phases": phases, "stages": stages, "segments": seg,
            "processes": len(seg), "statuses": statuses, "facts": facts,
            "conclusion": report.get("conclusion"), "rc": proc.returncode,
            "phase_s": {f"{m['name']}/{side}": m.get("phase_s")
                        for side, ms in runs.items() for m in ms},
            "duration_s": {f"{m['name']}/{side}": m.get("duration_s")
                           for side, ms in runs.items() for m in ms}}


def table(floors: list[dict[str, Any]], reviews: list[dict[str, Any]], label: str = "") -> str:
    keys = list(floors[0]["phases"])
    med = lambda rs, k: statistics.median(r["phases"][k] for r in rs)  # noqa: E731
    ft = statistics.median(r["total"] for r in floors)
    rt = statistics.median(r["total"] for r in reviews)
    out = [f"| phase (s, all models, both sides) | floor | review --all {label} | difference "
           f"| share of difference |",
           "|---|---:|---:|---:|---:|"]
    for k in keys:
        f, r = med(floors, k), med(reviews, k)
        share = (r - f) / (rt - ft) * 100 if rt != ft else 0.0
        out.append(f"| {k} | {f:.1f} | {r:.1f} | {r - f:+.1f} | {share:.0f} % |")
    out.append(f"| **total** | **{ft:.1f}** | **{rt:.1f}** | **{rt - ft:+.1f}** | |")
    out.append("")
    out.append(f"ratio review / floor: **{rt / ft:.2f}x** (medians of {len(reviews)} run(s) each; "
               f"floor {floors[0]['processes']} processes, review {reviews[0]['processes']} "
               f"worker runs)")
    return "\n".join(out)


def _commit(top: str) -> str | None:
    try:
        return sh(top, "git", "rev-parse", "--short", "HEAD")
    except (subprocess.CalledProcessError, OSError):
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help=f"comma-separated, of {', '.join(MODELS)}")
    ap.add_argument("--repeat", type=int, default=1, help="floor/review pairs, alternating order")
    ap.add_argument("--rounds", type=int, default=3, help="run.rounds (latency rounds)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--backend", default="aot_eager")
    ap.add_argument("--pr", choices=("data", "comment"), default="data",
                    help="the PR: a comment in a shared layer plus a data file (the latency gate "
                         "off: every model timed) or the comment alone (the gate decides)")
    ap.add_argument("--old-config", action="store_true",
                    help="leave out shape_advice/fixes (for a pt2bot from before them)")
    ap.add_argument("--site", default=SITE, help="site-packages with the model libraries")
    ap.add_argument("--work", default=None, help="working directory (default: a temp dir)")
    ap.add_argument("--data", default=None, help="append the records to this JSON file")
    ap.add_argument("--label", default="", help="a label for the records")
    ap.add_argument("--no-warm", action="store_true",
                    help="no untimed floor pass first (the caches are warm already)")
    ap.add_argument("--pt2bot", action="append", default=None, metavar="LABEL=DIR",
                    help="a pt2bot checkout to measure (repeatable: before/after in one run, "
                         "interleaved); default: this one")
    a = ap.parse_args()
    names = a.models.split(",")
    tops = dict(x.split("=", 1) for x in (a.pt2bot or [f"this={TOP}"]))
    work = a.work or tempfile.mkdtemp(prefix="pt2bot-floor-")
    os.makedirs(work, exist_ok=True)
    repo, cache = os.path.join(work, "repo"), os.path.join(work, "inductor")
    current = os.path.join(work, "current-pt2bot")
    shutil.rmtree(repo, ignore_errors=True)
    point(current, next(iter(tops.values())))
    build_repo(repo, names, a, cache, current)
    print(f"models {names}, backend {a.backend}, rounds {a.rounds}, warmup {a.warmup}, "
          f"repeats {a.repeats}; pt2bot {tops}; work {work}", flush=True)
    if not a.no_warm:   # one untimed floor pass: a warm page cache and inductor cache for all
        run_floor(repo, names, a, cache, work)
    floors: list[dict[str, Any]] = []
    reviews: dict[str, list[dict[str, Any]]] = {label: [] for label in tops}
    loads = []
    for k in range(a.repeat):
        order = ["floor", *tops]
        if k % 2:
            order.reverse()
        for what in order:
            load0 = os.getloadavg()[0]
            if what == "floor":
                r = run_floor(repo, names, a, cache, work)
                floors.append(r)
            else:
                point(current, tops[what])
                r = run_review(repo, a, os.path.join(work, "out"), tops[what])
                reviews[what].append(r)
            loads.append((what, load0, os.getloadavg()[0]))
            print(f"{what}: {r['total']:.1f} s (load {load0:.2f} -> {os.getloadavg()[0]:.2f})",
                  flush=True)
    for label, rs in reviews.items():
        print()
        print(table(floors, rs, label))
        print(f"\n{label}: review facts:", json.dumps(rs[-1]["facts"]))
        print(f"{label}: review stages:", rs[-1]["stages"])
        print(f"{label}: review segments:", [(s, r, round(d, 1)) for s, r, d in rs[-1]["segments"]])
    print("floor facts:", json.dumps({f"{p['model']}/{p['side']}": p["facts"]
                                      for p in floors[-1]["per"]}))
    if a.data:
        records = []
        if os.path.exists(a.data):
            with open(a.data) as fh:
                records = json.load(fh)
        records.append({"label": a.label, "models": names, "backend": a.backend,
                        "rounds": a.rounds, "warmup": a.warmup, "repeats": a.repeats,
                        "pt2bot": {k: {"dir": v, "commit": _commit(v)} for k, v in tops.items()},
                        "loads": loads, "floors": floors, "reviews": reviews,
                        "uptime": sh(work, "uptime")})
        with open(a.data, "w") as fh:
            json.dump(records, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
