"""What a pull request changed: base resolution, changed files and lines, line maps.

Two git calls describe a diff. `git diff --raw -z` is the authority on *which* files
changed, their status and exact paths (NUL-separated, never quoted, so spaces, quotes and
non-ASCII names survive). `git diff -p` gives the hunks, parsed with unidiff. Both come
from the same diff queue, so their files arrive in the same order; we pair them by
position and rewrite each patch header to a neutral name before unidiff sees it, so no
path can confuse the parser.

Findings are *annotated* with where they lie relative to the diff and never dropped here
(reviewdog's design): `keep_finding` applies the user's filter, the reporters decide.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from pt2bot import git
from pt2bot.errors import UserError
from pt2bot.findings import (DIFF_ADDED, DIFF_CONTEXT, DIFF_FILE, DIFF_OUTSIDE, FILTER_KEEPS, FILTERS,
                             Finding, sort_key)

STATUSES = ("added", "modified", "renamed", "deleted", "binary")

# Options that make the patch independent of the user's git config. -U3: GitHub's PR diff
# uses 3 lines of context, and only lines inside *its* hunks accept review comments.
_DIFF_OPTS = (
    "-c", "core.quotepath=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.suppressBlankEmpty=false",
    "diff", "-M", "-U3", "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative",
    "--diff-algorithm=myers", "--src-prefix=a/", "--dst-prefix=b/",
)
_BINARY_SNIFF = 8000  # bytes git itself inspects for a NUL to call a file binary


@dataclass(frozen=True)
class Hunk:
    """One hunk's header numbers, as git prints them (`@@ -old_start,old_count +new_start,new_count @@`)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int

    @property
    def old_last(self) -> int:
        # A hunk with no old lines (pure insertion) sits *after* old_start.
        return self.old_start + self.old_count - 1 if self.old_count else self.old_start

    @property
    def new_last(self) -> int:
        return self.new_start + self.new_count - 1 if self.new_count else self.new_start


@dataclass(frozen=True)
class FileChange:
    """One changed file. Line numbers are 1-based; `old` numbering is the base's.

    `added_lines`: new-file lines the PR added or modified. `context_lines`: new-file lines
    inside hunks that the PR did not change (disjoint from `added_lines`); `hunk_lines` is
    both, i.e. the lines GitHub accepts inline comments on. `deleted_lines`: old-file lines
    removed. A binary file has no line information.
    """

    path: str                         # new path (old path for a deleted file)
    old_path: str | None              # None for an added file
    status: str                       # see STATUSES
    added_lines: frozenset[int] = frozenset()
    context_lines: frozenset[int] = frozenset()
    deleted_lines: frozenset[int] = frozenset()
    hunks: tuple[Hunk, ...] = ()
    binary: bool = False
    old_mode: str | None = None       # "100644", "100755", "120000" (symlink), ...
    new_mode: str | None = None
    similarity: int | None = None     # rename similarity in percent
    # context pairs (old line, new line) inside hunks, sorted; the exact map there
    context_pairs: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    # (first, last) head lines of each statement a call could execute that holds an added
    # line (`code_spans`); None: not computed (a file that is not Python, or no smoke run)
    code_spans: tuple[tuple[int, int], ...] | None = field(default=None, repr=False)
    # (first line of such a statement, line of the innermost `if` whose branch holds it)
    branch_of: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    # (first, last, name) of each function of the head file, computed with `code_spans`: which
    # function a traceback's frame is in, and which changed statements ran before it there
    functions: tuple[tuple[int, int, str], ...] = field(default=(), repr=False)
    # (head line, ((first byte, end byte), ...)) for an added line that rewrites a removed line
    # of its hunk (the most alike, at least half the same): the parts of it the PR changed, as
    # UTF-8 byte columns. An added line not here is new throughout.
    changed_cols: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = field(default=(), repr=False)

    @property
    def hunk_lines(self) -> frozenset[int]:
        return self.added_lines | self.context_lines

    @property
    def mode_changed(self) -> bool:
        return self.old_mode is not None and self.new_mode is not None and self.old_mode != self.new_mode

    def map_old_to_new(self, old_line: int) -> int | None:
        """Where base line `old_line` is on head; None when it was deleted (or no lines map)."""
        if self.status in ("added", "deleted") or self.binary or old_line < 1:
            return None
        if old_line in self.deleted_lines:
            return None
        exact = _lookup(self.context_pairs, old_line)
        if exact is not None:
            return exact
        shift = sum(h.new_count - h.old_count for h in self.hunks if h.old_last < old_line)
        return old_line + shift

    def map_new_to_old(self, new_line: int) -> int | None:
        """Where head line `new_line` was on base; None when the PR added it."""
        if self.status in ("added", "deleted") or self.binary or new_line < 1:
            return None
        if new_line in self.added_lines:
            return None
        exact = _lookup(self._pairs_by_new, new_line)
        if exact is not None:
            return exact
        shift = sum(h.old_count - h.new_count for h in self.hunks if h.new_last < new_line)
        return new_line + shift

    @functools.cached_property
    def _pairs_by_new(self) -> tuple[tuple[int, int], ...]:
        return tuple(sorted((n, o) for o, n in self.context_pairs))


