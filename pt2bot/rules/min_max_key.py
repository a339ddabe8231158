from __future__ import annotations

import ast

from pt2bot.analysis.infer import (BOOL_TENSOR, NDARRAY, PARAM, RESULT, SCALAR, SCALARS, TENSOR,
                                   TENSORS)
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import function_binds, node_span, pure, replace_spans, segment, source_lines

# The kinds of a local that make a key reading it a value dynamo cannot fold (a tensor, a
# number read from one): `min([1, 2, 4], key=lambda v: (v - t).abs())` breaks where `t` is one.
_TRACED = frozenset({TENSOR, PARAM, BOOL_TENSOR, RESULT, TENSORS, SCALAR, SCALARS, NDARRAY})


def _literal(e: ast.AST) -> bool:
    """A literal Python constant dynamo folds: `3`, `-1.5`, `"a"`, a list/tuple/set of them,
    `range(...)` of them."""
    t = type(e)
    if t is ast.Constant:
        return True
    if t is ast.UnaryOp and isinstance(e.op, (ast.USub, ast.UAdd)):
        return type(e.operand) is ast.Constant
    if t in (ast.List, ast.Tuple, ast.Set):
        return all(_literal(x) for x in e.elts)
    if t is ast.Call and isinstance(e.func, ast.Name) and e.func.id == "range" and not e.keywords:
        return all(_literal(x) for x in e.args)
    return False


