"""One pass over one file: imports, classes, call sites, and candidate findings.

Why one pass: `pt2bot check` must cost about as much as parsing. Each file is parsed once
and every function body is walked once. The walk collects the calls the cross-file graph
needs *and* runs every rule as if the function were compiled; the candidates of functions
that turn out not to be compiled are dropped later (pt2bot/rules/_graph.py). So nothing
needs a second parse or a second walk, and files can be analysed in separate processes
(the result, `FileSummary`, is plain picklable data).

Kinds of values (a cheap, local type inference): `TENSOR` (the result of a torch op or
tensor method: surely a tensor), `PARAM` (a parameter of a function: probably a tensor,
but rules that would be noisy on an int or a config object ignore it), `BOOL_TENSOR`
(a comparison of tensors: a mask), `SIZE` (an int from `x.shape[i]` / `x.size(i)`: a
SymInt under dynamic shapes), `SHAPE` (`x.shape`), `OTHER` (anything else / unknown).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

TENSOR, PARAM, BOOL_TENSOR, SIZE, SHAPE, OTHER = "tensor", "param", "bool", "size", "shape", "other"
WEAK_BOOL = "weakbool"     # a comparison involving a PARAM: a mask if the parameter is a tensor
TENSORISH = (TENSOR, BOOL_TENSOR)

# torch namespaces whose functions return tensors (torch.cuda.*, torch.backends.* do not).
_TENSOR_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special")
_NOT_TENSOR_FUNCS = frozenset({
    "is_tensor", "is_floating_point", "is_complex", "is_grad_enabled", "is_inference_mode_enabled",
    "numel", "get_default_dtype", "device", "dtype", "Size", "compile", "no_grad", "enable_grad",
    "inference_mode", "set_grad_enabled", "autocast", "finfo", "iinfo", "manual_seed", "seed",
    "set_default_dtype", "get_rng_state", "set_rng_state", "is_storage", "typename", "Generator",
    "is_nonzero", "result_type", "promote_types", "can_cast", "use_deterministic_algorithms",
    "save", "load", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "cond", "vmap",
    "broadcast_shapes", "get_num_threads", "set_num_threads", "equal", "is_same_size",
})
# Tensor methods that return tensors; anything called on a PARAM with one of these names is
# almost surely a tensor (config objects do not have `.sum()` or `.masked_fill()`).
TENSOR_METHODS = frozenset("""
abs absolute add addmm all amax amin any argmax argmin argsort bmm ceil chunk clamp clamp_min
clamp_max clip clone contiguous cos cpu cuda cumsum cumprod detach diff div double eq exp expand
expand_as flatten flip float floor gather ge gelu gt half int le log log_softmax logsumexp long lt
masked_fill matmul max mean min mm mul ne neg norm permute pow prod reciprocal relu repeat
repeat_interleave reshape round rsqrt sigmoid sign sin softmax sort sqrt square squeeze std sub sum
t tanh to topk transpose tril triu type_as unsqueeze var view view_as where bool bfloat16 narrow
index_select scatter scatter_add split unbind roll masked_scatter logical_and logical_or logical_not
cross dot outer einsum baddbmm new_zeros new_ones new_full new_empty new_tensor zeros_like ones_like
""".split())
SIZE_METHODS = frozenset({"size"})
RANK_METHODS = frozenset({"dim", "ndimension"})
_BOOL_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                           "logical_not", "isnan", "isinf", "isfinite", "bool"})
_MODULE_BASE_HINT = "torch.nn."

# Names that, in `if NAME():` / `if not NAME():`, mean "only while (not) compiling": code under
# the eager branch is not compiled code and must not be reported.
_COMPILING_CHECKS = frozenset({
    "torch.compiler.is_compiling", "torch._dynamo.is_compiling", "torch.compiler.is_dynamo_compiling",
    "torch.jit.is_scripting", "torch.jit.is_tracing", "torch._dynamo.external_utils.is_compiling",
    "torch.fx._symbolic_trace.is_fx_tracing", "torch.compiler.is_exporting",
})
_COMPILING_SUFFIXES = ("is_torchdynamo_compiling", "is_compiling", "is_scripting", "is_tracing",
                       "is_dynamo_compiling", "is_exporting", "is_fx_tracing")


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


@dataclass
class FunctionInfo:
    qualname: str                  # "Net.forward" or "helper"
    cls: str | None                # class name when a method
    line: int
    calls: list[tuple[str, str]] = field(default_factory=list)   # (kind, target): see _record_call
    disabled_at: tuple[int, int] | None = None  # decorated with torch.compiler.disable
    compiled_root: bool = False    # decorated with torch.compile (or similar)


@dataclass
class ClassInfo:
    name: str
    bases: list[str]               # resolved dotted names
    methods: dict[str, str]        # method name -> qualname
    attrs: dict[str, str]          # self.attr = Ctor(...) in any method -> resolved ctor name


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


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` as a string, or None if the expression is not a plain dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Rules:
    """The node-type dispatch table built from the registry (see pt2bot.rules)."""

    def __init__(self, handlers: dict[type, list[Callable[["FunctionContext", ast.AST], None]]],
                 module_handlers: list[Callable[["ModuleContext"], None]]) -> None:
        self.handlers = handlers
        self.module_handlers = module_handlers


class ModuleContext:
    """File-level state: the import table and helpers to resolve names through it."""

    def __init__(self, summary: FileSummary, tree: ast.Module, rules: Rules) -> None:
        self.summary = summary
        self.tree = tree
        self.rules = rules
        self.imports: dict[str, str] = summary.imports     # local name -> dotted target
        self.loggers: set[str] = {"logger", "log", "_logger", "LOGGER", "_LOGGER", "_log"}

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name an expression refers to, with import aliases expanded."""
        d = dotted(node)
        if d is None:
            return None
        head, _, rest = d.partition(".")
        target = self.imports.get(head)
        if target is None:
            local = self.summary.module_names.get(head)
            if local is None:
                return d
            target = local
        return f"{target}.{rest}" if rest else target

    def report(self, rule: str, node: ast.AST, message: str, function: str, scope: str,
               suggestion: str | None = None, gb: str | None = None) -> None:
        self.summary.candidates.append(Candidate(
            rule, node.lineno, node.col_offset, getattr(node, "end_lineno", None),
            getattr(node, "end_col_offset", None), message, function, scope, suggestion, gb))


