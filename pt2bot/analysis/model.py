"""The data one pass over a file produces (plain, picklable: worker processes send it back).

`FileSummary` is what pt2bot/analysis/walk.py builds for a file and pt2bot/analysis/graph.py joins
across files: its functions with their call edges, classes, names, compile/export roots and the
candidate findings of every function, kept or dropped once the graph knows which functions are
compiled.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass
class Candidate:
    """A finding before we know whether its function is compiled code."""
    rule: str
    line: int
    col: int
    end_line: int | None
    end_col: int | None
    message: str
    function: str                  # qualified name of the enclosing top-level function/method
    scope: str                     # "compiled": keep only if `function` is compiled; "any": keep
    suggestion: str | None = None
    gb: str | None = None          # overrides the rule's default GB id
    # The guard of a path the default call does not take ("self.training"), set by the walker
    # (pt2bot/analysis/walk.py, `Conditions`) after the branch holding the candidate is walked.
    condition: str | None = None
    # The resolved callee of the call the candidate was reported at ("random.random"): rules
    # whose claim depends on the torch version per callee (`Rule.callee_until`) need it.
    callee: str | None = None
    # A pending candidate (pt2bot/analysis/sizeargs.py): its claim holds only if a parameter of
    # its function is a tensor size, `(position or None, name, element or None, "size"|"sized")`;
    # the graph keeps it when a compiled caller passes one there (pt2bot/static/check.py).
    needs: tuple[int | None, str, int | None, str] | None = None
    # A candidate whose claim holds only if facts of other files hold (pt2bot/analysis/infer.py
    # `Ext`): each `("call", position, edge kind, edge target, element or None)` (the function
    # that call runs returns a tensor, or a tuple whose element is one) or `("attr", class,
    # attribute)` (that class stores a tensor there); the emit stage keeps it when all hold
    # (pt2bot/analysis/graph.py `CrossFile`).
    ext: tuple[tuple, ...] | None = None


class Calls(list):
    """A function's call edges `(kind, target)`, and `guards`: index -> the guard of a call
    made on a non-default path (pt2bot/analysis/walk.py). A list subclass so that the guards
    travel wherever the edges do (pickled with the list to and from worker processes)."""

    guards: dict[int, str]
    # index -> (line, the arguments that are tensor sizes): pt2bot/analysis/sizeargs.py
    sizes: dict[int, tuple[int, tuple[tuple[int | str, object, str], ...]]]
    # the position of the call that made each edge, `line << 16 | col` (one small int an edge:
    # transformers' compiled code has tens of thousands; a plain list, which the cache's
    # unpickler builds without calling anything), 0 where the call is not known (a function
    # passed by reference to one of the tree: pt2bot/analysis/walk.py): where a finding about
    # the call is reported (PTC403 at the call of a disabled function, pt2bot/static/check.py)
    pos: list[int]

    def __init__(self, *args: object) -> None:
        if args:
            list.__init__(self, *args)
        self.guards = {}
        self.sizes = {}
        self.pos = []


def call_pos(calls: list, i: int) -> tuple[int, int] | None:
    """(line, col) of the call that made edge `i` of `calls`, or None if not recorded (or not
    an int: a cache record is checked only for the list, not item by item)."""
    pos = getattr(calls, "pos", None)
    if pos is None or i >= len(pos) or type(pos[i]) is not int or pos[i] <= 0:
        return None
    p = pos[i]
    return p >> 16, p & 0xFFFF


def call_guards(calls: list) -> dict[int, str]:
    """The guards of `calls` (an empty dict for a plain list, which has none)."""
    g = getattr(calls, "guards", None)
    return g if g is not None else {}


def call_sizes(calls: list) -> dict[int, tuple[int, tuple[tuple[int | str, object, str], ...]]]:
    """The size arguments of `calls` (an empty dict for a plain list, which has none)."""
    g = getattr(calls, "sizes", None)
    return g if g is not None else {}


@dataclass
class FunctionInfo:
    qualname: str                  # "Net.forward" or "helper"
    cls: str | None                # class name when a method
    line: int
    calls: list[tuple[str, str]] = field(default_factory=Calls)   # (kind, target): see _record_call
    # decorated with torch.compiler.disable (or a module-level `f = torch.compiler.disable(g)`)
    disabled_at: tuple[int, int] | None = None
    # `torch.compiler.disable(recursive=False)`: with `staticmethod`, it tells how dynamo meets
    # a call of the disabled function (pt2bot/static/check.py `disabled_call_gb`)
    disabled_recursive: bool = True
    staticmethod: bool = False
    compiled_root: bool = False    # decorated with torch.compile (or similar)
    # decorated so that dynamo runs it while tracing and keeps only its result or a call to it
    # (`assume_constant_result`, `allow_in_graph`): its body is not compiled code
    opaque: bool = False
    # The tensor kind the function surely returns, from its own file (infer.py
    # `ModuleContext.helper_return_kind`): "result" / "bool" / "tensors", or the element kinds
    # of the tuple every return builds; None: not surely a tensor (or not walked). Read across
    # files by the emit stage (`Candidate.ext`).
    returns: str | tuple[str, ...] | None = None


@dataclass
class ClassInfo:
    name: str
    bases: list[str]               # resolved dotted names
    methods: dict[str, str]        # method name -> qualname
    attrs: dict[str, str]          # self.attr = Ctor(...) in any method -> resolved ctor name
    # Flags off by default: `self.x = False|None` in `__init__`, or `self.x = arg` where the
    # argument defaults to False/None (a test of `self.x` is then not the default path).
    off_flags: set[str] = field(default_factory=set)
    # `self.register_buffer("name", ...)` / `register_parameter` in the constructor statements
    # (a registered tensor is no assignment: `attrs` does not hold it)
    registered: set[str] = field(default_factory=set)


@dataclass
class FileSummary:
    path: str                      # repo-relative, forward slashes
    module: str                    # dotted module name
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    module_names: dict[str, str] = field(default_factory=dict)   # top-level def/class/import -> dotted
    roots: list[str] = field(default_factory=list)    # dotted names passed to torch.compile/export
    candidates: list[Candidate] = field(default_factory=list)
    imports: dict[str, str] = field(default_factory=dict)         # local name -> dotted (re-exports)
    # top-level names bound to a tensor annotation (`Reset = jt.Bool[torch.Tensor, "*b t"]`,
    # jaxtyping's aliases): a parameter annotated with one is a tensor (pt2bot/analysis/infer.py
    # `annotation_kind`; in another file through `Ext`)
    tensor_aliases: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)    # source lines (dropped before pickling)
    line_info: dict[int, tuple[str, tuple[str, ...] | None]] = field(default_factory=dict)  # line -> (src, noqa)
    skip_file: bool = False
    error: tuple[int, int, str] | None = None          # (line, col, message): could not parse


def module_name(path: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`; `src/` layouts kept as is."""
    p = path[:-3] if path.endswith(".py") else path
    parts = [x for x in p.split("/") if x]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_name(path: str) -> str | None:
    """The module name Python imports `path` by, relative to a directory on `sys.path`
    (`module_name`), or None when it has none: a part that is not an identifier, or the
    top-level `__init__.py`."""
    name = module_name(path)
    return name if name and all(p.isidentifier() for p in name.split(".")) else None


