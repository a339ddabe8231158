"""A candidate fix put in place in a running process: the patched text of one function,
compiled and swapped in for the loaded one, and taken out again.

The proof of a fix (pt2bot/smoke/verify.py) runs head's model and the patched model in one
worker process with the same weights and inputs. Rather than import a second copy of the
user's package from a scratch tree (a second set of classes, a rebuilt model whose weights
must be copied over, and a checkout on disk to write), the worker keeps head's model and
replaces only the function the edit is in: the patched file's text is the scratch copy, and
the user's checkout is never written. A recipe edits lines of one statement inside compiled
code, so the edit always lies inside a function; the outermost function holding it (a
module-level function or a method of a module-level class, nested classes included) is
compiled from the patched text under the file's own name, with its line numbers, so dynamo
locates breaks on the patched lines and reads them through `linecache`, which holds the
patched text while the patch is in place.

`guard_inputs` is the other half: the special values (NaN, inf, an empty mask, zeros, and the
out-of-range values a check refuses by raising) that the replaced code guards against,
injected into the tensor arguments of the function the edit is in, so head and the patched
code can be compared where the guard matters even when the model's own inputs (token ids)
cannot carry such a value.
"""
from __future__ import annotations

import __future__
import ast
import contextlib
import copy
import functools
import gc
import inspect
import linecache
import os
import re
import sys
import time
import types
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterator, Mapping, Sequence

from pt2bot.smoke.location import RepoPaths
from pt2bot.smoke.timelimit import Overrun

_SCRATCH_CLASS = "_pt2bot_scratch_class"
# The special values a guard can be about (the recipes' `guards`), and how each is injected.
GUARD_KINDS = ("nan", "inf", "empty", "zero", "invalid", "large", "equal")
# "equal": a test that compares two arguments for equality (`if t == t0: return y0`) is taken
# when one is made the other; its pattern names them, "t=t0" (`equal_pattern`)
EQUAL = "equal"
MAX_GUARD_ARGS = 3      # tensor arguments tried per guard kind


class NotApplicable(Exception):
    """The candidate cannot be put in place; the message says why (a "no verified fix")."""


@dataclass(frozen=True)
class Edit:
    """Lines `start_line..end_line` of `path` (repo-relative) replaced by `new_lines` lines."""
    path: str
    start_line: int
    end_line: int
    new_lines: int
    # The last line, in head's file, of the function the proof swaps (`scope_end`): only that
    # function is compiled from the patched text, so lines past it keep head's numbers in
    # the patched run. None: the whole rest of the file moves.
    scope_end: int | None = None

    @classmethod
    def in_text(cls, path: str, start_line: int, end_line: int, new_lines: int,
                text: str) -> "Edit":
        """The edit of `text` (head's file), its scope the function that holds it."""
        try:
            found = enclosing_function(ast.parse(text), start_line, end_line)
        except (SyntaxError, ValueError, RecursionError):
            found = None
        end = found[1].end_lineno if found is not None else None
        return cls(path=path, start_line=start_line, end_line=end_line, new_lines=new_lines,
                   scope_end=end)

    @property
    def shift(self) -> int:
        return self.new_lines - (self.end_line - self.start_line + 1)

    def map_line(self, line: int | None) -> int | None:
        """Where head's `line` of `path` is in the patched file; None inside the edit."""
        if line is None or line < self.start_line:
            return line
        if self.scope_end is not None and line > self.scope_end:
            return line
        if line > self.end_line:
            return line + self.shift
        return None

    def in_patched_region(self, line: int | None) -> bool:
        """Whether a patched-file line is one of the replacement lines (or, for a deletion,
        the line that now stands where the deleted ones were)."""
        if line is None:
            return False
        last = self.start_line + max(self.new_lines, 1) - 1
        return self.start_line <= line <= last

    def head_line(self, line: int | None) -> int | None:
        """Where a patched-run line of `path` is in head's file (`map_line` the other way; a
        replacement line: the edit's first), for what the proof says to a reader of head."""
        if line is None or line < self.start_line:
            return line
        if self.in_patched_region(line):
            return self.start_line
        moved_to = None if self.scope_end is None else self.scope_end + self.shift
        return line - self.shift if moved_to is None or line <= moved_to else line


# --------------------------------------------------------------------------- where the edit is

def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None) or ()
    return min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]


def enclosing_function(tree: ast.Module, first: int, last: int
                       ) -> tuple[tuple[str, ...], ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """(the class names above it, the outermost function) holding lines first..last, when
    that function sits in the module or in classes only (a closure cannot be swapped alone,
    its outermost function is)."""
    def search(body: list[ast.stmt], classes: tuple[str, ...]) -> Any:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found = search(node.body, (*classes, node.name))
                if found is not None:
                    return found
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _first_line(node) <= first and last <= (node.end_lineno or node.lineno):
                    return classes, node
        return None
    return search(tree.body, ())


def _same_function(tree: ast.Module, classes: tuple[str, ...], name: str, first: int
                   ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    body: list[ast.stmt] = tree.body
    for cls in classes:
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if node is None:
            return None
        body = node.body
    return next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == name and _first_line(n) == first), None)


