"""What names and expressions mean: import resolution and a cheap, local kind inference.

Kinds of values (a cheap, local type inference): `TENSOR` (the result of a torch op or
tensor method: surely a tensor), `PARAM` (a parameter of a function: probably a tensor,
but rules that would be noisy on an int or a config object ignore it), `BOOL_TENSOR`
(a comparison of tensors: a mask), `SIZE` (an int from `x.shape[i]` / `x.size(i)`: a
SymInt under dynamic shapes), `SHAPE` (`x.shape`), `TENSORS` (a tuple of tensors:
`x.chunk(3)`, `torch.meshgrid(...)`; its length is not a tensor size), `RESULT` (a tensor a
function of the same file surely returns: its values are tensors, its sizes the helper's),
`OTHER` (anything else / unknown).

What is *not* a tensor matters as much (taking these for tensors made false findings on the
libraries of benchmarks/real_code): string methods that share a name with a tensor method
(`key.split("_")`), a parameter annotated with a union that has a non-tensor member
(`n: int | torch.Tensor`), tensor methods that return Python values (`x.is_floating_point()`,
`x.dim()`), and the sizes of a module's own parameters and buffers (`self.weight.shape[0]`:
fixed per model, not a dynamic dim).

`ModuleContext` resolves names through a file's imports; `FunctionContext` carries the kinds
of the local variables of the function being walked (pt2bot/analysis/walk.py updates them as it
goes) and is what every rule handler receives.
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Iterable

from pt2bot.analysis.model import Candidate, ClassInfo, FileSummary, FunctionInfo
from pt2bot.analysis.numpy_calls import ARRAY_METHODS as _NP_ARRAY_METHODS, FUNCS as _NP_FUNCS
from pt2bot.analysis.torch_modules import is_torch_module_class

TENSOR, PARAM, BOOL_TENSOR, SIZE, SHAPE, OTHER = "tensor", "param", "bool", "size", "shape", "other"
TENSORS = "tensors"        # a tuple/list of tensors (split/chunk/unbind/meshgrid results)
SCALAR = "scalar"          # a Python number read from a tensor's data (`.item()`, `int(t)`, `.tolist()[i]`)
SCALARS = "scalars"        # `.tolist()`: a list of such numbers
WEAK_BOOL = "weakbool"     # a comparison involving a PARAM: a mask if the parameter is a tensor
SIZES = "sizes"            # a list/tuple literal of sizes (`heights = [h]`): its elements are sizes
SIZE_BOOL = "sizebool"     # an ordering comparison of a size (`h > 4`, a helper returning one): a guard
# A numpy array made in compiled code: dynamo traces numpy into torch ops, so it is a tensor
# there (pt2bot/analysis/numpy_calls.py); kept apart from TENSOR, whose rules speak of tensors.
NDARRAY = "ndarray"
# A number from Python's `random` that dynamo traces: `random.randint` / `random.randrange`, and
# `random`, `uniform`, `randint`, `randrange` of a `random.Random(seed)` object (RNG). Measured on
# torch 2.13: dynamo draws it before the graph runs and passes it in as a graph input, so a
# branch on it (`if i > rng.randrange(n):`) is data-dependent branching (GB0170), as on a tensor.
RANDOM = "random"
RNG = "rng"
_RANDOM_FUNCS = frozenset({"random.randint", "random.randrange"})
_RNG_METHODS = frozenset({"random", "uniform", "randint", "randrange"})
TENSORISH = (TENSOR, BOOL_TENSOR)
# A tensor a function of this file returns (`b = one()`, `pid, probs, idx = self.get_params(n)`,
# ModuleContext.helper_return_kind): surely a tensor, so what is computed from its values is one
# (`probs[i] <= p`, `b.sum()`, the elements of `for i in idx`), but its sizes are the helper's
# business, as a module's own buffer's are: torchvision's get_params returns `torch.randperm(4)`,
# and iterating that specialises nothing. So its `.shape`, `.size()` and `len()` are no sizes, and
# it is kept out of TENSORISH, which rules test for claims on the value itself (iteration, truth).
RESULT = "result"


# Dotted names that are no function or class of a checked tree (what `Ext` need not consider).
_NOT_TREE = ("torch.", "numpy.", "math.", "functools.", "typing.", "collections.", "itertools.", "os.",
             "warnings.", "logging.", "random.", "builtins.")


class Ext(str):
    """OTHER, as every rule and kind rule sees it (it *is* the string "other"), that would be a
    tensor if a fact of another file holds: the result of a call the call graph resolves to a
    function or method (not a module's forward) of another file (`need` = `("call", position,
    edge kind, edge target, element or None)`), or a tensor attribute of a submodule whose
    class is in another file (`("attr", class, attribute)`). A file is analysed alone and
    cached alone (pt2bot/static/files.py), so the walk cannot know those facts: a rule that
    finds nothing where such a value was read is run again assuming them
    (`FunctionContext.assuming`: a call's result is then RESULT, a tensor of a helper, as for a
    function of the same file), and what it reports then carries the needs (`Candidate.ext`),
    kept at the emit stage if they hold (pt2bot/analysis/graph.py `CrossFile`)."""

    need: tuple

    def __new__(cls, need: tuple) -> "Ext":
        self = str.__new__(cls, OTHER)
        self.need = need
        return self

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
index_select scatter scatter_add roll masked_scatter logical_and logical_or logical_not
cross dot outer einsum baddbmm new_zeros new_ones new_full new_empty new_tensor zeros_like ones_like
""".split())
# Methods that split a tensor into a tuple of tensors (kind TENSORS), and the torch functions
# that return one. `split` is also a `str` method: `key.split("_")` is a list of strings.
SEQ_METHODS = frozenset({"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit"})
SEQ_FUNCS = frozenset({"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "meshgrid",
                       "broadcast_tensors"})
# Tensor methods (and torch functions) that return a tuple of tensors, `values, indices =
# scores.topk(k)`: unpacked, each element is a tensor. `max`/`min`/`median`/`nanmedian` only
# with a dim (`x.max(dim=1)`; `x.max()` is one tensor, `torch.max(a, b)` elementwise).
TUPLE_METHODS = frozenset({"topk", "sort", "kthvalue", "mode", "aminmax", "cummax", "cummin", "frexp", "slogdet"})
TUPLE_FUNCS = TUPLE_METHODS | {"std_mean", "var_mean"}
_TUPLE_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})
# Tensor methods that return Python values (bools, ints, strings), not tensors: a branch on
# `x.is_floating_point()` is on a static property of the tensor, and dynamo does not break.
_NOT_TENSOR_METHODS = frozenset({
    "item", "tolist", "numpy", "dim", "numel", "nelement", "ndimension", "size", "element_size",
    "is_contiguous", "data_ptr", "get_device", "stride", "storage_offset", "untyped_storage",
    "storage", "has_names", "equal", "allclose", "__len__", "is_floating_point", "is_complex",
    "is_signed", "is_nonzero", "is_same_size", "is_set_to", "is_pinned", "is_shared", "is_inference",
    "is_coalesced", "is_conj", "is_neg", "dim_order", "register_hook",
})
# Methods that keep a mask a mask (a bool tensor viewed, moved or copied is still a bool tensor).
_BOOL_KEEPING = frozenset({
    "reshape", "view", "flatten", "unflatten", "unsqueeze", "squeeze", "transpose", "permute", "expand",
    "expand_as", "contiguous", "clone", "detach", "t", "flip", "repeat", "narrow", "cpu", "cuda", "roll",
    "movedim", "view_as", "reshape_as", "broadcast_to", "tril", "triu", "swapaxes",
})
# Names on both tensors and Python containers/strings: not evidence of a tensor receiver.
_AMBIGUOUS_METHODS = frozenset({"split", "sort", "index", "count", "copy", "pop", "clear", "remove",
                                "insert", "extend", "append", "reverse", "update", "get", "keys",
                                "values", "items", "format", "join", "strip", "replace", "lower", "upper"})
_BOOL_FUNCS = frozenset({"any", "all", "isnan", "isinf", "isfinite", "eq", "ne", "lt", "le", "gt", "ge",
                         "logical_and", "logical_or", "logical_not", "logical_xor", "isin", "isclose",
                         "isneginf", "isposinf", "isreal", "signbit", "greater", "less", "greater_equal",
                         "less_equal", "not_equal"})
SIZE_METHODS = frozenset({"size"})
RANK_METHODS = frozenset({"dim", "ndimension"})
_BOOL_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                           "logical_not", "isnan", "isinf", "isfinite", "bool"})

