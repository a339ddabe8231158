"""Which files `pt2bot check` (and `pt2bot init`) read: the .py files under the given paths,
minus the directories no user code lives in and the configured exclude globs."""
from __future__ import annotations

import fnmatch
import os
import sys
from typing import Iterable, Sequence

from pt2bot.errors import UserError

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", ".eggs", "site-packages",
                       ".pt2bot-cache"})


def discover_files(root: str, paths: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """Repo-relative (forward-slash) paths of the .py files under `paths`, minus `exclude` globs."""
    root = os.path.abspath(root)
    found: set[str] = set()
    for p in paths or (".",):
        full = p if os.path.isabs(p) else os.path.join(root, p)
        if any(ch in p for ch in "*?["):
            import glob
            matches = glob.glob(full, recursive=True)
        else:
            if not os.path.exists(full):
                raise UserError(f"{p}: no such file or directory")
            matches = [full]
        for m in matches:
            if os.path.isdir(m):
                # (os.walk joins names onto `m`: one relpath for `m`, not one per file)
                top = rel_path(root, m)
                top = "" if top == "." else top + "/"
                for dirpath, dirnames, filenames in os.walk(m):
                    dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                    sub = dirpath[len(m):].strip(os.sep).replace(os.sep, "/")
                    prefix = top + sub + "/" if sub else top
                    for fn in filenames:
                        if fn.endswith(".py"):
                            found.add(prefix + fn)
            elif os.path.isfile(m):
                found.add(rel_path(root, m))
    return sorted(f for f in found if not is_excluded(f, exclude))


def rel_path(root: str, path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if rel.startswith("../"):
        raise UserError(f"{path}: outside the checked root {root}")
    return rel


def is_excluded(rel: str, patterns: Iterable[str]) -> bool:
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or rel.startswith(pat + "/") or fnmatch.fnmatch(rel, pat + "/*"):
            return True
    return False


def warn(message: str) -> None:
    """`pt2bot: warning: MESSAGE` on stderr, through the one log escape: the paths in it are the
    tree's, and in CI a name is not to start a workflow command."""
    from pt2bot.report.escape import log_line

    sys.stderr.write(log_line(f"pt2bot: warning: {message}") + "\n")
