"""Cross-file resolution: which functions are compiled code.

Roots: `forward` of every nn.Module subclass (direct or through classes of the analysed
tree), functions decorated with or passed to `torch.compile` / `torch.export.export`.
Edges: calls to `self.method` (looked up through the tree's base classes), to submodules
assigned in `__init__` (`self.block(x)` -> `Block.forward`), and to module-level functions
of the tree, including ones imported from other files and re-exported by packages.
`X.apply(...)` where `X` is a `torch.autograd.Function` subclass of the tree runs `X.forward`
(the edge), and `X.setup_context` and `X.backward` are reached too (`autograd_companions`).
A function decorated with `torch.compiler.disable` is reached but not entered; each call of it
from compiled code is kept (`Reach.disabled_calls`): dynamo breaks the graph there.

The index may start from part of the tree (pt2bot/static/scan.py: the files that may define an
`nn.Module` or call compile): a name in a module not read yet reads it then (`Loader`), and the
search takes the roots of every file so read, so what it finds is what the whole tree gives.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from pt2bot.analysis.infer import BOOL_TENSOR, RESULT, class_tensor_attrs
from pt2bot.analysis.model import Candidate, ClassInfo, FileSummary, FunctionInfo
from pt2bot.analysis.torch_modules import is_torch_module_class

Key = tuple[str, str]   # (path, qualname)

# torch's autograd.Function base as a resolved name spells it (`from torch.autograd import Function`,
# `torch.autograd.function.Function`); `InplaceFunction` derives from it
AUTOGRAD_FUNCTION = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                               "torch.autograd.function.InplaceFunction"})


class Loader(Protocol):
    """Reads the files of the tree the index did not start with (pt2bot/static/files.py), and
    tells from their text alone (pt2bot/static/scan.py) what reading one cannot change."""
    pending: dict[str, str]                                           # module name -> path

    def load(self, module: str) -> FileSummary | None: ...

    def may_hold(self, module: str, name: str) -> bool: ...

    def may_name_module(self, dotted: str) -> bool: ...


@dataclass
class Index:
    summaries: dict[str, FileSummary]                                 # module name -> summary
    functions: dict[str, tuple[FileSummary, FunctionInfo]] = field(default_factory=dict)
    classes: dict[str, tuple[FileSummary, ClassInfo]] = field(default_factory=dict)
    _module_memo: dict[str, bool] = field(default_factory=dict)
    _canonical_memo: dict[str, str] = field(default_factory=dict)
    _mro_memo: dict[str, list[str]] = field(default_factory=dict)
    _method_memo: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # When the analysed root is a package directory itself (`pt2bot check site-packages/kornia`),
    # module names lack the package's own name while its absolute imports carry it
    # (`from kornia.augmentation.base import ...`): the import prefix that names the root.
    root_alias: str | None = None
    # A `src/` layout (`src/flux/model.py`, no `src/__init__.py`): Python imports its packages
    # as `flux.model`, where the tree names them `src.flux.model`: the packages under `src/`
    # whose imports get the prefix (black-forest-labs/flux, checked from its root, read no
    # call of `flux.modules.layers` from its model: no finding in its helpers)
    src_packages: frozenset[str] = frozenset()
    # module -> the modules it star-imports (`from .imgwarp import *`: key "*<module>" of its imports)
    stars: dict[str, list[str]] = field(default_factory=dict)
    _star_memo: dict[str, str | None] = field(default_factory=dict)
    loader: Loader | None = None
    # the summaries in the order they joined, with len(roots) then (later walks add roots that
    # the search must not start from: pt2bot/static/files.py FileState.cache_view)
    order: list[tuple[FileSummary, int]] = field(default_factory=list)
    # the first parts of the tree's module names (and `root_alias`): a name that starts with
    # none of them (`torch.`, `math.`) resolves to nothing of the tree (`resolve_call`)
    heads: frozenset[str] = frozenset()

    @classmethod
    def build(cls, summaries: list[FileSummary], loader: Loader | None = None) -> "Index":
        idx = cls({}, loader=loader)
        for s in summaries:
            idx.add(s)
        modules = {s.module for s in summaries} | set(loader.pending if loader is not None else ())
        idx.root_alias = _root_alias(summaries, modules)
        if "src" not in modules:
            idx.src_packages = frozenset(m.split(".")[1] for m in modules if m.startswith("src.")) - \
                {m.partition(".")[0] for m in modules}
        idx.heads = frozenset({m.partition(".")[0] for m in modules} | {idx.root_alias or ""} | idx.src_packages)
        return idx

    def add(self, s: FileSummary) -> None:
        if s.error or s.skip_file:
            return
        self.summaries[s.module] = s
        self.order.append((s, len(s.roots)))
        for q, info in s.functions.items():
            if q != "<module>":
                self.functions[f"{s.module}.{q}"] = (s, info)
        for name, c in s.classes.items():
            self.classes[f"{s.module}.{name}"] = (s, c)
        star = [m for k, m in s.imports.items() if k[:1] == "*" and m != s.module]
        if star:
            self.stars[s.module] = star

    def _ensure(self, name: str) -> None:
        """Read the module of the tree that `name` is in, if not read yet: its longest prefix that
        names a module of the tree (a shorter one could only hold it as a nested name `b.X` of
        package `a` beside a module `a.b`, which an import of `a.b.X` does not reach either)."""
        pending = self.loader.pending if self.loader is not None else None
        if not pending:
            return
        prefix, word = name, ""
        while prefix:
            if prefix in self.summaries:
                return
            if prefix in pending:
                # (a module whose text lacks the name it is asked for answers as if absent)
                if not word or self.loader.may_hold(prefix, word):
                    s = self.loader.load(prefix)
                    if s is not None:
                        self.add(s)
                return
            prefix, _, word = prefix.rpartition(".")

    def canonical(self, name: str, depth: int = 0) -> str:
        """Follow re-exports (`from .layers import Block` in a package `__init__`)."""
        if depth == 0:
            hit = self._canonical_memo.get(name)
            if hit is None:
                hit = self._canonical_memo[name] = self._canonical(name, 0)
            return hit
        return self._canonical(name, depth)

    def _canonical(self, name: str, depth: int) -> str:
        self._ensure(name)
        if depth > 8 or name in self.functions or name in self.classes:
            return name
        if name in self.summaries or (self.loader is not None and name in self.loader.pending):
            # a module of the tree is itself (`pkg.mod` of `pkg.mod.CONST.get`): searching the
            # package's star imports for a name `mod` would read every module they name
            return name
        alias = self.root_alias
        if alias is not None and name.startswith(alias + "."):
            return self.canonical(name[len(alias) + 1:], depth + 1)
        if name.partition(".")[0] in self.src_packages:
            return self.canonical(f"src.{name}", depth + 1)
        mod, _, attr = name.rpartition(".")
        s = self.summaries.get(mod)
        if s is not None:
            target = s.imports.get(attr)
            if target and target != name:
                return self.canonical(target, depth + 1)
            if target is None and attr not in s.module_names and mod in self.stars:
                found = self._star_source(mod, attr)
                if found is not None and found != name:
                    return self.canonical(found, depth + 1)
        # `pkg.mod.Class.method` where `pkg.mod.Class` is a re-export
        if mod and depth <= 8:
            cmod = self.canonical(mod, depth + 1)
            if cmod != mod:
                return self.canonical(f"{cmod}.{attr}", depth + 1)
        return name

    def _star_source(self, mod: str, attr: str) -> str | None:
        """`src.attr` for the first module `mod` star-imports (breadth-first through star imports,
        each module once) that defines or imports `attr` by name. Memoised: package `__init__`s
        star-import dozens of modules, and a recursive search through them is exponential."""
        key = f"{mod}\0{attr}"
        if key in self._star_memo:
            return self._star_memo[key]
        found = None
        seen = {mod}
        todo = list(self.stars.get(mod, ()))
        while todo and found is None and len(seen) < 200:
            src = todo.pop(0)
            if src in seen:
                continue
            seen.add(src)
            self._ensure(f"{src}.{attr}")
            s = self.summaries.get(src)
            if s is None:
                continue
            if attr in s.module_names or attr in s.imports:
                found = f"{src}.{attr}"
            else:
                todo.extend(self.stars.get(src, ()))
        self._star_memo[key] = found
        return found

    def is_module_class(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in self._module_memo:
            return self._module_memo[name]
        result = False
        self._ensure(name)
        entry = self.classes.get(name)
        if entry is not None and name not in seen:
            for b in entry[1].bases:
                if self.loader is not None and not self.loader.may_name_module(b):
                    continue      # (a configuration's base: no need to read its file)
                # torch's private bases count too (`torch.nn.modules.loss._Loss`), and torch's
                # classes re-exported by the tree (`from kornia.core import Module`)
                canon = self.canonical(b)
                if is_torch_module_class(b) or is_torch_module_class(canon) or \
                        self.is_module_class(canon, seen | {name}):
                    result = True
                    break
        self._module_memo[name] = result
        return result

    def is_autograd_function(self, name: str) -> bool:
        """`name` is a class of the tree deriving (through classes of the tree) from
        `torch.autograd.Function`, as a resolved base spells it."""
        return any(b in AUTOGRAD_FUNCTION or self.canonical(b) in AUTOGRAD_FUNCTION
                   for c in self.mro(name) for b in self.classes[c][1].bases)

    def mro(self, cls_name: str) -> list[str]:
        hit = self._mro_memo.get(cls_name)
        if hit is None:
            hit = self._mro_memo[cls_name] = self._mro(cls_name)
        return hit

    def _mro(self, cls_name: str) -> list[str]:
        out, todo = [], [cls_name]
        while todo and len(out) < 50:
            c = todo.pop(0)
            if c in out or c not in self.classes:
                continue
            out.append(c)
            todo.extend(self.canonical(b) for b in self.classes[c][1].bases)
        return out

    def method(self, cls_name: str, meth: str) -> str | None:
        # (memoised: a class's methods never change; its attrs do, as walks find them)
        key = (cls_name, meth)
        if key in self._method_memo:
            return self._method_memo[key]
        found = None
        for c in self.mro(cls_name):
            if meth in self.classes[c][1].methods:
                found = f"{c}.{meth}"
                break
        self._method_memo[key] = found
        return found

    def attr_ctor(self, cls_name: str, attr: str) -> str | None:
        for c in self.mro(cls_name):
            s, info = self.classes[c]
            ctor = info.attrs.get(attr)
            if ctor:
                return self.canonical(ctor)
        return None


def _root_alias(summaries: list[FileSummary], modules: set[str]) -> str | None:
    """`kornia` when the tree is the inside of package `kornia`: it has a top-level
    `__init__.py` and its files import `kornia.<a top-level module of the tree>`.
    `modules`: every module of the tree, also those not read yet (the votes are the imports
    of `summaries`: on a tree that is the inside of a package, nearly every file casts one)."""
    if "" not in modules:
        return None
    tops = {m.partition(".")[0] for m in modules if m}
    votes: dict[str, int] = {}
    for s in summaries:
        for target in s.imports.values():
            head, _, rest = target.partition(".")
            if rest and head not in tops and rest.partition(".")[0] in tops and head != "torch":
                votes[head] = votes.get(head, 0) + 1
    if not votes:
        return None
    best = max(votes, key=lambda h: votes[h])
    return best if votes[best] >= 2 else None


@dataclass
class DisabledCall:
    """A call from compiled code (`caller`, its edge `edge`) of a disabled function (`callee`)."""
    caller: FileSummary
    caller_info: FunctionInfo
    edge: int
    callee: FileSummary
    callee_info: FunctionInfo


@dataclass
class Reach:
    compiled: set[Key]
    disabled_calls: list[DisabledCall]
    index: Index                    # the index the search ran on (reused by later stages)
    # The call edges of compiled code as the search resolved them, (caller, index of the call in
    # its `calls`, callee), `super().m(...)` included though not followed; and the functions the
    # search started from (pt2bot/static/check.py `inherit_call_conditions`)
    edges: list[tuple[str, int, str]] = field(default_factory=list)
    roots: set[str] = field(default_factory=set)
    # (caller, index of a `self.m(...)` call) -> the classes of `self` the search resolved it in
    self_classes: dict[tuple[str, int], set[str]] = field(default_factory=dict)


def find_compiled(summaries: list[FileSummary],
                  walk: Callable[[list[tuple[FileSummary, FunctionInfo]]], None] | None = None,
                  loader: Loader | None = None) -> Reach:
    """Breadth-first from the roots. `walk(level)` is called before the call edges of a level
    of newly reached functions are read: lazy analysis walks exactly those bodies then.

    The search runs over (function, class of `self`) pairs: a `forward` inherited from a base
    class calls `self.apply_transform(...)` of the *subclass* being compiled (virtual
    dispatch), so `self.m` resolves in the MRO of the module class the root came from, not of
    the class that defines the calling method (kornia's augmentations are built this way).

    Files the index reads on the way (`loader`) add their roots once the frontier is empty."""
    idx = Index.build(summaries, loader)
    frontier: list[tuple[str, str | None]] = []
    rooted = 0
    compiled: set[Key] = set()
    disabled: dict[tuple[str, str, int], DisabledCall] = {}
    seen: set[tuple[str, str | None]] = set()
    reached: set[str] = set()
    roots: set[str] = set()
    edges: list[tuple[str, int, str]] = []
    selves: dict[tuple[str, int], set[str]] = {}
    while rooted < len(idx.order):
        # (reading the roots may read more files: they join `idx.order` and this loop)
        while rooted < len(idx.order):
            s, n_roots = idx.order[rooted]
            rooted += 1
            frontier += _roots(idx, s, n_roots)
        roots.update(name for name, _ in frontier)
        _search(idx, frontier, walk, compiled, disabled, seen, reached, edges, selves)
        frontier = []
    return Reach(compiled, list(disabled.values()), idx, edges, roots, selves)


def _roots(idx: Index, s: FileSummary, n_roots: int) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for cname in s.classes:
        name = f"{s.module}.{cname}"
        if idx.is_module_class(name):
            fwd = idx.method(name, "forward")
            if fwd:
                out.append((fwd, name))
    for q, info in s.functions.items():
        if info.compiled_root:
            out.append((f"{s.module}.{q}", None))
    for root in s.roots[:n_roots]:
        root = idx.canonical(root)
        if root in idx.functions:
            out.append((root, None))
        elif root in idx.classes:
            fwd = idx.method(root, "forward")
            if fwd:
                out.append((fwd, root))
    return out


def _search(idx: Index, frontier: list[tuple[str, str | None]],
            walk: Callable[[list[tuple[FileSummary, FunctionInfo]]], None] | None,
            compiled: set[Key], disabled: dict[tuple[str, str, int], DisabledCall],
            seen: set[tuple[str, str | None]], reached: set[str],
            edges: list[tuple[str, int, str]], selves: dict[tuple[str, int], set[str]]) -> None:
    functions = idx.functions
    while frontier:
        level: list[tuple[str, str | None, FileSummary, FunctionInfo]] = []
        new: list[tuple[FileSummary, FunctionInfo]] = []
        for name, self_cls in frontier:
            if (name, self_cls) in seen:
                continue
            seen.add((name, self_cls))
            entry = functions.get(name)
            if entry is None:
                continue
            s, info = entry
            if info.disabled_at is not None:
                continue      # a root that is disabled: dynamo runs it eagerly, nothing to report
            if info.opaque:
                continue      # run while tracing, not traced (pt2bot/analysis/model.py FunctionInfo)
            compiled.add((s.path, info.qualname))
            level.append((name, self_cls, s, info))
            if name not in reached:
                reached.add(name)
                new.append((s, info))
        if walk is not None and new:
            walk(new)
        frontier = []
        for name, self_cls, s, info in level:
            own = f"{s.module}.{info.cls}" if info.cls else None
            cls_name = self_cls if self_cls is not None and own is not None else own
            for i, (kind, target) in enumerate(info.calls):
                callee = resolve_call(idx, cls_name, kind, target)
                if callee is None:
                    if kind == "super":
                        sup = resolve_super(idx, cls_name, own, target)
                        if sup is not None:
                            edges.append((name, i, sup[0]))
                    continue
                edges.append((name, i, callee[0]))
                if kind != "name":
                    selves.setdefault((name, i), set()).add(cls_name)
                entry = functions.get(callee[0])
                if entry is not None and entry[1].disabled_at is not None:
                    # reached but not entered: the break is at this call (measured on torch 2.13:
                    # the graph break's user frame is the caller's line, once per call site)
                    disabled.setdefault((s.path, info.qualname, i), DisabledCall(s, info, i, *entry))
                elif callee not in seen:
                    frontier.append(callee)
                if kind == "name" and target.endswith(".apply"):
                    frontier.extend(autograd_companions(idx, callee))


def resolve_super(idx: Index, cls_name: str | None, own: str | None, target: str) -> tuple[str, str | None] | None:
    """The method `super().target(...)` in a method of class `own` runs when `self` is a
    `cls_name`: the first definition after `own` in `cls_name`'s MRO (as resolved here)."""
    if cls_name is None or own is None:
        return None
    mro = idx.mro(cls_name)
    if own not in mro:
        return None
    for c in mro[mro.index(own) + 1:]:
        if target in idx.classes[c][1].methods:
            return (f"{c}.{target}", cls_name)
    return None


def resolve_call(idx: Index, cls_name: str | None, kind: str, target: str) -> tuple[str, str | None] | None:
    """The callee and the class its `self` is (None: its own class, or not a method)."""
    if kind in ("self", "selfattr"):
        if cls_name is None:
            return None
        if kind == "self":
            m = idx.method(cls_name, target)
            if m:
                return (m, cls_name)
        ctor = idx.attr_ctor(cls_name, target)
        if ctor and ctor in idx.classes:
            fwd = idx.method(ctor, "forward")
            return (fwd, ctor) if fwd else None
        return None
    if kind == "super":
        return None       # `super().m(...)`: see `resolve_super`
    if target.partition(".")[0] not in idx.heads:
        return None
    name = idx.canonical(target)
    if name in idx.functions:
        return (name, None)
    cls, _, attr = name.rpartition(".")
    if attr == "apply" and cls in idx.classes and idx.method(cls, "apply") is None and \
            idx.is_autograd_function(cls):
        # `Fn.apply(x)` runs `Fn.forward(ctx, x)`: dynamo traces it, and a break inside is a
        # graph break of the caller's graph (measured on torch 2.13, eager backend). Only a class
        # deriving from torch's `autograd.Function`: `self.apply(fn)` of a module, a DataFrame's
        # or a list's `.apply` resolve to no such class.
        fwd = idx.method(cls, "forward")
        return (fwd, cls) if fwd else None
    return None


def autograd_companions(idx: Index, callee: tuple[str, str | None]) -> list[tuple[str, str | None]]:
    """`setup_context` and `backward` of the `autograd.Function` whose `forward` is `callee` (an
    edge of `Fn.apply(...)`): when an input requires grad, dynamo traces both while it traces the
    forward call (measured on torch 2.13: a data-dependent `if` in either is a graph break at the
    compiled call, before any backward runs; with no input requiring grad neither is traced).
    Reached without a call edge of their own: what `apply` returns is what `forward` returns."""
    cls = callee[1]
    if cls is None or not idx.is_autograd_function(cls):
        return []
    out = []
    for meth in ("setup_context", "backward"):
        m = idx.method(cls, meth)
        if m is not None:
            out.append((m, cls))
    return out


class CrossFile:
    """The facts of other files that candidates need (`Candidate.ext`, pt2bot/analysis/infer.py
    `Ext`), answered from the summaries and the call graph as resolved (`Reach`): never by
    walking again, so a cached file's candidates are judged against the other files as they
    are now (a change there changes their summary, and so the answer)."""

    _TENSOR = (RESULT, BOOL_TENSOR)

    def __init__(self, reach: Reach) -> None:
        self.reach = reach
        self._callees: dict[tuple[str, int], list[str]] | None = None
        self._memo: dict[tuple, bool] = {}

    def holds(self, s: FileSummary, c: Candidate) -> bool:
        """Whether every fact candidate `c` of file `s` needs holds."""
        caller = f"{s.module}.{c.function}"
        for need in c.ext or ():
            key = (caller, need) if need[:1] == ("call",) else need
            ok = self._memo.get(key)
            if ok is None:
                ok = self._memo[key] = self._call(caller, need) if need[:1] == ("call",) else \
                    self._attr(need) if need[:1] == ("attr",) else \
                    self._alias(need) if need[:1] == ("alias",) else False
            if not ok:
                return False
        return True

    def _call(self, caller: str, need: tuple) -> bool:
        """The call at `need`'s position, with its edge, runs (for every class of `self` the
        graph entered the caller with) functions that return a tensor there."""
        if len(need) != 5:
            return False
        _, pos, kind, target, elt = need
        idx = self.reach.index
        entry = idx.functions.get(caller)
        if entry is None:
            return False
        calls = entry[1].calls
        where = getattr(calls, "pos", None) or []
        if self._callees is None:
            self._callees = {}
            for src, i, dst in self.reach.edges:
                self._callees.setdefault((src, i), []).append(dst)
        found = False
        for i, call in enumerate(calls):
            if i >= len(where) or where[i] != pos or call != (kind, target):
                continue
            if kind != "name" and not all(self._known_mro(c) for c in self.reach.self_classes.get((caller, i), ())):
                return False    # a base outside the tree may define the method first
            for callee in self._callees.get((caller, i), ()):
                got = idx.functions.get(callee)
                r = got[1].returns if got is not None else None
                if elt is None:
                    ok = r in self._TENSOR
                else:
                    ok = type(r) is tuple and type(elt) is int and 0 <= elt < len(r) and r[elt] in self._TENSOR
                if not ok:
                    return False
                found = True
        return found

    def _known_mro(self, cls: str) -> bool:
        """Every base of `cls`, transitively, is a class of the tree, torch's or `object`: the
        method the graph found in its MRO is the one Python runs."""
        hit = self._memo.get(("mro", cls))
        if hit is None:
            idx = self.reach.index
            hit = True
            for c in idx.mro(cls):
                for b in idx.classes[c][1].bases:
                    canon = idx.canonical(b)
                    if canon not in idx.classes and b not in ("object", "builtins.object") and \
                            not is_torch_module_class(b) and not is_torch_module_class(canon):
                        hit = False
            self._memo[("mro", cls)] = hit
        return hit

    def _alias(self, need: tuple) -> bool:
        """`need[1]`, a dotted name (re-exports followed), is a top-level name its module binds
        to a tensor annotation (`FileSummary.tensor_aliases`)."""
        if len(need) != 2 or type(need[1]) is not str:
            return False
        idx = self.reach.index
        mod, _, name = idx.canonical(need[1]).rpartition(".")
        s = idx.summaries.get(mod)
        return s is not None and name in s.tensor_aliases

    def _attr(self, need: tuple) -> bool:
        """Class `need[1]` (or a base of it in the tree) stores a tensor in attribute `need[2]`."""
        if len(need) != 3 or type(need[1]) is not str:
            return False
        idx = self.reach.index
        cls = idx.canonical(need[1])
        if cls not in idx.classes:
            return False
        return any(need[2] in class_tensor_attrs(idx.classes[c][1]) for c in idx.mro(cls))