def _lookup(pairs: Sequence[tuple[int, int]], key: int) -> int | None:
    """The value paired with `key` in a sorted sequence of pairs, or None."""
    i = bisect.bisect_left(pairs, (key, -1))
    if i < len(pairs) and pairs[i][0] == key:
        return pairs[i][1]
    return None


@dataclass(frozen=True)
class ChangeSet:
    """The files a diff touches, keyed by new path (deleted files by their old path)."""

    base: str
    head: str | None                  # None: the working tree
    files: dict[str, FileChange] = field(default_factory=dict)

    def get(self, path: str) -> FileChange | None:
        return self.files.get(path)

    def paths(self) -> set[str]:
        """Every path the change touches, on either side (renames count twice)."""
        out: set[str] = set()
        for fc in self.files.values():
            out.add(fc.path)
            if fc.old_path:
                out.add(fc.old_path)
        return out

    def by_old_path(self, old_path: str) -> FileChange | None:
        for fc in self.files.values():
            if fc.old_path == old_path:
                return fc
        return None

    def renames(self) -> dict[str, str]:
        """{base path: head path} for the files the diff renamed."""
        return {fc.old_path: path for path, fc in self.files.items()
                if fc.old_path and fc.old_path != path and fc.status != "deleted"}


# ---------------------------------------------------------------------------- base / head

def resolve_base(repo: str | os.PathLike[str], base_ref: str, head_ref: str | None = None) -> str:
    """The merge-base of `base_ref` and `head_ref` (HEAD when None), as a sha."""
    head_name = head_ref or "HEAD"
    head = git.rev_parse(repo, head_name)
    if head is None:
        raise UserError(f"unknown head ref {head_name!r}")
    base = git.rev_parse(repo, base_ref)
    if base is None and not base_ref.startswith(("origin/", "refs/")):
        # In CI the PR checkout has no local branch for the base, only its remote ref.
        base = git.rev_parse(repo, f"origin/{base_ref}")
    if base is None:
        if git.is_shallow(repo):
            raise UserError(
                f"base ref {base_ref!r} is not in this shallow clone; fetch the full history "
                "(actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow origin`)")
        raise UserError(f"unknown base ref {base_ref!r} (not a branch, tag or commit here; "
                        "did you fetch it?)")
    mb = git.merge_base(repo, base, head)
    if mb is None:
        if git.is_shallow(repo):
            raise UserError(
                f"{base_ref!r} and {head_name!r} share no history in this shallow clone; fetch "
                "the full history (actions/checkout with `fetch-depth: 0`)")
        raise UserError(f"{base_ref!r} and {head_name!r} have no common ancestor")
    return mb


# ---------------------------------------------------------------------------- diff

@dataclass(frozen=True)
class _RawEntry:
    status: str          # git's letter: A D M R T C U X
    old_path: str
    new_path: str
    old_mode: str
    new_mode: str
    score: int | None


