"""A thin layer of plain functions over `git` subprocess calls.

Every call goes through `run_git`, which strips leaked `GIT_*` variables from the
environment (a hook or a parent git process can leave `GIT_DIR`, `GIT_INDEX_FILE`,
`GIT_WORK_TREE` set, which would silently point our commands at another repository), as
pre-commit's git.py does. Outputs are bytes decoded as UTF-8 with `surrogateescape`, so a
path or file that is not valid UTF-8 never crashes us and round-trips to the filesystem.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence

from pt2bot.errors import UserError

# GIT_* variables that configure *how* git talks to the world rather than *which*
# repository it works on; they are safe (and sometimes needed) to keep.
_KEEP = frozenset({
    "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_NO_VERIFY",
    "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_SYSTEM",
    "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_ALLOW_PROTOCOL", "GIT_ASKPASS",
})


class GitError(UserError):
    """A git command failed; the message says which and git's own words."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        self.args_ = tuple(args)
        self.returncode = returncode
        self.stderr = stderr
        detail = stderr.strip().splitlines()
        text = "; ".join(detail[-3:]) if detail else "(no message)"
        hint = ""
        if "dubious ownership" in stderr:
            # Container jobs check out as another user; git refuses to read the repo.
            hint = " (run `git config --global --add safe.directory '*'` in the job first)"
        super().__init__(f"git {' '.join(args)} failed (exit {returncode}): {text}{hint}")


def no_git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `env` (default: os.environ) without the GIT_* variables that select a repo."""
    env = os.environ if env is None else env
    return {
        k: v for k, v in env.items()
        if not k.startswith("GIT_") or k in _KEEP
        or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def run_git(repo: str | os.PathLike[str], *args: str, check: bool = True,
            input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `git -C repo ARGS`; raise GitError on a non-zero exit when `check`."""
    cmd = ["git", "-C", os.fspath(repo), *args]
    try:
        proc = subprocess.run(cmd, input=input, capture_output=True, env=no_git_env(),
                              check=False)
    except FileNotFoundError:
        raise UserError("git is not installed (or not on PATH)") from None
    if check and proc.returncode != 0:
        raise GitError(args, proc.returncode, decode(proc.stderr))
    return proc


def git_text(repo: str | os.PathLike[str], *args: str) -> str:
    """stdout of a git command as text, trailing newline removed."""
    return decode(run_git(repo, *args).stdout).rstrip("\n")


def repo_root(path: str | os.PathLike[str] = ".") -> str:
    """The top-level directory of the work tree containing `path`."""
    if not os.path.isdir(path):
        raise UserError(f"{os.fspath(path)}: not a directory")
    proc = run_git(path, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise UserError(f"{os.fspath(path)}: not inside a git work tree "
                        f"({decode(proc.stderr).strip()})")
    return os.path.normpath(decode(proc.stdout).rstrip("\n"))


def rev_parse(repo: str | os.PathLike[str], ref: str) -> str | None:
    """The commit sha `ref` names, or None when it names no commit."""
    if not ref or ref.startswith("-"):  # never let a ref be read as an option
        return None
    proc = run_git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return decode(proc.stdout).strip() if proc.returncode == 0 else None


def head_sha(repo: str | os.PathLike[str]) -> str:
    sha = rev_parse(repo, "HEAD")
    if sha is None:
        raise UserError(f"{os.fspath(repo)}: the repository has no commit yet")
    return sha


def is_shallow(repo: str | os.PathLike[str]) -> bool:
    return git_text(repo, "rev-parse", "--is-shallow-repository") == "true"


def merge_base(repo: str | os.PathLike[str], a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None when they share no history."""
    proc = run_git(repo, "merge-base", a, b, check=False)
    if proc.returncode == 0:
        return decode(proc.stdout).strip()
    if proc.returncode == 1:  # git's answer for "no common ancestor"
        return None
    raise GitError(("merge-base", a, b), proc.returncode, decode(proc.stderr))


def show_file(repo: str | os.PathLike[str], sha: str, path: str) -> bytes | None:
    """The bytes of `path` (repo-relative) at commit `sha`; None when it does not exist there."""
    proc = run_git(repo, "cat-file", "blob", f"{sha}:{path}", check=False)
    if proc.returncode == 0:
        return proc.stdout
    if rev_parse(repo, sha) is None:
        raise UserError(f"unknown commit {sha!r}")
    return None


def untracked_files(repo: str | os.PathLike[str]) -> list[str]:
    """Untracked, not ignored files, repo-relative (forward slashes, exact bytes)."""
    out = run_git(repo, "ls-files", "-z", "--others", "--exclude-standard", "--full-name",
                  ":/").stdout
    # A nested repository shows up as "dir/": it is not a file of this one.
    return [decode(p) for p in out.split(b"\0") if p and not p.endswith(b"/")]


@contextlib.contextmanager
def worktree(repo: str | os.PathLike[str], sha: str) -> Iterator[str]:
    """A detached `git worktree` of `sha` in a temp dir, removed (and pruned) on exit."""
    tmp = tempfile.mkdtemp(prefix="pt2bot-worktree-")
    path = os.path.join(tmp, "tree")
    try:
        run_git(repo, "worktree", "add", "--detach", "--quiet", path, sha)
        yield path
    finally:
        # `remove` fails if the add failed half-way or the tree was damaged; the rmtree
        # and prune below clean up either way, so its exit code does not matter.
        run_git(repo, "worktree", "remove", "--force", path, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        run_git(repo, "worktree", "prune", check=False)


__all__ = [
    "GitError", "decode", "git_text", "head_sha", "is_shallow", "merge_base", "no_git_env",
    "repo_root", "rev_parse", "run_git", "show_file", "untracked_files", "worktree",
]
