"""Line coverage of the repository's files during a model's run: which lines executed.

pt2bot/reach.py asks, for each static finding, whether a configured model executed its line.
Two sources answer it, and together they are complete for one call of the model:

- `LineCoverage.executing()`: lines that Python ran, restricted to the repo's files: the
  eager forward calls, and the code dynamo leaves to Python (skipped frames, resumed code).
  Python 3.12+ uses `sys.monitoring` (each line reports once, then is disabled at that
  location: near zero cost); 3.11 uses `sys.settrace` with a per-frame local tracer only in
  repo files (other frames get no line events, only the call event).
- `LineCoverage.tracing()`: lines dynamo traced symbolically (a compiled frame's bytecode
  never runs, so Python never reports those lines): a wrapper on dynamo's
  `InstructionTranslatorBase.starts_line`, which it calls once per new line of every
  traced frame, inlined calls included. A torch without that hook records nothing here.
  These lines are also kept apart (`traced_json()`, the RUN's `traced_lines`): the lines
  whose graph breaks the same compiled call recorded, so that a static claim of a break on
  one of them that dynamo did not make can be told from a line dynamo never saw
  (pt2bot/reach.py). A line where a conditional jump comes before its last instruction
  (`if flag and random() < 0.5:`, `x if c else y.item()`, a comprehension's filter,
  `for t in xs:`) is left out of them: dynamo may trace such a line and skip part of it, so
  that it cannot say the whole line ran (`branching_lines`).

Stdlib only, so the 3.12 path is tested with another interpreter (tests/test_reach.py).
`to_json()` is the RUN's `coverage`: repo path -> "1-3,7,9-12" (pt2bot/reach.py reads it).
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterable, Iterator

Rel = Callable[[str], "str | None"]


def format_ranges(lines: Iterable[int]) -> str:
    """Sorted line numbers as "1-3,7,9-12" (compact for the results JSON)."""
    out: list[str] = []
    start = prev = None
    for n in sorted(set(lines)):
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    if start is not None:
        out.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(out)


def branching_lines(code: Any) -> frozenset[int]:
    """Lines of `code` (not its nested code objects) where a conditional jump is followed by
    more of the same line: a short-circuit (`a and f()`), a conditional expression, a
    comprehension's filter, a `for` header. Whoever runs or traces such a line may skip part
    of it. Read from the bytecode (each instruction's line), once per code object."""
    import dis

    out: set[int] = set()
    try:
        instrs = list(dis.get_instructions(code))
    except Exception:  # noqa: BLE001 - a code object we cannot read: no line is whole
        return frozenset(range(code.co_firstlineno, code.co_firstlineno + 10_000))
    lines = [getattr(getattr(i, "positions", None), "lineno", None) or i.starts_line
             for i in instrs]
    current = None
    for k, ins in enumerate(instrs):
        if lines[k] is not None:
            current = lines[k]
        name = ins.opname
        if current is None or not ("IF" in name or name in ("FOR_ITER", "SEND")):
            continue
        later = next((ln for ln in lines[k + 1:] if ln is not None), None)
        if later == current:
            out.add(current)
    return frozenset(out)


class LineCoverage:
    """Executed (and dynamo-traced) lines of the files `rel` maps to a repo path."""

    def __init__(self, rel: Rel, *, exclude: Iterable[str] = ()) -> None:
        self._rel = rel
        self._exclude = tuple(exclude)    # directories never recorded (pt2bot's own code)
        self._files: dict[str, str | None] = {}   # co_filename -> repo path or None
        self.lines: dict[str, set[int]] = {}
        # The lines dynamo traced, apart (also in `lines`); None until `tracing()` could hook
        # dynamo (a torch without the hook: unknown, not "none").
        self.traced: dict[str, set[int]] | None = None

    # ----------------------------------------------------------------- helpers

    def repo_path(self, filename: str) -> str | None:
        """The repo path of a code object's file, cached (realpath per call is too slow)."""
        try:
            return self._files[filename]
        except KeyError:
            pass
        rel = None
        if not any(filename.startswith(d) for d in self._exclude):
            try:
                rel = self._rel(filename)
            except Exception:  # noqa: BLE001 - a path we cannot judge is not the user's
                rel = None
        self._files[filename] = rel
        return rel

    def add(self, filename: str, line: int | None) -> None:
        if not line or line < 1:
            return
        rel = self.repo_path(filename)
        if rel is not None:
            self.lines.setdefault(rel, set()).add(line)

    def to_json(self) -> dict[str, str]:
        return {path: format_ranges(lines) for path, lines in sorted(self.lines.items()) if lines}

    def traced_json(self) -> dict[str, str] | None:
        """The lines dynamo traced, as `to_json()`; None when dynamo could not be hooked."""
        if self.traced is None:
            return None
        return {path: format_ranges(lines) for path, lines in sorted(self.traced.items()) if lines}

    # ----------------------------------------------------------------- Python running code

    @contextlib.contextmanager
    def executing(self) -> Iterator[None]:
        """Record the repo lines Python executes in this thread while inside the block."""
        if sys.version_info >= (3, 12) and hasattr(sys, "monitoring"):
            with self._monitoring():
                yield
        else:
            with self._settrace():
                yield

    @contextlib.contextmanager
    def _settrace(self) -> Iterator[None]:
        lines = self.lines
        repo_path = self.repo_path

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                rel = repo_path(frame.f_code.co_filename)
                if rel is not None:
                    lines.setdefault(rel, set()).add(frame.f_lineno)
            return local

        def call(frame: Any, event: str, arg: Any) -> Any:
            # Only the call event of other code costs us: no line events outside the repo.
            rel = repo_path(frame.f_code.co_filename)
            if rel is None:
                return None
            lines.setdefault(rel, set()).add(frame.f_lineno)
            return local

        previous = sys.gettrace()
        sys.settrace(call)
        try:
            yield
        finally:
            sys.settrace(previous)

    @contextlib.contextmanager
    def _monitoring(self) -> Iterator[None]:
        mon = sys.monitoring   # type: ignore[attr-defined]
        tool = next((t for t in (mon.COVERAGE_ID, 4, 5) if mon.get_tool(t) is None), None)
        if tool is None:       # every tool slot taken (a coverage tool, a debugger): fall back
            with self._settrace():
                yield
            return
        ev = mon.events
        enabled: list[Any] = []

        def on_start(code: Any, offset: int) -> Any:
            if self.repo_path(code.co_filename) is not None:
                mon.set_local_events(tool, code, ev.LINE)
                enabled.append(code)
            return mon.DISABLE   # each code object is judged once

        def on_line(code: Any, line: int) -> Any:
            self.add(code.co_filename, line)
            return mon.DISABLE   # this line is known: no further events from it

        mon.use_tool_id(tool, "pt2bot")
        try:
            mon.register_callback(tool, ev.PY_START, on_start)
            mon.register_callback(tool, ev.LINE, on_line)
            mon.set_events(tool, ev.PY_START)
            mon.restart_events()
            yield
        finally:
            mon.set_events(tool, 0)
            for code in enabled:
                mon.set_local_events(tool, code, 0)
            mon.register_callback(tool, ev.PY_START, None)
            mon.register_callback(tool, ev.LINE, None)
            mon.free_tool_id(tool)

    # ----------------------------------------------------------------- dynamo tracing code

    @contextlib.contextmanager
    def tracing(self) -> Iterator[None]:
        """Record the repo lines dynamo traces (symbolically executes) inside the block."""
        try:
            from torch._dynamo import symbolic_convert as sc
            cls = sc.InstructionTranslatorBase
            orig = cls.starts_line
        except (ImportError, AttributeError):   # another torch: the executed lines still count
            yield
            return
        lines = self.lines
        traced = self.traced = {} if self.traced is None else self.traced
        repo_path = self.repo_path
        partial: dict[Any, frozenset[int]] = {}   # code object -> its branching lines

        def starts_line(translator: Any, lineno: int) -> None:
            try:
                code = translator.f_code
                rel = repo_path(code.co_filename) if lineno and lineno > 0 else None
                if rel is not None:
                    lines.setdefault(rel, set()).add(lineno)
                    skips = partial.get(code)
                    if skips is None:
                        skips = partial[code] = branching_lines(code)
                    if lineno not in skips:
                        traced.setdefault(rel, set()).add(lineno)
            except Exception:  # noqa: BLE001 - coverage must never break dynamo
                pass
            return orig(translator, lineno)

        cls.starts_line = starts_line   # type: ignore[method-assign]
        try:
            yield
        finally:
            cls.starts_line = orig      # type: ignore[method-assign]


__all__ = ["LineCoverage", "branching_lines", "format_ranges"]