def _parse_raw(out: bytes) -> list[_RawEntry]:
    """Parse `git diff --raw -z`: `:old_mode new_mode old_sha new_sha STATUS\\0path\\0[path2\\0]`."""
    parts = out.split(b"\0")
    entries: list[_RawEntry] = []
    i = 0
    while i < len(parts):
        head = parts[i]
        if not head.startswith(b":"):
            i += 1
            continue
        fields = git.decode(head[1:]).split()
        old_mode, new_mode, letter_score = fields[0], fields[1], fields[4]
        letter, score = letter_score[0], letter_score[1:]
        if letter in "RC":
            old, new = git.decode(parts[i + 1]), git.decode(parts[i + 2])
            i += 3
        else:
            old = new = git.decode(parts[i + 1])
            i += 2
        entries.append(_RawEntry(letter, old, new, old_mode, new_mode,
                                 int(score) if score.isdigit() else None))
    return entries


def _split_patches(out: bytes) -> list[list[str]]:
    """Split `git diff -p` output into one list of lines per `diff --git` header.

    Lines are split on LF only (CR stays with its line, so CRLF files keep their count, and
    characters str.splitlines would treat as breaks — form feed, U+2028 — do not split).
    """
    chunks: list[list[str]] = []
    for raw_line in out.split(b"\n"):
        line = git.decode(raw_line) + "\n"
        # Inside a hunk every line starts with ' ', '+', '-' or '\\', never with "diff ".
        if line.startswith("diff --git ") or line.startswith("diff --cc "):
            chunks.append([])
        if chunks:
            chunks[-1].append(line)
    if chunks and chunks[-1] and chunks[-1][-1] == "\n":
        chunks[-1].pop()  # the split's empty tail after the final newline
    return chunks


def _neutralise_header(lines: list[str]) -> list[str]:
    """Replace the path-bearing header lines with fixed names; hunks stay as they are.

    Paths come from the raw listing; rewriting them here means a name with quotes,
    ' b/' inside it, tabs or newlines cannot break unidiff's header regexes.
    """
    out: list[str] = []
    in_header = True
    for line in lines:
        if line.startswith("diff --git "):  # never a hunk line; a joined T patch has two
            in_header = True
            out.append("diff --git a/f b/f\n")
            continue
        if in_header:
            if line.startswith("@@ "):
                in_header = False
            elif line.startswith("--- "):
                line = "--- /dev/null\n" if line.startswith("--- /dev/null") else "--- a/f\n"
            elif line.startswith("+++ "):
                line = "+++ /dev/null\n" if line.startswith("+++ /dev/null") else "+++ b/f\n"
            elif line.startswith(("Binary files ", "rename from ", "rename to ", "copy from ",
                                  "copy to ")):
                line = "Binary files a/f and b/f differ\n" if line.startswith("Binary") else ""
            if not line:
                continue
        out.append(line)
    return out


@dataclass
class _Lines:
    added: set[int] = field(default_factory=set)
    context: set[int] = field(default_factory=set)
    deleted: set[int] = field(default_factory=set)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)
    changed_cols: list[tuple[int, tuple[tuple[int, int], ...]]] = field(default_factory=list)
    binary: bool = False
    parsed: bool = True


def _parse_patch(lines: list[str]) -> _Lines:
    result = _Lines()
    try:
        patch = PatchSet(_neutralise_header(lines))
    except UnidiffParseError:
        # Never lose the whole diff over one odd patch: the file still counts as changed.
        result.parsed = False
        return result
    for pf in patch:
        result.binary = result.binary or pf.is_binary_file
        for h in pf:
            result.hunks.append(Hunk(h.source_start, h.source_length, h.target_start,
                                     h.target_length))
            removed: list[str] = []
            for ln in h:
                if ln.is_added and ln.target_line_no:
                    result.added.add(ln.target_line_no)
                    cols = _changed_cols(removed, ln.value)
                    if cols is not None:
                        result.changed_cols.append((ln.target_line_no, cols))
                elif ln.is_removed and ln.source_line_no:
                    result.deleted.add(ln.source_line_no)
                    removed.append(ln.value)
                elif ln.is_context and ln.source_line_no and ln.target_line_no:
                    result.context.add(ln.target_line_no)
                    result.pairs.append((ln.source_line_no, ln.target_line_no))
    return result