# Names that, in `if NAME():` / `if not NAME():`, mean "only while (not) compiling": code under
# the eager branch is not compiled code and must not be reported.
_COMPILING_CHECKS = frozenset({
    "torch.compiler.is_compiling", "torch._dynamo.is_compiling", "torch.compiler.is_dynamo_compiling",
    "torch._dynamo.external_utils.is_compiling",
})
_COMPILING_SUFFIXES = ("is_torchdynamo_compiling", "is_compiling", "is_dynamo_compiling")
# `torch.compiler.is_exporting()` is true under torch.export only: under torch.compile its
# `else` branch is the compiled one, so it decides nothing here (both branches are compiled).
# TorchScript / jit-trace / FX checks are *False* under dynamo (measured on torch 2.13: the code
# under `if not torch.jit.is_scripting():` is compiled and its `.item()` breaks the graph), so
# their branches count the other way round: the body of `if torch.jit.is_tracing():` is not
# compiled by dynamo, what follows it is.
_NOT_DYNAMO_CHECKS = frozenset({"torch.jit.is_scripting", "torch.jit.is_tracing",
                                "torch.fx._symbolic_trace.is_fx_tracing"})
# `torchvision._is_tracing()` (torch._C._get_tracing_state(): falsy under dynamo, measured on
# torch 2.13) guards torchvision's ONNX-export code paths.
_NOT_DYNAMO_SUFFIXES = ("is_scripting", "is_tracing", "is_fx_tracing", "_is_tracing")
COMPILE_FUNCS = frozenset({"torch.compile", "torch.export.export", "torch.export", "torch._dynamo.optimize",
                           "torch.export.draft_export", "torch._export.aot_compile"})
DISABLE_FUNCS = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})


class Rules:
    """The node-type dispatch table built from the registry (see pt2bot.rules)."""

    def __init__(self, handlers: dict[type, list[Callable[["FunctionContext", ast.AST], None]]],
                 module_handlers: list[Callable[["ModuleContext"], None]],
                 call_keys: list[frozenset[str] | None] | None = None) -> None:
        self.handlers = handlers
        self.module_handlers = module_handlers
        # `handlers[ast.Call]` in rule order, each with its `Rule.call_keys`; `call_handlers`
        # answers which of them a call with given keys needs (memoised: few distinct keys).
        calls = handlers.get(ast.Call, [])
        self.call_keys = list(call_keys) if call_keys is not None else [None] * len(calls)
        self._calls = list(zip(calls, self.call_keys))
        self._by_key: dict[tuple[str | None, str | None], tuple] = {}
        self.has_call_handlers = bool(calls)
        # node type -> what the walk does there (pt2bot/analysis/walk.py `_plan`), filled as it goes
        self.plans: dict[type, tuple] = {}
        # no rule looks at attributes: `self.x` / `x.shape` need no visit of their own
        self.attr_leaf = ast.Attribute not in handlers

    def call_handlers(self, key: str | None, target: str | None) -> tuple:
        k = (key, target)
        hit = self._by_key.get(k)
        if hit is None:
            hit = self._by_key[k] = tuple(h for h, keys in self._calls
                                          if keys is None or key in keys or target in keys)
        return hit


def call_key(f: ast.AST) -> str | None:
    """The key of a call's `func` that `Rule.call_keys` names (see there)."""
    t = type(f)
    if t is ast.Attribute:
        return "." + f.attr
    if t is ast.Name:
        return f.id
    if t is ast.Call:
        return "()"
    return None


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
        t = type(node)
        if t is _Name:       # `dotted` and the split of its result, inlined (called at every call)
            head = node.id
            rest = None
        elif t is _Attribute:
            v = node.value
            if type(v) is _Name:
                head, rest = v.id, node.attr
            else:
                parts = [node.attr]
                while type(v) is _Attribute:
                    parts.append(v.attr)
                    v = v.value
                if type(v) is not _Name:
                    return None
                head = v.id
                rest = ".".join(reversed(parts))
        else:
            return None
        target = self.imports.get(head)
        if target is None:
            target = self.summary.module_names.get(head)
            if target is None:
                return head if rest is None else f"{head}.{rest}"
        return target if rest is None else f"{target}.{rest}"

    def tensor_attrs(self, cls: ClassInfo) -> frozenset[str]:
        """Attributes of `cls` that hold tensors (`class_tensor_attrs`), memoised per class."""
        memo = self.__dict__.setdefault("_tensor_attrs", {})
        hit = memo.get(cls.name)
        if hit is not None:
            return hit
        hit = memo[cls.name] = class_tensor_attrs(cls)
        return hit

    def helper_return_kind(self, name: str, sized: tuple[tuple[int | str, str], ...]) -> str | None:
        """What the module-level function `name` of this file returns when the parameters in
        `sized` (position or name -> SIZE/SIZES) hold sizes: SIZE (size arithmetic), SIZE_BOOL
        (an ordering comparison of one, also as an operand of `and`/`or`), else None. Straight
        through the helper's assignments; memoised per (name, sized); recursion gives None.

        With no `sized`, the tensor kind it surely returns whatever its arguments (`name` may
        then be a method's qualname, "Cls.meth", see `method_qualname`): RESULT (a tensor) /
        BOOL_TENSOR / TENSORS when every return says so, else None; for a tuple literal the
        tuple is None and its elements' kinds are kept for `helper_return_elts`
        (`_tensor_return`)."""
        memo = self.__dict__.setdefault("_helper_kinds", {})
        key = (name, sized)
        if key in memo:
            return memo[key]
        memo[key] = None
        if not sized:
            out, elts = self._tensor_return(name)
            memo[key] = out
            if elts is not None:
                self.__dict__.setdefault("_helper_elts", {})[name] = elts
            return out
        hit = self.defs().get(name)
        if hit is None or hit[1] is not None:
            return None          # sizes are passed to module-level functions only
        node = hit[0]
        info = self.summary.functions.get(name) or FunctionInfo(name, None, node.lineno)
        sub = FunctionContext(self, info, node, None)
        params = list(node.args.posonlyargs) + list(node.args.args)
        names = {p.arg for p in params} | {p.arg for p in node.args.kwonlyargs}
        for where, k in sized:
            if isinstance(where, int):
                if where < len(params):
                    sub.env[params[where].arg] = k
            elif where in names:
                sub.env[where] = k
        out = None
        for st in _returns(node.body):
            t = type(st)
            if t is ast.Assign:
                k = sub.kind(st.value)
                for tg in st.targets:
                    sub.assign(tg, k, st.value)
            elif t is ast.AnnAssign and st.value is not None:
                sub.assign(st.target, sub.kind(st.value), st.value)
            elif t is ast.AugAssign and type(st.target) is ast.Name:
                sub.env[st.target.id] = sub.kind(ast.BinOp(left=st.target, op=st.op, right=st.value))
            elif t is ast.Return and st.value is not None:
                v = st.value
                parts = v.values if type(v) is ast.BoolOp else [v]
                kinds = {sub.kind(p) for p in parts}
                k = SIZE_BOOL if SIZE_BOOL in kinds else SIZE if type(v) is not ast.BoolOp and SIZE in kinds \
                    else None
                if k is not None:
                    out = k
                    break
        memo[key] = out
        return out

    def helper_return_elts(self, name: str) -> tuple[str, ...] | None:
        """The element kinds of the tuple literal every return of `name` builds (see above)."""
        self.helper_return_kind(name, ())
        return self.__dict__.get("_helper_elts", {}).get(name)

    def defs(self) -> dict[str, tuple[ast.AST, ClassInfo | None]]:
        """qualname -> (def node, its class) of the file's functions and methods (memoised)."""
        out = self.__dict__.get("_defs")
        if out is None:
            out = self.__dict__["_defs"] = _function_defs(self)
        return out

    def local_forward(self, ctor: str) -> str | None:
        """The qualname of `forward` of the class `ctor` names, where that class is of this
        file (`Block` or `<module>.Block`) and defines `forward` itself or through a base of
        this file; None otherwise."""
        module, _, name = ctor.rpartition(".")
        info = self.summary.classes.get(name) if module in ("", self.summary.module) else None
        return self.method_qualname(info, "forward") if info is not None else None

    def method_qualname(self, cls: ClassInfo, name: str) -> str | None:
        """The qualname `self.name(...)` calls in a method of `cls`: the method of `cls` or of a
        base class of this file, searched in order; None where a base of another file comes
        first (it may define `name`), or where a class of this file deriving from `cls`
        overrides it (`self` may be one of those). Memoised per (class, name)."""
        memo = self.__dict__.setdefault("_method_quals", {})
        key = (cls.name, name)
        if key in memo:
            return memo[key]
        memo[key] = None
        classes = self.summary.classes
        local = self.__dict__.get("_local_classes")
        if local is None:
            local = self.__dict__["_local_classes"] = {f"{self.summary.module}.{c}": c for c in classes}
        found: str | None = None
        todo, seen = [cls.name], set()
        while todo:
            c = todo.pop(0)
            if c in seen:
                continue
            seen.add(c)
            info = classes[c]
            if name in info.methods:
                found = info.methods[name]
                break
            for b in info.bases:
                if b in local:
                    todo.append(local[b])
                elif b not in ("object", "builtins.object") and not is_torch_module_class(b):
                    todo = []   # a base of another file may define it
                    break
        if found is not None:
            subs = self.__dict__.get("_subclasses")
            if subs is None:
                subs = self.__dict__["_subclasses"] = _local_subclasses(classes, local)
            if any(name in classes[d].methods for d in subs.get(cls.name, ())):
                found = None
        memo[key] = found
        return found

    def _tensor_return(self, qualname: str) -> tuple[str | None, tuple[str, ...] | None]:
        """The tensor kind a function of this file surely returns, and its tuple's element
        kinds: see helper_return_kind. Conservative (measured with dynamo on torch 2.13: a
        branch on such a result breaks the caller's graph, tests/fixtures/rules/
        ptc201_helper_return.py), so any doubt gives None: a decorator that may change the
        result, a generator or coroutine, a bare `return`, falling off the end, a return of
        anything not surely a tensor. Names keep one kind only while every assignment that may
        run agrees (`b = None` then `if p: b = torch.rand(1)` is not a tensor)."""
        hit = self.defs().get(qualname)
        if hit is None:
            return None, None
        node, cls = hit
        if type(node) is not ast.FunctionDef or not ends(node.body) or \
                any((self.resolve(d.func if type(d) is ast.Call else d) or "") not in _SAME_RESULT_DECORATORS
                    for d in node.decorator_list):
            return None, None
        poisoned: set[str] = set()
        if not _scan_body(node.body, poisoned):
            return None, None
        # a generator, a coroutine or `:=` (not followed): by the source text, cheaper than
        # walking every expression of the helper (the lines are there while functions are
        # walked, pt2bot/static/files.py; without them, no answer)
        lines = self.summary.lines
        if not lines:
            return None, None
        text = "\n".join(lines[node.lineno - 1:node.end_lineno or node.lineno])
        if "yield" in text or "await" in text or ":=" in text:
            return None, None
        info = self.summary.functions.get(qualname) or FunctionInfo(qualname, cls.name if cls else None,
                                                                    node.lineno)
        sub = FunctionContext(self, info, node, cls)
        for n in poisoned:
            sub.env[n] = OTHER
        rets: list[str | tuple[str, ...]] = []
        _join_walk(sub, node.body, False, poisoned, rets)
        if not rets:
            return None, None
        if all(type(r) is tuple for r in rets):
            n = len(rets[0])
            if n == 0 or any(len(r) != n for r in rets):
                return None, None
            elts = tuple(_join_returns([r[i] for r in rets]) for i in range(n))
            # the tuple itself stays OTHER: only unpacking it gives each name its element's kind
            return None, (elts if any(k != OTHER for k in elts) else None)
        if any(type(r) is tuple for r in rets):
            return None, None
        k = _join_returns(rets)     # type: ignore[arg-type]
        if k == OTHER and all(r == TENSORS for r in rets):
            k = TENSORS
        return (k if k != OTHER else None), None

    def report(self, rule: str, node: ast.AST, message: str, function: str, scope: str,
               suggestion: str | None = None, gb: str | None = None,
               needs: tuple[int | None, str, int | None, str] | None = None,
               condition: str | None = None) -> None:
        self.summary.candidates.append(Candidate(
            rule, node.lineno, node.col_offset, getattr(node, "end_lineno", None),
            getattr(node, "end_col_offset", None), message, function, scope, suggestion, gb,
            condition=condition, needs=needs))