def import_base(level: int, module: str | None, package: str) -> str | None:
    """The absolute module name of `from {'.' * level}{module} import ...` in a module of
    `package` (the module itself for an `__init__.py`): "" for `from .. import x` one level
    above the tree's top-level packages (the tree may be the inside of a package: `pt2bot
    check site-packages/kornia`), None further up (Python raises ImportError there)."""
    if not level:
        return module or ""
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    parts = parts[:len(parts) - (level - 1)]
    return ".".join([*parts, module] if module else parts)


def import_bindings(st: ast.Import | ast.ImportFrom, package: str) -> list[tuple[str, str]]:
    """(local name, dotted target) of each name an import statement in a module of `package`
    binds: `import a.b` binds `a` -> `a`, `import a.b as c` `c` -> `a.b`, `from .m import X as Y`
    `Y` -> `<package>.m.X`. `from .m import *` gives `*<package>.m` -> `<package>.m`, under a key
    no identifier can be (pt2bot/analysis/graph.py follows star imports for re-exports)."""
    out: list[tuple[str, str]] = []
    if type(st) is ast.Import:
        for a in st.names:
            head = a.name.partition(".")[0]
            out.append((a.asname, a.name) if a.asname else (head, head))
        return out
    base = import_base(st.level, st.module, package)
    if base is None:
        return out
    for a in st.names:
        if a.name != "*":
            out.append((a.asname or a.name, f"{base}.{a.name}" if base else a.name))
        elif base:
            out.append(("*" + base, base))
    return out


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` as a string, or None if the expression is not a plain dotted name."""
    t = type(node)
    if t is _Name:       # most calls: a bare name, or `a.b` (no list, no join)
        return node.id
    if t is not _Attribute:
        return None
    v = node.value
    if type(v) is _Name:
        return f"{v.id}.{node.attr}"
    parts = [node.attr]
    while type(v) is _Attribute:
        parts.append(v.attr)
        v = v.value
    if type(v) is _Name:
        parts.append(v.id)
        return ".".join(reversed(parts))
    return None


_Name, _Attribute = ast.Name, ast.Attribute