def loaded_module(abs_path: str) -> ModuleType | None:
    """The imported module whose file is `abs_path` (None: the process never imported it)."""
    want = os.path.realpath(abs_path)
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if isinstance(f, str):
            try:
                if os.path.realpath(f) == want:
                    return mod
            except (OSError, ValueError):
                continue
    return None


def _future_flags(tree: ast.Module) -> int:
    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _functions(obj: Any) -> Iterator[Any]:
    """The plain functions inside a class attribute (a staticmethod, a property, a wrapper)."""
    seen = 0
    stack = [obj]
    while stack and seen < 16:
        seen += 1
        o = stack.pop()
        if isinstance(o, (staticmethod, classmethod)):
            stack.append(o.__func__)
        elif isinstance(o, property):
            stack.extend(f for f in (o.fget, o.fset, o.fdel) if f is not None)
        elif hasattr(o, "__code__"):
            yield o
            if hasattr(o, "__wrapped__"):
                stack.append(o.__wrapped__)
        elif hasattr(o, "__wrapped__"):
            stack.append(o.__wrapped__)


@dataclass
class Swap:
    """The patched function in place: where it went (`owner`.`name`) and what it replaced;
    `places`: where else the user's code holds it (`holders`), found once, where the guard
    inputs' wrapper goes too."""
    owner: Any
    name: str
    original: Any
    patched: Any
    qualname: str
    places: tuple[tuple[Any, Any], ...] = ()


# What the proof puts in place of a function must be what the user's code calls, wherever it
# calls it from: the owner's attribute, and also a name another module bound it to (`from
# pkg.mod import fn`), a registry's value (`{"sdpa": sdpa_forward}`), an instance's attribute
# (`self.loss = fn`), a class attribute, a closure's cell (a wrapper module built around `fn`).
# Not what torch holds (a tracer's own record of a function it compiled) nor what pt2bot
# holds (the injector's wrapper calls the function it wraps through a cell, and a Swap keeps
# both versions): modules of these packages own no holder. Each scan of the heap for
# referrers takes tens of milliseconds beside a model, so each step below is one scan for all
# the objects it asks about, and a candidate's places are found once.
_NOT_HOLDERS = ("torch", "pt2bot")


def _ours(module_name: Any) -> bool:
    name = str(module_name or "")
    return any(name == p or name.startswith(p + ".") for p in _NOT_HOLDERS)


def _own_dict(obj: Any) -> Any:
    """`obj.__dict__`, or None (an object whose attribute lookup raises, a lazy module)."""
    try:
        return getattr(obj, "__dict__", None)
    except Exception:  # noqa: BLE001 - any object can sit in sys.modules or hold a dict
        return None


def _namespaces(dicts: Sequence[dict[str, Any]], modules: Mapping[int, ModuleType],
                around: Sequence[Any] | None = None) -> dict[int, Any]:
    """id(d) -> the module, class or instance whose namespace d is, for those of `dicts`
    that are one (the others are plain dicts). `modules`: id of each loaded module's
    namespace -> the module; `around`: the referrers of the dicts that are no module's, where
    the caller has scanned for them already."""
    out = {id(d): modules[id(d)] for d in dicts if id(d) in modules}
    rest = [d for d in dicts if id(d) not in out]
    if rest:
        ids = {id(d) for d in rest}
        for r in (gc.get_referrers(*rest) if around is None else around):
            if isinstance(r, type):
                out.update((id(x), r) for x in gc.get_referents(r) if id(x) in ids)
            elif id(_own_dict(r)) in ids:
                out[id(_own_dict(r))] = r
    return out


def _user_namespace(owner: Any) -> bool:
    """Whether a namespace belongs to the user's code (a module, a class, an instance of a
    class of theirs), not to torch's or pt2bot's."""
    if isinstance(owner, ModuleType):
        return not _ours(owner.__name__)
    if isinstance(owner, type):
        return not _ours(owner.__module__)
    return owner is not None and not _ours(type(owner).__module__)