_PARAMETER_CTORS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                              "torch.nn.parameter.Buffer", "torch.Tensor"})


def _is_tensor_func(fname: str) -> bool:
    """A function of a torch namespace that returns a tensor (`zeros`, `relu`; not `is_grad_enabled`)."""
    return bool(fname) and fname[0].islower() and fname not in _NOT_TENSOR_FUNCS \
        and not fname.startswith(("is_", "get_", "set_", "are_", "_"))


def is_tensor_ctor(ctor: str) -> bool:
    """`torch.zeros`, `torch.tensor`, `nn.Parameter`, ...: a call that returns a tensor."""
    if ctor in _PARAMETER_CTORS:
        return True
    ns, _, fname = ctor.rpartition(".")
    return ns in _TENSOR_NAMESPACES and _is_tensor_func(fname)


def class_tensor_attrs(cls: ClassInfo) -> frozenset[str]:
    """Attributes a class itself stores tensors in: registered buffers and parameters
    (`ClassInfo.registered`) and `self.x = nn.Parameter(...)` / `torch.zeros(...)` in its
    methods (`ClassInfo.attrs`), less the flags off by default. From the summary alone, so the
    emit stage asks it of a class of another file too (pt2bot/analysis/graph.py)."""
    out = {a for a, ctor in cls.attrs.items() if is_tensor_ctor(ctor)}
    out.update(getattr(cls, "registered", ()) or ())
    return frozenset(out - set(getattr(cls, "off_flags", ()) or ()))


def registered_name(e: ast.AST) -> str | None:
    """"name" of `self.register_buffer("name", value)` / `self.register_parameter("name", value)`
    (not a None value): pt2bot/analysis/walk.py collects them in `ClassInfo.registered`."""
    if type(e) is not _Call:
        return None
    f = e.func
    args = e.args
    if type(f) is _Attribute and f.attr in ("register_buffer", "register_parameter") \
            and type(f.value) is _Name and f.value.id == "self" and len(args) >= 2 \
            and type(args[0]) is ast.Constant and type(args[0].value) is str \
            and not (type(args[1]) is ast.Constant and args[1].value is None):
        return args[0].value
    return None


_STR_ONLY_METHODS = frozenset({"rsplit", "splitlines", "partition", "rpartition", "strip", "lstrip",
                               "rstrip", "lower", "upper", "startswith", "endswith", "format", "join"})


def _is_bool_dtype(mod: "ModuleContext", e: ast.Call) -> bool:
    """`dtype=torch.bool` as a keyword, or `.to(torch.bool)` / `.type(torch.bool)`."""
    for k in e.keywords:
        if k.arg == "dtype" and mod.resolve(k.value) == "torch.bool":
            return True
    f = e.func
    return isinstance(f, ast.Attribute) and f.attr in ("to", "type") and len(e.args) == 1 \
        and mod.resolve(e.args[0]) == "torch.bool"


def _bool_filled(fname: str, e: ast.Call) -> bool:
    """`torch.tensor(True)`, `torch.tensor([True, False])`, `torch.full(size, False)`: a bool
    tensor by its data (torch infers the dtype from a Python bool)."""
    i = {"tensor": 0, "as_tensor": 0, "full": 1, "full_like": 1}.get(fname)
    if i is None or len(e.args) <= i or any(k.arg == "dtype" for k in e.keywords):
        return False
    v = e.args[i]
    vals = v.elts if isinstance(v, (ast.List, ast.Tuple)) and fname in ("tensor", "as_tensor") else [v]
    return bool(vals) and all(isinstance(x, ast.Constant) and type(x.value) is bool for x in vals)


# Methods of tensors returning bool tensors that Python numbers, containers and numpy arrays lack:
# on a receiver of unknown kind they still make a mask (x-transformers' boundaries).
_TENSOR_ONLY_BOOL_METHODS = frozenset({"bool", "logical_not", "logical_and", "logical_or", "logical_xor",
                                       "isnan", "isinf", "isfinite", "isneginf", "isposinf", "signbit"})


CONTAINERS = frozenset({"List", "list", "Tuple", "tuple", "Dict", "dict", "Sequence", "Iterable",
                        "Mapping", "Set", "set"})


