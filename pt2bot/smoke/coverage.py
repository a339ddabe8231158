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
- `LineCoverage(watch=...)`: on the lines a review watches (the PR's changed lines), the
  operands Python never evaluated on a line that ran: `b` in `if flag and b:` while `flag` is
  False on every call, the branch of `x if c else y` no call took (`unevaluated_json()`, the
  RUN's `unevaluated`). A line counts as run once any of it runs, so a change behind a
  short-circuit that never opens would read as exercised. Only the frames of code objects
  holding such a line are traced by instruction (3.11: `f_trace_opcodes`; 3.12+: local
  INSTRUCTION events), and an operand is judged by the bytecode positions inside its span.

Stdlib only, so the 3.12 path is tested with another interpreter (tests/test_reach.py).
`to_json()` is the RUN's `coverage`: repo path -> "1-3,7,9-12" (pt2bot/reach.py reads it).
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterable, Iterator, Mapping

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

    def __init__(self, rel: Rel, *, exclude: Iterable[str] = (),
                 watch: Mapping[str, Iterable[int]] | None = None) -> None:
        self._rel = rel
        self._exclude = tuple(exclude)    # directories never recorded (pt2bot's own code)
        self._files: dict[str, str | None] = {}   # co_filename -> repo path or None
        self.lines: dict[str, set[int]] = {}
        # repo path -> the lines whose operands are followed one by one (see the module doc)
        self._watch = {p: frozenset(ls) for p, ls in (watch or {}).items() if ls}
        self._watched_codes: dict[Any, frozenset[int]] = {}   # code -> its watched lines
        self._ran: dict[Any, set[int]] = {}   # watched code -> instruction offsets executed
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

    def watched_lines(self, code: Any) -> frozenset[int]:
        """The watched lines of `code` where part of the line may be skipped (cached): the
        frames to trace by instruction. Empty for nearly every code object."""
        try:
            return self._watched_codes[code]
        except KeyError:
            pass
        out: frozenset[int] = frozenset()
        rel = self.repo_path(code.co_filename) if self._watch else None
        if rel is not None and rel in self._watch:
            out = branching_lines(code) & self._watch[rel]
        self._watched_codes[code] = out
        return out

    def to_json(self) -> dict[str, str]:
        return {path: format_ranges(lines) for path, lines in sorted(self.lines.items()) if lines}

    def traced_json(self) -> dict[str, str] | None:
        """The lines dynamo traced, as `to_json()`; None when dynamo could not be hooked."""
        if self.traced is None:
            return None
        return {path: format_ranges(lines) for path, lines in sorted(self.traced.items()) if lines}

    def unevaluated_json(self) -> dict[str, list[dict[str, Any]]] | None:
        """The operands of watched lines that ran and that no call evaluated: repo path ->
        [{line, col, end_line, end_col, code, guard, kind}] (columns are UTF-8 byte offsets,
        as `ast` and the bytecode's positions give them). `kind` says what kept it from
        running: "and"/"or" after `guard`, "if"/"else" the arm of a conditional expression
        whose test is `guard`. None without a watch; a file that cannot be read is left out."""
        if not self._watch:
            return None
        by_path: dict[str, list[Any]] = {}
        for code in self._ran:
            rel = self.repo_path(code.co_filename)
            if rel is not None:
                by_path.setdefault(rel, []).append(code)
        out: dict[str, list[dict[str, Any]]] = {}
        for rel, codes in sorted(by_path.items()):
            got = _unevaluated(codes, self._ran, self._watch[rel] & self.lines.get(rel, set()))
            if got:
                out[rel] = got
        return out

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

        ran = self._ran

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                rel = repo_path(frame.f_code.co_filename)
                if rel is not None:
                    lines.setdefault(rel, set()).add(frame.f_lineno)
            elif event == "opcode":
                # every instruction of a watched frame: an operand that starts on a watched
                # line may run its first instruction on the next one
                ran[frame.f_code].add(frame.f_lasti)
            return local

        def call(frame: Any, event: str, arg: Any) -> Any:
            # Only the call event of other code costs us: no line events outside the repo.
            rel = repo_path(frame.f_code.co_filename)
            if rel is None:
                return None
            lines.setdefault(rel, set()).add(frame.f_lineno)
            if self._watch and self.watched_lines(frame.f_code):
                ran.setdefault(frame.f_code, set())
                frame.f_trace_opcodes = True
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
                watched = self._watch and self.watched_lines(code)
                if watched:
                    self._ran.setdefault(code, set())
                mon.set_local_events(tool, code, ev.LINE | (ev.INSTRUCTION if watched else 0))
                enabled.append(code)
            return mon.DISABLE   # each code object is judged once

        def on_line(code: Any, line: int) -> Any:
            self.add(code.co_filename, line)
            return mon.DISABLE   # this line is known: no further events from it

        def on_instruction(code: Any, offset: int) -> Any:
            self._ran[code].add(offset)
            return mon.DISABLE   # each instruction once

        mon.use_tool_id(tool, "pt2bot")
        try:
            mon.register_callback(tool, ev.PY_START, on_start)
            mon.register_callback(tool, ev.LINE, on_line)
            mon.register_callback(tool, ev.INSTRUCTION, on_instruction)
            mon.set_events(tool, ev.PY_START)
            mon.restart_events()
            yield
        finally:
            mon.set_events(tool, 0)
            for code in enabled:
                mon.set_local_events(tool, code, 0)
            mon.register_callback(tool, ev.PY_START, None)
            mon.register_callback(tool, ev.LINE, None)
            mon.register_callback(tool, ev.INSTRUCTION, None)
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


def _unevaluated(codes: list[Any], ran: Mapping[Any, set[int]],
                 lines: frozenset[int] | set[int]) -> list[dict[str, Any]]:
    """`unevaluated_json` for one file: the operands starting on `lines` whose instructions
    (in `codes`, by their source positions) none ran."""
    import ast
    import dis

    if not lines:
        return []
    try:
        with open(codes[0].co_filename, "rb") as fh:
            source = fh.read()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    decoded = source.decode("utf-8", "replace")
    # (start, end, executed) of every instruction with a position, over the watched codes
    spans = []
    for code in codes:
        done = ran.get(code, set())
        for ins in dis.get_instructions(code):
            pos = getattr(ins, "positions", None)
            if pos is None or None in (pos.lineno, pos.end_lineno, pos.col_offset, pos.end_col_offset):
                continue
            spans.append(((pos.lineno, pos.col_offset), (pos.end_lineno, pos.end_col_offset),
                          ins.offset in done))

    def segment(node: ast.AST) -> str:
        seg = ast.get_source_segment(decoded, node) or ""
        return " ".join(seg.split())

    found: list[tuple[ast.AST, ast.AST, str]] = []   # (operand, guard, kind)
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp):
            kind = "and" if isinstance(node.op, ast.And) else "or"
            found += [(v, node.values[k], kind) for k, v in enumerate(node.values[1:])]
        elif isinstance(node, ast.IfExp):
            found += [(node.body, node.test, "if"), (node.orelse, node.test, "else")]
    out: list[dict[str, Any]] = []
    for operand, guard, kind in sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset,
                                                             -(f[0].end_lineno or 0),
                                                             -(f[0].end_col_offset or 0))):
        if operand.lineno not in lines or operand.end_lineno is None or operand.end_col_offset is None:
            continue
        start, end = (operand.lineno, operand.col_offset), (operand.end_lineno, operand.end_col_offset)
        inside = [r for s, e, r in spans if start <= s and e <= end]
        if not inside or any(inside):
            continue
        # an operand inside one already said never ran is no news
        if any((o["line"], o["col"]) <= start and end <= (o["end_line"], o["end_col"]) for o in out):
            continue
        out.append({"line": operand.lineno, "col": operand.col_offset,
                    "end_line": operand.end_lineno, "end_col": operand.end_col_offset,
                    "code": segment(operand)[:200], "guard": segment(guard)[:200], "kind": kind})
    return out


__all__ = ["LineCoverage", "branching_lines", "format_ranges"]
