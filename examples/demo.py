"""`make demo`: review the bundled example PR with pt2bot.

Builds a real git repository from examples/pt2bot.yml + examples/zoo/ (the main branch)
and examples/pr/ (the files a pull request changes), then runs
`pt2bot review --base main` on the PR branch and prints the verdict and the outputs.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
OUT = os.path.join(TOP, "out", "demo")


def git(repo: str, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="pt2bot demo", GIT_AUTHOR_EMAIL="demo@example.invalid",
               GIT_COMMITTER_NAME="pt2bot demo", GIT_COMMITTER_EMAIL="demo@example.invalid")
    subprocess.run(["git", "-C", repo, *args], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def build_repo(repo: str) -> None:
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(os.path.join(HERE, "zoo"), os.path.join(repo, "zoo"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(HERE, "pt2bot.yml"), repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Tiny model zoo")
    git(repo, "checkout", "-q", "-b", "pr")
    shutil.copytree(os.path.join(HERE, "pr"), repo, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "encoder: token mixing, skip norm on padding, chunked pooling")


def main() -> int:
    repo = os.path.join(OUT, "repo")
    report = os.path.join(OUT, "report")
    build_repo(repo)
    shutil.rmtree(report, ignore_errors=True)
    env = dict(os.environ)
    # Reuse inductor's on-disk cache between demo runs (CI caches this directory too).
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(TOP, ".cache", "inductor"))
    print(f"pt2bot demo: reviewing the example PR in {repo}", flush=True)
    rc = subprocess.run([sys.executable, "-m", "pt2bot", "review", "--base", "main",
                         "--out", report], cwd=repo, env=env).returncode
    summary = os.path.join(report, "summary.md")
    if os.path.exists(summary):
        print("\n" + "=" * 72 + "\nsummary.md (the sticky PR comment):\n" + "=" * 72)
        with open(summary, encoding="utf-8") as fh:
            print(fh.read())
    # The example PR is meant to fail the review: exit 1 (failure) is the expected verdict.
    return 0 if rc in (0, 1) else rc


if __name__ == "__main__":
    sys.exit(main())
