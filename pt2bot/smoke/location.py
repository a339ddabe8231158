"""Where in the user's code: which files are the user's, and the one error type for their faults.

Three places need "the innermost frame inside the repository": the entry import
(pt2bot/smoke/entry.py), the worker's inputs/forward and phases (pt2bot/smoke/inputs.py,
worker.py), and the runner reading a dead worker's traceback from its log
(pt2bot/smoke/supervise.py). They all answer through `RepoPaths.rel`, so a virtualenv or
site-packages inside the repository is never blamed as user code, whichever way the
traceback arrived (a live exception or text). Torch-free.
"""
from __future__ import annotations

import ast
import linecache
import os
import re
import sys
import sysconfig
import traceback
from dataclasses import dataclass, field

from pt2bot.results import RunError, Site

MESSAGE_LIMIT = 4000     # the most of a message that goes into a RUN's error


def real_file(filename: str | None) -> str | None:
    """The real path of a code object's filename; None for `<string>`-style and broken names."""
    if not filename or filename.startswith("<"):
        return None
    try:
        return os.path.realpath(filename)
    except (OSError, ValueError):
        return None


@dataclass
class RepoPaths:
    """Decides which files are the user's and makes them repo-relative."""
    root: str
    _excluded: tuple[str, ...] = field(default=(), init=False)
    # a file's functions, (name, first line, last line) (None: unreadable or not Python), read
    # once: every break event of a file asks `in_function`
    _functions: dict[str, list[tuple[str, int, int]] | None] = field(default_factory=dict, init=False,
                                                                     repr=False)
    # a file's `for`/`while` loops, (first line, last line), read once
    _loops: dict[str, list[tuple[int, int]] | None] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = os.path.realpath(self.root)
        # A virtualenv or site-packages inside the repo (e.g. ./.venv) is not user code.
        excl = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        for key in ("purelib", "platlib", "stdlib"):
            try:
                excl.add(os.path.realpath(sysconfig.get_paths()[key]))
            except KeyError:
                pass
        self._excluded = tuple(sorted(excl))

    def rel(self, filename: str | None) -> str | None:
        """Repo-relative path with forward slashes, or None when not user code."""
        real = real_file(filename)
        if real is None:
            return None
        for ex in self._excluded:
            if real == ex or real.startswith(ex + os.sep):
                if not (ex == self.root or self.root.startswith(ex + os.sep)):
                    return None
        parts = real.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            return None
        if real != self.root and not real.startswith(self.root + os.sep):
            return None
        return os.path.relpath(real, self.root).replace(os.sep, "/")

    def installed(self, filename: str | None) -> str | None:
        """An installed package's file from its package on (`linformer/linformer.py`), for a
        break that is not in the repository: the reader can find it without the runner's paths."""
        real = real_file(filename)
        if real is None or self.rel(filename):
            return None
        parts = real.split(os.sep)
        at = [i for i, p in enumerate(parts) if p in ("site-packages", "dist-packages")]
        if not at:
            return None
        return "/".join(parts[at[-1] + 1:]) or None

    def source_line(self, rel: str | None, line: int | None) -> str:
        """The stripped source line from the working tree (user text: data, never code)."""
        if not rel or not line:
            return ""
        try:
            with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as fh:
                for i, text in enumerate(fh, 1):
                    if i == line:
                        return text.strip()[:500]
        except OSError:
            pass
        return ""

    def in_function(self, filename: str | None, line: int | None, function: str | None) -> bool | None:
        """Whether `line` of `filename` (a frame's file, as dynamo printed it) lies inside a
        function named `function`, as dynamo names the frame of a break (a resume function,
        `torch_dynamo_resume_in_forward_at_81`, inside the `forward` that holds line 81); None
        when that cannot be told (no name, a `<listcomp>`-style one, a file that does not
        parse). The text is read through `linecache`, as dynamo's tracebacks read it. dynamo
        can get a resume function's lines wrong: e3nn's `int(batch.max())` on line 103 of a
        `forward`, after a break in a helper, was reported at line 110, `self,` in another
        class's `__init__`. A line that holds no code (blank, or a comment) is no line of the
        function either: pytorch-ood's CAC loss breaks on the boolean index of line 124, which
        dynamo, in a resume function, reported at line 126, `# for numerical stability, ...`."""
        if not filename or not line or not function or function.startswith("<"):
            return None
        text = linecache.getline(filename, line).strip()
        if linecache.getlines(filename) and (not text or text.startswith("#")):
            return False
        name, anchors = function, []
        while (m := _RESUME_NAME.fullmatch(name)) is not None:
            name, anchors = m.group("name"), anchors + [int(m.group("line"))]
        spans = self._spans(filename)
        if spans is None:
            return None
        return any(n == name and all(first <= at <= last for at in (line, *anchors)) for n, first, last in spans)

    def function_end(self, filename: str | None, function: str | None, first: int | None) -> int | None:
        """The last line of the function `function` whose code starts at `first` (its `def`,
        or its first decorator: a code object's `co_firstlineno`), None when not found."""
        if not filename or not function or not first:
            return None
        # (a decorated def's line is below its decorators' first line)
        ends = [(lineno - first, last) for n, lineno, last in self._spans(filename) or ()
                if n == function and 0 <= lineno - first < 50]
        return min(ends)[1] if ends else None

    def enclosing_end(self, filename: str | None, line: int | None) -> int | None:
        """The last line of the innermost function holding `line` of `filename`."""
        if not filename or not line:
            return None
        spans = [(last - lineno, last) for _n, lineno, last in self._spans(filename) or ()
                 if lineno <= line <= last]
        return min(spans)[1] if spans else None

    def loop_at(self, filename: str | None, line: int | None) -> int | None:
        """The first line of the innermost `for`/`while` loop of the innermost function
        holding `line` of `filename` that holds `line` (None: none, or the file does not parse)."""
        if not filename or not line:
            return None
        if filename not in self._loops:
            self._loops[filename] = _loop_spans("".join(linecache.getlines(filename)))
        fn = [(first, last) for _n, first, last in self._spans(filename) or () if first <= line <= last]
        inner = min(fn, key=lambda s: s[1] - s[0]) if fn else (1, 1 << 30)
        loops = [(first, last) for first, last in self._loops[filename] or ()
                 if first <= line <= last and inner[0] <= first and last <= inner[1]]
        return max(loops)[0] if loops else None

    def _spans(self, filename: str) -> list[tuple[str, int, int]] | None:
        """`filename`'s functions (`_function_spans`), read once, through `linecache`."""
        if filename not in self._functions:
            self._functions[filename] = _function_spans("".join(linecache.getlines(filename)))
        return self._functions[filename]

    def resolve_suffix(self, suffix: str, candidates: list[str]) -> str | None:
        """Torch truncates paths in guard comments ("mp/exp/pkg/m.py"): match the tail."""
        suffix = suffix.strip()
        for c in candidates:
            if c.endswith(suffix):
                r = self.rel(c)
                if r:
                    return r
        # the tail under the repository: torch cut the path inside the directories above it
        # ("mp/tt/repo/torchtune/modules/kv_cache.py" of /tmp/tt/repo/...), and a function it
        # only inlined (torchtune's KVCache.update) is no compiled frame's file to match
        # (its whole path must end with the text torch wrote, so that torch's own
        # ".../torch/nn/modules/linear.py" is never a repository's modules/linear.py)
        parts = suffix.replace("\\", "/").split("/")
        for k in range(len(parts)):
            full = os.path.join(self.root, *parts[k:])
            r = self.rel(full)
            if r and os.path.isfile(full) and full.replace("\\", "/").endswith(suffix.replace("\\", "/")):
                return r
        return None