def _union_members(ann: ast.AST) -> list[ast.AST]:
    """`int | Tensor`, `Union[int, Tensor]`, `Optional[Tensor]` (None dropped), `"int | Tensor"`."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return [ann]
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _union_members(ann.left) + _union_members(ann.right)
    if isinstance(ann, ast.Subscript):
        head = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", None)
        if head in ("Union", "Optional"):
            inner = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            return [m for x in inner for m in _union_members(x)]
    if isinstance(ann, ast.Constant) and ann.value is None:
        return []
    return [ann]


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


def _held_name(f: ast.AST) -> str | None:
    """`x` of `self.x`, `x.y` of `self.x.y` (the keys of `ClassInfo.attrs`), else None."""
    if type(f) is not _Attribute:
        return None
    v = f.value
    if type(v) is _Name:
        return f.attr if v.id == "self" else None
    if type(v) is _Attribute and type(v.value) is _Name and v.value.id == "self":
        return f"{v.attr}.{f.attr}"
    return None


def annotation_kind(ann: ast.AST) -> str:
    """TENSOR for an annotation every member of whose union names a single tensor
    (`torch.Tensor`, `Float[Tensor, "b t"]`, `Tensor | None`), PARAM where only some do (`int |
    torch.Tensor`: callers may pass either), OTHER where none does (a container of tensors is
    no tensor)."""
    tensors = 0
    members = _union_members(ann)
    for m in members:
        words = _annotation_words(m)
        if "Tensor" in words and not words & CONTAINERS:
            tensors += 1
    if not tensors:
        return OTHER
    return TENSOR if tensors == len(members) else PARAM


# where an annotation that names no tensor in its own words cannot be another file's alias of
# one: the standard library's and torch's types
_NO_ALIAS_ROOTS = frozenset({"torch", "typing", "typing_extensions", "numpy", "collections", "builtins",
                             "enum", "dataclasses", "pathlib", "os", "abc", "types", "functools"})


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
        self.script_only = 0         # the part of eager_only that is `torch.jit.is_scripting()` branches
        # >0 in what is evaluated only on failure or later: a `raise`, an assert's message, a
        # lambda's body (pt2bot/rules/size_specialised.py: an f-string there costs nothing)
        self.message_only = 0
        # >0 in the part of a generator expression its generator evaluates (all but the first
        # iterable): dynamo cannot resume there after a graph break (pt2bot/rules/tensor_item.py)
        self.in_generator = 0
        self.call_target: str | None = None   # resolved callee of the Call being visited
        # how many times an `Ext` value was read (the walker runs a rule again, assuming the
        # facts of other files, when this moved during a rule that reported nothing), and,
        # while it does, the needs assumed (None: not assuming)
        self.ext_n = 0
        self.assuming: list[tuple] | None = None
        self._declare_params(node.args, is_method=cls is not None)

    # -- parameters -------------------------------------------------------------------------
    def _declare_params(self, args: ast.arguments, *, is_method: bool) -> None:
        env = self.env
        positional = args.posonlyargs + args.args if args.posonlyargs else args.args
        defaults = args.defaults
        first = len(positional) - len(defaults)     # the first positional with a default
        param_kind = self._param_kind
        for i, a in enumerate(positional):
            if is_method and i == 0 and a.arg in ("self", "cls"):
                continue
            env[a.arg] = param_kind(a, defaults[i - first] if i >= first else None)
        for j, (a, default) in enumerate(zip(args.kwonlyargs, args.kw_defaults)):
            if is_method and j == 0 and not positional and a.arg in ("self", "cls"):   # `def f(*, self)`
                continue
            env[a.arg] = param_kind(a, default)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                env[a.arg] = OTHER

    def _param_kind(self, a: ast.arg, default: ast.expr | None) -> str:
        ann = a.annotation
        if ann is not None:
            t = type(ann)
            # the common annotations (`int`, `torch.Tensor`), as the general case below decides them
            if t is _Name:
                if ann.id == "Tensor" or ann.id in self.mod.summary.tensor_aliases:
                    return TENSOR
                return self._alias(ann)
            if t is _Attribute and type(ann.value) is _Name:
                words = (ann.attr, ann.value.id)
                if "Tensor" in words:
                    return TENSOR if words[0] not in CONTAINERS and words[1] not in CONTAINERS else OTHER
                return self._alias(ann)
            # `int | torch.Tensor`: callers may pass either; not *surely* a tensor
            return annotation_kind(ann)
        if isinstance(default, ast.Constant) and default.value is not None:
            return OTHER            # `flag=False`, `n=3`, `mode="x"`: not a tensor
        if isinstance(default, (ast.List, ast.Tuple, ast.Dict, ast.Lambda)):
            return OTHER
        return PARAM

    def _alias(self, ann: ast.Name | ast.Attribute) -> str:
        """A parameter annotated with a name another file of the tree may bind to a tensor
        annotation (recurrentgemma's `reset: at.Reset`, `at` its array_typing module): OTHER
        that is a tensor if that file says so (`Ext`); OTHER for a name of this file or of the
        standard library's and torch's modules."""
        head = ann.id if type(ann) is _Name else ann.value.id
        target = self.mod.resolve(ann)
        if head not in self.mod.imports or target is None or target.partition(".")[0] in _NO_ALIAS_ROOTS:
            return OTHER
        return Ext(("alias", target))

    # -- kinds ------------------------------------------------------------------------------
    def kind(self, e: ast.AST) -> str:
        t = type(e)
        if t is _Name:
            k = self.env.get(e.id, OTHER)
            if type(k) is not Ext:
                return k
            # (an annotation's alias is a parameter's tensor; a call's result, a helper's)
            return self.ext(k, TENSOR if k.need[0] == "alias" else RESULT)
        if t is _Call:
            return self._call_kind(e)
        if t is _Attribute:
            if e.attr == "shape":
                # the shape of a module's own parameter or buffer is fixed per model
                if self.self_tensor_attr(e.value):
                    return OTHER
                return SHAPE if self.kind(e.value) in (TENSOR, PARAM, BOOL_TENSOR) else OTHER
            if e.attr in ("T", "mT", "real", "imag", "data", "grad"):
                k = self.kind(e.value)
                if k == RESULT:
                    return RESULT
                return (BOOL_TENSOR if k == BOOL_TENSOR and e.attr in ("T", "mT", "data") else TENSOR) \
                    if k in TENSORISH else OTHER
            # `self.buf` stays OTHER here even when it is a registered buffer: what is computed
            # from it (`self.times.repeat(b, 1).shape[1]`) has sizes fixed per model that this
            # inference cannot tell from input sizes. Truth-value uses of the buffer itself are
            # found by `self_tensor_attr` (pt2bot/analysis/queries.py).
            return OTHER
        if t is ast.Subscript:
            base = self.kind(e.value)
            if base == SHAPE:
                return SIZE if not isinstance(e.slice, ast.Slice) else SHAPE
            if base == SIZES:
                return SIZE if not isinstance(e.slice, ast.Slice) else SIZES
            if base == BOOL_TENSOR:
                return BOOL_TENSOR
            if base in TENSORISH or base == RESULT:
                return TENSOR
            if base == PARAM:
                s = e.slice
                if type(s) is ast.Tuple and any(type(x) is ast.Slice or type(x) is ast.Constant and
                                                (x.value is None or x.value is Ellipsis) for x in s.elts):
                    # `x[:, 1:]`, `x[..., 0]`, `x[:, None]`: Python's sequences and mappings take
                    # no tuple of slices, so `x` is a tensor (or an array, a tensor once traced)
                    return TENSOR
                # an element or slice of a probable tensor (not `cfg["key"]`)
                return OTHER if isinstance(s, ast.Constant) and isinstance(s.value, str) else PARAM
            if base == TENSORS:
                return TENSORS if isinstance(e.slice, ast.Slice) else TENSOR
            if base == SCALARS:
                return SCALARS if isinstance(e.slice, ast.Slice) else SCALAR
            return NDARRAY if base == NDARRAY else OTHER
        if t is ast.BinOp:
            l, r = self.kind(e.left), self.kind(e.right)
            if WEAK_BOOL in (l, r) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) \
                    and not ({l, r} & {TENSOR, BOOL_TENSOR}):
                return WEAK_BOOL
            if TENSOR in (l, r) or BOOL_TENSOR in (l, r):
                if isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and BOOL_TENSOR in (l, r):
                    return BOOL_TENSOR
                return TENSOR
            if RESULT in (l, r):
                return RESULT       # `idx + 1`, `probs * 2`: a helper's tensor, its sizes kept
            if PARAM in (l, r) and not isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
                return PARAM        # `x + 1` of a parameter: still probably a tensor
            if SCALAR in (l, r) and l in (SCALAR, SIZE, OTHER) and r in (SCALAR, SIZE, OTHER):
                return SCALAR       # arithmetic on a number read from a tensor
            if SIZE in (l, r) and l in (SIZE, OTHER) and r in (SIZE, OTHER):
                return SIZE if self._is_intlike(e.left, l) and self._is_intlike(e.right, r) else OTHER
            return NDARRAY if NDARRAY in (l, r) else OTHER
        if t is ast.UnaryOp:
            k = self.kind(e.operand)
            if isinstance(e.op, ast.Invert) and k in (BOOL_TENSOR, WEAK_BOOL):
                return k
            if isinstance(e.op, ast.Not):
                return OTHER
            return k if k in (TENSOR, SIZE, SCALAR, NDARRAY, RESULT) else OTHER
        if t is ast.Tuple or t is ast.List:
            # `heights = [h]`, `(h // 2, w // 2)`: every element a size (not `[h, 3]`: an
            # element picked from it may be the constant)
            return SIZES if e.elts and all(self.kind(x) == SIZE for x in e.elts) else OTHER
        if t is ast.Compare:
            for o in e.ops:     # (loops, not `any` over a generator: every comparison comes here)
                if type(o) in _MEMBERSHIP_OPS:
                    return OTHER
            operands = [e.left, *e.comparators]
            # a tensor is never compared with a string: `kind == "norm"` is about a str
            for o in operands:
                if type(o) is ast.Constant and isinstance(o.value, (str, bytes)):
                    return OTHER
            kinds = [self.kind(o) for o in operands]
            if any(k in TENSORISH or k == RESULT for k in kinds):
                return BOOL_TENSOR
            if any(k in (PARAM, WEAK_BOOL) for k in kinds):
                return WEAK_BOOL
            if SIZE in kinds and is_size_order_compare(e):
                return SIZE_BOOL    # `ok = h > 4`: a Python branch on `ok` guards on the size
            return NDARRAY if NDARRAY in kinds else RANDOM if RANDOM in kinds else OTHER
        return OTHER

    def ext(self, k: Ext, kind: str = RESULT) -> str:
        """An `Ext` value read: itself (OTHER), counted; while assuming, `kind` (a call's result:
        RESULT) with its need noted."""
        if self.assuming is None:
            self.ext_n += 1
            return k
        self.assuming.append(k.need)
        return kind

    def self_tensor_attr(self, e: ast.AST) -> bool:
        """`self.name` where the class registers `name` as a buffer/parameter or assigns it a
        tensor; `self.sub.name` where the submodule's class does (a class of another file:
        while assuming, see `Ext`)."""
        if type(e) is not _Attribute or self.cls is None:
            return False
        v = e.value
        tv = type(v)
        if tv is _Name:
            return v.id == "self" and e.attr in self.mod.tensor_attrs(self.cls)
        if tv is _Attribute and type(v.value) is _Name and v.value.id == "self":
            return self._sub_tensor_attr(v.attr, e.attr)
        return False

    def _sub_tensor_attr(self, sub: str, attr: str) -> bool:
        """Whether submodule `self.<sub>` stores a tensor in `attr` (`self.quantizer.codebook`)."""
        ctor = self.cls.attrs.get(sub)
        if not ctor or ctor.startswith(_NOT_TREE) or "." not in ctor or is_torch_module_class(ctor):
            return False
        mod = self.mod
        local = mod.summary.classes.get(ctor[len(mod.summary.module) + 1:]) \
            if ctor.startswith(mod.summary.module + ".") else None
        if local is not None:
            return attr in mod.tensor_attrs(local)
        if self.assuming is None:
            self.ext_n += 1
            return False
        self.assuming.append(("attr", ctor, attr))
        return True

    def _is_intlike(self, e: ast.AST, k: str | None = None) -> bool:
        """An operand of size arithmetic that keeps the result a size: a size, a number, or a
        value of unknown kind that is not surely something else (`h // PS` with `PS: int`,
        `n * _elem_bytes(dtype)`). Not a str/sequence (`"-" * n`, `[0] * n`) and not a module's
        own tensor (`n * self.scale` is a tensor)."""
        t = type(e)
        if t is ast.Constant:
            return type(e.value) in (int, float)
        if t in (ast.List, ast.Tuple, ast.ListComp, ast.JoinedStr, ast.Dict, ast.Set, ast.Lambda):
            return False
        k = self.kind(e) if k is None else k
        return k == SIZE or (k == OTHER and not self.self_tensor_attr(e))

    def _call_kind(self, e: ast.Call) -> str:
        f = e.func
        if type(f) is _Attribute:
            v = f.value
            if type(v) is _Name:        # `kind`, inlined
                recv = self.env.get(v.id, OTHER)
                if type(recv) is Ext:
                    recv = self.ext(recv)
            else:
                recv = self.kind(v)
            name = f.attr
            if name == "item" and not e.args and not e.keywords:
                return SCALAR       # `x.sum().item()`: a Python number read from the data
            if name == "tolist" and not e.args and recv in (TENSOR, PARAM, BOOL_TENSOR):
                return SCALARS
            if recv == NDARRAY:
                return NDARRAY if name in _NP_ARRAY_METHODS else OTHER
            if recv == RNG:
                return RANDOM if name in _RNG_METHODS else OTHER
            if recv == RESULT:
                if name in SIZE_METHODS or name in ("numel", "nelement"):
                    return OTHER    # a helper's tensor: its sizes are the helper's (see RESULT)
                recv = TENSOR       # `b.sum()`, `scores.argmax()`: tensors computed from its values
            if recv == WEAK_BOOL:
                if name in _BOOL_KEEPING:
                    return WEAK_BOOL    # `(x > 0).reshape(-1)`: still a mask if x is a tensor
                recv = PARAM
            if name == "split" and (not e.args or isinstance(e.args[0], ast.Constant) and
                                    isinstance(e.args[0].value, str)) or name in _STR_ONLY_METHODS:
                return OTHER        # str.split(): a list of strings, whatever the receiver looked like
            if recv == OTHER and name not in _AMBIGUOUS_METHODS and \
                    (type(f.value) is ast.Compare and self.is_tensor_compare(f.value) or
                     type(f.value) is ast.BinOp and not isinstance(f.value.op, ast.Mod)):
                # `(a != b).any()`, `(old - new).abs()`: Python bools and numbers have no such
                # methods, so the operands were tensors even if their kinds are unknown
                if name in TENSOR_METHODS or name in _BOOL_METHODS or name in ("any", "all"):
                    recv = BOOL_TENSOR if type(f.value) is ast.Compare else TENSOR
            if recv == OTHER and (name in ("any", "all") or name in _BOOL_METHODS and name != "bool") \
                    and self.self_tensor_attr(f.value):
                return BOOL_TENSOR      # `self.mask.any()`; other results of a buffer stay OTHER (see kind)
            if recv == OTHER and name in _TENSOR_ONLY_BOOL_METHODS and not e.keywords and \
                    not (type(f.value) is ast.Name and f.value.id in self.mod.imports):
                # `m.bool()`, `t.isnan()`: only tensors have these methods (`math.isnan(v)` is
                # a function of an imported module, not a method)
                return BOOL_TENSOR
            if recv in (TENSOR, PARAM, BOOL_TENSOR):
                if name in SIZE_METHODS and e.args:
                    return SIZE
                if name in ("numel", "nelement") and not e.args:
                    return SIZE     # the product of the sizes: symbolic where one of them is
                if name in SIZE_METHODS:
                    return SHAPE
                if name in SEQ_METHODS:
                    return TENSORS if recv != PARAM or e.args else OTHER
                if name in _NOT_TENSOR_METHODS or name.startswith("is_"):
                    return OTHER
                if name == "bool" or name in ("to", "type") and _is_bool_dtype(self.mod, e):
                    return BOOL_TENSOR
                if name in _BOOL_METHODS and recv != PARAM:
                    return BOOL_TENSOR
                if name in ("any", "all", "isnan", "isinf", "isfinite"):
                    return BOOL_TENSOR
                if recv == BOOL_TENSOR and name in _BOOL_KEEPING:
                    return BOOL_TENSOR
                if name in TENSOR_METHODS:
                    return TENSOR
                if recv in TENSORISH:
                    return TENSOR
                return OTHER
        target = self.mod.resolve(f)
        if target is None:
            return OTHER
        ns, _, fname = target.rpartition(".")
        if ns in _TENSOR_NAMESPACES and _is_tensor_func(fname):
            if fname in SEQ_FUNCS or fname == "where" and len(e.args) == 1 and not e.keywords:
                return TENSORS
            if fname in _BOOL_FUNCS or _is_bool_dtype(self.mod, e) or _bool_filled(fname, e):
                return BOOL_TENSOR
            if fname in _BOOL_KEEPING and e.args and self.kind(e.args[0]) == BOOL_TENSOR:
                return BOOL_TENSOR
            return TENSOR
        if target in _PARAMETER_CTORS:
            return TENSOR
        if target in _RANDOM_FUNCS:
            return RANDOM
        if target == "random.Random":
            return RNG
        if ns == "numpy" and fname in _NP_FUNCS:
            return NDARRAY
        if target == "len" and e.args and self.kind(e.args[0]) in (TENSOR, BOOL_TENSOR):
            return SIZE
        if target in ("int", "float", "bool", "round", "abs", "max", "min", "math.floor", "math.ceil",
                      "math.sqrt", "math.log", "math.exp") and e.args and not e.keywords:
            kinds = [self.kind(a) for a in e.args]
            if SCALAR in kinds or target in ("int", "float", "bool") and len(e.args) == 1 and \
                    kinds[0] in TENSORISH:
                return SCALAR       # `int(t)` reads the tensor; `max(n, 1)` of such a number
        if target in _SIZE_KEEPING and e.args and not e.keywords:
            k = self._size_builtin_kind(target, e.args)
            if k is not None:
                return k
        if type(f) is ast.Name and (e.args or e.keywords) and f.id in self.mod.summary.functions:
            k = self._helper_kind(f.id, e)
            if k is not None:
                return k
        held = _held_name(f) if self.cls is not None else None
        if held is not None:
            ctor = self.cls.attrs.get(held)
            if ctor and is_torch_module_class(ctor):
                return TENSOR       # self.linear(x) where self.linear = nn.Linear(...)
            forward = self.mod.local_forward(ctor) if ctor else None
            if forward is not None:
                # self.block(h) where self.block = Block(...), a module class of this file
                # whose forward surely returns a tensor (flux's autoencoder: `h =
                # self.conv_in(z)` was a tensor, `h = self.mid.block_1(h)` no longer)
                return self.mod.helper_return_kind(forward, ()) or OTHER
        q = self.callee_qualname(e)
        if q is not None:
            # `b = one()` / `probs = self.make_probs()` returning `torch.rand(2)`: what the
            # helper surely returns (memoised per helper: ModuleContext.helper_return_kind)
            return self.mod.helper_return_kind(q, ()) or OTHER
        return self._ext_call(e, f, target)

    def _ext_call(self, e: ast.Call, f: ast.expr, target: str) -> str:
        """The result of a call the call graph may resolve to a function of another file: an
        `Ext` whose need names the call's edge as pt2bot/analysis/walk.py `_record_call` records
        it (`helper(x)` / `mod.helper(x)` imported from the tree, `self.meth(x)` of a base class
        of another file), else OTHER."""
        if type(f) is _Attribute:
            v = f.value
            if type(v) is _Name:
                if v.id == "self":
                    # a method (not a submodule: its forward's result is not followed)
                    if self.cls is None or "self" in self.env or f.attr in self.cls.attrs:
                        return OTHER
                    edge = ("self", f.attr)
                elif v.id in self.mod.imports and v.id not in self.env and not target.startswith(_NOT_TREE):
                    edge = ("name", target)
                else:
                    return OTHER
            else:
                return OTHER
        elif type(f) is _Name and f.id in self.mod.imports and f.id not in self.env and "." in target \
                and not target.startswith(_NOT_TREE):
            edge = ("name", target)
        else:
            return OTHER
        return self.ext(Ext(("call", e.lineno << 16 | e.col_offset & 0xFFFF, *edge, None)))

    def callee_qualname(self, e: ast.Call) -> str | None:
        """The function of this file a call runs: `helper(...)` (a top-level def not shadowed by
        a local name) or `self.meth(...)` in a method (ModuleContext.method_qualname)."""
        f = e.func
        if type(f) is ast.Name:
            return f.id if f.id in self.mod.summary.functions and f.id not in self.env else None
        if type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self" and \
                self.cls is not None and "self" not in self.env:
            return self.mod.method_qualname(self.cls, f.attr)
        return None

    def _size_builtin_kind(self, target: str, args: list[ast.expr]) -> str | None:
        """`min(h, w)`, `max(1, h // 2)`, `sum(widths)`, `int(h / 2)`, `math.floor(h * s)`: still a
        size (a SymInt/SymFloat: measured on torch 2.13, int/round/floor/ceil/trunc do not
        specialise it; see pt2bot/rules/size_specialised.py for the math functions that do)."""
        if target in ("min", "max", "sum") and len(args) == 1:
            return SIZE if self.kind(args[0]) in (SIZES, SHAPE) else None
        if target == "sum":
            return None
        kinds = [self.kind(a) for a in args]
        if SIZE not in kinds:
            return None
        if target in ("min", "max"):
            # not a clamp against a module's setting (`max(self.k, x.shape[-2])`): code that
            # clamps usually branched on the same comparison first (timm vgg.py:86, under
            # `if x.shape[-2] < self.k`), where dynamo knows the result is the setting
            return SIZE if all(self._is_intlike(a, k) and not _is_self_attr(a) for a, k in zip(args, kinds)) \
                else None
        return SIZE if len(args) == 1 or target == "round" else None

    def _helper_kind(self, name: str, call: ast.Call) -> str | None:
        """The kind a module-level function of this file returns for the sizes passed to it:
        `_fits(atlas_bytes)` returning `atlas_bytes <= budget` is SIZE_BOOL for a size argument,
        `_out(h, p)` returning `(h - p) // p + 1` a SIZE. Only sizes are passed on (the helper's
        other parameters keep their own kinds), so nothing is computed for most calls."""
        sized: list[tuple[int | str, str]] = []
        for i, a in enumerate(call.args):
            if type(a) is ast.Starred:
                return None
            k = self.kind(a)
            if k in (SIZE, SIZES):
                sized.append((i, k))
        for kw in call.keywords:
            if kw.arg is not None:
                k = self.kind(kw.value)
                if k in (SIZE, SIZES):
                    sized.append((kw.arg, k))
        if not sized:
            return None
        return self.mod.helper_return_kind(name, tuple(sized))

    def is_tensor_compare(self, c: ast.Compare) -> bool:
        for o in c.ops:
            if type(o) in _MEMBERSHIP_OPS:
                return False
        for o in (c.left, *c.comparators):
            if type(o) is ast.Constant and isinstance(o.value, (str, bytes)):
                return False
        return True

    def assign(self, target: ast.AST, kind: str, value: ast.AST | None = None) -> None:
        if type(target) is _Name:
            # `_, ch, h, w = img.size()`, `heads, kv_heads = q.shape[1], k.shape[1]`: a size
            # the code names a channel or head count is fixed per model (x-transformers'
            # `kv_heads < heads`, kornia's chunk sizes from `ch`, monai's `n_pred_ch`), not a
            # dynamic dim (`is_fixed_dim_name`)
            self.env[target.id] = OTHER if kind == SIZE and is_fixed_dim_name(target.id) else kind
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and \
                    not any(isinstance(x, ast.Starred) for x in target.elts + value.elts):
                # `h, w = x.shape[-2], x.shape[-1]`: element by element
                for el, v in zip(target.elts, value.elts):
                    self.assign(el, self.kind(v), v)
                return
            if type(value) is ast.Call and kind not in (SHAPE, SIZES) and \
                    not any(isinstance(x, ast.Starred) for x in target.elts):
                # `pid, probs, signs = self.get_params(n)`: the elements of the tuple the
                # helper returns (ModuleContext.helper_return_kind)
                q = self.callee_qualname(value)
                elts = self.mod.helper_return_elts(q) if q is not None else None
                if elts is not None and len(elts) == len(target.elts):
                    for el, k in zip(target.elts, elts):
                        self.assign(el, k)
                    return
                if type(kind) is Ext and kind.need[0] == "call" and kind.need[4] is None:
                    # `quantized, indices, loss = self.vq(x)` of another file: each element
                    # is what that function's tuple holds there (`Ext`)
                    for i, el in enumerate(target.elts):
                        self.assign(el, Ext(kind.need[:4] + (i,)))
                    return
            # `B, T, C = x.shape` / `b, t = x.size()` / `h, w = sizes`: the elements are sizes;
            # `q, k, v = x.chunk(3, -1)`, `_, idx = scores.topk(k)`: tensors
            elt_kind = SIZE if kind in (SHAPE, SIZES) else \
                TENSOR if kind == TENSORS or type(value) is ast.Call and self.tuple_of_tensors(value) else OTHER
            for el in target.elts:
                self.assign(el.value if isinstance(el, ast.Starred) else el, elt_kind)

    def tuple_of_tensors(self, e: ast.Call) -> bool:
        """A call that returns a tuple of tensors (`TUPLE_METHODS` on a tensor, `TUPLE_FUNCS`
        of torch, `max`/`min`/`median` with a dim). Such a method with a `dim=` keyword on a
        value of unknown kind too (`conf, pred = sim.max(dim=1)`, `sim` a library module's
        output): numpy names that argument `axis`, and Python's values have no such methods."""
        f = e.func
        dim = any(k.arg == "dim" for k in e.keywords)
        if type(f) is ast.Attribute and self.kind(f.value) in (TENSOR, PARAM, BOOL_TENSOR):
            return f.attr in TUPLE_METHODS or f.attr in _TUPLE_WITH_DIM and bool(e.args or dim)
        if type(f) is ast.Attribute and dim and (f.attr in TUPLE_METHODS or f.attr in _TUPLE_WITH_DIM) \
                and not (type(f.value) is ast.Name and f.value.id in self.mod.imports):
            return True
        target = self.mod.resolve(f)
        if target is None:
            return False
        ns, _, fname = target.rpartition(".")
        if ns not in _TENSOR_NAMESPACES:
            return False
        # `torch.max(x, 1)`: a dim; `torch.max(x, y)`: elementwise, one tensor
        second = e.args[1] if len(e.args) > 1 else None
        return fname in TUPLE_FUNCS or fname in _TUPLE_WITH_DIM and (dim or isinstance(second, ast.Constant) or (
            isinstance(second, ast.UnaryOp) and isinstance(second.operand, ast.Constant)))

    def iter_kind(self, it: ast.AST) -> str:
        """The kind of the elements a `for` over `it` binds."""
        k = self.kind(it)
        return TENSOR if k in TENSORISH + (TENSORS, RESULT) else SCALAR if k == SCALARS else \
            SIZE if k == SIZES else OTHER

    def report(self, rule: str, node: ast.AST, message: str, *, suggestion: str | None = None,
               gb: str | None = None, scope: str = "compiled",
               needs: tuple[int | None, str, int | None, str] | None = None,
               condition: str | None = None) -> None:
        """`needs`: a pending candidate, true only if a parameter is a size (pt2bot/analysis/sizeargs.py).
        `condition`: the claim holds only when this holds (a finding on the default path whose
        truth depends on the input, e.g. a size below a bound); the branch guards the walk
        finds around it are joined to it (pt2bot/analysis/walk.py `Conditions`)."""
        if self.eager_only and scope == "compiled":
            return
        self.mod.report(rule, node, message, self.info.qualname, scope, suggestion, gb, needs, condition)

    def line_text(self, node: ast.AST) -> str:
        lines = self.mod.summary.lines
        return lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""


