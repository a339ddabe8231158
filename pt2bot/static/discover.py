"""Which files `pt2bot check` (and `pt2bot init`) read: the regular .py files inside the root
under the given paths, minus the directories no user code lives in and the configured exclude
globs."""
from __future__ import annotations

import fnmatch
import os
import stat
import sys
from typing import Callable, Iterable, Sequence

from pt2bot.configfile.yamlread import file_kind
from pt2bot.errors import UserError

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", ".eggs", "site-packages",
                       ".pt2bot-cache"})


def discover_files(root: str, paths: Sequence[str], exclude: Sequence[str] = (),
                   note: Callable[[str], None] | None = None) -> list[str]:
    """Repo-relative (forward-slash) paths of the .py files under `paths`, minus `exclude` globs.

    Only regular files inside the root: the tree is its author's, and a symlink out of it would
    have the check print another file's source lines in its findings and `pt2bot init` write
    that file's classes into pt2bot.yml; `/dev/zero` or a FIFO would never end a read. Such a
    path is named in a warning (`note`, else `warn`: stderr) and left out; the rest goes on.
    A symlink to a file inside the root is kept (an alias module); symlinked directories are
    not walked. The walk reads each entry's type from the directory listing (`DirEntry`, no
    stat per file): only a symlink costs a `realpath` and a stat, each path given a `realpath`."""
    root = os.path.abspath(root)
    real_root = os.path.realpath(root)
    found: set[str] = set()
    refused: dict[str, str] = {}
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
            rel = rel_path(root, m)
            if not _within(os.path.realpath(m), real_root):
                refused[rel] = ("a symlink out of the checked root" if os.path.islink(m)
                                else "outside the checked root through a symlink")
            elif os.path.isdir(m):
                _walk(m, "" if rel == "." else rel + "/", real_root, found, refused)
            else:
                why = _not_regular(m)
                if why is None:
                    found.add(rel)
                elif why:
                    refused[rel] = why
    for rel in sorted(refused):
        if not is_excluded(rel, exclude):
            (note or warn)(f"{rel}: {refused[rel]}: not read")
    return sorted(f for f in found if not is_excluded(f, exclude))


def _walk(top: str, prefix: str, real_root: str, found: set[str], refused: dict[str, str]) -> None:
    """The .py files under directory `top` (`prefix`: its repo-relative path and a slash), as
    `os.walk` without following symlinked directories found them, less symlinks out of the
    root and special files."""
    todo = [(top, prefix)]
    while todo:
        d, pre = todo.pop()
        try:
            entries = os.scandir(d)
        except OSError:
            continue
        with entries:
            for e in entries:
                name = e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        if name not in SKIP_DIRS and not name.startswith("."):
                            todo.append((e.path, pre + name + "/"))
                    elif not name.endswith(".py"):
                        continue
                    elif e.is_file(follow_symlinks=False):
                        found.add(pre + name)
                    elif e.is_symlink():
                        if not _within(os.path.realpath(e.path), real_root):
                            refused[pre + name] = "a symlink out of the checked root"
                        elif (why := _not_regular(e.path)) is None:
                            found.add(pre + name)
                        elif why:
                            refused[pre + name] = why
                    else:
                        mode = e.stat(follow_symlinks=False).st_mode
                        refused[pre + name] = f"not a regular file ({file_kind(mode)})"
                except OSError:
                    continue


def _within(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _not_regular(path: str) -> str | None:
    """None: a regular file (through symlinks) or a path that cannot be stat'ed (reading it
    then gives the check's "cannot read file", as before); "": a directory (not a source,
    nothing to say); else why it is not read."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return ""
    return f"not a regular file ({file_kind(mode)})"


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