def _changed_cols(removed: list[str], line: str) -> tuple[tuple[int, int], ...] | None:
    """The byte columns of `line` that differ from the most alike of the hunk's removed lines
    (difflib, by character), or None where none is at least half the same: a new line."""
    import difflib

    line = line.rstrip("\r\n")
    best, ratio = None, 0.5
    for old in removed[-200:]:
        sm = difflib.SequenceMatcher(None, old.rstrip("\r\n"), line, autojunk=False)
        if sm.real_quick_ratio() >= ratio and sm.quick_ratio() >= ratio and sm.ratio() >= ratio:
            best, ratio = sm, sm.ratio()
    if best is None:
        return None

    def col(k: int) -> int:
        return len(line[:k].encode("utf-8"))
    # a deletion is the point where it was (first == end)
    return tuple((col(j1), col(j2)) for tag, _, _, j1, j2 in best.get_opcodes() if tag != "equal")


def _status(entry: _RawEntry, binary: bool) -> str:
    if entry.status == "D":
        return "deleted"
    if binary:
        return "binary"
    if entry.status == "A":
        return "added"
    if entry.status == "R":
        return "renamed"
    return "modified"  # M, T (type change), U (unmerged), C is not requested


def _file_change(entry: _RawEntry, lines: _Lines) -> FileChange:
    status = _status(entry, lines.binary)
    deleted = entry.status == "D"
    added = entry.status == "A"
    return FileChange(
        path=entry.old_path if deleted else entry.new_path,
        old_path=None if added else entry.old_path,
        status=status,
        added_lines=frozenset(lines.added),
        context_lines=frozenset(lines.context),
        deleted_lines=frozenset(lines.deleted),
        hunks=tuple(lines.hunks),
        binary=lines.binary,
        old_mode=None if added else entry.old_mode,
        new_mode=None if deleted else entry.new_mode,
        similarity=entry.score if entry.status == "R" else None,
        context_pairs=tuple(sorted(lines.pairs)),
        changed_cols=tuple(lines.changed_cols),
    )


def _untracked_change(repo: str, path: str) -> FileChange:
    """An untracked file as git would show it once added: every line added."""
    full = os.path.join(repo, path)
    newlines, size, last, head = 0, 0, b"", b""
    try:
        # Streamed: an untracked data file may be large, and only its line count matters.
        with open(full, "rb") as fh:
            while chunk := fh.read(1 << 20):
                if not head:
                    head = chunk[:_BINARY_SNIFF]
                newlines += chunk.count(b"\n")
                size += len(chunk)
                last = chunk[-1:]
    except OSError:  # vanished, a socket, unreadable: it is still a new path
        pass
    if b"\0" in head:
        return FileChange(path=path, old_path=None, status="binary", binary=True)
    n = newlines + (1 if size and last != b"\n" else 0)
    hunks = (Hunk(0, 0, 1, n),) if n else ()
    mode = "100755" if os.access(full, os.X_OK) else "100644"
    return FileChange(path=path, old_path=None, status="added",
                      added_lines=frozenset(range(1, n + 1)), hunks=hunks, new_mode=mode)


def _install_artefact(path: str) -> bool:
    """Whether an untracked path is what installing the project writes into the checkout.

    `pip install -e .`, the install step of the pull-request workflow, writes
    `<name>.egg-info/` next to the code, and running it writes `__pycache__/`. In a
    repository whose .gitignore does not name them they are untracked files of every review
    of the working tree, though no pull request wrote them: counted as changed non-Python
    files they would turn the latency gate off for every model.
    """
    parts = path.split("/")
    return (any(p.endswith(".egg-info") or p in ("__pycache__", ".eggs") for p in parts[:-1])
            or parts[-1].endswith((".pyc", ".pyo")))


# what `pt2bot init --force` keeps of the pt2bot.yml it replaces, in the repository's root
INIT_BACKUP = "pt2bot.yml.bak"
_SCHEMA_HEAD = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"pt2bot\.(report|results)/')


def _earlier_output(root: str, untracked: Iterable[str]) -> list[str]:
    """What an earlier pt2bot run left untracked in the checkout: the directories that hold a
    review's report (`report.json` whose schema is pt2bot's; a second review with another
    `--out` would count the first one's report as changed files, "+ working tree (16
    uncommitted file(s))"), and the results files of `pt2bot run --out results.json` (the
    README's first run, in the repository's root), and the file `pt2bot init --force` kept of
    the config it replaced (`pt2bot.yml.bak`: a new user's every review of V-JEPA and DINOv2
    read "+ working tree (1 uncommitted file(s))" for it). Directories end with "/"."""
    out = []
    for path in untracked:
        name = path.rsplit("/", 1)[-1]
        if path == INIT_BACKUP:
            out.append(path)
            continue
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(root, path), "rb") as fh:
                head = fh.read(200)
        except OSError:
            continue
        found = _SCHEMA_HEAD.match(head)
        if found and found.group(1) == b"report" and name == "report.json" and "/" in path:
            out.append(path.rsplit("/", 1)[0] + "/")
        elif found and found.group(1) == b"results":
            out.append(path)
    return out