def holders(fn: Any, owner: Any) -> tuple[tuple[Any, Any], ...]:
    """The places beyond `owner`'s own attribute that the user's code can reach `fn` from, as
    (a dict, its key), (a class, its attribute) or (a cell, None)."""
    if fn is None:
        return ()
    refs = gc.get_referrers(fn)
    cells = [r for r in refs if isinstance(r, types.CellType)]
    dicts = [r for r in refs if isinstance(r, dict)
             and any(v is fn and k != "__wrapped__" for k, v in list(r.items()))]
    modules = {id(_own_dict(m)): m for m in list(sys.modules.values())}
    others = [d for d in dicts if id(d) not in modules]
    # one scan for what holds the cells (closures) and the dicts that are no module's
    around = gc.get_referrers(*cells, *others) if cells or others else []
    spaces = _namespaces(dicts, modules, around)
    cell_ids = {id(c) for c in cells}
    closures = [t for t in around if isinstance(t, tuple) and any(id(x) in cell_ids for x in t)]
    # a cell of a closure of the user's code; a function's module is read from its globals:
    # `functools.wraps` copies the wrapped function's `__module__` onto a wrapper (the
    # injector's own among them), and a frame's cell belongs to no closure
    held: set[int] = set()
    for f in (gc.get_referrers(*closures) if closures else ()):
        if isinstance(f, types.FunctionType) and f.__closure__ is not None \
                and not _ours(f.__globals__.get("__name__")):
            held.update(id(c) for c in f.__closure__ if id(c) in cell_ids)
    # a plain dict is a registry of the user's when one of their namespaces holds it
    plain = {id(d) for d in others if id(d) not in spaces}
    parents = [r for r in around if isinstance(r, dict) and
               any(id(v) in plain for v in list(r.values()))]
    parent_spaces = _namespaces(parents, modules)
    registries: set[int] = set()
    for p in parents:
        if _user_namespace(parent_spaces.get(id(p))):
            registries.update(id(v) for v in list(p.values()) if id(v) in plain)
    out: list[tuple[Any, Any]] = [(c, None) for c in cells if id(c) in held]
    for d in dicts:
        space = spaces.get(id(d))
        if space is owner or (id(d) not in registries and not _user_namespace(space)):
            continue
        keys = [k for k, v in list(d.items()) if v is fn and k != "__wrapped__"]
        # a class's namespace changes through setattr, which keeps its attribute cache true
        out += [(space if isinstance(space, type) else d, k) for k in keys]
    return tuple(out)


def _get(place: tuple[Any, Any]) -> Any:
    where, key = place
    if isinstance(where, types.CellType):
        return where.cell_contents
    return vars(where)[key] if isinstance(where, type) else where[key]


def _put(place: tuple[Any, Any], value: Any) -> None:
    where, key = place
    if isinstance(where, types.CellType):
        where.cell_contents = value
    elif isinstance(where, type):
        setattr(where, key, value)
    else:
        where[key] = value


@contextlib.contextmanager
def _in_place_of(owner: Any, name: str, new: Any, places: Sequence[tuple[Any, Any]]) -> Iterator[None]:
    """`new` at `owner`.`name` and at `places` until the block ends; then each holds again
    what it held before."""
    saved = [(p, _get(p)) for p in places]
    current = vars(owner).get(name)
    setattr(owner, name, new)
    for p, _ in saved:
        _put(p, new)
    try:
        yield
    finally:
        setattr(owner, name, current)
        for p, value in saved:
            _put(p, value)


def _locate(paths: RepoPaths, path: str, text: str, edit: Edit
            ) -> tuple[ModuleType, tuple[str, ...], ast.FunctionDef | ast.AsyncFunctionDef, Any]:
    """(the loaded module, the classes, the outermost function holding the edit in `text`,
    the class or module it is an attribute of)."""
    module = loaded_module(os.path.join(paths.root, path))
    if module is None:
        raise NotApplicable(f"the model never imported {path}")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError) as e:
        raise NotApplicable(f"{path} does not parse: {type(e).__name__}: {e}") from None
    found = enclosing_function(tree, edit.start_line, edit.end_line)
    if found is None:
        raise NotApplicable(f"lines {edit.start_line}-{edit.end_line} of {path} are not inside "
                            "a function of the module or of its classes")
    classes, node = found
    owner: Any = module
    for cls in classes:
        owner = vars(owner).get(cls)
        if not isinstance(owner, type):
            raise NotApplicable(f"{'.'.join(classes)} is not a class of the loaded module")
    if vars(owner).get(node.name) is None:
        raise NotApplicable(f"the loaded module has no {'.'.join((*classes, node.name))}")
    return module, classes, node, owner


