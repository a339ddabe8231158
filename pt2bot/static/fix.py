"""`pt2bot check --diff` / `--fix`: the fixes that are safe by construction, shown or applied
without running them (ruff's split: a safe fix leaves eager behaviour identical, such as
guarding a `print` with `torch.compiler.is_compiling()`; every other candidate must be run and
compared, which only `pt2bot review` does).

The files are read through the check's door (pt2bot/static/files.py `read_source`) and written
only when they are regular files inside the checked root reached without a symlink, by atomic
replace (pt2bot/jsonio.py `atomic_write_bytes`). A file whose fixed text would not compile, or
that holds terminal control characters (its diff is printed raw, so that it applies as a
patch), is left alone with a warning.
"""
from __future__ import annotations

import ast
import difflib
import os
import re
import stat
from dataclasses import dataclass
from typing import Callable, Sequence

from pt2bot.findings import Finding
from pt2bot.jsonio import atomic_write_bytes
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from pt2bot.rules.wrap import fit_candidate, repo_line_length
from pt2bot.static.files import read_source

NOT_RUN = ("these fixes were not run: each is safe by construction (eager behaviour unchanged); "
           "`pt2bot review` runs and compares the others before it suggests them")
# C0 and C1 controls but tab, newline, carriage return and form feed; DEL; bidirectional overrides
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class FileFix:
    path: str                       # root-relative, forward slashes
    before: str
    after: str
    applied: tuple[Candidate, ...]  # the edits, in file order


def safe_candidate(finding: Finding, source: str, tree: ast.Module,
                   limit: int | None = None) -> Candidate | None:
    """The first safe candidate for `finding` (its rule's most likely safe edit), if any, its
    new lines fit to the repository's line length `limit` (pt2bot/rules/wrap.py)."""
    c = next((c for c in fix_candidates(finding, source, tree) if c.safe), None)
    return fit_candidate(c, source, limit) if c is not None else None


def safe_fixes_by_finding(root: str, findings: Sequence[Finding],
                          note: Callable[[str], None]) -> dict[Finding, list[Candidate]]:
    """Each finding's first safe candidate (for SARIF's `fixes`), files read as for `--fix`."""
    out: dict[Finding, list[Candidate]] = {}
    limit = repo_line_length(root)
    for rel in sorted({f.path for f in findings if f.rule != "PTC000"}):
        source = _read_text(root, rel, note)
        try:
            tree = ast.parse(source) if source is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is None:
            continue
        for f in findings:
            if f.path == rel:
                c = safe_candidate(f, source, tree, limit)
                if c is not None:
                    out[f] = [c]
    return out


def _reach_end(tree: ast.Module, c: Candidate) -> int:
    """The last line an edit decides: its own, or, for an edit of a compound statement's
    header only (`if not torch.compiler.is_compiling() and <test>:`), the statement's block
    too, whose statements a second guard would only guard again."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With)) and node.lineno == c.start_line \
                and c.end_line < (node.end_lineno or node.lineno):
            return max(c.end_line, node.end_lineno or node.lineno)
    return c.end_line


def plan_fixes(root: str, findings: Sequence[Finding], note: Callable[[str], None]) -> list[FileFix]:
    """The safe fixes of `findings`, per file, overlapping edits dropped (the first by line kept)."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.rule != "PTC000":
            by_path.setdefault(f.path, []).append(f)
    out = []
    limit = repo_line_length(root)
    for rel in sorted(by_path):
        source = _read_text(root, rel, note)
        if source is None:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        chosen: list[Candidate] = []
        reach: list[tuple[int, int]] = []
        for f in sorted(by_path[rel], key=lambda f: (f.line, f.col)):
            c = safe_candidate(f, source, tree, limit)
            if c is not None and not any(c.start_line <= end and start <= c.end_line
                                         for start, end in reach):
                chosen.append(c)
                reach.append((c.start_line, _reach_end(tree, c)))
        if not chosen:
            continue
        after = source
        for c in sorted(chosen, key=lambda c: c.start_line, reverse=True):   # bottom up: lines stay put
            after = apply_candidate(after, c)
        try:
            compile(after, rel, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            note(f"{rel}: the safe fixes would not compile ({type(e).__name__}); left unchanged")
            continue
        out.append(FileFix(rel, source, after, tuple(sorted(chosen, key=lambda c: c.start_line))))
    return out


def _read_text(root: str, rel: str, note: Callable[[str], None]) -> str | None:
    data = read_source(root, rel)
    if isinstance(data, OSError):
        note(f"{rel}: not read for fixing ({data.strerror or data})")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        note(f"{rel}: not UTF-8; not fixed")
        return None
    if _CONTROLS.search(text):
        note(f"{rel}: holds terminal control characters; not fixed")
        return None
    return text


def unified_diff(fix: FileFix) -> str:
    """The fix as a patch (`git apply` / `patch -p1` take it)."""
    lines = difflib.unified_diff(fix.before.splitlines(keepends=True), fix.after.splitlines(keepends=True),
                                 fromfile=f"a/{fix.path}", tofile=f"b/{fix.path}")
    out = []
    for ln in lines:
        out.append(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_fix(root: str, fix: FileFix) -> None:
    """Write the fixed text over the file: a regular file inside `root`, no symlink on the way
    (the path below the root must resolve to itself), unchanged since it was read."""
    real_root = os.path.realpath(root)
    full = os.path.join(real_root, *fix.path.split("/"))
    if os.path.realpath(full) != full or os.path.commonpath([real_root, full]) != real_root:
        raise OSError(f"{fix.path}: reached through a symlink or outside the checked root; not written")
    st = os.lstat(full)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{fix.path}: not a regular file; not written")
    now = read_source(real_root, fix.path)
    if isinstance(now, OSError) or now != fix.before.encode("utf-8"):
        raise OSError(f"{fix.path}: changed while it was checked; not written")
    atomic_write_bytes(full, fix.after.encode("utf-8"), mode=stat.S_IMODE(st.st_mode))
    os.chmod(full, stat.S_IMODE(st.st_mode))   # the mode it had, whatever the umask


def summary_line(fixes: Sequence[FileFix], verb: str) -> str:
    n = sum(len(f.applied) for f in fixes)
    return f"pt2bot: {verb} {n} safe fix{'es' if n != 1 else ''} in {len(fixes)} file(s); {NOT_RUN}\n"


__all__ = ["FileFix", "NOT_RUN", "plan_fixes", "safe_candidate", "safe_fixes_by_finding", "summary_line", "unified_diff", "write_fix"]