_CONTAINERS = frozenset({"List", "list", "Tuple", "tuple", "Dict", "dict", "Sequence", "Iterable",
                         "Mapping", "Set", "set"})


def _annotation_words(ann: ast.AST) -> set[str]:
    """Names in an annotation (`Optional[torch.Tensor]` -> {Optional, torch, Tensor})."""
    out: set[str] = set()
    todo = [ann]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
            todo.append(n.value)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.update(w for w in re.split(r"[^A-Za-z_]+", n.value) if w)
        elif isinstance(n, ast.Subscript):
            todo += [n.value, n.slice]
        elif isinstance(n, (ast.Tuple, ast.List)):
            todo += n.elts
        elif isinstance(n, ast.BinOp):
            todo += [n.left, n.right]
    return out


class FunctionContext:
    """State of the walk through one top-level function or method (nested defs included)."""

    def __init__(self, mod: ModuleContext, info: FunctionInfo, node: ast.FunctionDef | ast.AsyncFunctionDef,
                 cls: ClassInfo | None) -> None:
        self.mod = mod
        self.info = info
        self.node = node
        self.cls = cls
        self.env: dict[str, str] = {}
        self.loop_depth = 0
        self.eager_only = 0          # >0 inside `if not torch.compiler.is_compiling():`
        self.call_target: str | None = None   # resolved callee of the Call being visited
        self._declare_params(node.args, is_method=cls is not None)

    # -- parameters -------------------------------------------------------------------------
    def _declare_params(self, args: ast.arguments, *, is_method: bool) -> None:
        positional = list(args.posonlyargs) + list(args.args)
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        for i, (a, default) in enumerate(pairs):
            if is_method and i == 0 and a.arg in ("self", "cls"):
                continue
            self.env[a.arg] = self._param_kind(a, default)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self.env[a.arg] = OTHER

    def _param_kind(self, a: ast.arg, default: ast.expr | None) -> str:
        ann = a.annotation
        if ann is not None:
            words = _annotation_words(ann)
            if "Tensor" in words and not words & _CONTAINERS:
                return TENSOR
            return OTHER
        if isinstance(default, ast.Constant) and default.value is not None:
            return OTHER            # `flag=False`, `n=3`, `mode="x"`: not a tensor
        if isinstance(default, (ast.List, ast.Tuple, ast.Dict, ast.Lambda)):
            return OTHER
        return PARAM

    # -- kinds ------------------------------------------------------------------------------
    def kind(self, e: ast.AST) -> str:
        t = type(e)
        if t is ast.Name:
            return self.env.get(e.id, OTHER)
        if t is ast.Call:
            return self._call_kind(e)
        if t is ast.Attribute:
            if e.attr == "shape":
                return SHAPE if self.kind(e.value) in (TENSOR, PARAM, BOOL_TENSOR) else OTHER
            if e.attr in ("T", "mT", "real", "imag", "data", "grad"):
                k = self.kind(e.value)
                return TENSOR if k in TENSORISH else OTHER
            return OTHER
        if t is ast.Subscript:
            base = self.kind(e.value)
            if base == SHAPE:
                return SIZE if not isinstance(e.slice, ast.Slice) else SHAPE
            if base in TENSORISH:
                return TENSOR
            return OTHER
        if t is ast.BinOp:
            l, r = self.kind(e.left), self.kind(e.right)
            if WEAK_BOOL in (l, r) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) \
                    and not ({l, r} & {TENSOR, BOOL_TENSOR}):
                return WEAK_BOOL
            if TENSOR in (l, r) or BOOL_TENSOR in (l, r):
                if isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and BOOL_TENSOR in (l, r):
                    return BOOL_TENSOR
                return TENSOR
            if PARAM in (l, r) and not isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
                return PARAM        # `x + 1` of a parameter: still probably a tensor
            if SIZE in (l, r) and l in (SIZE, OTHER) and r in (SIZE, OTHER):
                return SIZE if self._is_intlike(e.left) and self._is_intlike(e.right) else OTHER
            return OTHER
        if t is ast.UnaryOp:
            k = self.kind(e.operand)
            if isinstance(e.op, ast.Invert) and k in (BOOL_TENSOR, WEAK_BOOL):
                return k
            if isinstance(e.op, ast.Not):
                return OTHER
            return k if k in (TENSOR, SIZE) else OTHER
        if t is ast.Compare:
            if any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in e.ops):
                return OTHER
            kinds = [self.kind(e.left)] + [self.kind(c) for c in e.comparators]
            if any(k in TENSORISH for k in kinds):
                return BOOL_TENSOR
            if any(k in (PARAM, WEAK_BOOL) for k in kinds):
                return WEAK_BOOL
            return OTHER
        return OTHER

    def _is_intlike(self, e: ast.AST) -> bool:
        return self.kind(e) == SIZE or (isinstance(e, ast.Constant) and isinstance(e.value, int))

    def _call_kind(self, e: ast.Call) -> str:
        f = e.func
        if isinstance(f, ast.Attribute):
            recv = self.kind(f.value)
            if recv == WEAK_BOOL:
                recv = PARAM
            name = f.attr
            if recv in (TENSOR, PARAM, BOOL_TENSOR):
                if name in SIZE_METHODS and e.args:
                    return SIZE
                if name in SIZE_METHODS:
                    return SHAPE
                if name in _BOOL_METHODS and name != "bool" and recv != PARAM:
                    return BOOL_TENSOR
                if name in ("any", "all", "isnan", "isinf", "isfinite"):
                    return BOOL_TENSOR
                if name in TENSOR_METHODS:
                    return TENSOR
                if recv in TENSORISH and name not in ("item", "tolist", "numpy", "dim", "numel",
                                                      "ndimension", "size", "element_size", "is_contiguous",
                                                      "data_ptr", "get_device", "stride"):
                    return TENSOR
                return OTHER
        target = self.mod.resolve(f)
        if target is None:
            return OTHER
        ns, _, fname = target.rpartition(".")
        if ns in _TENSOR_NAMESPACES and fname and fname[0].islower() and fname not in _NOT_TENSOR_FUNCS \
                and not fname.startswith(("is_", "get_", "set_", "are_", "_")):
            if fname in ("any", "all", "isnan", "isinf", "isfinite", "eq", "ne", "lt", "le", "gt", "ge",
                         "logical_and", "logical_or", "logical_not"):
                return BOOL_TENSOR
            return TENSOR
        if target == "len" and e.args and self.kind(e.args[0]) in (TENSOR, BOOL_TENSOR):
            return SIZE
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                and self.cls is not None:
            ctor = self.cls.attrs.get(f.attr)
            if ctor and ctor.startswith(_MODULE_BASE_HINT) and ctor.rpartition(".")[2][:1].isupper():
                return TENSOR       # self.linear(x) where self.linear = nn.Linear(...)
        return OTHER

    def assign(self, target: ast.AST, kind: str, value: ast.AST | None = None) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = kind
        elif isinstance(target, (ast.Tuple, ast.List)):
            # `B, T, C = x.shape` / `b, t = x.size()`: the elements are sizes
            elt_kind = SIZE if kind == SHAPE else (TENSOR if kind == TENSOR and isinstance(value, ast.Call) and
                                                   isinstance(value.func, ast.Attribute) and
                                                   value.func.attr in ("chunk", "split", "unbind") else OTHER)
            for el in target.elts:
                self.assign(el.value if isinstance(el, ast.Starred) else el, elt_kind)

    def report(self, rule: str, node: ast.AST, message: str, *, suggestion: str | None = None,
               gb: str | None = None, scope: str = "compiled") -> None:
        if self.eager_only and scope == "compiled":
            return
        self.mod.report(rule, node, message, self.info.qualname, scope, suggestion, gb)

    def line_text(self, node: ast.AST) -> str:
        lines = self.mod.summary.lines
        return lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""