@contextlib.contextmanager
def patched_function(paths: RepoPaths, path: str, original_text: str, patched_text: str,
                     edit: Edit) -> Iterator[Swap]:
    """Put the patched text's function holding `edit` in place of the loaded one; restore it
    (and `linecache`) on exit. NotApplicable when that cannot be done (the reason is the
    candidate's "no verified fix")."""
    module, classes, old_node, owner = _locate(paths, path, original_text, edit)
    try:
        new_tree = ast.parse(patched_text)
    except (SyntaxError, ValueError, RecursionError) as e:
        raise NotApplicable(f"the patched file does not parse: {type(e).__name__}: {e}") from None
    first = _first_line(old_node)
    node = _same_function(new_tree, classes, old_node.name, first)
    if node is None:
        raise NotApplicable("the edit changes the function's own header")
    original = vars(owner)[old_node.name]
    filename = getattr(module, "__file__", None) or os.path.join(paths.root, path)
    lines = patched_text.splitlines(keepends=True)
    body = "".join(lines[first - 1:node.end_lineno])
    if classes:   # a method: compiled inside a class, so that super() and __class__ work
        src = "\n" * (first - 2) + f"class {_SCRATCH_CLASS}:\n" + body
    else:
        src = "\n" * (first - 1) + body
    namespace: dict[str, Any] = {}
    try:
        code = compile(src, filename, "exec", flags=_future_flags(new_tree), dont_inherit=True)
        exec(code, module.__dict__, namespace)   # noqa: S102 - the user's own code, patched
    except Exception as e:  # noqa: BLE001 - a patch that cannot be defined is a result
        raise NotApplicable(f"the patched function cannot be defined: {type(e).__name__}: {e}"
                            ) from None
    patched = (vars(namespace[_SCRATCH_CLASS])[old_node.name] if classes
               else namespace[old_node.name])
    if classes:
        for fn in _functions(patched):
            free = fn.__code__.co_freevars
            if "__class__" in free and fn.__closure__:
                fn.__closure__[free.index("__class__")].cell_contents = owner
    saved_cache = linecache.cache.get(filename)
    linecache.cache[filename] = (len(patched_text), None, lines, filename)
    try:
        places = holders(original, owner)
        with _in_place_of(owner, old_node.name, patched, places):
            yield Swap(owner=owner, name=old_node.name, original=original, patched=patched,
                       qualname=".".join((*classes, old_node.name)), places=places)
    finally:
        if saved_cache is None:
            linecache.cache.pop(filename, None)
        else:
            linecache.cache[filename] = saved_cache


def function_at(paths: RepoPaths, path: str, text: str, edit: Edit) -> Swap:
    """Head's function holding the edit, as a Swap of it with itself (guard inputs are
    injected into it the same way as into the patched one)."""
    _module, classes, node, owner = _locate(paths, path, text, edit)
    current = vars(owner)[node.name]
    return Swap(owner=owner, name=node.name, original=current, patched=current,
                qualname=".".join((*classes, node.name)), places=holders(current, owner))


# --------------------------------------------------------------------------- guard inputs

def _eligible(kind: str, pattern: str, t: Any, element: bool = False) -> bool:
    """Whether tensor `t` can carry `kind` the way `pattern` puts it; or a Python number that
    is an `element` of a container argument (`_slots`: a list or tuple, a named tuple's field,
    a dict's value), for a check that raises.

    Per-channel values come as a list of numbers that the function makes a tensor of
    (torchvision's `normalize(tensor, mean, std)`: `std = torch.as_tensor(std)`, then `if (std
    == 0).any(): raise`), and that tensor check is the one dynamo breaks on; one element set to
    the value is what such a check refuses. A bare number argument is left alone: its check is
    mostly Python's own (`if eps <= 0: raise`), which breaks no graph."""
    import torch

    if pattern in ROW_PATTERNS:
        # one row of several: a check per row (`(text == eot).any(dim=-1).all()`) refuses it
        # where one over the whole batch (`.any()`) does not; whole-tensor fills cannot tell
        # them apart (a new user's CLIP check: a wrong edit passed every fill)
        if element or not isinstance(t, torch.Tensor) or t.dim() < 1 or t.shape[0] < 2:
            return False
        return pattern == "rowzeros" if t.dtype == torch.bool else _eligible(kind, ROW_PATTERNS[pattern], t)
    if element and kind == "invalid" and isinstance(t, (int, float)) and not isinstance(t, bool):
        return pattern != "nan" or isinstance(t, float)
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        return False
    if kind == "invalid" and t.dtype == torch.bool:
        # a mask: all off (a check that its first step is on, that it selects something) and
        # all on are the values a check of a mask refuses. And 0/1 labels passed as a bool
        # tensor: a check that they hold only 0 and 1 (torchmetrics' retrieval metrics,
        # `target.max() > 1 or target.min() < 0`) accepts every bool, so they go in as integers
        # all -1 and all 1e6 (`_special`), which it refuses
        return pattern in ("zeros", "large", "negative", "huge")
    if kind == "invalid" and pattern != "nan" and \
            not (t.is_floating_point() or t.is_complex()):
        return True   # token ids, counts, indices: a check on their range is as common
    if kind == "empty" and pattern in ("zeros", "negative") and t.dtype != torch.bool and not (
            t.is_floating_point() or t.is_complex()):
        # labels and ids all 0 or all -1: the mask of the negative ones (pytorch-ood's OOD
        # samples, `target < 0`), of the non-zero ones (`ids != pad`) or of the known ones
        # (`target >= 0`) is then empty
        return True
    if kind in ("nan", "inf", "invalid", "large") or pattern in ("zeros", "negative", "positive"):
        # complex numbers are floats too (geoopt's Siegel points: -1 + 0j has no imaginary part,
        # and the eigenvalues a check bounds are then NaN)
        return t.is_floating_point() or t.is_complex()
    if kind == "zero":
        return True   # a bool all off is its zero (`if not target.sum(): return ...`)
    # "empty", "off": a mask (bool, or a 0/1 tensor) whose every entry is off
    return t.dtype == torch.bool or bool(((t == 0) | (t == 1)).all())


