"""The real-code benchmark, end to end: static findings vs dynamo on third-party libraries.

    bash benchmarks/real_code/setup.sh                 # once: the venv with the pinned libraries
    python benchmarks/real_code/run.py                 # check + collect + evaluate (< 30 min, 2 cores)
    python benchmarks/real_code/run.py --only kornia   # one library (collect + evaluate it alone)
    python benchmarks/real_code/run.py --evaluate-only # re-match stored results (after a pt2bot change:
                                                       #   add --check to re-run `pt2bot check` first)
    git worktree add --detach /tmp/pt2bot-old OLD_SHA  # another revision, compared in RESULTS.md:
    python benchmarks/real_code/run.py --tag old --pt2bot-src /tmp/pt2bot-old

Steps (each writes under benchmarks/real_code/results/):
1. `pt2bot check --filter nofilter --select ALL --format json <package dir>` per library
   → `check/<lib>.json` (run with `--pt2bot`, default /work/main/.venv/bin/pt2bot);
2. `collect.py` in the benchmark venv, one subprocess per model (one thread, a timeout)
   → `truth/<lib>__<model>.json`;
3. `evaluate.py`: match, label (labels.json), figures → `evaluation.json` and RESULTS.md.

Any Python 3.11 runs this file; torch is only imported by the subprocesses.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402 - after the path insert; imports no library at module level

RESULTS = os.path.join(HERE, "results")
DEFAULT_VENV = os.environ.get("REALCODE_VENV", "/work/venvs/realcode")
DEFAULT_PT2BOT = os.environ.get("PT2BOT", "/work/main/.venv/bin/pt2bot")


def venv_python(venv: str) -> str:
    return os.path.join(venv, "bin", "python")


def package_dirs(venv: str) -> dict[str, str]:
    """Package directory of each library in the venv, found without importing it; for a
    library that is one module (rtdl_num_embeddings.py), that file."""
    code = ("import importlib.util, json, sys; "
            "print(json.dumps({n: (s.submodule_search_locations or [s.origin])[0] "
            "for n in sys.argv[1:] for s in [importlib.util.find_spec(n)]}))")
    out = subprocess.run([venv_python(venv), "-c", code, *models.LIBRARIES.values()],
                         check=True, capture_output=True, text=True).stdout
    found = json.loads(out)
    return {lib: found[pkg] for lib, pkg in models.LIBRARIES.items()}


def versions(venv: str) -> dict[str, str]:
    code = ("import importlib.metadata as m, json, sys; "
            "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))")
    names = ["torch", "torchvision", "einops", *models.LIBRARIES]
    out = subprocess.run([venv_python(venv), "-c", code, *names], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def pt2bot_revision(src: str | None = None) -> dict[str, Any]:
    """The commit of the checkout pt2bot runs from, and whether pt2bot/ had local changes.

    pt2bot's findings change as the inference is worked on: every figure belongs to one
    revision, so it is stored with the findings.
    """
    root = src or os.path.dirname(os.path.dirname(HERE))

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True).stdout.strip()
    return {"commit": git("rev-parse", "HEAD"),
            "pt2bot_dirty": bool(git("status", "--porcelain", "--", "pt2bot"))}


def run_check(pt2bot: list[str], lib: str, pkg_dir: str, src: str | None) -> dict[str, Any]:
    t0 = time.perf_counter()
    env = dict(os.environ)
    if src:     # pt2bot from another tree (a worktree of another commit) shadows the install
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    # `python -m` puts the working directory first on sys.path, before PYTHONPATH: run in `src`,
    # else a check started from another checkout would import that checkout's pt2bot
    proc = subprocess.run([*pt2bot, "check", os.path.abspath(pkg_dir), "--filter", "nofilter", "--select",
                           "ALL", "--format", "json", "--no-cache"], capture_output=True, text=True, env=env,
                          cwd=src or None)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"pt2bot check failed on {lib} ({proc.returncode}): {proc.stderr[-2000:]}")
    data = json.loads(proc.stdout)
    # (a one-module library's findings are named by its file, under the directory it is in)
    where = os.path.dirname(pkg_dir) if os.path.isfile(pkg_dir) else pkg_dir
    data["benchmark"] = {"lib": lib, "package_dir": where, "wall_s": round(time.perf_counter() - t0, 2),
                         "pt2bot": pt2bot_revision(src),
                         "command": f"pt2bot check <{lib} package dir> --filter nofilter "
                                    "--select ALL --format json --no-cache"}
    return data


def run_collect(venv: str, key: str, out: str, timeout: int) -> dict[str, Any]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore",
               TORCHDYNAMO_VERBOSE="0")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([venv_python(venv), os.path.join(HERE, "collect.py"), "--model", key,
                               "--out", out], capture_output=True, text=True, timeout=timeout,
                              env=env)
        if not os.path.exists(out):
            res = {"model": key, "status": "crash", "error": proc.stderr[-3000:]}
            _write(out, res)
            return res
    except subprocess.TimeoutExpired:
        res = {"model": key, "status": "timeout", "error": f"over {timeout} s"}
        _write(out, res)
        return res
    with open(out, encoding="utf-8") as fh:
        res = json.load(fh)
    res["wall_s"] = round(time.perf_counter() - t0, 2)
    _write(out, res)
    return res


def _write(path: str, data: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", default=DEFAULT_VENV)
    ap.add_argument("--pt2bot", default=DEFAULT_PT2BOT, help="the pt2bot command")
    ap.add_argument("--pt2bot-src", help="run pt2bot from this source tree instead (e.g. a "
                    "`git worktree` of another commit), with --pt2bot-python")
    ap.add_argument("--pt2bot-python", default="/work/main/.venv/bin/python")
    ap.add_argument("--tag", help="keep this run's findings apart: results/check@TAG/, "
                    "results/evaluation@TAG.json (no collect; compared in RESULTS.md)")
    ap.add_argument("--only", action="append", help="a library (pip name), repeatable")
    ap.add_argument("--model", action="append", help="LIB:NAME, repeatable (collect only these)")
    ap.add_argument("--timeout", type=int, default=420, help="seconds per model")
    ap.add_argument("--evaluate-only", action="store_true", help="no collect; match stored results")
    ap.add_argument("--check", action="store_true", help="with --evaluate-only: re-run pt2bot check")
    a = ap.parse_args(argv)
    libs = a.only or list(models.LIBRARIES)
    unknown = set(libs) - set(models.LIBRARIES)
    if unknown:
        raise SystemExit(f"unknown library: {sorted(unknown)}; known: {list(models.LIBRARIES)}")
    check_dir = os.path.join(RESULTS, f"check@{a.tag}" if a.tag else "check")
    os.makedirs(check_dir, exist_ok=True)
    os.makedirs(os.path.join(RESULTS, "truth"), exist_ok=True)
    t_start = time.perf_counter()
    timings: dict[str, float] = {}

    if a.tag:   # findings of another revision: never collect; check only given its source
        a.evaluate_only, a.check = True, a.check or bool(a.pt2bot_src)
    pt2bot = [a.pt2bot_python, "-m", "pt2bot"] if a.pt2bot_src else [a.pt2bot]
    if not a.evaluate_only or a.check:
        dirs = package_dirs(a.venv)
        t0 = time.perf_counter()
        for lib in libs:
            data = run_check(pt2bot, lib, dirs[lib], a.pt2bot_src)
            _write(os.path.join(check_dir, f"{lib}.json"), data)
            print(f"check {lib}: {len(data['findings'])} findings, {data['benchmark']['wall_s']} s",
                  flush=True)
        timings["check_s"] = round(time.perf_counter() - t0, 1)
    if not a.evaluate_only:
        t0 = time.perf_counter()
        wanted = [s for s in models.SPECS if s.lib in libs and (not a.model or s.key in a.model)]
        for sp in wanted:
            out = os.path.join(RESULTS, "truth", f"{sp.lib}__{sp.name}.json")
            res = run_collect(a.venv, sp.key, out, a.timeout)
            print(f"collect {sp.key}: {res.get('status')} {res.get('wall_s', '')} s, "
                  f"{len(res.get('breaks') or [])} breaks, "
                  f"{len(res.get('specializations') or [])} specialisations"
                  + (f" — {str(res.get('error'))[:200]}" if res.get("error") else ""), flush=True)
        timings["collect_s"] = round(time.perf_counter() - t0, 1)
        env = {"versions": versions(a.venv), "python": platform.python_version(),
               "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, "
                          f"{platform.platform()}",
               "pt2bot": f"python -m pt2bot from {a.pt2bot_src}" if a.pt2bot_src else a.pt2bot}
        envf = os.path.join(RESULTS, "environment.json")
        old = {}
        if os.path.exists(envf):
            with open(envf, encoding="utf-8") as fh:
                old = json.load(fh)
        env["timings"] = {**old.get("timings", {}), **timings,
                          ("total_s" if not a.only and not a.model else "last_partial_s"):
                              round(time.perf_counter() - t_start, 1)}
        _write(envf, env)

    import evaluate
    evaluate.main(RESULTS, os.path.join(HERE, "labels.json"), os.path.join(HERE, "RESULTS.md"),
                  tag=a.tag)
    print(f"done in {time.perf_counter() - t_start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
