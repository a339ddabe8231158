"""The values an edit leaves behind: what the replaced statements bind, head against candidate.

Equal outputs prove an edit right only for what the outputs depend on. torchdiffeq's
`if alpha_i == 1.: ti = t1; perturb = Perturb.PREV else: ...` gives the same outputs whichever
arm is kept, on an ODE that never reads `t` or `perturb`: a keep-one-arm edit there changes
what every other ODE computes, and no output of the model in hand can show it. So the proof
also compares, right after the edited statements, the names they bind (and the tensors they
store into: `h[m] = 0`, `h.masked_fill_(m, 0)`; the attributes they set: `self.cache = h`), every
time head's and the candidate's eager runs pass that point.

The point is found in head's text (`probe_site`): the innermost run of whole statements of
one block that holds the edit's lines. A probe statement is written after it, at its
indentation, into head's text and into the candidate's (the same line, moved by what the edit
adds or removes), and the function is swapped in from each probed text the way any candidate
is (pt2bot/smoke/patch.py), for eager runs only: the probe's extra line moves the lines after
it, which no compile, break or recompile of the proof ever sees.
"""
from __future__ import annotations

import ast
import contextlib
import enum
import functools
import re
import warnings
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

from pt2bot.smoke.patch import Edit, enclosing_function

# snapshots kept per shape case: a statement in a loop is passed once an iteration
MAX_SNAPSHOTS = 32
_PROBE = '__import__("pt2bot.smoke.values").smoke.values.take(locals())'


@dataclass(frozen=True)
class ProbeSite:
    line: int                  # head's last line of the edited statements
    names: tuple[str, ...]     # what they bind or store into
    head_text: str             # head's file with the probe after `line`
    cand_text: str             # the candidate's file with the probe after `line` moved by the edit


class _Sink:
    names: tuple[str, ...] = ()
    snapshots: list[dict[str, Any]] | None = None


_SINK = _Sink()


_UNBOUND = object()


def _lookup(frame_locals: Mapping[str, Any], name: str) -> Any:
    """A local's value, or an attribute of one (`self.cache`); _UNBOUND where there is none."""
    base, _, attr = name.partition(".")
    if base not in frame_locals:
        return _UNBOUND
    value = frame_locals[base]
    if attr:
        try:
            value = getattr(value, attr)
        except Exception:  # noqa: BLE001 - an attribute that cannot be read is not compared
            return _UNBOUND
    return value


def take(frame_locals: Mapping[str, Any]) -> None:
    """Called by the probe statement: keeps a copy of the watched names' values."""
    if _SINK.snapshots is not None and len(_SINK.snapshots) < MAX_SNAPSHOTS:
        found = {n: _lookup(frame_locals, n) for n in _SINK.names}
        _SINK.snapshots.append({n: _copy(v) for n, v in found.items() if v is not _UNBOUND})


@contextlib.contextmanager
def collecting(names: Sequence[str]) -> Iterator[list[dict[str, Any]]]:
    """The list the probe's calls fill while in the block (the first MAX_SNAPSHOTS passes)."""
    snapshots: list[dict[str, Any]] = []
    _SINK.names, _SINK.snapshots = tuple(names), snapshots
    try:
        yield snapshots
    finally:
        _SINK.snapshots = None


def _copy(v: Any) -> Any:
    import torch

    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (list, tuple)) and len(v) <= 64:
        return type(v)(_copy(x) for x in v) if isinstance(v, list) else tuple(_copy(x) for x in v)
    if isinstance(v, dict) and len(v) <= 64:
        return {k: _copy(x) for k, x in v.items()}
    return v


@contextlib.contextmanager
def defined_memory() -> Iterator[None]:
    """Uninitialised memory filled alike in every run (NaN; an integer tensor's largest value):
    `loss = torch.empty_like(x); loss[m] = ...` leaves whatever the allocation held where `m` is
    off, which differs from one run to the next, so head's and the candidate's buffers would
    differ there though no later code reads it. torch fills it while its deterministic mode is on;
    `warn_only`, so that an operator without a deterministic kernel still runs (its warning
    silenced) rather than raising in one run."""
    import torch

    was, warn_only = torch.are_deterministic_algorithms_enabled(), \
        torch.is_deterministic_algorithms_warn_only_enabled()
    filled = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = filled