_NUMBERS = {"negative": -1, "zeros": 0, "large": 1000, "huge": 1000000}
# the patterns that set only the first row (along dim 0) -> the whole-tensor one whose value they put there
ROW_PATTERNS = {"rownegative": "negative", "rowzeros": "zeros"}


def _special(kind: str, pattern: str, t: Any) -> Any:
    import torch

    if isinstance(t, (int, float)):   # an element of a list of numbers (`_eligible`)
        return float("nan") if pattern == "nan" else type(t)(_NUMBERS[pattern])
    out = t.detach().clone(memory_format=torch.contiguous_format)
    if kind == "invalid" and t.dtype == torch.bool and pattern in ("negative", "huge"):
        out = out.long()   # values no bool holds (`_eligible`)
    flat = out.view(-1)   # shares out's storage
    if pattern in ROW_PATTERNS:
        out[0] = False if out.dtype == torch.bool else _NUMBERS[ROW_PATTERNS[pattern]]
    elif pattern == "all":
        out.fill_(float("nan"))
    elif kind == "nan":
        flat[0] = float("nan")
    elif kind == "inf":
        flat[0] = float("inf")
        if flat.numel() > 1:
            flat[-1] = float("-inf")
    elif pattern == "negative":
        out.fill_(-1.0)
    elif pattern == "positive":
        out.fill_(1.0)
    elif pattern == "large":
        out.fill_(1e3)
    elif pattern == "huge":
        out.fill_(1e6)
    elif pattern == "hugenan":
        out.fill_(1e6)
        flat[0] = float("nan")
    elif pattern == "nan":
        flat[0] = float("nan")
    else:   # zero; empty: a mask with every entry off
        out.zero_()
    return out


def guard_patterns(kind: str, equal: Sequence[str] = ()) -> tuple[str, ...]:
    """How each kind is injected. An empty mask is rarely an argument: it is made inside
    from the arguments (`x > 0`, `torch.isnan(h)`), so besides a mask argument switched off,
    a float argument is set to all zeros, all -1 and all +1, the inputs that make such a
    comparison's mask empty (or full), and an integer one to all 0 and all -1 (labels with no
    negative, ids with no non-zero, labels all unknown); ordinary inputs are the other side. A check that raises
    ("invalid") is about a range: a float argument set to all -1, all zeros, all 1e3, all 1e6
    and one NaN reaches the usual ones (non-negative, positive, in [0, 1], in (-0.5, 0.5),
    finite, below a bound), and -1 and 0 in the first row alone of an argument of several rows
    (a check per row refuses it where one over the whole batch does not); an integer argument (token ids below the vocabulary's size, an index
    below a length) gets the same values but NaN, a bool mask all off and all on (what 0 and 1e3
make of a bool) and, as integers, all -1 and all 1e6 (0/1 labels passed as a bool). "large" is all 1e6: finite, so a test for inf or NaN stays false
    while a clamp to a bound below it changes values; and all 1e6 beside one NaN, where a
    test on the largest value (`x.abs().max() > 1e4`, NaN wherever one value is) fails while
    the values past the bound are still there: a clamp without its branch changes them there,
    head does not (DINO's attention, an image with a NaN pixel in a batch)."""
    if kind == EQUAL:
        return tuple(equal)   # the pairs the replaced code tests (verify.py `equal_tests`)
    return {"nan": ("one", "all"), "empty": ("off", "zeros", "negative", "positive"),
            "invalid": ("negative", "zeros", "large", "huge", "nan", "rownegative", "rowzeros"),
            "large": ("huge", "hugenan")}.get(kind, ("one",))


