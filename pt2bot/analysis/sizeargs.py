"""Tensor sizes across calls: pending candidates and the size arguments of call sites.

The kinds of pt2bot/analysis/infer.py see sizes computed in the function being walked. A size
often reaches its sink through a parameter instead: kornia's `warp_affine(src, M, dsize)` does
`h_out, w_out = dsize` and `torch.linspace(..., w_out)`, and its caller
(augmentation/_2d/geometric/affine.py:168) passes `(height, width)` read from `input.shape`.
Dynamo specialises `w_out` there; neither function alone shows it.

So, during the one walk of each function:
- a size sink of PTC307 (pt2bot/rules/size_specialised.py) whose value is not a size but is
  derived from a parameter only by unpacking, indexing with a constant and size arithmetic
  (`pending`) reports a *pending* candidate: `Candidate.needs` says which parameter (position, name), which
  element of it and whether the parameter must be a size or may be a sequence of sizes;
- a call of a function that may be in the tree records which of its arguments are sizes or
  tuples/lists of sizes (`record_call_sizes`: `Calls.sizes`, beside the call's edge).

At graph time (`resolve_pending`, called by pt2bot/static/check.py build_findings) a pending candidate
of a compiled function becomes a finding when a compiled caller passes a size in that parameter
(one level of calls: the caller's own sizes, as its walk typed them). Its message names the
caller; a caller that passes the size only on a non-default path gives its guard as condition.
All of this is plain data in the per-file summary (pt2bot/analysis/model.py), so it travels from
worker processes and through the cache like the call edges.

Only PTC307's sinks (a size's value consumed: linspace steps, math.copysign, f-strings) are
followed so far. The same pending candidates for PTC301/PTC303 (an ordering comparison of, or a
`range` over, a parameter) were tried and measured on the six real-code libraries
(benchmarks/real_code): 3 new findings true, 5 false (a helper called only where
`is_compiling()` is false, a guard already implied by the caller's earlier test, `range` over
the `numel()` of a fixed kernel), so they are left out.

Cost: nothing per assignment. The bindings of a function are scanned (statements only, once)
the first time a sink in it holds a non-size name; call arguments are typed only for calls that
can reach the tree (a method of `self`, a dotted name outside torch), and only the cheap shapes
of a size (names, `x.shape[...]`, `x.size(i)`, arithmetic, tuples of them).
"""
from __future__ import annotations

import ast
from typing import Iterable

from pt2bot.analysis.graph import Index, resolve_call
from pt2bot.analysis.infer import SHAPE, SIZE, SIZES, TENSORISH, FunctionContext, is_fixed_dim_name
from pt2bot.analysis.model import Candidate, FileSummary, call_guards, call_sizes

Needs = tuple  # (position | None, parameter name, element | None, "size" | "sized")

_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Div)
_ROUNDING = frozenset({"int", "round", "abs", "math.floor", "math.ceil", "math.trunc"})
_MAX_SRC = 60


# --------------------------------------------------------------------------------------------
# walk time: the callee's side

def pending(ctx: FunctionContext, e: ast.AST, want: str) -> Needs | None:
    """What must hold of a parameter for `e` to be a size (want "size") or a size or sequence
    of sizes (want "sized"), if `e` is derived from one parameter only by unpacking, constant
    indexing and size arithmetic; None otherwise. Tuples/lists: their first such element."""
    if type(e) in (ast.Tuple, ast.List):
        for x in e.elts:
            n = pending(ctx, x, "size")
            if n is not None:
                return n
        return None
    d = _derive(ctx, e, e.lineno, 0)
    if d is None:
        return None
    name, elem, scalar = d
    pos, names = _params(ctx)
    if name not in names:
        return None
    return (pos.get(name), name, elem, "size" if scalar or elem is not None or want == "size" else "sized")


