"""No latency verdict without a possible cause: the review's latency gate.

On a loaded runner two processes of the same code can differ by more than a latency
threshold; a verdict on a model the pull request cannot have made slower or faster is
noise with a confidence interval. A model's latency is "unchanged" (no interval, no
verdict, and no latency rounds) when all of these hold:

1. **Nothing outside Python code changed**: no changed file that is not a `.py` file (data,
   configs, `pt2bot.yml` with its run settings, dependency pins in requirements or
   pyproject files, extensions), no changed `setup.py` (pins), and base and head ran in the
   same environment (the results' torch, Python, device, backend and config digest).
2. **No changed statement ran**, on either side. A statement is changed when its code
   differs once docstrings and other bare string statements, comments, `pass` and
   annotations are set aside (`changed_spans`: the two sides' ASTs are matched statement by
   statement, a def or class by name and then its body): a docs-only or annotation-only
   pull request changes nothing. A changed statement on head counts when head's line
   coverage of the model holds one of its lines, one on base when base's coverage does. The
   coverage holds the model's import and construction as well as its calls
   (pt2bot/smoke/worker.py), so construction and import-time code are covered by the same
   test.
3. **The same graphs and guards**: the signature of what dynamo compiled in the graph-break
   and shape-matrix passes (pt2bot/smoke/signature.py: file/line comments stripped, object
   ids and paths normalised) is equal on both sides.

Kept annotations: a class or module-level `x: T = v` keeps its name as annotated (a
dataclass field, a NamedTuple member), only the type expression is set aside.

What can be known before any timing is (1) and whether the pull request has any changed
statement at all (`CodeChanges.runtime_changed`): a review of a pull request with none runs its
first pass without the latency phase; (2) and (3) need both sides' coverage and compile
traces, so for the others the gate is decided after the first pass, and a gated model
gets no further latency rounds (pt2bot/pipeline.py).
"""
from __future__ import annotations

import ast
import copy
import difflib
import os
import stat
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from pt2bot.changes import ChangeSet
from pt2bot.reach import FileLines
from pt2bot.results import LatencyGate, ModelRun, ResultsFile

UNCHANGED, MEASURED = "unchanged", "measured"
# a model whose latency no pass timed (latency off in pt2bot.yml, the model failed): a report
# that said "measured" there claimed a measurement nobody made
NOT_MEASURED = "not_measured"
UNCHANGED_NOTE = "unchanged: same graphs, same code"
# Python files that pin dependencies rather than hold code a model runs.
PIN_FILES = frozenset({"setup.py"})
# The results header fields that make the environment of a side.
ENVIRONMENT = ("torch", "python", "device", "device_name", "backend", "config_digest")

Spans = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class CodeChanges:
    """What a pull request changed that can change a model's speed.

    `blockers`: reasons that turn the gate off for every model (a non-Python file, a pin
    file, a file that does not parse). `old`/`new`: per changed Python file, the (first,
    last) lines of its changed statements on base (base path) and on head (head path).
    """
    blockers: tuple[str, ...] = ()
    old: Mapping[str, Spans] = field(default_factory=dict)
    new: Mapping[str, Spans] = field(default_factory=dict)

    @property
    def runtime_changed(self) -> bool:
        """Whether anything can differ at run time: a blocker or any changed statement."""
        return bool(self.blockers) or any(self.old.values()) or any(self.new.values())


def code_changes(changeset: ChangeSet, base_root: str, head_root: str) -> CodeChanges:
    """The pull request's changes as the gate sees them, read from both trees."""
    blockers: list[str] = []
    old: dict[str, Spans] = {}
    new: dict[str, Spans] = {}
    for path, fc in sorted(changeset.files.items()):
        old_path = fc.old_path if fc.old_path is not None else (
            path if fc.status == "deleted" else None)
        names = {p for p in (path, old_path) if p}
        if fc.binary or any(not p.endswith(".py") for p in names):
            blockers.append(f"{path} changed (not Python code)")
            continue
        if any(os.path.basename(p) in PIN_FILES for p in names):
            blockers.append(f"{path} changed (dependency pins)")
            continue
        before = _read(base_root, old_path) if old_path and fc.status != "added" else ""
        after = _read(head_root, path) if fc.status != "deleted" else ""
        if before is None or after is None:
            blockers.append(f"{path} could not be read")
            continue
        spans = changed_spans(before, after)
        if spans is None:
            blockers.append(f"{path} does not parse")
            continue
        if old_path and spans[0]:
            old[old_path] = spans[0]
        if fc.status != "deleted" and spans[1]:
            new[path] = spans[1]
    return CodeChanges(blockers=tuple(blockers), old=old, new=new)