def is_compiling_check(mod: ModuleContext, test: ast.AST) -> int:
    """+1 if `test` is true only while compiling, -1 if only in eager, 0 otherwise."""
    neg = False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        neg, test = True, test.operand
    if isinstance(test, ast.Call) and not test.args:
        name = mod.resolve(test.func) or ""
        if name in _COMPILING_CHECKS or name.rpartition(".")[2] in _COMPILING_SUFFIXES:
            return -1 if neg else 1
    return 0


class Walker:
    """The single recursive walk of a function body: kinds, calls, rule dispatch."""

    def __init__(self, ctx: FunctionContext) -> None:
        self.ctx = ctx
        self.handlers = ctx.mod.rules.handlers

    def walk(self, node: ast.AST) -> None:
        t = type(node)
        if t is ast.Call:
            # resolved once per call, used by the call graph and by every rule (see call_target)
            self.ctx.call_target = self.ctx.mod.resolve(node.func)
        hs = self.handlers.get(t)
        if hs:
            for h in hs:
                h(self.ctx, node)
        m = _SPECIAL.get(t)
        if m is not None:
            m(self, node)
            return
        fields = _CHILD_FIELDS.get(t)
        if fields is None:
            fields = _child_fields(t)
        for name in fields:
            v = getattr(node, name, None)
            if v is None:
                continue
            if type(v) is list:
                for item in v:
                    if isinstance(item, ast.AST) and type(item) not in _LEAVES:
                        self.walk(item)
            elif type(v) not in _LEAVES and isinstance(v, ast.AST):
                self.walk(v)

    def walk_all(self, nodes: Iterable[ast.AST]) -> None:
        for n in nodes:
            self.walk(n)

    # statements that change the environment or the context
    def _assign(self, node: ast.Assign) -> None:
        self.walk(node.value)
        k = self.ctx.kind(node.value)
        for t in node.targets:
            self.ctx.assign(t, k, node.value)
            self._walk_target(t, node.value)

    def _walk_target(self, t: ast.AST, value: ast.AST) -> None:
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                and self.ctx.cls is not None and isinstance(value, ast.Call):
            ctor = self.ctx.mod.resolve(value.func)
            if ctor:
                self.ctx.cls.attrs.setdefault(t.attr, ctor)
        if not isinstance(t, ast.Name):
            self.walk(t)

    def _annassign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.walk(node.value)
            self.ctx.assign(node.target, self.ctx.kind(node.value), node.value)
            self._walk_target(node.target, node.value)

    def _augassign(self, node: ast.AugAssign) -> None:
        self.walk(node.value)
        if isinstance(node.target, ast.Name):
            k = self.ctx.kind(ast.BinOp(left=node.target, op=node.op, right=node.value))
            self.ctx.env[node.target.id] = k
        else:
            self.walk(node.target)

    def _namedexpr(self, node: ast.NamedExpr) -> None:
        self.walk(node.value)
        self.ctx.assign(node.target, self.ctx.kind(node.value), node.value)

    def _loop(self, node: ast.For | ast.While | ast.AsyncFor) -> None:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self.walk(node.iter)
            it = self.ctx.kind(node.iter)
            self.ctx.assign(node.target, TENSOR if it in TENSORISH else OTHER)
        else:
            self.walk(node.test)
        self.ctx.loop_depth += 1
        self.walk_all(node.body)
        self.ctx.loop_depth -= 1
        self.walk_all(node.orelse)

    def _if(self, node: ast.If) -> None:
        self.walk(node.test)
        c = is_compiling_check(self.ctx.mod, node.test)
        self._branch(node.body, c == -1)
        self._branch(node.orelse, c == 1)

    def _branch(self, body: list[ast.stmt], eager: bool) -> None:
        if eager:
            self.ctx.eager_only += 1
        self.walk_all(body)
        if eager:
            self.ctx.eager_only -= 1

    def _comp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        for g in node.generators:
            self.walk(g.iter)
            self.ctx.assign(g.target, TENSOR if self.ctx.kind(g.iter) in TENSORISH else OTHER)
            for cond in g.ifs:
                self.walk(cond)
        self.ctx.loop_depth += 1
        if isinstance(node, ast.DictComp):
            self.walk(node.key)
            self.walk(node.value)
        else:
            self.walk(node.elt)
        self.ctx.loop_depth -= 1

    def _call(self, node: ast.Call) -> None:
        _record_call(self.ctx, node, self.ctx.call_target)
        f = node.func
        if type(f) is ast.Attribute:
            if type(f.value) not in _LEAVES:
                self.walk(f.value)
        elif type(f) not in _LEAVES:
            self.walk(f)
        for a in node.args:
            if type(a) not in _LEAVES:
                self.walk(a)
        for k in node.keywords:
            if type(k.value) not in _LEAVES:
                self.walk(k.value)

    def _funcdef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # A nested function: its body is part of the enclosing compiled code; parameters shadow.
        saved = dict(self.ctx.env)
        for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
            self.ctx.env[a.arg] = PARAM
        self.walk_all(node.body)
        self.ctx.env = saved

    def _lambda(self, node: ast.Lambda) -> None:
        saved = dict(self.ctx.env)
        for a in node.args.args:
            self.ctx.env[a.arg] = PARAM
        self.walk(node.body)
        self.ctx.env = saved

    def _classdef(self, node: ast.ClassDef) -> None:
        return   # a class defined inside a function is not compiled by calling the function