@dataclass
class Injection:
    """What one guard input did: whether the function was called with an argument the
    special value could go into (`hit`), and what the function returned each time."""
    kind: str
    pattern: str
    arg: int
    hit: bool = False
    returns: list[Any] | None = None
    argument: str = ""
    # `watch`: a line of the function's file (head's) to tell whether the run reached it;
    # `reached`: whether it did (an early exit taken, say), None when not watched
    watch: int | None = None
    reached: bool | None = None
    # names the guarded code reads (`dt` of `if not torch.isfinite(dt):`): the arguments, and
    # the fields of a state tuple or keys of a dict, of those names are tried first
    prefer: tuple[str, ...] = ()
    # for each call, the arguments (`_slots`' labels) whose memory a returned tensor shares:
    # the argument itself or a view of it, which a caller that writes into the result writes into;
    # recorded only where the caller asks with a list (not on every call of a guard input's run)
    aliases: list[list[str]] | None = None
    # seconds from the function's first call past which a further call ends the run
    # (`GuardOverrun`); counted from that call, not from the run's start, so that what comes
    # before it (building the wrapper, the model's own code) is not held against a loop
    time_limit: float | None = None
    first_call: float | None = None
    # the kind ("nan", "inf") put into the model's weights for the run instead of an argument
    # (pt2bot/smoke/inputs.py `special_weights`), `pattern` saying how: where no argument can
    # hold it (token ids), the weights carry it into the intermediate the guarded code tests
    weights: str | None = None


class GuardOverrun(Overrun):
    """A run on a guard input went on past its `time_limit`: a solver whose every step is handed
    the special value anew (its state's `dt` set to 1e3 on each call) never ends. Checked when
    the function is called, so a loop around it is cut; a hang inside one call is left to the
    candidate's own time limit."""


# an Injection that puts nothing into the arguments, only watches a line (whether head's own
# run reaches a block)
WATCH_ONLY = "watch"


class Injector:
    """The guard input that the calls of a swapped function get while `injector` holds it in
    place: `use` sets it, and the same wrapper serves one input after another."""

    def __init__(self) -> None:
        self.current: Injection | None = None

    def use(self, injection: Injection) -> Injection:
        injection.returns = []
        self.current = injection
        return injection


@contextlib.contextmanager
def injecting(swap: Swap, injection: Injection) -> Iterator[Injection]:
    """While in the block, every call of the swapped function gets the special value in its
    `injection.arg`-th eligible tensor argument; its returns are recorded."""
    with injector(swap) as inj:
        yield inj.use(injection)


