"""Replay consecutive releases of model libraries as pull requests through `pt2bot check`.

`pip download` gives releases, not history, so each pinned release (versions.py) becomes one
commit of a throw-away git repository per library (the package's source tree only, plus the
pt2bot.yml a user would commit), and each consecutive pair is one "PR". For each PR this runs
what the PR job runs (README.md, "pt2bot-pr.yml"):

    pt2bot check --base <previous release's commit> --filter added --format json

at the newer commit, with `static: {paths: [<package>/], fail_on: error}`; exit code 1 is a
red check. Each release is also checked with `--filter nofilter`, so a finding that is new in
a release (its fingerprint absent from the previous release) can be looked up in that PR's
report: a new finding the diff filter drops is "lost".

    python benchmarks/replay/fetch.py
    python benchmarks/replay/replay.py build
    python benchmarks/replay/replay.py run --tag after --pt2bot-src /tmp/pt2bot-new
    python benchmarks/replay/replay.py run --tag after-2.14 --torch 2.14 --pt2bot-src ...
    python benchmarks/replay/replay.py run --tag before --pt2bot-src /tmp/pt2bot-old --old
    python benchmarks/replay/report.py

`--pt2bot-src` is a git worktree of pt2bot at a fixed commit (`git worktree add --detach DIR
REV`), run as `python -m pt2bot` with PYTHONPATH there, so an engineer's uncommitted edits in
the main checkout never leak into a replay.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fetch import DEFAULT_CACHE, WORK, wheel_for  # noqa: E402
from versions import LIBRARIES  # noqa: E402

REPOS = WORK / "repos"
RESULTS = HERE / "results"
# The interpreter that runs pt2bot: it needs pt2bot's dependencies (unidiff, ...), so run this
# file with the project's venv (`.venv/bin/python benchmarks/replay/replay.py ...`).
PYTHON = Path(sys.executable)


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="replay", GIT_AUTHOR_EMAIL="replay@example.invalid",
               GIT_COMMITTER_NAME="replay", GIT_COMMITTER_EMAIL="replay@example.invalid")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def config_text(pkg: str, torch: str | None) -> str:
    lines = ["version: 1", "static:", f"  paths: [{pkg}/]", "  fail_on: error"]
    if torch:
        lines.append(f'  torch: "{torch}"')
    return "\n".join(lines) + "\n"


def build(cache: Path, libs: list[str] | None = None) -> None:
    """One repository per library, one commit per release (tagged v<release>)."""
    for name, (pkg, versions) in LIBRARIES.items():
        if libs and name not in libs:
            continue
        repo = REPOS / name
        if repo.exists():
            shutil.rmtree(repo)
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        (repo / "pt2bot.yml").write_text(config_text(pkg, None))
        # Variant configs stay untracked (and out of every diff) across checkouts.
        (repo / ".git" / "info" / "exclude").write_text("pt2bot-*.yml\n.pt2bot-cache/\n")
        (repo / "pt2bot-2.14.yml").write_text(config_text(pkg, "2.14"))
        for v in versions:
            whl = wheel_for(cache, name, v)
            if whl is None:
                raise SystemExit(f"no wheel for {name}=={v} in {cache}: run fetch.py")
            shutil.rmtree(repo / pkg, ignore_errors=True)
            with zipfile.ZipFile(whl) as z:
                members = [m for m in z.namelist() if m.startswith(pkg + "/") and not m.endswith("/")]
                z.extractall(repo, members)
            git(repo, "add", "-A", pkg, "pt2bot.yml")
            git(repo, "commit", "-q", "--allow-empty", "-m", f"{name} {v}")
            git(repo, "tag", f"v{v}")
        print(f"{name}: {len(versions)} commits in {repo}", flush=True)


def run_check(repo: Path, src: Path, args: list[str], *, old: bool) -> tuple[int, dict, float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PYTHONPATH"] = str(src)
    cmd = [str(PYTHON), "-m", "pt2bot", "check", "--format", "json", *args]
    if not old:
        cmd.append("--no-cache")  # every PR job starts cold; no cache shared between variants
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    rc = p.returncode
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else {}
    except json.JSONDecodeError:
        out = {"unparsed": p.stdout[-2000:]}
    if rc == 1 and "findings" not in out:
        # Python exits 1 on an uncaught exception too (e.g. a Python without pt2bot's
        # dependencies): without a report it is a tool error, not a red check
        rc = 70
    return rc, out, wall, p.stderr[-2000:]


KEEP = ("rule", "path", "line", "severity", "condition", "source", "function", "fingerprint",
        "new", "gb")


def slim(f: dict) -> dict:
    d = {k: f.get(k) for k in KEEP if k in f}
    d["message"] = (f.get("message") or "")[:160]
    return d


def replay(tag: str, src: Path, torch: str | None, old: bool, libs: list[str] | None) -> None:
    RESULTS.mkdir(exist_ok=True)
    rev = subprocess.run(["git", "-C", str(src), "rev-parse", "--short=10", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    cfg = ["--config", "pt2bot-2.14.yml"] if torch == "2.14" else []
    out: dict = {"tag": tag, "pt2bot": rev, "torch_config": torch, "old": old,
                 "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                             "platform": platform.platform()},
                 "libraries": {}}
    t_all = time.perf_counter()
    for name, (pkg, versions) in LIBRARIES.items():
        if libs and name not in libs:
            continue
        repo = REPOS / name
        shutil.rmtree(repo / ".pt2bot-cache", ignore_errors=True)
        releases, prs = [], []
        prev_sha = None
        for v in versions:
            sha = git(repo, "rev-parse", f"v{v}")
            git(repo, "checkout", "-q", "--detach", sha)
            rc, full, wall_full, err = run_check(repo, src, [*cfg, "--filter", "nofilter"], old=old)
            releases.append({"version": v, "sha": sha, "rc": rc, "wall_s": round(wall_full, 2),
                             "stderr": err if rc not in (0, 1) else "",
                             "findings": [slim(f) for f in full.get("findings", [])]})
            if prev_sha is not None:
                rc, pr, wall, err = run_check(repo, src, [*cfg, "--base", prev_sha, "--filter", "added"], old=old)
                changed = git(repo, "diff", "--name-only", prev_sha, sha, "--", pkg).splitlines()
                prs.append({"base": versions[versions.index(v) - 1], "head": v, "base_sha": prev_sha,
                            "head_sha": sha, "rc": rc, "wall_s": round(wall, 2),
                            "changed_py": [p for p in changed if p.endswith(".py")],
                            "stderr": err if rc not in (0, 1) else "",
                            "torch": pr.get("torch"),
                            "findings": [slim(f) for f in pr.get("findings", [])]})
                print(f"[{tag}] {name} {prs[-1]['base']}→{v}: rc={rc} findings={len(prs[-1]['findings'])} "
                      f"{wall:.1f}s", flush=True)
            prev_sha = sha
        git(repo, "checkout", "-q", "main")
        out["libraries"][name] = {"package": pkg, "releases": releases, "prs": prs}
    out["wall_s"] = round(time.perf_counter() - t_all, 1)
    path = RESULTS / f"{tag}.json"
    if libs and path.exists():  # a partial re-run merges into the previous file
        prev = json.loads(path.read_text())
        prev["libraries"].update(out["libraries"])
        out["libraries"] = prev["libraries"]
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({out['wall_s']} s)")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    b.add_argument("--lib", action="append", help="only this library (repeatable)")
    r = sub.add_parser("run")
    r.add_argument("--tag", required=True)
    r.add_argument("--pt2bot-src", type=Path, required=True)
    r.add_argument("--torch", choices=["2.14"], default=None)
    r.add_argument("--old", action="store_true", help="a pt2bot without --no-cache/static.torch")
    r.add_argument("--lib", action="append")
    a = ap.parse_args()
    if a.cmd == "build":
        build(a.cache, a.lib)
    else:
        replay(a.tag, a.pt2bot_src.resolve(), a.torch, a.old, a.lib)


if __name__ == "__main__":
    main()