READ_CAP_BYTES = 8 * 1024 * 1024


def _read(root: str, path: str) -> str | None:
    """A tree's file as text; None for anything but a regular file of at most
    READ_CAP_BYTES (a pull request's symlink could point anywhere on the runner)."""
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
        if not stat.S_ISREG(st.st_mode) or st.st_size > READ_CAP_BYTES:
            return None
        with open(full, "rb") as fh:
            return fh.read(READ_CAP_BYTES + 1).decode("utf-8", "replace")
    except OSError:
        return None


# --------------------------------------------------------------------------- the AST diff

_BODIES = ("body", "orelse", "finalbody")


def changed_spans(before: str, after: str) -> tuple[Spans, Spans] | None:
    """(base spans, head spans) of the statements whose code differs; None when a side does
    not parse. Comments, docstrings, bare strings, `pass` and annotations do not count."""
    try:
        a, b = ast.parse(before), ast.parse(after)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out_a: list[tuple[int, int]] = []
    out_b: list[tuple[int, int]] = []
    try:
        _diff_body(a.body, b.body, out_a, out_b, in_function=False)
    except RecursionError:
        return None
    return tuple(sorted(set(out_a))), tuple(sorted(set(out_b)))


def _no_op(st: ast.stmt) -> bool:
    """A statement that does nothing at run time: `pass`, a bare constant (docstrings)."""
    return isinstance(st, ast.Pass) or (isinstance(st, ast.Expr)
                                         and isinstance(st.value, ast.Constant))


def _code(body: Sequence[ast.stmt]) -> list[ast.stmt]:
    return [st for st in body if not _no_op(st)]


class _StripAnnotations(ast.NodeTransformer):
    """Annotations set aside: argument and return annotations, a local `x: T = v` as
    `x = v` (a local annotation is never evaluated), a bare local `x: T` dropped; at module
    and class level `x: T = v` keeps its annotated name (dataclass fields) without the type.
    No-op statements (docstrings, bare strings, `pass`) go from every body."""

    def __init__(self, in_function: bool) -> None:
        self.in_function = in_function

    def _inside(self, node: ast.AST, in_function: bool) -> ast.AST:
        keep, self.in_function = self.in_function, in_function
        try:
            return self.generic_visit(node)
        finally:
            self.in_function = keep

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.returns = None
        return self._inside(node, True)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return self._inside(node, False)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.annotation = None
        node.type_comment = None
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if self.in_function:
            if node.value is None:
                return None
            return ast.Assign(targets=[node.target], value=self.visit(node.value))
        node.annotation = ast.Constant(value=None)
        return self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if hasattr(node, "type_comment"):
            node.type_comment = None   # type: ignore[attr-defined]
        node = super().generic_visit(node)
        for name in _BODIES:
            body = getattr(node, name, None)
            if isinstance(body, list) and all(isinstance(st, ast.stmt) for st in body):
                setattr(node, name, _code(body))
        return node


def _key(st: ast.stmt, in_function: bool, header: bool = False) -> str:
    """The statement's code for comparison (no positions); `header`: without its bodies."""
    node = copy.deepcopy(st)
    if header:
        for name in (*_BODIES, "handlers", "cases"):
            if isinstance(getattr(node, name, None), list):
                setattr(node, name, [])
    node = _StripAnnotations(in_function).visit(node)
    if node is None:
        return ""
    return ast.dump(node, include_attributes=False)


def _span(st: ast.stmt) -> tuple[int, int]:
    first = min([st.lineno, *(d.lineno for d in getattr(st, "decorator_list", ()) or ())])
    return first, st.end_lineno or st.lineno


def _header_span(st: ast.stmt) -> tuple[int, int]:
    first, _ = _span(st)
    body = getattr(st, "body", None)
    if isinstance(body, list) and body:
        return first, max(st.lineno, body[0].lineno - 1)
    return first, st.lineno


def _pair_name(st: ast.stmt) -> tuple[str, str] | None:
    """What a statement is matched by when its code changed: a def or class by name,
    another compound statement by kind; simple statements are not matched."""
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return type(st).__name__, st.name
    if any(isinstance(getattr(st, n, None), list) and getattr(st, n)
           and isinstance(getattr(st, n)[0], ast.stmt) for n in _BODIES):
        if not getattr(st, "handlers", None) and not getattr(st, "cases", None):
            return type(st).__name__, ""
    return None