def diff_changes(repo: str | os.PathLike[str], base_sha: str, head_ref: str | None = None,
                 own_output: Sequence[str | os.PathLike[str]] = ()) -> ChangeSet:
    """`git diff -M` of base against head_ref, or against the working tree when None.

    The working-tree diff includes staged and unstaged edits and untracked files that are
    not ignored (as added files; they take no part in rename detection), but for the
    files installing and running the project writes (`_install_artefact`) and those under
    `own_output`, the directories pt2bot itself writes to (a review's `--out` inside the
    checkout: its second run would count the first one's report as changed files), and what
    an earlier run left (`_earlier_output`: a review's report with another `--out`, a results
    file).
    """
    repo = os.fspath(repo)
    if git.rev_parse(repo, base_sha) is None:
        raise UserError(f"unknown base {base_sha!r}")
    revs = [base_sha]
    if head_ref is not None:
        head = git.rev_parse(repo, head_ref)
        if head is None:
            raise UserError(f"unknown head ref {head_ref!r}")
        revs.append(head)
    raw = _parse_raw(git.run_git(repo, *_DIFF_OPTS, "--raw", "-z", *revs, "--").stdout)
    patches = _split_patches(git.run_git(repo, *_DIFF_OPTS, *revs, "--").stdout)
    paired = _pair_patches(raw, patches)
    if paired is None:
        # Should not happen (one diff queue, two formats); ask file by file instead.
        paired = [_one_patch(repo, revs, e) for e in raw]
    files: dict[str, FileChange] = {}
    for entry, lines in zip(raw, paired, strict=True):
        fc = _file_change(entry, _parse_patch(lines))
        files[fc.path] = fc
    if head_ref is None:
        root = git.repo_root(repo)
        own = [os.path.relpath(os.path.realpath(d), os.path.realpath(root)).replace(os.sep, "/")
               + "/" for d in own_output]
        own = [d for d in own if not d.startswith("../")]
        untracked = git.untracked_files(repo)
        own += _earlier_output(root, untracked)
        for path in untracked:
            if path not in files and not _install_artefact(path) and not any(
                    path.startswith(d) if d.endswith("/") else path == d for d in own):
                files[path] = _untracked_change(root, path)
    return ChangeSet(base=git.rev_parse(repo, base_sha) or base_sha,
                     head=revs[1] if head_ref is not None else None, files=files)


def _pair_patches(raw: list[_RawEntry], patches: list[list[str]]) -> list[list[str]] | None:
    """The patch lines of each raw entry, in order; None when the counts do not agree.

    A type change (T: file <-> symlink) is printed as a deletion followed by a creation,
    two patches for one entry; they are joined and parsed together.
    """
    if len(patches) != len(raw) + sum(e.status == "T" for e in raw):
        return None
    out: list[list[str]] = []
    i = 0
    for e in raw:
        n = 2 if e.status == "T" else 1
        out.append([line for chunk in patches[i:i + n] for line in chunk])
        i += n
    return out


def _one_patch(repo: str, revs: list[str], entry: _RawEntry) -> list[str]:
    paths = sorted({entry.old_path, entry.new_path})
    out = git.run_git(repo, *_DIFF_OPTS, *revs, "--", *(f":(literal){p}" for p in paths)).stdout
    return [line for chunk in _split_patches(out) for line in chunk]


# ---------------------------------------------------------------------------- changed code

# Statements that compile to no instruction of their own: a line tracer never reports them.
_NO_CODE = (ast.Pass, ast.Global, ast.Nonlocal, ast.Try) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())