Location = tuple[str | None, int | None]

def _statements(text: str, kinds: tuple[type, ...]) -> list[ast.stmt] | None:
    """The statements of `kinds` anywhere in a module's text; None when the text is empty or
    does not parse."""
    try:
        tree = ast.parse(text) if text else None
    except (SyntaxError, ValueError, RecursionError):
        return None
    return None if tree is None else [n for n in ast.walk(tree) if isinstance(n, kinds)]


def _function_spans(text: str) -> list[tuple[str, int, int]] | None:
    """Each `def` of a module's text as (name, first line, last line)."""
    found = _statements(text, (ast.FunctionDef, ast.AsyncFunctionDef))
    return None if found is None else [(n.name, n.lineno, n.end_lineno or n.lineno) for n in found]


def _loop_spans(text: str) -> list[tuple[int, int]] | None:
    """Each `for`/`while` statement of a module's text as (first line, last line)."""
    found = _statements(text, (ast.For, ast.AsyncFor, ast.While))
    return None if found is None else [(n.lineno, n.end_lineno or n.lineno) for n in found]


# the name dynamo gives the function it makes to resume a frame after a break at line N
_RESUME_NAME = re.compile(r"torch_dynamo_resume_in_(?P<name>.+)_at_(?P<line>\d+)")