# Nodes without children that matter: never visited (a large share of all nodes).
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break,
                     ast.Continue, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal})
_NOT_CHILDREN = frozenset({"ctx", "type_comment", "kind", "id", "attr", "arg", "name", "names", "level",
                           "module", "conversion", "is_async", "op", "ops", "returns", "annotation",
                           "type_params", "simple"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(t: type) -> tuple[str, ...]:
    fields = tuple(f for f in t._fields if f not in _NOT_CHILDREN)
    _CHILD_FIELDS[t] = fields
    return fields


_SPECIAL: dict[type, Callable[[Walker, ast.AST], None]] = {
    ast.Assign: Walker._assign, ast.AnnAssign: Walker._annassign, ast.AugAssign: Walker._augassign,
    ast.NamedExpr: Walker._namedexpr, ast.For: Walker._loop, ast.AsyncFor: Walker._loop,
    ast.While: Walker._loop, ast.If: Walker._if, ast.ListComp: Walker._comp, ast.SetComp: Walker._comp,
    ast.GeneratorExp: Walker._comp, ast.DictComp: Walker._comp, ast.Call: Walker._call,
    ast.FunctionDef: Walker._funcdef, ast.AsyncFunctionDef: Walker._funcdef, ast.Lambda: Walker._lambda,
    ast.ClassDef: Walker._classdef,
}

COMPILE_FUNCS = frozenset({"torch.compile", "torch.export.export", "torch.export", "torch._dynamo.optimize",
                           "torch.export.draft_export", "torch._export.aot_compile"})
DISABLE_FUNCS = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})


