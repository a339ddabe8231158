"""What names and expressions mean: import resolution and a cheap, local kind inference.

Kinds of values (a cheap, local type inference): `TENSOR` (the result of a torch op or
tensor method: surely a tensor), `PARAM` (a parameter of a function: probably a tensor,
but rules that would be noisy on an int or a config object ignore it), `BOOL_TENSOR`
(a comparison of tensors: a mask), `SIZE` (an int from `x.shape[i]` / `x.size(i)`: a
SymInt under dynamic shapes), `SHAPE` (`x.shape`), `OTHER` (anything else / unknown).

`ModuleContext` resolves names through a file's imports; `FunctionContext` carries the kinds
of the local variables of the function being walked (pt2bot/rules/_walk.py updates them as it
goes) and is what every rule handler receives.
"""
from __future__ import annotations

import ast
import re
from typing import Callable

from pt2bot.rules._model import Candidate, ClassInfo, FileSummary, FunctionInfo, dotted

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
COMPILE_FUNCS = frozenset({"torch.compile", "torch.export.export", "torch.export", "torch._dynamo.optimize",
                           "torch.export.draft_export", "torch._export.aot_compile"})
DISABLE_FUNCS = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})


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