@functools.lru_cache(maxsize=4)
def _parsed(source: str) -> ast.Module | None:
    """`source` parsed once for the three readings of a changed file below (never changed
    by them); None where it does not parse."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def code_spans(source: str) -> list[tuple[int, int]]:
    """(first, last) line of each statement inside a function body: what a call of the
    model can execute, so what a smoke run's line coverage can record (pt2bot/smoke/
    coverage.py). A compound statement counts by its header (`if ...:`, `for ...:`, the
    signature of a nested `def`); module and class-level statements run at import, before
    any call, and are left out, as are docstrings and other bare constants, `pass`, `try:`,
    `global` and `nonlocal` (no instruction of their own). Sorted; [] when it does not parse."""
    tree = _parsed(source)
    if tree is None:
        return []
    spans: set[tuple[int, int]] = set()
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, inside = stack.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, name, None) or ():
                in_fn = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                if isinstance(child, ast.stmt) and in_fn and not _no_code(child):
                    spans.add(_header(child))
                stack.append((child, in_fn))
    return sorted(spans)


def branch_of(source: str) -> dict[int, int]:
    """{first line of a statement: the line of the `if` whose body or `else` holds it
    directly} (an `elif` is the `if` of its own arms; a statement in a loop or `with` inside
    the branch is not mapped: the branch may have run and the loop not). Changed code that no
    model ran directly in a branch of an `if` whose test ran is a branch no input took."""
    tree = _parsed(source)
    if tree is None:
        return {}
    out: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            for child in (*node.body, *node.orelse):
                out[_header(child)[0]] = node.lineno
    return out


def function_spans(source: str) -> list[tuple[int, int, str]]:
    """(first, last, name) of every function and method, decorators left out; sorted; []
    when it does not parse."""
    tree = _parsed(source)
    if tree is None:
        return []
    return sorted((n.lineno, n.end_lineno or n.lineno, n.name) for n in ast.walk(tree)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def innermost_function(functions: Sequence[tuple[int, int, str]], line: int
                       ) -> tuple[int, int, str] | None:
    """The narrowest of `functions` (`function_spans`) holding `line`."""
    return min((f for f in functions if f[0] <= line <= f[1]), key=lambda f: f[1] - f[0],
               default=None)


def _no_code(st: ast.stmt) -> bool:
    return isinstance(st, _NO_CODE) or (isinstance(st, ast.Expr)
                                         and isinstance(st.value, ast.Constant))


_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases", "decorator_list"})


def _header(st: ast.stmt) -> tuple[int, int]:
    """A simple statement's lines; a compound one's lines before its body, to the end of its
    own expressions (a comment between the header and the body is no part of it: V-JEPA's
    added comment above an `if` in a `for` read as changed code of the `for`)."""
    first = st.lineno
    body = getattr(st, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        own = [getattr(n, "end_lineno", None) or first for name, v in ast.iter_fields(st) if name not in _BLOCKS
               for n in (v if isinstance(v, list) else [v]) if isinstance(n, ast.AST)]
        return first, max(first, min(body[0].lineno - 1, max(own, default=first)))
    cases = getattr(st, "cases", None)      # `match x:` before its first `case`
    if isinstance(cases, list) and cases:
        return first, max(first, cases[0].pattern.lineno - 1)
    return first, st.end_lineno or first


def changed_code(changeset: ChangeSet | None) -> dict[str, list[int]]:
    """Head's added lines of each changed Python file: what a review's smoke run of head
    follows operand by operand (pt2bot/smoke/coverage.py `watch`)."""
    if changeset is None:
        return {}
    return {path: sorted(fc.added_lines) for path, fc in sorted(changeset.files.items())
            if path.endswith(".py") and fc.added_lines and not fc.binary
            and fc.status in ("added", "modified", "renamed")}


def touches_change(fc: FileChange, line: int, start: int, end: int) -> bool:
    """Whether the byte columns `start..end` of head line `line` hold part of what the PR
    changed there (`changed_cols`; a line with none recorded is new throughout)."""
    if line not in fc.added_lines:
        return False
    spans = dict(fc.changed_cols).get(line)
    if spans is None:
        return True
    return any(start <= a <= end if a == b else (a < end and b > start) for a, b in spans)


def with_code_spans(changeset: ChangeSet, tree: str) -> ChangeSet:
    """`changeset` with `code_spans` of each changed Python file, read from the head tree at
    `tree` (the working tree or a worktree of head): the statements holding added lines."""
    files = {}
    for path, fc in changeset.files.items():
        if (path.endswith(".py") and fc.added_lines and not fc.binary
                and fc.status in ("added", "modified", "renamed")):
            try:
                with open(os.path.join(tree, path), "rb") as fh:
                    text = fh.read().decode("utf-8", "replace")
            except OSError:
                text = ""
            spans = tuple(sp for sp in code_spans(text)
                          if any(n in fc.added_lines for n in range(sp[0], sp[1] + 1)))
            guards = branch_of(text) if spans else {}
            fc = dataclasses.replace(fc, code_spans=spans, branch_of=tuple(
                (first, guards[first]) for first, _ in spans if first in guards),
                functions=tuple(function_spans(text)) if spans else ())
        files[path] = fc
    return dataclasses.replace(changeset, files=files)


# ---------------------------------------------------------------------------- findings

def diff_position(changeset: ChangeSet, path: str, line: int) -> str:
    """DIFF_ADDED / DIFF_CONTEXT / DIFF_FILE / DIFF_OUTSIDE for one location on head."""
    fc = changeset.files.get(path)
    if fc is None or fc.status == "deleted":
        return DIFF_OUTSIDE
    if line in fc.added_lines:
        return DIFF_ADDED
    if line in fc.context_lines:
        return DIFF_CONTEXT
    return DIFF_FILE


def annotate_findings(findings: Iterable[Finding], changeset: ChangeSet) -> list[Finding]:
    """Every finding, with `diff` set to where it lies relative to the change (none dropped)."""
    return [f.with_(diff=diff_position(changeset, f.path, f.line)) for f in findings]


def mark_new(head: Iterable[Finding], base: Iterable[Finding], *,
             renames: Mapping[str, str]) -> list[Finding]:
    """Head findings, sorted by location, each with `new` set: False when the base has the
    same problem, by `Finding.fingerprint()` (rule, path renamed through the diff, enclosing
    function, whitespace-normalised source; no line number). A line the diff moved or
    re-indented (under a new `if`) is changed text but pre-existing code.

    The one rule for "new" of `pt2bot review` (compare.compare_findings) and `pt2bot check
    --base`. Findings are a multiset: two copies on head and one on base make one new.
    """
    remaining = Counter(f.with_(path=renames.get(f.path, f.path)).fingerprint() for f in base)
    out: list[Finding] = []
    for f in sorted(head, key=sort_key):
        fp = f.fingerprint()
        new = remaining[fp] <= 0
        if not new:
            remaining[fp] -= 1
        out.append(f.with_(new=new))
    return out


def keep_finding(finding: Finding, filter: str) -> bool:
    """reviewdog's filter modes: added ⊂ diff_context ⊂ file ⊂ nofilter.

    A finding never compared with a diff (`diff is None`, plain `pt2bot check`) is kept.
    """
    if filter not in FILTERS:
        raise UserError(f"unknown filter {filter!r}; expected one of {', '.join(FILTERS)}")
    allowed = FILTER_KEEPS[filter]
    return allowed is None or finding.diff is None or finding.diff in allowed


def is_commentable(changeset: ChangeSet, path: str, line: int) -> bool:
    """Whether GitHub accepts an inline review comment at (path, line, side RIGHT)."""
    fc = changeset.files.get(path)
    if fc is None or fc.status == "deleted" or fc.binary:
        return False
    return line in fc.added_lines or line in fc.context_lines


def in_one_hunk(changeset: ChangeSet, path: str, first: int, last: int) -> bool:
    """Whether head lines first..last all lie inside ONE hunk of the diff: what a multi-line
    suggestion (a review comment from `start_line` to `line`) needs on GitHub."""
    fc = changeset.files.get(path)
    if fc is None or fc.status == "deleted" or fc.binary or first > last:
        return False
    return any(h.new_count and h.new_start <= first and last <= h.new_last for h in fc.hunks)


__all__ = [
    "ChangeSet", "FileChange", "Hunk", "FILTERS", "STATUSES", "annotate_findings", "branch_of",
    "code_spans", "diff_changes", "diff_position", "function_spans", "in_one_hunk",
    "innermost_function", "is_commentable",
    "keep_finding", "mark_new", "resolve_base", "with_code_spans",
]