def _module_literals(mod) -> frozenset[str]:
    """The names the file's top level binds once, to a literal constant (`SIZES = [2, 4, 8]`)."""
    cached = mod.__dict__.get("_ptc112_literals")
    if cached is None:
        bound: dict[str, int] = {}
        literal: set[str] = set()
        for st in mod.tree.body:
            targets = st.targets if isinstance(st, ast.Assign) else \
                [st.target] if isinstance(st, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                if isinstance(t, ast.Name):
                    bound[t.id] = bound.get(t.id, 0) + 1
                    if isinstance(st, ast.Assign) and len(st.targets) == 1 and _literal(st.value):
                        literal.add(t.id)
        cached = mod.__dict__["_ptc112_literals"] = frozenset(n for n in literal if bound[n] == 1)
    return cached


def _folded(ctx, node: ast.Call, key: ast.AST) -> bool:
    """Whether dynamo folds the call as a constant (measured on torch 2.13: no break): every
    positional argument is a literal constant or a module-level name bound to one, and the
    key reads no local tensor."""
    for a in node.args:
        if isinstance(a, ast.Name) and a.id not in ctx.env and a.id in _module_literals(ctx.mod):
            continue
        if not _literal(a):
            return False
    own = {a.arg for a in key.args.args} if isinstance(key, ast.Lambda) else set()
    return not any(isinstance(n, ast.Name) and n.id not in own and ctx.env.get(n.id) in _TRACED
                   for n in ast.walk(key))


class MinMaxKey(Rule):
    """## What it does
    Flags `min(...)` and `max(...)` with a `key=` argument in compiled code, over anything but
    literal constants: objects, modules, tensors, dict views, `enumerate`/`zip`, generators.

    ## Why is this bad?
    dynamo's handler for `min`/`max` takes no `key=`: torch 2.13 breaks the graph at the call
    (GB0193, "invalid call to builtin op handler") on every call of the model. Measured with
    `pt2bot.testing.graph_breaks` on torch 2.13: it breaks over `dict.values()` /
    `dict.items()`, a list, tuple or generator of objects, an `nn.ModuleList`, a list of
    tensors (`max(ts, key=lambda t: t.numel())`), `range(len(ts))` with a key reading `ts`,
    `enumerate(...)`, and with several positional arguments (`min(a, b, key=k)`) or a
    `default=` of objects. It does not break where dynamo can fold the whole call as a
    constant: literal constants (`max([3, 1, 2], key=f)`, `min(1, 2, key=f)`, `range(4)`) and
    module-level names bound to them (`SIZES = [2, 4, 8]`), with a key reading no tensor;
    these are not flagged. Neither are sizes (`max(x.shape, key=f)`, a module's list of ints
    keyed by a size): they fold while the shapes are static and break (GB0193) only once
    dynamo makes a size dynamic.

    ## Example
    ```python
    def forward(self, x):
        impl = min(self.impls.values(), key=lambda i: i.rank)
        return impl(x)
    ```

    ## Use instead
    `sorted` takes a `key=` under dynamo, and is stable: its first item is the one `min`
    returns, also among ties (Python's `min`/`max` return the first extreme item; `sorted`
    with `reverse=True` keeps equal items in their order, so its first item is `max`'s):
    ```python
    def forward(self, x):
        impl = sorted(self.impls.values(), key=lambda i: i.rank)[0]
        return impl(x)
    ```
    Fix offered: `min(X, key=K)` -> `sorted(X, key=K)[0]`, `max(X, key=K)` ->
    `sorted(X, key=K, reverse=True)[0]`, `min(a, b, key=K)` -> `sorted((a, b), key=K)[0]`,
    `min(X, key=K, default=D)` -> `(sorted(X, key=K) or [D])[0]` (where `D` is a name, an
    attribute or a constant: it is then read only when `X` is empty). The value is the same
    except on an empty `X` without `default=` (`min` raises ValueError, `sorted(...)[0]`
    IndexError) and with keys that are not totally ordered (NaN, sets), where `min` and the
    sort may pick different items. It traces where each key is a Python constant while tracing
    (an attribute, a string, a static size); a key that is a tensor value or a dynamic size
    makes `sorted` break too (GB0207, "sort with non-constant keys"), so the edit is not safe:
    the proof runs the model with it before it is suggested.
    """

    code = "PTC112"
    name = "min-max-key"
    summary = "`min()`/`max()` with `key=` over objects or tensors in compiled code (graph break)"
    gb = "GB0193"
    # torch 2.14 traces `key=` and `default=` (a key folded to a constant, the first extreme
    # item kept): the break is 2.13's (tests/test_rules_torch.py on both releases)
    until = "2.14"
    node_types = (ast.Call,)
    call_keys = frozenset({"min", "max"})

    def check(self, ctx, node):
        f = node.func
        if not (isinstance(f, ast.Name) and f.id in ("min", "max")) or f.id in ctx.mod.imports \
                or f.id in ctx.mod.summary.module_names or f.id in ctx.env:
            return
        key = next((k.value for k in node.keywords if k.arg == "key"), None)
        if key is None or _folded(ctx, node, key):
            return
        use = "sorted(..., key=...)[0]" if f.id == "min" else "sorted(..., key=..., reverse=True)[0]"
        ctx.report(self.code, node, f"dynamo's `{f.id}` takes no `key=`: this call breaks the graph "
                   f"(GB0193); `{use}` picks the same item and traces")

    @classmethod
    def fixes(cls, finding, source, tree):
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
        if node is None or not (isinstance(node.func, ast.Name) and node.func.id in ("min", "max")):
            return []
        kws = {k.arg: k.value for k in node.keywords}
        if "key" not in kws or not set(kws) <= {"key", "default"} or not node.args \
                or any(isinstance(a, ast.Starred) for a in node.args):
            return []   # `**kw` (arg None), `*xs`: what `min` would iterate is not written out
        default = kws.get("default")
        if default is not None and (len(node.args) > 1 or not pure(default)):
            return []   # several positionals with `default=` raise TypeError; an impure D would run later
        if _binds(tree, "sorted") or function_binds(tree, node, "sorted"):
            return []
        # Edits of the call's own text, so that its line breaks and comments stay: `min` ->
        # `sorted`, several positionals bracketed into one tuple, `reverse=True` after the key
        # of a `max`, `, default=D` taken out, then `[0]` or `(... or [D])[0]` around it.
        lines = source_lines(source)
        start, end = node_span(node)
        edits = [(node_span(node.func)[0], node_span(node.func)[1], "sorted")]
        if len(node.args) > 1:
            edits += [(node_span(node.args[0])[0],) * 2 + ("(",), (node_span(node.args[-1])[1],) * 2 + (")",)]
        if node.func.id == "max":
            edits.append((node_span(kws["key"])[1],) * 2 + (", reverse=True",))
        if default is None:
            edits.append((end, end, "[0]"))
        else:
            kw = next(k for k in node.keywords if k.arg == "default")
            before = [n for n in [*node.args, *node.keywords] if node_span(n)[1] <= node_span(kw)[0]]
            edits.append((node_span(before[-1])[1], node_span(kw)[1], ""))
            edits += [(start, start, "("), (end, end, f" or [{segment(lines, default)}])[0]")]
        first, last = node.lineno, node.end_lineno or node.lineno
        new = replace_spans(lines, first, last, edits)
        return [Candidate(code=cls.code, path=finding.path, start_line=first, end_line=last,
                          lines=tuple(new), title=f"pick the {node.func.id} with `sorted(..., key=...)[0]`",
                          safe=False)]


def _binds(tree: ast.Module, name: str) -> bool:
    """Whether the module's top level binds `name` (a def, a class, an import, an assignment)."""
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.name == name:
            return True
        if isinstance(st, (ast.Import, ast.ImportFrom)) and \
                any((a.asname or a.name.split(".")[0]) == name for a in st.names):
            return True
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(n, ast.Name) and n.id == name
                for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) for n in ast.walk(t)):
            return True
    return False