def _derive(ctx: FunctionContext, e: ast.AST, at: int, depth: int) -> tuple[str, int | None, bool] | None:
    """(parameter, element or None, scalar: arithmetic made it a number) or None."""
    if depth > 6:
        return None
    t = type(e)
    if t is ast.Name:
        name = e.id
        if is_fixed_dim_name(name):
            return None          # a channel/head count: fixed per model (pt2bot/analysis/infer.py)
        binds = _bindings(ctx)
        b = binds.get(name)
        _, names = _params(ctx)
        if name in names:
            # a parameter never rebound in the function (nor shadowed by a nested one)
            if b or ctx.env.get(name) in TENSORISH:
                return None
            return (name, None, False)
        if not b or len(b) != 1:
            return None
        line, value, elem = b[0]
        if value is None or line >= at:
            return None
        d = _derive(ctx, value, line, depth + 1)
        if d is None or elem is None:
            return d
        if d[1] is not None or d[2]:
            return None
        return (d[0], elem, True)
    if t is ast.Subscript:
        i = _const_index(e.slice)
        if i is None:
            return None
        d = _derive(ctx, e.value, at, depth + 1)
        if d is None or d[1] is not None or d[2]:
            return None
        return (d[0], i, True)
    if t is ast.BinOp:
        if not isinstance(e.op, _ARITH):
            return None
        for side, other in ((e.left, e.right), (e.right, e.left)):
            d = _derive(ctx, side, at, depth + 1)
            if d is not None:
                # the other operand a number (or of unknown kind): `w_out - 1`, `1.0 / w_out`
                return (d[0], d[1], True) if ctx._is_intlike(other) else None
        return None
    if t is ast.UnaryOp:
        if isinstance(e.op, (ast.USub, ast.UAdd)):
            d = _derive(ctx, e.operand, at, depth + 1)
            return (d[0], d[1], True) if d is not None else None
        return None
    if t is ast.Call and e.args and not e.keywords:
        target = ctx.mod.resolve(e.func)
        if target in _ROUNDING and len(e.args) == 1:
            d = _derive(ctx, e.args[0], at, depth + 1)
            return (d[0], d[1], True) if d is not None else None
        if target in ("min", "max") and len(e.args) >= 2:
            found = None
            for a in e.args:
                d = _derive(ctx, a, at, depth + 1)
                if d is not None and found is None:
                    found = d
                elif not ctx._is_intlike(a) or (type(a) is ast.Attribute and type(a.value) is ast.Name
                                                and a.value.id == "self"):
                    return None   # not a clamp against a module's setting (see infer._size_builtin_kind)
            return (found[0], found[1], True) if found is not None else None
    return None


def local_values(ctx: FunctionContext, name: str) -> list[ast.AST | None] | None:
    """The values `name` is bound to in the function's statements (None for a binding that is
    not a plain assignment of the whole value), or None when the function never binds it; for
    PTC307's hashed containers (pt2bot/rules/size_specialised.py: `scale = {8: 1.0}`)."""
    b = _bindings(ctx).get(name)
    return None if not b else [v if elem is None else None for _, v, elem in b]


def is_parameter(ctx: FunctionContext, name: str) -> bool:
    return name in _params(ctx)[1]


def _const_index(s: ast.AST) -> int | None:
    if type(s) is ast.Constant and type(s.value) is int:
        return s.value
    if type(s) is ast.UnaryOp and isinstance(s.op, ast.USub) and type(s.operand) is ast.Constant \
            and type(s.operand.value) is int:
        return -s.operand.value
    return None


def _params(ctx: FunctionContext) -> tuple[dict[str, int], frozenset[str]]:
    """(positional parameter -> position, as callers count them: `self`/`cls` of a method not
    counted), every named parameter). *args/**kwargs are not sizes we can follow."""
    memo = ctx.__dict__.get("_sizeargs_params")
    if memo is None:
        args = ctx.node.args
        positional = list(args.posonlyargs) + list(args.args)
        if ctx.cls is not None and positional and positional[0].arg in ("self", "cls"):
            positional = positional[1:]
        pos = {a.arg: i for i, a in enumerate(positional)}
        memo = ctx.__dict__["_sizeargs_params"] = (pos, frozenset(pos) | {a.arg for a in args.kwonlyargs})
    return memo


def _bindings(ctx: FunctionContext) -> dict[str, list[tuple[int, ast.AST | None, int | None]]]:
    """Every binding of a name in the function's statements: name -> [(line, value or None
    when not a plain assignment, element position of a tuple unpacking)]. Nested functions'
    parameters and bindings count as bindings (unknown values): their names are not followed."""
    memo = ctx.__dict__.get("_sizeargs_binds")
    if memo is not None:
        return memo
    out: dict[str, list[tuple[int, ast.AST | None, int | None]]] = {}

    def bind(name: str, line: int, value: ast.AST | None = None, elem: int | None = None) -> None:
        out.setdefault(name, []).append((line, value, elem))

    def opaque(target: ast.AST) -> None:
        for n in ast.walk(target):
            if type(n) is ast.Name:
                bind(n.id, n.lineno)

    todo = list(ctx.node.body)
    while todo:
        st = todo.pop()
        t = type(st)
        if t is ast.Assign:
            for tg in st.targets:
                _bind_target(tg, st.value, bind, opaque)
        elif t is ast.AnnAssign:
            if type(st.target) is ast.Name:
                bind(st.target.id, st.lineno, st.value)
        elif t is ast.AugAssign:
            opaque(st.target)
        elif t in (ast.For, ast.AsyncFor):
            opaque(st.target)
        elif t in (ast.With, ast.AsyncWith):
            for item in st.items:
                if item.optional_vars is not None:
                    opaque(item.optional_vars)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef):
            bind(st.name, st.lineno)
            a = st.args
            for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
                bind(p.arg, st.lineno)
        elif t is ast.ClassDef:
            bind(st.name, st.lineno)
            continue
        elif t in (ast.Import, ast.ImportFrom):
            for a in st.names:
                bind((a.asname or a.name).partition(".")[0], st.lineno)
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(st, field, None)
            if sub and type(sub) is list:
                todo.extend(sub)
        for h in getattr(st, "handlers", None) or ():
            if h.name:
                bind(h.name, h.lineno)
            todo.extend(h.body)
        for c in getattr(st, "cases", None) or ():    # match statements: their captures are opaque
            opaque(c.pattern)
            todo.extend(c.body)
    ctx.__dict__["_sizeargs_binds"] = out
    return out


