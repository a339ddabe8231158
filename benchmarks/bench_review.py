"""Wall time of `pt2bot review` on the bundled demo against the sum of its parts.

    .venv/bin/python benchmarks/bench_review.py [--repeat 1]

Builds the demo repository (examples/demo.py), warms the inductor cache with one review,
then times: (a) `pt2bot review --base main` end to end, and (b) the same work as separate
parts: `pt2bot check` on head and base, `pt2bot run` of the selected model on head and on
base (a worktree at the merge-base), and the extra latency-only rounds. The difference is
the pipeline's own cost (diff, selection, worktree, compare, render).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "examples"))

import demo  # noqa: E402  (examples/demo.py: builds the demo git repository)

from pt2bot import git  # noqa: E402
from pt2bot.configfile import load_config  # noqa: E402
from pt2bot.smoke import run_models  # noqa: E402


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def pt2bot(repo: str, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "pt2bot", *args], cwd=repo, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(TOP, ".cache", "inductor"))
    work = tempfile.mkdtemp(prefix="pt2bot-bench-review-")
    repo = os.path.join(work, "repo")
    demo.build_repo(repo)
    out = os.path.join(work, "out")
    print("warming the inductor cache with one review ...", flush=True)
    pt2bot(repo, "review", "--base", "main", "--out", out)

    config = load_config(os.path.join(repo, "pt2bot.yml"))
    base_sha = git.merge_base(repo, "main", "HEAD")
    rows = []
    for _ in range(args.repeat):
        total = timed(lambda: pt2bot(repo, "review", "--base", "main", "--out", out))
        with open(os.path.join(out, "report.json"), encoding="utf-8") as fh:
            stages = json.load(fh)["timings"]
        parts: dict[str, float] = {}
        with git.worktree(repo, base_sha) as base_root:
            parts["check head"] = timed(lambda: pt2bot(repo, "check", "--filter", "nofilter", "zoo"))
            parts["check base"] = timed(lambda: pt2bot(base_root, "check", "--filter", "nofilter",
                                                       "zoo"))
            for side, root in (("head", repo), ("base", base_root)):
                parts[f"run {side}"] = timed(lambda: pt2bot(
                    root, "run", "--config", "pt2bot.yml",
                    "--model", "tiny_encoder", "--out", os.path.join(work, f"{side}.json")))
            extra = 0.0
            for rnd in range(1, config.run.rounds):
                for root in (repo, base_root):
                    extra += timed(lambda: run_models(
                        config, repo_root=root, out_dir=os.path.join(work, "lat", str(rnd)),
                        models=["tiny_encoder"], phases=["latency"]))
            parts["latency rounds"] = extra
        rows.append((total, parts, stages))

    for total, parts, stages in rows:
        s = sum(parts.values())
        print(f"\nload average: {os.getloadavg()[0]:.1f} (2 cores)")
        print(f"{'part':<18}{'seconds':>10}")
        for k, v in parts.items():
            print(f"{k:<18}{v:>10.1f}")
        print(f"{'sum of parts':<18}{s:>10.1f}")
        print(f"{'pt2bot review':<18}{total:>10.1f}   ({(total / s - 1) * 100:+.0f}% vs the sum)")
        print(f"review's own stage timings: {stages}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