def _record_call(ctx: FunctionContext, node: ast.Call, target: str | None) -> None:
    """Remember call edges for the call graph (kinds: self, selfattr, name)."""
    f = node.func
    calls = ctx.info.calls
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        calls.append(("self", f.attr))
        return
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and \
            isinstance(f.value.value, ast.Name) and f.value.value.id == "self" and f.attr == "forward":
        calls.append(("selfattr", f.value.attr))
        return
    if target is None:
        return
    if target in COMPILE_FUNCS and node.args:
        _record_root(ctx.mod, node.args[0])
    calls.append(("name", target))


def _record_root(mod: ModuleContext, arg: ast.AST) -> None:
    """`torch.compile(f)`, `torch.compile(Net())`, `torch.export.export(Net(), ...)`."""
    if isinstance(arg, ast.Call):
        arg = arg.func
    name = mod.resolve(arg)
    if name and "." not in name.strip(".") and name in mod.summary.module_names:
        name = mod.summary.module_names[name]
    if name:
        mod.summary.roots.append(name)


def _decorator_name(mod: ModuleContext, d: ast.AST) -> str | None:
    return mod.resolve(d.func if isinstance(d, ast.Call) else d)


class LiveModule:
    """What a worker keeps of one file between rounds: the AST nodes of its functions."""

    def __init__(self, mod: ModuleContext, nodes: dict[str, tuple[ast.AST, ClassInfo | None]]) -> None:
        self.mod = mod
        self.nodes = nodes
        self.walked: set[str] = set()

    def walk(self, qualnames: Iterable[str]) -> None:
        for q in qualnames:
            if q in self.walked or q not in self.nodes:
                continue
            self.walked.add(q)
            node, cls = self.nodes[q]
            ctx = FunctionContext(self.mod, self.mod.summary.functions[q], node, cls)
            Walker(ctx).walk_all(node.body)


