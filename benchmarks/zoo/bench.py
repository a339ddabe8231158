"""Time pt2bot's audit and review on the generated zoo (benchmarks/zoo/generate.py).

    /work/venvs/zoo/bin/python benchmarks/zoo/bench.py --work /tmp/zoo-bench \\
        --data benchmarks/zoo/results/grid.json SCENARIO...

Each scenario runs the real CLI (`python -m pt2bot ...`, this interpreter: the zoo venv)
in the generated repository, one after the other, and appends one record to --data
(resumable: a scenario already there is skipped unless --again):

  audit           pt2bot audit on main (every model, one side)
  one             review of the one-model PR (pr-one) against main
  one-all         the same PR with --all (every model, both sides)
  shared          review of the shared-layer PR (pr-shared)
  shared-shardI-N one shard of the shared-layer review (`--shard I/N`); all N are run
                  when the scenario is written `shared-shards-N`
  all-shards-N    the same for `review --all` on pr-one
  audit-shards-N  the same for the audit
  merge-X-N       `pt2bot merge` of the N shard directories of scenario X (shared, all, audit)
  nosmoke         review --no-smoke of pr-shared: the fixed cost without any model
  inductor-cold   `pt2bot run` of INDUCTOR_MODELS with backend inductor (a second repository,
                  same models), the inductor cache emptied first; inductor-warm: again, warm

Options: --rounds/--repeats (run.rounds, run.repeats); --no-shape-advice and --no-verify-fixes
write `run.shape_advice: false` and `fixes: {verify: false}` into the zoo's pt2bot.yml (a review
then does what pt2bot 512246e did; without them the file has neither key, so that older pt2bot
can read it). The repository is generated once per --work, so each setting needs its own.

A record: the command, wall seconds, the load average before and after, report.json's
`timings`, and per model and side its status, `duration_s`, `phase_s`; the worker
processes' wall time is read from their log files' modification times (the last write
of each round) so that the latency rounds can be told apart from the first run.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from generate import build_repo, config_yml  # noqa: E402
from models import MODELS  # noqa: E402


def sh(repo: str, *args: str) -> str:
    return subprocess.run(list(args), cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def pt2bot(repo: str, args: list[str], log: str) -> tuple[int, float, list[tuple[float, str]]]:
    """Run the CLI; returns the exit code, the wall seconds and its stderr/stdout lines, each
    with the seconds since the start at which it arrived (the stage boundaries)."""
    env = dict(os.environ)
    env.pop("GITHUB_TOKEN", None)
    t0 = time.perf_counter()
    lines: list[tuple[float, str]] = []
    with open(log, "w") as fh:
        # its own process group: an interrupted benchmark takes its workers with it
        proc = subprocess.Popen([sys.executable, "-m", "pt2bot", *args], cwd=repo, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                lines.append((round(time.perf_counter() - t0, 2), line.rstrip("\n")))
                fh.write(line)
            rc = proc.wait()
        except BaseException:
            os.killpg(proc.pid, signal.SIGTERM)
            raise
    return rc, round(time.perf_counter() - t0, 2), lines


def models_of(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        data = json.load(fh)
    return [{"name": m.get("name"), "status": m.get("status"),
             "duration_s": m.get("duration_s"), "phase_s": m.get("phase_s"),
             "compile_s": m.get("compile_s"), "graph_breaks": len(m.get("graph_breaks") or []),
             "export_ok": (m.get("export") or {}).get("ok"),
             "error": (m.get("error") or {}).get("kind")} for m in data.get("models", [])]


def round_walls(lines: list[tuple[float, str]], wall: float) -> dict[str, float]:
    """Seconds per smoke run, from the pipeline's `pt2bot: smoke <side> (...)` lines: each
    run lasts until the next one starts (the last one until the command ends, so it also
    holds the compare and render stages, a fraction of a second). `<side>/locate` is the
    export-location run (`... export location`: draft_export where the report needs it);
    `fixes` starts at the proof's first line (`pt2bot: fixes: ...`) and ends the last smoke
    run, when the review proves fixes."""
    starts = []
    for t, line in lines:
        if line.startswith("pt2bot: smoke "):
            side = line.split()[2]
            if line.endswith(" export location"):
                rnd = "locate"
            else:
                rnd = line.rsplit("latency round ", 1)[1] if "latency round " in line else "0"
            starts.append((t, f"{side}/{rnd}"))
        elif line.startswith("pt2bot: fixes: ") and not any(n == "fixes" for _, n in starts):
            starts.append((t, "fixes"))
    walls = {"before_smoke": starts[0][0] if starts else wall}
    for k, (t, name) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else wall
        walls[name] = round(end - t, 2)
    return walls


def report_of(out: str) -> dict[str, Any]:
    path = os.path.join(out, "report.json")
    if not os.path.exists(path):
        return {}
    with open(path) as fh:
        rep = json.load(fh)
    return {"conclusion": rep.get("conclusion"), "timings": rep.get("timings"),
            "partial": rep.get("partial"),
            "skipped": len(rep.get("skipped") or []),
            "selected": sorted({m.get("name") for m in rep.get("models", [])}
                               - {s.get("name") for s in rep.get("skipped") or []})}


INDUCTOR_MODELS = ["llama", "bert", "vit"]


def run_inductor(name: str, work: str) -> dict[str, Any]:
    repo = os.path.join(work, "repo-inductor")
    if not os.path.isdir(os.path.join(repo, ".git")):
        build_repo(repo, [m for m in MODELS if m.name in INDUCTOR_MODELS], backend="inductor")
    cache = os.path.join(work, "inductor-cache")
    if name == "inductor-cold":
        subprocess.run(["rm", "-rf", cache], check=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    out = os.path.join(work, "out", name)
    os.makedirs(out, exist_ok=True)
    args = ["run", "--config", "pt2bot.yml", "--out", os.path.join(out, "results.json")]
    for m in INDUCTOR_MODELS:
        args += ["--model", m]
    load0 = os.getloadavg()
    rc, wall, _ = pt2bot(repo, args, out + ".log")
    return {"scenario": name, "branch": "main", "command": "pt2bot " + " ".join(
                a.replace(work, "$WORK") for a in args),
            "rc": rc, "wall_s": wall, "load": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
            "head": models_of(os.path.join(out, "results.json")), "base": []}


def run_scenario(name: str, repo: str, work: str, costs: str | None = None) -> dict[str, Any]:
    if name.startswith("inductor-"):
        return run_inductor(name, work)
    out = os.path.join(work, "out", name)
    subprocess.run(["rm", "-rf", out], check=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    log = out + ".log"
    parts = name.split("-")
    kind = parts[0]
    shard = None
    if len(parts) == 3 and parts[1].startswith("shard"):      # X-shardI-N
        shard = f"{parts[1][5:]}/{parts[2]}"
    branch = {"one": "pr-one", "all": "pr-one", "shared": "pr-shared", "nosmoke": "pr-shared",
              "audit": "main"}.get(kind, "main")
    if kind == "one" and name == "one-all":
        kind = "all"
    sh(repo, "git", "checkout", "-q", branch)
    if kind == "merge":                                        # merge-X-N
        src, n = parts[1], int(parts[2])
        dirs = [os.path.join(work, "out", f"{src}-shard{i}-{n}") for i in range(1, n + 1)]
        args = ["merge", *dirs, "--out", out]
        if src == "audit":
            args += ["--history", os.path.join(work, f"history-merge-{n}.sqlite")]
    elif kind == "audit":
        args = ["audit", "--config", "pt2bot.yml",
                "--history", os.path.join(work, f"history-{name}.sqlite"), "--out", out]
    elif kind == "nosmoke":
        args = ["review", "--base", "main", "--out", out, "--no-smoke"]
    else:
        args = ["review", "--base", "main", "--out", out]
        if kind == "all":
            args.append("--all")
    if shard:
        args += ["--shard", shard]
        # the nightly audit's baseline balances the shards by per-model duration_s, as a
        # matrix in CI would be given it (without one: round-robin over sorted names);
        # --costs names another results file (a review's head.json has duration_s too)
        found = [costs] if costs else glob.glob(
            os.path.join(work, "out", "audit", "baseline-*.json"))
        if found and kind != "audit":
            args += ["--costs", found[0]]
    load0 = os.getloadavg()
    rc, wall, lines = pt2bot(repo, args, log)
    with open(log) as fh:
        tail = fh.read()[-1500:]
    rec: dict[str, Any] = {
        "scenario": name, "branch": branch, "command": "pt2bot " + " ".join(
            a.replace(work, "$WORK") for a in args),
        "rc": rc, "wall_s": wall, "load": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "report": report_of(out), "rounds_wall_s": round_walls(lines, wall),
        "head": models_of(os.path.join(out, "head.json")),
        "base": models_of(os.path.join(out, "base.json")),
        "log_tail": tail if rc not in (0, 1) else None}
    if kind == "audit":
        rec["head"] = models_of(next(iter(glob.glob(os.path.join(out, "baseline-*.json"))), ""))
    return rec


def expand(names: list[str]) -> list[str]:
    out = []
    for n in names:
        parts = n.split("-")
        if len(parts) == 3 and parts[1] == "shards":
            out += [f"{parts[0]}-shard{i}-{parts[2]}" for i in range(1, int(parts[2]) + 1)]
        else:
            out.append(n)
    return out


def versions() -> dict[str, str]:
    import importlib.metadata as md
    import platform
    got = {"python": platform.python_version()}
    for pkg in ("torch", "transformers", "timm", "torchvision", "x-transformers", "PyGithub",
                "PyYAML", "unidiff"):
        try:
            got[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            got[pkg] = "absent"
    # the zoo venv runs pt2bot from a `git archive` snapshot (setup.sh --snapshot), named
    # after its commit: the shared checkout changes under a long benchmark
    import pt2bot
    got["pt2bot_src"] = os.path.dirname(os.path.dirname(os.path.abspath(pt2bot.__file__)))
    got["cpu"] = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                       if ln.startswith("model name")), "?")
    got["cores"] = str(os.cpu_count())
    return got


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # `kill PID` cleans up too
    ap = argparse.ArgumentParser()
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--work", default="/tmp/zoo-bench")
    ap.add_argument("--data", required=True)
    ap.add_argument("--again", action="store_true")
    ap.add_argument("--costs", help="the results file whose duration_s balances the shard "
                                    "scenarios (default: the audit scenario's baseline)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=20)
    # the two phases a review gained after 512246e, on by default; off, a review does the
    # work that pt2bot 512246e did (the like-for-like comparison in RESULTS.md)
    ap.add_argument("--no-shape-advice", action="store_true",
                    help="the zoo's pt2bot.yml gets run.shape_advice: false")
    ap.add_argument("--no-verify-fixes", action="store_true",
                    help="the zoo's pt2bot.yml gets fixes: {verify: false}")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    repo = os.path.join(args.work, "repo")
    data: dict[str, Any] = {"records": []}
    if os.path.exists(args.data):
        with open(args.data) as fh:
            data = json.load(fh)
    settings = dict(rounds=args.rounds, repeats=args.repeats,
                    shape_advice=not args.no_shape_advice, verify_fixes=not args.no_verify_fixes)
    if not os.path.isdir(os.path.join(repo, ".git")):
        build_repo(repo, MODELS, **settings)
    elif sh(repo, "git", "show", "main:pt2bot.yml") != config_yml(
            MODELS, backend="eager", warmup=3, **settings).strip():
        # the repository is built once per --work: other settings need another one
        raise SystemExit(f"{repo} was generated with other settings than these options; "
                         "use another --work (or delete it)")
    data.setdefault("setup", {"models": len(MODELS), "rounds": args.rounds,
                              "repeats": args.repeats, "warmup": 3, "backend": "eager",
                              # the keys the options wrote into pt2bot.yml (none: the
                              # defaults of whichever pt2bot runs)
                              "config_off": [k for k, off in (
                                  ("run.shape_advice", args.no_shape_advice),
                                  ("fixes.verify", args.no_verify_fixes)) if off],
                              "versions": versions()})
    done = {r["scenario"] for r in data["records"]}
    for name in expand(args.scenarios):
        if name in done and not args.again:
            print(f"{name}: already measured", file=sys.stderr)
            continue
        rec = run_scenario(name, repo, args.work, args.costs)
        data["records"] = [r for r in data["records"] if r["scenario"] != name] + [rec]
        os.makedirs(os.path.dirname(os.path.abspath(args.data)), exist_ok=True)
        with open(args.data + ".tmp", "w") as fh:
            json.dump(data, fh, indent=1)
        os.replace(args.data + ".tmp", args.data)
        print(f"{name}: rc {rec['rc']} {rec['wall_s']} s load {rec['load']} "
              f"{(rec.get('report') or {}).get('conclusion')}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