# --------------------------------------------------------------------------- where to look

def _bodies(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list (block) inside `node`, `node`'s own blocks first."""
    for n in ast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        if isinstance(n, ast.Match):
            for case in n.cases:
                yield case.body


def _bound(stmts: Sequence[ast.stmt]) -> dict[str, bool]:
    """The names `stmts` bind in their own scope, those they store into or mutate in place
    (`h[m] = 0`, `h.add_(1)`), and the attributes they set on a name (`self.cache = h`, as
    `self.cache`): the values the statements leave for the code after them, each True where
    the statements write into its object (the object may be the caller's)."""
    out: dict[str, bool] = {}

    def visit(n: ast.AST) -> None:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(n.name, False)
            return   # their bodies are another scope
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.setdefault(n.id, False)
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) \
                and isinstance(n.value, ast.Name):
            out[n.value.id] = True
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) \
                and isinstance(n.value, ast.Name):
            out.setdefault(f"{n.value.id}.{n.attr}", False)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and isinstance(n.func.value, ast.Name) and n.func.attr.endswith("_") \
                and not n.func.attr.startswith("_"):
            out[n.func.value.id] = True   # an in-place tensor method: h.masked_fill_(...)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.setdefault(n.name, False)
        for child in ast.iter_child_nodes(n):
            visit(child)

    for s in stmts:
        visit(s)
    out.pop("self", None)
    return out


def _read_outside(fn: ast.AST, first: int, last: int) -> set[str]:
    """The names `fn` reads on lines other than first..last (a nested function's reads too:
    it may run later)."""
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and not first <= n.lineno <= last}


def _covers(fn: ast.AST, first: int, last: int) -> list[tuple[ast.stmt, ast.stmt, list[ast.stmt]]]:
    """(first statement, last statement, the run) of each block of `fn` whose run of whole
    statements holds lines first..last, innermost first."""
    found = []
    for block in _bodies(fn):
        run = [s for s in block if (s.end_lineno or s.lineno) >= first and s.lineno <= last]
        if run and run[0].lineno <= first and (run[-1].end_lineno or run[-1].lineno) >= last:
            found.append((run[0], run[-1], run))
    return sorted(found, key=lambda f: (f[1].end_lineno or f[1].lineno) - f[0].lineno)


def _insert_after(text: str, line: int, indent: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:line]) + f"{indent}{_PROBE}\n" + "".join(lines[line:])


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


@functools.lru_cache(maxsize=16)
def probe_site(original: str, patched: str, edit: Edit) -> ProbeSite | None:
    """Where to compare, and what (see the module doc); None when the replaced statements bind
    nothing, or no probe can be written after them in both texts."""
    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return None
    found = enclosing_function(tree, edit.start_line, edit.end_line)
    if found is None:
        return None
    lines = original.splitlines()
    for first, last, run in _covers(found[1], edit.start_line, edit.end_line):
        bound = _bound(run)
        names = list(bound)
        head_line = last.end_lineno or last.lineno
        start = lines[first.lineno - 1]
        indent = start[:first.col_offset]
        if indent.strip():   # the run shares its line with a block's header (`if x: y = 1`)
            continue
        # an attribute is compared where the candidate still sets it: an edit that stops
        # storing one (module state made a local) changes it on purpose, and says so
        new = "\n".join(patched.splitlines()[edit.start_line - 1:edit.start_line - 1 + edit.new_lines])
        names = [n for n in names if "." not in n or re.search(
            rf"\b{re.escape(n)}\s*(?:=(?!=)|[-+*/@%&|^]=|//=|\*\*=)", new)]
        # a local the code outside the statements never reads leaves nothing behind: a loop's
        # variable and temporaries, which a loop run on past its `break` ends with other values
        # (names written through or in place stay: the object may be the caller's)
        outside = _read_outside(found[1], first.lineno, head_line)
        names = [n for n in names if "." in n or n in outside or bound[n]]
        if not names:
            return None
        head_text = _insert_after(original, head_line, indent)
        cand_text = _insert_after(patched, head_line + edit.shift, indent)
        if _parses(head_text) and _parses(cand_text):
            return ProbeSite(line=head_line, names=tuple(names), head_text=head_text,
                             cand_text=cand_text)
    return None


# --------------------------------------------------------------------------- comparing

