"""Build real git repositories in temp dirs for tests.

    repo = GitRepo.init(tmp_path / "r")          # or use the `git_repo` fixture
    repo.write("pkg/models.py", "x = 1\\n")       # str (UTF-8, written as is) or bytes
    base = repo.commit("base")                   # stages everything, returns the sha
    repo.branch("pr")                            # create and switch to a branch
    repo.write("pkg/models.py", "x = 2\\n")
    head = repo.commit("pr change")
    repo.checkout("main")
    repo.git("log", "--oneline")                 # any git command, returns stdout

The repo has a fixed identity, `main` as its first branch, no signing, no autocrlf, and
git runs without leaked GIT_* variables (pt2bot.git.no_git_env), so the user's global
settings or a surrounding git hook cannot change what tests see.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pt2bot.git import no_git_env

_LOCAL_CONFIG = {
    "user.name": "pt2bot test",
    "user.email": "test@pt2bot.invalid",
    "commit.gpgsign": "false",
    "tag.gpgsign": "false",
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "init.defaultBranch": "main",
}


@dataclass(frozen=True)
class GitRepo:
    path: Path

    @classmethod
    def init(cls, path: str | os.PathLike[str]) -> GitRepo:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.git("init", "-q", "-b", "main")
        for key, value in _LOCAL_CONFIG.items():
            repo.git("config", key, value)
        return repo

    def git(self, *args: str) -> str:
        """Run git in the repo; raise CalledProcessError (with stderr) on failure."""
        proc = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True,
                              env=no_git_env(), check=False)
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout,
                                                proc.stderr.decode(errors="replace"))
        return proc.stdout.decode("utf-8", "surrogateescape")

    def write(self, relpath: str, content: str | bytes) -> Path:
        """Write a file (parents created). str is encoded as UTF-8 with no newline translation."""
        p = self.path / relpath
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return p

    def read(self, relpath: str) -> str:
        return (self.path / relpath).read_text(encoding="utf-8")

    def rm(self, relpath: str) -> None:
        self.git("rm", "-q", "--", relpath)

    def mv(self, src: str, dst: str) -> None:
        (self.path / dst).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", "--", src, dst)

    def commit(self, message: str = "commit") -> str:
        """Stage every change (`git add -A`) and commit; return the new HEAD sha."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def branch(self, name: str, start: str = "HEAD") -> None:
        """Create branch `name` at `start` and switch to it."""
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, ref: str) -> None:
        self.git("checkout", "-q", ref)

    def review(self, out: str | os.PathLike[str], *extra: str, base: str = "main") -> int:
        """`pt2bot review --base <base> --out <out>` run in this repository as a user runs it
        (from its root; no GitHub step summary to write to); its exit code."""
        import pytest

        from pt2bot.cli import main

        mp = pytest.MonkeyPatch()
        try:
            mp.chdir(self.path)
            mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
            return main(["review", "--base", base, "--out", str(out), *extra])
        finally:
            mp.undo()