def user_location(exc: BaseException, paths: RepoPaths) -> Location:
    """The innermost traceback frame inside the repo (SyntaxError: the file it is about)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        rel = paths.rel(exc.filename)
        if rel:
            return rel, exc.lineno
    loc: Location = (None, None)
    for fs in traceback.extract_tb(exc.__traceback__):
        rel = paths.rel(fs.filename)
        if rel:
            loc = (rel, fs.lineno)
    return loc


def user_frames(exc: BaseException, paths: RepoPaths) -> tuple[tuple[str, int], ...]:
    """Every traceback frame inside the repo, outermost first, as (path, line): the lines a
    fault passed through. A pull request's line may be an outer one (guided-diffusion's reverted
    `ch = mult * model_channels` in unet.py, the float channel count raising inside nn.py)."""
    out = []
    for fs in traceback.extract_tb(exc.__traceback__):
        rel = paths.rel(fs.filename)
        if rel and fs.lineno:
            out.append((rel, fs.lineno))
    return tuple(out)


# (a traceback's repository frames kept with a RUN's error: a recursion's thousand are no help)
MAX_FRAMES = 20


_FILE_LINE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)


def text_location(text: str, paths: RepoPaths) -> Location:
    """The same answer from a printed traceback (a dead worker's log tail)."""
    loc: Location = (None, None)
    for m in _FILE_LINE.finditer(text):
        rel = paths.rel(m.group("path"))
        if rel:
            loc = (rel, int(m.group("line")))
    return loc


class ModelError(Exception):
    """A fault of the model under test (its import, build, inputs or forward).

    Reported as data (the RUN's `error`), never raised past the worker. `kind` is a RUN
    error kind (pt2bot.results.ERROR_KINDS) or, from the entry import, one of
    pt2bot.smoke.entry.KINDS; `path`/`line` locate the user code, `exc_type` names the
    exception the user code raised, when there was one.
    """

    def __init__(self, kind: str, message: str, path: str | None = None,
                 line: int | None = None, *, exc_type: str | None = None,
                 frames: tuple[tuple[str, int], ...] = (), exc_bases: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path
        self.line = line
        self.exc_type = exc_type
        # the names of its type's classes, itself first: a caller's `except RuntimeError`
        # still catches torch's TorchRuntimeError
        self.exc_bases = exc_bases or ((exc_type,) if exc_type else ())
        # every repository frame of the traceback, outermost first (`user_frames`)
        self.frames = frames

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.message, "path": self.path,
                "line": self.line, "exc_type": self.exc_type}

    def to_error(self) -> RunError:
        return RunError(kind=self.kind, message=self.message[:MESSAGE_LIMIT], path=self.path,
                        line=self.line, frames=tuple(Site(path=p, line=n) for p, n in self.frames[-MAX_FRAMES:])
                        or None)


__all__ = ["Location", "MESSAGE_LIMIT", "ModelError", "RepoPaths", "text_location",
           "user_location"]