def _bind_target(tg: ast.AST, value: ast.AST, bind, opaque) -> None:
    t = type(tg)
    if t is ast.Name:
        bind(tg.id, tg.lineno, value)
    elif t in (ast.Tuple, ast.List):
        elts = tg.elts
        if any(type(x) is not ast.Name for x in elts):
            opaque(tg)
        elif type(value) in (ast.Tuple, ast.List) and len(value.elts) == len(elts) and \
                not any(type(v) is ast.Starred for v in value.elts):
            for x, v in zip(elts, value.elts):
                bind(x.id, x.lineno, v)
        else:
            for i, x in enumerate(elts):
                bind(x.id, x.lineno, value, i)     # `h_out, w_out = dsize`
    elif t is ast.Starred:
        opaque(tg)


# --------------------------------------------------------------------------------------------
# walk time: the caller's side

def record_call_sizes(ctx: FunctionContext, node: ast.Call, index: int, target: str | None) -> None:
    """Remember which arguments of call edge `index` are sizes ("size"), sequences of sizes
    ("sizes": `x.shape[-2:]`, a SIZES name) or tuple/list literals with sizes in them (a tuple of
    flags per element). Only calls that can reach a function of the tree, on the compiled path."""
    if ctx.eager_only or ctx.message_only or not (node.args or node.keywords):
        return
    if target is not None and ("." not in target or target.startswith("torch.")):
        return     # builtins and torch: never a function of the analysed tree
    out: list[tuple[int | str, object, str]] | None = None
    env = ctx.env
    for i, a in enumerate(node.args):
        t = type(a)
        if t is ast.Name and env.get(a.id) not in _SIZE_KINDS or t is ast.Constant or \
                t is ast.Attribute and a.attr != "shape":
            continue         # most arguments: decided without a call
        if t is ast.Starred:
            break
        shape = _arg_shape(ctx, a)
        if shape is not None:
            out = out or []
            out.append((i, shape, _short(ctx, a)))
    for k in node.keywords:
        if k.arg is not None:
            shape = _arg_shape(ctx, k.value)
            if shape is not None:
                out = out or []
                out.append((k.arg, shape, _short(ctx, k.value)))
    if out:
        sizes = getattr(ctx.info.calls, "sizes", None)
        if sizes is not None:
            sizes[index] = (node.lineno, tuple(out))


_CHEAP_CALLS = frozenset({"size", "numel", "nelement"})
_SIZE_KINDS = frozenset({SIZE, SIZES, SHAPE})


def _arg_shape(ctx: FunctionContext, a: ast.AST) -> object | None:
    t = type(a)
    if t is ast.Name:        # most arguments: the kind is the environment's
        k = ctx.env.get(a.id)
        return "size" if k == SIZE else "sizes" if k in (SIZES, SHAPE) else None
    if t is ast.Constant:
        return None
    if t in (ast.Tuple, ast.List):
        if any(type(x) is ast.Starred for x in a.elts):
            return None
        flags = tuple(_arg_shape(ctx, x) == "size" for x in a.elts)
        return flags if any(flags) else None
    if t is ast.Call:
        f = a.func
        if not (type(f) is ast.Attribute and f.attr in _CHEAP_CALLS or
                type(f) is ast.Name and f.id in ("len", "int", "min", "max", "round")):
            return None
    elif t not in (ast.Name, ast.Subscript, ast.Attribute, ast.BinOp, ast.UnaryOp):
        return None
    elif t is ast.Attribute and a.attr != "shape":
        return None
    k = ctx.kind(a)
    return "size" if k == SIZE else "sizes" if k in (SIZES, SHAPE) else None