def skeleton_module(path: str, tree: ast.Module, lines: list[str], rules: Rules, *,
                    scan_module_code: bool = True) -> tuple[FileSummary, LiveModule]:
    """Names, imports, classes, decorators, `self.x = ...` attributes; compile/export sites."""
    modname = module_name(path)
    summary = FileSummary(path=path, module=modname, lines=lines)
    mod = ModuleContext(summary, tree, rules)
    package = modname if path.endswith("__init__.py") else modname.rpartition(".")[0]
    body = tree.body
    nodes: dict[str, tuple[ast.AST, ClassInfo | None]] = {}
    for st in body:
        _declare_top(mod, st, modname, package)
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _declare_function(mod, st, None, st.name)
            nodes[st.name] = (st, None)
        elif isinstance(st, ast.ClassDef):
            cls = ClassInfo(st.name, [b for b in (mod.resolve(x) for x in st.bases) if b], {}, {})
            summary.classes[st.name] = cls
            for d in (st.decorator_list if scan_module_code else ()):
                _walk_module_level(mod, d)
            for item in st.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    q = f"{st.name}.{item.name}"
                    cls.methods[item.name] = q
                    _declare_function(mod, item, cls, q)
                    if "init" in item.name or "build" in item.name or "setup" in item.name:
                        # submodules are assigned at construction time
                        _scan_self_attrs(mod, cls, item.body)
                    nodes[q] = (item, cls)
                elif scan_module_code and not isinstance(item, ast.ClassDef):
                    _walk_module_level(mod, item)
        elif scan_module_code:
            _walk_module_level(mod, st)
    live = LiveModule(mod, nodes)
    if scan_module_code:
        # Functions that mention compile/export may call torch.compile (roots, PTC4xx rules
        # that apply anywhere): walk them now, whatever the call graph says later.
        marked = [i for i, line in enumerate(lines, 1)
                  if "compile" in line or "export(" in line or "torch.export" in line]
        if marked:
            import bisect
            for q, (node, _) in nodes.items():
                k = bisect.bisect_left(marked, node.lineno)
                if k < len(marked) and marked[k] <= (node.end_lineno or node.lineno):
                    live.walk([q])
    for h in rules.module_handlers:
        h(mod)
    return summary, live