def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _differ(h: Any, c: Any, tolerance: Any) -> str | None:
    """Why candidate value `c` is not head's `h`, or None when it is (or cannot be told)."""
    import torch

    from pt2bot.smoke.inputs import compare_outputs

    if isinstance(h, torch.Tensor) or isinstance(c, torch.Tensor):
        # a Python number kept as a tensor (`.item()` dropped) is the same value
        if _number(h) or isinstance(h, bool):
            h = torch.tensor(h, dtype=c.dtype).reshape(c.shape) if c.numel() == 1 else h
        elif _number(c) or isinstance(c, bool):
            c = torch.tensor(c, dtype=h.dtype).reshape(h.shape) if h.numel() == 1 else c
        elif isinstance(h, (list, tuple)) and isinstance(c, torch.Tensor):
            with contextlib.suppress(Exception):
                h = torch.as_tensor(h, dtype=c.dtype)
        elif isinstance(c, (list, tuple)) and isinstance(h, torch.Tensor):
            with contextlib.suppress(Exception):
                c = torch.as_tensor(c, dtype=h.dtype)
        if not (isinstance(h, torch.Tensor) and isinstance(c, torch.Tensor)):
            return f"{type(c).__name__} where head's is {type(h).__name__}"
        res = compare_outputs(h, c, tolerance)
        if res.get("match"):
            return None
        err = res.get("max_abs_err")
        return res.get("message") or (f"max abs error {err:.3g}" if isinstance(err, float) else "differs")
    if isinstance(h, (list, tuple, dict)) or isinstance(c, (list, tuple, dict)):
        if type(h) is not type(c) or len(h) != len(c):
            return f"{_show(c)} where head's is {_show(h)}"
        if isinstance(h, dict):
            if set(h) != set(c):
                return f"keys {sorted(map(str, c))} where head's are {sorted(map(str, h))}"
            pairs = [(h[k], c[k]) for k in h]
        else:
            pairs = list(zip(h, c))
        return next((w for w in (_differ(a, b, tolerance) for a, b in pairs) if w), None)
    if _number(h) and _number(c):
        if h == c or abs(h - c) <= 1e-7 + 1e-7 * abs(h):
            return None
        return f"{c!r} where head's is {h!r}"
    if h is None or c is None or isinstance(h, (str, bytes, bool, enum.Enum)):
        return None if type(h) is type(c) and h == c else f"{_show(c)} where head's is {_show(h)}"
    return None   # a module, a function, an object of the user's: not compared


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def compare(head: Sequence[list[dict[str, Any]]], cand: Sequence[list[dict[str, Any]]],
            shapes: Sequence[Mapping[str, Any]], names: Sequence[str], tolerance: Any
            ) -> list[dict[str, Any]]:
    """A row a shape case: `{shape, match, compared, message}`; `compared` counts the names'
    values compared (0: the run never passed the edited statements)."""
    rows = []
    for shape, hs, cs in zip(shapes, head, cand):
        row: dict[str, Any] = {"shape": dict(shape), "match": True, "compared": 0, "message": None}
        if len(hs) != len(cs):
            row.update(match=False, message=f"the candidate passes the edited statements "
                                            f"{len(cs)} times, head {len(hs)}")
        for i, (h, c) in enumerate(zip(hs, cs)):
            for name in names:
                # a name one side leaves unbound is a temporary the code after never reads
                # (were it read, that side's own run would have raised a NameError)
                if name not in h or name not in c:
                    continue
                why = _differ(h[name], c[name], tolerance)
                row["compared"] += 1
                if not why and (_number(h[name]) or isinstance(h[name], bool)) and \
                        type(c[name]).__name__ == "Tensor":
                    # the same value, but a tensor where head's was a Python number: a caller
                    # that logs or formats it reads `tensor(87)` (said with the evidence)
                    row.setdefault("tensors", {})[name] = type(h[name]).__name__
                if why:
                    row.update(match=False, message=f"`{name}`: {why}"
                                                    + (f" (pass {i + 1})" if len(hs) > 1 else ""))
                    break
            if not row["match"]:
                break
        rows.append(row)
    return rows


__all__ = ["MAX_SNAPSHOTS", "ProbeSite", "collecting", "compare", "defined_memory", "probe_site", "take"]