def _short(ctx: FunctionContext, e: ast.AST) -> str:
    """The argument's source text: a slice of its line (the walk holds the file's lines), else
    `ast.unparse` (several lines, or a line whose offsets are not character offsets)."""
    lines = ctx.mod.summary.lines
    if e.lineno == e.end_lineno and 0 < e.lineno <= len(lines):
        line = lines[e.lineno - 1]
        if line.isascii():
            text = line[e.col_offset:e.end_col_offset]
            return text if len(text) <= _MAX_SRC else text[:_MAX_SRC - 1] + "…"
    try:
        text = " ".join(ast.unparse(e).split())
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "…"
    return text if len(text) <= _MAX_SRC else text[:_MAX_SRC - 1] + "…"


# --------------------------------------------------------------------------------------------
# graph time

def matches(needs: Needs, key_shapes: Iterable[tuple[int | str, object, str]]) -> tuple[str, object] | None:
    """(source, shape) of the argument that satisfies `needs` in a call's size arguments, or None."""
    pos, name, elem, want = needs
    for key, shape, src in key_shapes:
        if key != name and (pos is None or key != pos):
            continue
        if elem is None:
            if shape == "size" or want == "sized" and (shape == "sizes" or type(shape) is tuple):
                return src, shape
        elif shape == "sizes" or type(shape) is tuple and -len(shape) <= elem < len(shape) and shape[elem]:
            return src, shape
    return None


def resolve_pending(summaries: list[FileSummary], compiled: set[tuple[str, str]], idx: Index,
                    inherited: dict[tuple[str, str], str] | None = None) -> dict[int, tuple[str, str | None]]:
    """id(pending candidate) -> (message suffix, condition or None) for the pending candidates of
    compiled functions that a compiled caller passes a size (`Index`: pt2bot/analysis/graph.py).
    A call made on a non-default path, or from a helper called only on one (`inherited`:
    pt2bot/static/check.py inherit_call_conditions), passes that path on as the condition."""
    inherited = inherited or {}
    wanted: dict[tuple[str, str], list[Candidate]] = {}
    for s in summaries:
        for c in s.candidates:
            if c.needs is not None and (s.path, c.function) in compiled:
                wanted.setdefault((s.path, c.function), []).append(c)
    if not wanted:
        return {}
    by_path = {s.path: s for s in summaries}
    # callee -> [(caller path, line, size arguments, guard)]
    callers: dict[tuple[str, str], list[tuple[str, int, tuple, str | None]]] = {}
    for path, qual in compiled:
        s = by_path.get(path)
        info = s.functions.get(qual) if s is not None else None
        if info is None:
            continue
        sizes = call_sizes(info.calls)
        if not sizes:
            continue
        own = f"{s.module}.{info.cls}" if info.cls else None
        guards = call_guards(info.calls)
        for i, (line, args) in sizes.items():
            if i >= len(info.calls):
                continue
            kind, target = info.calls[i]
            hit = resolve_call(idx, own, kind, target)
            entry = idx.functions.get(hit[0]) if hit is not None else None
            if entry is None:
                continue
            cs, cinfo = entry
            key = (cs.path, cinfo.qualname)
            if key not in wanted:
                continue
            if kind == "name" and cinfo.cls is not None:
                args = tuple(a for a in args if type(a[0]) is str)   # `Cls.m(obj, ...)`: keywords only
            guard, outer = guards.get(i), inherited.get((path, qual))
            if outer is not None:
                guard = outer if guard is None else f"{outer} and {guard}"
            callers.setdefault(key, []).append((path, line, args, guard))
    out: dict[int, tuple[str, str | None]] = {}
    for key, cands in wanted.items():
        sites = sorted(callers.get(key, ()), key=lambda x: (x[0], x[1]))
        for c in cands:
            hits = [(p, line, m, g) for p, line, args, g in sites if (m := matches(c.needs, args)) is not None]
            if not hits:
                continue
            p, line, (src, shape), _ = next((h for h in hits if h[3] is None), hits[0])
            name = c.needs[1]
            what = "a tensor size" if shape == "size" else "tensor sizes"
            more = f" (and {len(hits) - 1} more call{'s' if len(hits) > 2 else ''})" if len(hits) > 1 else ""
            suffix = f"; `{name}` holds {what} here: {p}:{line} passes `{src}`{more}"
            guard = None
            if all(h[3] is not None for h in hits):
                distinct = list(dict.fromkeys(h[3] for h in hits))
                guard = distinct[0] if len(distinct) == 1 else " or ".join(f"({g})" for g in distinct)
            out[id(c)] = (suffix, guard)
    return out