@contextlib.contextmanager
def injector(swap: Swap, *, compiled: bool = False) -> Iterator[Injector]:
    """One wrapper of the swapped function in place for the whole block; each call puts the
    special value of the Injector's `current` input into its arguments.

    `compiled`: the model runs under `torch.compile` in the block. The wrapper is then a
    frame dynamo skips, and what it does (pick an argument, fill a copy, keep the returns)
    runs in eager, while the function it calls is compiled as usual. Dynamo sees one
    unchanged function object and tensors of unchanged shapes whichever input is current, so
    one compile serves every guard input; a wrapper traced by dynamo would be compiled again
    for each input, since the input's kind, pattern and argument are constants of its code."""
    import torch

    fn = swap.patched   # head's function for head's Swap (`function_at`), else the patched one
    # a static or class method (an autograd.Function's `forward`) is wrapped as the function
    # it holds and put back as the same kind of method
    kind = type(fn) if isinstance(fn, (staticmethod, classmethod)) else None
    if kind is not None:
        fn = fn.__func__
    if isinstance(fn, property) or not callable(fn):
        raise NotApplicable(f"{swap.qualname} is a {type(fn).__name__}: no input can be "
                            "injected into it")
    holder = Injector()
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []

    def inject(args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[list[Any], dict[str, Any]]:
        injection = holder.current
        assert injection is not None
        if injection.kind == WATCH_ONLY:
            return list(args), dict(kwargs)
        new_args = list(args)
        new_kwargs = dict(kwargs)
        slots = _slots(args, kwargs, names)
        if injection.kind == EQUAL:
            # one argument set to the other, one input per pair (`arg` 0 only)
            pairs = _made_equal(slots, injection.pattern) if injection.arg == 0 else []
            chosen = [(slot, other.detach().clone(memory_format=torch.contiguous_format))
                      for slot, other in pairs]
        else:
            eligible = [s for s in slots
                        if _eligible(injection.kind, injection.pattern, s[2], s[1] is not None)]
            # stable: the slots the guarded code names first, then the arguments themselves in
            # their order, then the elements of container arguments
            eligible.sort(key=lambda s: (s[3] not in injection.prefer, s[1] is not None))
            chosen = [(s, _special(injection.kind, injection.pattern, s[2]))
                      for s in eligible[injection.arg:injection.arg + 1]]
        for (key, inner, _value, _name, _label), special in chosen:
            if inner is not None:
                # (the container as already changed: two fields of one state tuple set)
                outer = new_args[key] if isinstance(key, int) else new_kwargs[key]
                special = _replaced(outer, inner, special)
            if isinstance(key, int):
                new_args[key] = special
            else:
                new_kwargs[key] = special
        if chosen:
            injection.hit = True
            injection.argument = ", ".join(s[4] for s, _ in chosen)
        return new_args, new_kwargs

    def record(out: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        assert holder.current is not None and holder.current.returns is not None
        holder.current.returns.append(_detached(out, torch))
        if holder.current.aliases is not None:
            holder.current.aliases.append(_aliased(out, _slots(args, kwargs, names), torch))

    if compiled:
        # a frame that dynamo skips still has the functions it calls compiled: these two
        # would be, once per input (its kind and pattern are constants in them)
        inject, record = torch._dynamo.disable(inject), torch._dynamo.disable(record)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        injection = holder.current
        if injection is None:
            return fn(*args, **kwargs)
        if injection.time_limit is not None:
            now = time.monotonic()
            if injection.first_call is None:
                injection.first_call = now
            elif now - injection.first_call > injection.time_limit:
                raise GuardOverrun(f"{swap.qualname} was still being called past the run's time")
        new_args, new_kwargs = inject(args, kwargs)
        if injection.watch is None:
            out = fn(*new_args, **new_kwargs)
        else:
            out = _watching(fn, injection, new_args, new_kwargs)
        record(out, tuple(new_args), new_kwargs)
        return out

    installed: Any = (torch._dynamo.disable(wrapper, recursive=False) if compiled
                      else wrapper)
    if kind is not None:
        installed = kind(installed)
    # the model may call the function through a name another module imported it by, a
    # registry, a closure
    with _in_place_of(swap.owner, swap.name, installed, swap.places):
        yield holder


def _slots(args: Sequence[Any], kwargs: Mapping[str, Any], names: Sequence[str]
           ) -> list[tuple[Any, Any, Any, str, str]]:
    """Where a special value can go: each argument, and one level into a tuple, a named tuple,
    a list or a dict argument (torchdiffeq's `rk_state`, whose `dt` its step tests for inf; a
    batch dict) or into the tensor attributes of an object argument (DETR's `NestedTensor`), as
    (argument key, the element's index or key or attribute or None, the value, its name, its
    label: `rk_state.dt`, `batch['x']`, `coeffs[1]`, `tensor_list.mask`)."""
    out = []
    for key, value in [*enumerate(args), *kwargs.items()]:
        name = names[key] if isinstance(key, int) and key < len(names) else str(key)
        out.append((key, None, value, name, name))
        fields = getattr(type(value), "_fields", None)
        if isinstance(value, tuple) and isinstance(fields, tuple) and len(fields) == len(value):
            out += [(key, i, v, f, f"{name}.{f}") for i, (f, v) in enumerate(zip(fields, value))]
        elif type(value) in (tuple, list):
            # an element goes by its list's name: the guarded code reading `std` reads them
            out += [(key, i, v, name, f"{name}[{i}]") for i, v in enumerate(value)]
        elif isinstance(value, dict):
            out += [(key, k, v, str(k), f"{name}[{k!r}]") for k, v in value.items()]
        else:
            # an object that holds its tensors as plain attributes (DETR's `NestedTensor`, its
            # images `tensors` and padding `mask`): each by its attribute's name, which the
            # guarded code reads it by (`mask = tensor_list.mask`)
            out += [(key, _Attr(a), v, a, f"{name}.{a}") for a, v in _tensor_attributes(value)]
    return out


class _Attr(str):
    """An attribute's name as a slot's place in its argument (not a dict's key)."""


def _tensor_attributes(value: Any) -> list[tuple[str, Any]]:
    """The tensors an object that is no tensor, container nor module holds in its own
    `__dict__`, by name."""
    import torch

    if isinstance(value, (torch.Tensor, torch.nn.Module, type)) or not hasattr(value, "__dict__"):
        return []
    try:
        items = list(vars(value).items())
    except TypeError:
        return []
    return [(a, v) for a, v in items if isinstance(v, torch.Tensor) and not a.startswith("_")]


def equal_pattern(a: str, b: str) -> str:
    return f"{a}={b}"


def _made_equal(slots: list[tuple[Any, Any, Any, str, str]], pattern: str
                ) -> list[tuple[tuple[Any, Any, Any, str, str], Any]]:
    """The slots labelled on the pattern's left side ("t=t0", or "t,t1=t0" for several), each
    with the value of the one labelled on its right, where all are tensors of one shape, dtype
    and device and one of them differs (setting them to it makes the tests `t == t0`, `t == t1`
    true at once); none otherwise."""
    import torch

    lefts, _, b = pattern.partition("=")
    right = next((s for s in slots if s[4] == b), None)
    left = [next((s for s in slots if s[4] == a), None) for a in lefts.split(",")]
    if right is None or any(s is None for s in left):
        return []
    y = right[2]
    xs = [s[2] for s in left]   # type: ignore[index]
    if not isinstance(y, torch.Tensor) or not all(
            isinstance(x, torch.Tensor) and x.shape == y.shape and x.dtype == y.dtype and x.device == y.device
            for x in xs) or all(torch.equal(x, y) for x in xs):
        return []
    return [(s, y) for s in left]   # type: ignore[misc]


def _replaced(outer: Any, inner: Any, special: Any) -> Any:
    """A copy of the container `outer` with its element `inner` (an index or a key) replaced:
    the caller's own container is left as it was."""
    if isinstance(inner, _Attr):
        new = copy.copy(outer)
        setattr(new, str(inner), special)
        return new
    if isinstance(outer, tuple) and hasattr(outer, "_replace"):
        return outer._replace(**{outer._fields[inner]: special})
    if isinstance(outer, dict):
        new = copy.copy(outer)
        new[inner] = special
        return new
    items = list(outer)
    items[inner] = special
    return type(outer)(items)


def _python_code(fn: Any) -> Any:
    """The code object a call of `fn` runs, behind its decorators and method wrappers; None
    where it runs none (a `@torch.jit.script` function runs in TorchScript's interpreter)."""
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    try:
        fn = inspect.unwrap(fn)
    except ValueError:   # a cycle of __wrapped__
        pass
    return getattr(fn, "__code__", None)


def watchable(swap: Swap) -> bool:
    """Whether a line of the swapped function can be watched: its eager run executes Python
    lines. A TorchScript function's does not (dynamo still traces its Python source), so a
    watch would see no line reached, whichever ran."""
    return _python_code(swap.patched) is not None


def _watching(fn: Any, injection: Injection, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`fn(*args, **kwargs)`, noting in `injection.reached` whether a line event of its file
    hit `injection.watch` (eager only: the proof's guard runs are eager calls). The file is
    the one the function was written in, behind its decorators (`@autocast(...)` wraps it in
    a function of torch's own file, whose lines say nothing of the watched one)."""
    filename = getattr(_python_code(fn), "co_filename", None)
    if injection.reached is None:
        injection.reached = False

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_lineno == injection.watch:
            injection.reached = True
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == filename else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.settrace(previous)


# dynamo's "am I compiling?" functions (torch.compiler.is_compiling, torch._dynamo.is_compiling,
# transformers' is_torchdynamo_compiling): true while dynamo traces, false in eager
_COMPILING = ("is_compiling", "is_dynamo_compiling", "is_torchdynamo_compiling")


def asks_compiling(lines: Sequence[str], patched_text: str) -> bool:
    """Whether the replacement `lines` call one of dynamo's "am I compiling?" functions, also
    under a name the patched file imports it as (`from torch.compiler import is_compiling as
    compiling`). Such an edit changes what compiled code does, not what eager does: the eager
    comparisons cannot see it."""
    def calls(names: Any) -> bool:
        return any(re.search(rf"\b{re.escape(n)}\s*\(", ln) for n in names for ln in lines)

    if calls(_COMPILING):
        return True
    try:
        tree = ast.parse(patched_text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return calls({a.asname for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                  for a in n.names if a.name in _COMPILING and a.asname})


def _aliased(out: Any, slots: list[tuple[Any, Any, Any, str, str]], torch: Any) -> list[str]:
    """The labels of the argument slots whose tensor shares its memory with a tensor of `out`
    (one level into tuples, lists and dicts, as `_slots` looks into the arguments)."""
    def tensors(v: Any) -> list[Any]:
        if isinstance(v, torch.Tensor):
            return [v]
        if isinstance(v, (list, tuple)):
            return [t for x in v for t in tensors(x)] if len(v) <= 64 else []
        if isinstance(v, dict):
            return [t for x in list(v.values())[:64] for t in tensors(x)]
        return []

    def storage(t: Any) -> int | None:
        try:
            ptr = t.untyped_storage().data_ptr()
        except Exception:  # noqa: BLE001 - a tensor without storage (sparse, meta) shares none
            return None
        return ptr or None

    returned = {p for p in map(storage, tensors(out)) if p is not None}
    return sorted({label for _k, _i, value, _name, label in slots
                   if isinstance(value, torch.Tensor) and storage(value) in returned})


def _detached(out: Any, torch: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, (list, tuple)):
        return type(out)(_detached(o, torch) for o in out) if isinstance(out, list) else \
            tuple(_detached(o, torch) for o in out)
    if isinstance(out, dict):
        return {k: _detached(v, torch) for k, v in out.items()}
    return out


__all__ = ["Edit", "GUARD_KINDS", "GuardOverrun", "ROW_PATTERNS", "WATCH_ONLY", "asks_compiling", "Injection", "Injector",
           "MAX_GUARD_ARGS", "NotApplicable", "Swap", "enclosing_function", "function_at", "guard_patterns",
           "injecting", "injector", "loaded_module", "patched_function", "watchable"]