def _diff_body(a: Sequence[ast.stmt], b: Sequence[ast.stmt], out_a: list, out_b: list, *,
               in_function: bool) -> None:
    a, b = _code(a), _code(b)
    ka = [_key(s, in_function) for s in a]
    kb = [_key(s, in_function) for s in b]
    # keys that strip to nothing (a bare local annotation) are no code either
    a = [s for s, k in zip(a, ka) if k]
    b = [s for s, k in zip(b, kb) if k]
    ka, kb = [k for k in ka if k], [k for k in kb if k]
    matcher = difflib.SequenceMatcher(a=ka, b=kb, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        left, right = list(a[i1:i2]), list(b[j1:j2])
        for sa in list(left):
            name = _pair_name(sa)
            sb = next((s for s in right if name is not None and _pair_name(s) == name), None)
            if sb is None:
                continue
            left.remove(sa)
            right.remove(sb)
            _diff_compound(sa, sb, out_a, out_b, in_function=in_function)
        out_a.extend(_span(s) for s in left)
        out_b.extend(_span(s) for s in right)


def _diff_compound(a: ast.stmt, b: ast.stmt, out_a: list, out_b: list, *,
                   in_function: bool) -> None:
    if _key(a, in_function, header=True) != _key(b, in_function, header=True):
        out_a.append(_header_span(a))
        out_b.append(_header_span(b))
    inside = (isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))
              or (in_function and not isinstance(a, ast.ClassDef)))
    for name in _BODIES:
        _diff_body(getattr(a, name, None) or [], getattr(b, name, None) or [], out_a, out_b,
                   in_function=inside)


# --------------------------------------------------------------------------- the decision

def environment_blockers(base: ResultsFile | None, head: ResultsFile | None) -> list[str]:
    """The environment differences between the sides' results (each one turns the gate off)."""
    if base is None or head is None:
        return ["no base results"]
    out = []
    for key in ENVIRONMENT:
        b, h = getattr(base, key), getattr(head, key)
        if b != h:
            out.append(f"base and head ran with different {key}")
    return out


def _ran(coverage: Mapping[str, str] | None, spans: Mapping[str, Spans]) -> str | None:
    """`path:line` of the first changed statement the coverage holds, or None."""
    for path, file_spans in sorted(spans.items()):
        text = (coverage or {}).get(path)
        if text is None:
            continue
        lines = FileLines.parse(text)
        for first, last in file_spans:
            if lines.hits(first, last):
                return f"{path}:{first}"
    return None


def decide(base_run: ModelRun | None, head_run: ModelRun | None, changes: CodeChanges,
           environment: Sequence[str] = ()) -> LatencyGate:
    """The gate of one model, with its reason."""
    def measured(why: str) -> LatencyGate:
        return LatencyGate(gate=MEASURED, note=why)

    if changes.blockers or environment:
        return measured([*changes.blockers, *environment][0])
    if base_run is None or head_run is None or not base_run.ok or not head_run.ok:
        return measured("not run cleanly on both sides")
    for side, run in (("base", base_run), ("head", head_run)):
        if run.coverage is None:
            return measured(f"no line coverage on {side}")
    for side, run, spans in (("head", head_run, changes.new), ("base", base_run, changes.old)):
        where = _ran(run.coverage, spans)
        if where is not None:
            return measured(f"changed code ran on {side} ({where})")
    sigs = [r.compile_report.signature if r.compile_report is not None else None
            for r in (base_run, head_run)]
    if any(not s for s in sigs):
        return measured("compiled graphs and guards not recorded on both sides")
    b, h = sigs
    for what in ("graphs", "guards"):
        if b.get(what) != h.get(what):
            return measured(f"compiled {what} differ")
    return LatencyGate(gate=UNCHANGED, note=UNCHANGED_NOTE)


def mark_gates(head: ResultsFile, base: ResultsFile | None, changes: CodeChanges,
               names: Iterable[str]) -> ResultsFile:
    """Head's results with each named model's `latency_gate` decided."""
    env = environment_blockers(base, head)
    base_runs = base.by_name() if base is not None else {}
    wanted = set(names)
    models = tuple(
        m.with_(latency_gate=decide(base_runs.get(m.name), m, changes, env))
        if m.name in wanted else m for m in head.models)
    return head.with_(models=models)


def gated(results: ResultsFile) -> set[str]:
    """The models whose latency the gate left unmeasured."""
    return {m.name for m in results.models
            if m.latency_gate is not None and m.latency_gate.gate == UNCHANGED and m.name}


__all__ = ["CodeChanges", "MEASURED", "NOT_MEASURED", "UNCHANGED", "UNCHANGED_NOTE", "changed_spans",
           "code_changes", "decide", "environment_blockers", "gated", "mark_gates"]