_Name, _Attribute, _Call = ast.Name, ast.Attribute, ast.Call


def enumerated(it: ast.AST, target: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """(`X`, `v`) of a loop `for i, v in enumerate(X)`, else None (the builtin: the caller
    checks that the module does not rebind `enumerate`)."""
    if type(it) is _Call and type(it.func) is _Name and it.func.id == "enumerate" and len(it.args) == 1 \
            and not it.keywords and type(target) is ast.Tuple and len(target.elts) == 2:
        return it.args[0], target.elts[1]
    return None
_MEMBERSHIP_OPS = frozenset({ast.Is, ast.IsNot, ast.In, ast.NotIn})
# A size the code names a count of channels, heads, classes or vocabulary entries, or a per-head
# width, is fixed per model: one of these words in its name (split at `_`: `in_channels`,
# `n_pred_ch`, `num_kv_heads`, `head_dim`, `unpadded_vocab_size`), or `C`/`c`. Not "dim",
# "features" or "hidden": `min_dim = min(h, w)` is spatial, kornia's `num_features` counts
# detected keypoints.
_FIXED_DIM_WORDS = frozenset({"ch", "chs", "chan", "chans", "channel", "channels", "head", "heads", "classes",
                              "vocab"})


def is_fixed_dim_name(name: str) -> bool:
    """Whether `name` names a size fixed per model (see `_FIXED_DIM_WORDS`); also used by
    pt2bot/analysis/sizeargs.py for the same names through parameters."""
    if name in ("C", "c"):
        return True
    if "_" not in name:
        return name.lower() in _FIXED_DIM_WORDS
    return any(w in _FIXED_DIM_WORDS for w in name.lower().split("_"))


def _names_fixed_count(e: ast.AST) -> bool:
    """`self.in_channels - 1`, `self.config.vocab_size`, `unpadded_vocab_size`: a setting or name
    (give or take a constant) that names a fixed count (`is_fixed_dim_name`)."""
    while type(e) is ast.BinOp and type(e.op) in (ast.Add, ast.Sub) and type(e.right) is ast.Constant:
        e = e.left
    t = type(e)
    return t is _Name and is_fixed_dim_name(e.id) or t is _Attribute and is_fixed_dim_name(e.attr)


def _nonbatch_dim_read(e: ast.AST) -> bool:
    """`x.shape[i]` / `x.size(i)` with a constant `i` other than 0 (the batch dim)."""
    t = type(e)
    if t is ast.Subscript:
        if type(e.value) is not _Attribute or e.value.attr != "shape":
            return False
        i = e.slice
    elif t is _Call and type(e.func) is _Attribute and e.func.attr == "size" and len(e.args) == 1:
        i = e.args[0]
    else:
        return False
    if type(i) is ast.UnaryOp and type(i.op) is ast.USub:
        i = i.operand
    return type(i) is ast.Constant and type(i.value) is int and i.value != 0


_SIZE_KEEPING = frozenset({"min", "max", "sum", "abs", "int", "round", "math.floor", "math.ceil",
                           "math.trunc"})


def _is_self_attr(e: ast.AST) -> bool:
    return type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self"


def is_size_order_compare(c: ast.Compare) -> bool:
    """`<`, `<=`, `>`, `>=` (the operands' kinds are the caller's business), not against 0 or 1:
    `==`/`!=` dispatch on a size is nearly always on a fixed dim (`if x.shape[-1] == 2`), and
    dynamo specialises sizes 0 and 1 anyway. Nor a dim other than the batch compared with a
    setting that names a fixed count (`x.shape[1] < self.in_channels - 1`, monai's and
    transformers' `vocab_size < logits.shape[-1]`): that dim is the channel or feature count
    (measured on torch 2.13: with the batch or sequence dim dynamic it compiles once and exports;
    only a dynamic channel dim is guarded, and a model's channel count does not vary)."""
    operands = [c.left, *c.comparators]
    if not any(type(o) in (ast.Lt, ast.LtE, ast.Gt, ast.GtE) for o in c.ops) or \
            any(type(o) is ast.Constant and o.value in (0, 1) and type(o.value) is not bool for o in operands):
        return False
    return not (len(operands) == 2 and any(_names_fixed_count(a) and _nonbatch_dim_read(b)
                                           for a, b in (operands, operands[::-1])))


def _returns(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of a function in order, into if/for/while/with/try blocks (not nested defs)."""
    for st in body:
        yield st
        if isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            for name in ("body", "orelse", "finalbody"):
                yield from _returns(getattr(st, name, []) or [])
            for h in getattr(st, "handlers", []):
                yield from _returns(h.body)


# Decorators that hand back what the function returns (the result is still the function's).
_SAME_RESULT_DECORATORS = frozenset({
    "staticmethod", "classmethod", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
    "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad", "torch.jit.unused", "torch.jit.ignore",
    "torch.jit.export", "torch.compiler.disable", "torch._dynamo.disable", "functools.cache",
    "functools.lru_cache",
})


def _function_defs(mod: ModuleContext) -> dict[str, tuple[ast.AST, ClassInfo | None]]:
    """qualname -> (def node, its class) for the top-level functions and the methods of the
    top-level classes of the file (the later of two defs of one name wins, as at run time)."""
    out: dict[str, tuple[ast.AST, ClassInfo | None]] = {}
    for n in mod.tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[n.name] = (n, None)
        elif isinstance(n, ast.ClassDef) and n.name in mod.summary.classes:
            cls = mod.summary.classes[n.name]
            for item in n.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{n.name}.{item.name}"] = (item, cls)
    return out


def _local_subclasses(classes: dict[str, ClassInfo], local: dict[str, str]) -> dict[str, set[str]]:
    """class name -> the classes of the same file deriving from it, directly or not."""
    children: dict[str, set[str]] = {}
    for c, info in classes.items():
        for b in info.bases:
            if b in local:
                children.setdefault(local[b], set()).add(c)
    out: dict[str, set[str]] = {}
    for c in children:
        seen: set[str] = set()
        todo = list(children[c])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(children.get(d, ()))
        out[c] = seen
    return out


_RETURNS = (ast.Return, ast.Raise)
LEAVES_BLOCK = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def ends(body: list[ast.stmt], exits: tuple[type, ...] = _RETURNS) -> bool:
    """Whether every path through `body` ends in one of `exits`: a return or raise (no implicit
    `return None`), or with LEAVES_BLOCK whether the block never falls through to the statement
    after it (pt2bot/analysis/walk.py)."""
    if not body:
        return False
    st = body[-1]
    t = type(st)
    if t in exits:
        return True
    if t is ast.If:
        return ends(st.body, exits) and ends(st.orelse, exits)
    if t is ast.With:
        return ends(st.body, exits)
    if t is ast.Try:
        return ends(st.finalbody, exits) or (ends(st.body, exits) or ends(st.orelse, exits)) and \
            all(ends(h.body, exits) for h in st.handlers)
    return False


def _scan_body(body: list[ast.stmt], out: set[str]) -> bool:
    """Statement by statement (cheap: expressions are not walked; `yield`, `await` and `:=`
    are found in the source text, see ModuleContext._tensor_return): False where a return
    cannot be a tensor by its syntax (a literal, a display, an f-string, a constructor call
    `Output(...)`) or a `match` (not followed); else True, with `out` holding the local names
    bound otherwise than by an assignment (loop and `with` targets, `except ... as`, imports,
    nested defs, `del`, global/nonlocal): their kinds are not followed."""
    for st in body:
        t = type(st)
        if t is ast.Return:
            v = st.value
            if v is None or type(v) in _NOT_TENSOR_EXPRS or \
                    type(v) is ast.Attribute and v.attr not in ("T", "mT", "real", "imag", "data", "grad"):
                return False
            if type(v) is ast.Call:
                f = v.func
                last = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
                if last[:1].isupper() and last != "Tensor":
                    return False
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.add(st.name)
        elif t is ast.Match:
            return False
        elif t in (ast.Import, ast.ImportFrom):
            out.update((a.asname or a.name).partition(".")[0] for a in st.names)
        elif t in (ast.Global, ast.Nonlocal):
            out.update(st.names)
        elif t is ast.Delete:
            out.update(x.id for x in ast.walk(st) if type(x) is ast.Name)
        else:
            if t in (ast.For, ast.AsyncFor):
                out.update(x.id for x in ast.walk(st.target) if type(x) is ast.Name)
            elif t in (ast.With, ast.AsyncWith):
                for w in st.items:
                    if w.optional_vars is not None:
                        out.update(x.id for x in ast.walk(w.optional_vars) if type(x) is ast.Name)
            elif t is ast.Try or t.__name__ == "TryStar":
                for h in st.handlers:
                    if h.name:
                        out.add(h.name)
                    if not _scan_body(h.body, out):
                        return False
            for name in ("body", "orelse", "finalbody"):
                sub = getattr(st, name, None)
                if sub and not _scan_body(sub, out):
                    return False
    return True


# Return values that are never tensors by their syntax, or that `kind` never calls one
# (`a if c else b`, `x or y`; `self.weight` is OTHER too, see FunctionContext.kind).
_NOT_TENSOR_EXPRS = frozenset({ast.Constant, ast.Dict, ast.List, ast.Set, ast.ListComp, ast.DictComp,
                               ast.SetComp, ast.GeneratorExp, ast.JoinedStr, ast.Lambda, ast.BoolOp,
                               ast.IfExp})


def _join_returns(kinds: list[str]) -> str:
    """What a caller gets from returns of these kinds: BOOL_TENSOR if all are masks, RESULT if
    all are tensors (a helper's result, see RESULT), else OTHER."""
    if all(k == BOOL_TENSOR for k in kinds):
        return BOOL_TENSOR
    return RESULT if all(k in TENSORISH or k == RESULT for k in kinds) else OTHER


def _bind(sub: "FunctionContext", target: ast.AST, k: str, value: ast.AST | None, joined: bool,
          poisoned: set[str]) -> None:
    """`target = value` in a helper: where the assignment may not run (`joined`), a name keeps a
    kind only if it had none or the same one before."""
    if type(target) is ast.Name:
        names = [target.id]
    elif type(target) in (ast.Tuple, ast.List, ast.Starred):
        names = [x.id for x in ast.walk(target) if type(x) is ast.Name and type(x.ctx) is ast.Store]
    else:
        return      # `self.x = ...`, `out[i] = ...`: no local name bound
    old = {n: sub.env.get(n) for n in names}
    sub.assign(target, k, value)
    for n in names:
        if n in poisoned or joined and old[n] is not None and sub.env.get(n) != old[n]:
            sub.env[n] = OTHER


def _join_walk(sub: "FunctionContext", body: list[ast.stmt], joined: bool, poisoned: set[str],
               rets: list) -> None:
    """Follow a helper's assignments in order (into blocks, joined there) and collect the kind
    of each return: a kind, or a tuple of element kinds for a tuple literal."""
    for st in body:
        t = type(st)
        if t is ast.Assign:
            k = sub.kind(st.value)
            for tg in st.targets:
                _bind(sub, tg, k, st.value, joined, poisoned)
        elif t is ast.AnnAssign:
            if st.value is not None:
                _bind(sub, st.target, sub.kind(st.value), st.value, joined, poisoned)
        elif t is ast.AugAssign:
            if type(st.target) is ast.Name:
                k = sub.kind(ast.BinOp(left=ast.Name(id=st.target.id, ctx=ast.Load()), op=st.op,
                                       right=st.value))
                _bind(sub, st.target, k, None, joined, poisoned)
        elif t is ast.Return:
            v = st.value
            if v is None:
                rets.append(OTHER)
            elif type(v) is ast.Tuple and not any(type(x) is ast.Starred for x in v.elts):
                rets.append(tuple(sub.kind(x) for x in v.elts))
            else:
                rets.append(sub.kind(v))
        elif t is ast.If:
            _join_walk(sub, st.body, True, poisoned, rets)
            _join_walk(sub, st.orelse, True, poisoned, rets)
        elif t in (ast.For, ast.AsyncFor, ast.While):
            # the body again until the kinds settle (each name changes at most twice: unset,
            # a kind, OTHER), so a return in it sees what a later iteration assigns
            for _ in range(8):
                before = dict(sub.env)
                _join_walk(sub, st.body, True, poisoned, rets)
                if sub.env == before:
                    break
            else:
                rets.append(OTHER)
            _join_walk(sub, st.orelse, True, poisoned, rets)
        elif t in (ast.With, ast.AsyncWith):
            _join_walk(sub, st.body, joined, poisoned, rets)
        elif t is ast.Try or t.__name__ == "TryStar":
            _join_walk(sub, st.body, True, poisoned, rets)
            for h in st.handlers:
                _join_walk(sub, h.body, True, poisoned, rets)
            _join_walk(sub, st.orelse, True, poisoned, rets)
            _join_walk(sub, st.finalbody, True, poisoned, rets)


def is_compiling_check(mod: ModuleContext, test: ast.AST) -> int:
    """+1 if `test` is true only while dynamo compiles, -1 if never then, 0 otherwise.
    (`not is_compiling() and x`: -1; `is_compiling() or x`: +1, its `else` is eager-only.)"""
    t = type(test)
    if t is ast.BoolOp:
        parts = [is_compiling_check(mod, v) for v in test.values]
        want = -1 if type(test.op) is ast.And else 1
        return want if want in parts else 0
    neg = False
    if t is ast.UnaryOp and type(test.op) is ast.Not:
        neg, test = True, test.operand
        t = type(test)
    if t is _Call and not test.args:
        name = mod.resolve(test.func) or ""
        if name in _COMPILING_CHECKS or name.rpartition(".")[2] in _COMPILING_SUFFIXES:
            return -1 if neg else 1
        if name in _NOT_DYNAMO_CHECKS or name.rpartition(".")[2] in _NOT_DYNAMO_SUFFIXES:
            return 1 if neg else -1
    return 0