def _scan_self_attrs(mod: ModuleContext, cls: ClassInfo, body: list[ast.stmt]) -> None:
    """`self.x = Ctor(...)` anywhere in a method's statements (not expressions): cheap."""
    for st in body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
            for t in st.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    ctor = mod.resolve(st.value.func)
                    if ctor:
                        cls.attrs.setdefault(t.attr, ctor)
        elif isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            for field in ("body", "orelse", "finalbody"):
                _scan_self_attrs(mod, cls, getattr(st, field, []) or [])
            for h in getattr(st, "handlers", []):
                _scan_self_attrs(mod, cls, h.body)


def _declare_top(mod: ModuleContext, st: ast.stmt, modname: str, package: str) -> None:
    names = mod.summary.module_names
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names[st.name] = f"{modname}.{st.name}"
    elif isinstance(st, ast.Import):
        for a in st.names:
            if a.asname:
                mod.imports[a.asname] = a.name
            else:
                head = a.name.partition(".")[0]
                mod.imports[head] = head
    elif isinstance(st, ast.ImportFrom):
        base = st.module or ""
        if st.level:
            pkg_parts = package.split(".") if package else []
            up = st.level - 1
            pkg_parts = pkg_parts[:len(pkg_parts) - up] if up else pkg_parts
            base = ".".join([p for p in pkg_parts if p] + ([st.module] if st.module else []))
        for a in st.names:
            if a.name != "*":
                mod.imports[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    elif isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
        callee = mod.resolve(st.value.func) or ""
        if callee.endswith(("getLogger", "get_logger")):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    mod.loggers.add(t.id)
    elif isinstance(st, (ast.If, ast.Try)):
        # `try: import x except ImportError: ...` and `if TYPE_CHECKING:` imports
        for sub in st.body + getattr(st, "orelse", []) + [s for h in getattr(st, "handlers", []) for s in h.body]:
            _declare_top(mod, sub, modname, package)


def _declare_function(mod: ModuleContext, node: ast.FunctionDef | ast.AsyncFunctionDef,
                      cls: ClassInfo | None, qualname: str) -> None:
    info = FunctionInfo(qualname, cls.name if cls else None, node.lineno)
    mod.summary.functions[qualname] = info
    # Decorators run when the function is defined, not when it is called: never walked.
    for d in node.decorator_list:
        name = _decorator_name(mod, d)
        if name in DISABLE_FUNCS:
            info.disabled_at = (d.lineno, d.col_offset)
        elif name in COMPILE_FUNCS:
            info.compiled_root = True


def _walk_module_level(mod: ModuleContext, st: ast.AST) -> None:
    """Module-level code is not compiled, but `torch.compile(...)` calls there matter."""
    info = mod.summary.functions.get("<module>")
    if info is None:
        info = mod.summary.functions["<module>"] = FunctionInfo("<module>", None, 1)
    fake = ast.FunctionDef(name="<module>", args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]), body=[],
                           decorator_list=[], lineno=1, col_offset=0)
    ctx = FunctionContext(mod, info, fake, None)
    Walker(ctx).walk(st)
