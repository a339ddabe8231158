from __future__ import annotations

import ast

from pt2bot.analysis.infer import BOOL_TENSOR, NDARRAY, RESULT, TENSOR, TENSORS
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import function_binds, module_binds, node_span, pure, replace_spans, segment, source_lines

# The kinds of a value that is surely a tensor to dynamo: a list of them, or a key reading one,
# is no constant (`min([1, 2, 4], key=lambda v: (v - t).abs())` breaks where `t` is one).
_TENSORS = frozenset({TENSOR, BOOL_TENSOR, RESULT, TENSORS, NDARRAY})
# Iterables dynamo never folds, even over constants (measured on torch 2.13: a dict's
# `.items()` / `.values()` of ints, `enumerate` / `zip` of floats, a generator of ints break).
_VIEWS = frozenset({"items", "values", "keys"})
_ITERATORS = frozenset({"enumerate", "zip"})
# A string's methods: `key=lambda s: s.lower()` over strings folds, unlike `o.rank` over objects.
_STR_ATTRS = frozenset(a for a in dir(str) if not a.startswith("_"))


def _from(e: ast.AST, names: set[str]) -> bool:
    """`e` is one of `names` or an item of something indexed by / holding one (`p`, `p[0]`, `ts[i]`)."""
    while isinstance(e, ast.Subscript):
        if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(e.slice)):
            return True
        e = e.value
    return isinstance(e, ast.Name) and e.id in names


_SEQUENCES = frozenset({"List", "list", "Tuple", "tuple", "Sequence", "Iterable"})


def _tensor_list_param(ctx, name: str) -> bool:
    """`name` is a parameter annotated as a sequence of tensors (`polygons: List[Tensor]`)."""
    args = ctx.node.args
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        if a.arg == name and a.annotation is not None:
            words = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(a.annotation)
                     if isinstance(n, (ast.Name, ast.Attribute))}
            return "Tensor" in words and bool(words & _SEQUENCES)
    return False


def _not_constant(ctx, node: ast.Call, key: ast.AST) -> bool:
    """Evidence that dynamo cannot fold the call to a constant, which is what it does when the
    items and the key are Python constants (measured on torch 2.13: `max([3, 1, 2], key=f)`,
    `min(d, key=d.get)` over a dict of ints, `max(range(len(s)), key=s.__getitem__)` over a
    list of floats, `min(pairs, key=lambda p: p[0])` do not break): an item that is an object,
    a module or a tensor (the key reads an attribute of it: `lambda i: i.rank`,
    `lambda j: ts[j].numel()`, `operator.attrgetter`; a parameter annotated as a list of
    tensors), an iterable dynamo does not fold, or a key that reads a tensor or the module
    (`self`)."""
    for a in node.args:
        if isinstance(a, ast.GeneratorExp) or ctx.kind(a) in _TENSORS or \
                isinstance(a, ast.Name) and _tensor_list_param(ctx, a.id):
            return True
        if isinstance(a, ast.Call) and (isinstance(a.func, ast.Attribute) and a.func.attr in _VIEWS
                                        and not a.args or ctx.mod.resolve(a.func) in _ITERATORS):
            return True
        if isinstance(a, (ast.List, ast.Tuple)) and any(ctx.kind(x) in _TENSORS for x in a.elts):
            return True
    if isinstance(key, ast.Call):
        return ctx.mod.resolve(key.func) == "operator.attrgetter"
    if isinstance(key, ast.Attribute):   # a method of the module: `key=self.score`
        return isinstance(key.value, ast.Name) and key.value.id == "self"
    own = {a.arg for a in key.args.args} if isinstance(key, ast.Lambda) else set()
    for n in ast.walk(key):
        if isinstance(n, ast.Attribute) and n.attr not in _STR_ATTRS and _from(n.value, own):
            return True
        if isinstance(n, ast.Name) and n.id not in own and (n.id == "self" or ctx.kind(n) in _TENSORS):
            return True
    return False


class MinMaxKey(Rule):
    """## What it does
    Flags `min(...)` and `max(...)` with a `key=` argument in compiled code where the items
    are objects, modules or tensors (the key reads an attribute of them: `lambda i: i.rank`;
    a parameter annotated `List[Tensor]`), where the iterable is a dict view, `enumerate`,
    `zip` or a generator, or where the key reads a tensor or the module.

    ## Why is this bad?
    dynamo's handler for `min`/`max` takes no `key=`: torch 2.13 breaks the graph at the call
    (GB0193, "invalid call to builtin op handler") on every call of the model, unless it can
    run the whole call as a constant, which it does when the items and the key are Python
    constants. Measured with the eager backend on torch 2.13, it breaks over
    `impls.values()`, a list, tuple or generator of objects, an `nn.ModuleList`, a list of
    tensors (`max(ts, key=lambda t: t.numel())`, `max(polygons, key=len)`), `range(len(ts))`
    keyed by `ts[j].shape[0]`, `d.items()` / `d.values()` even of ints, `enumerate(...)` and
    `zip(...)` even of floats, with a key that is a method of the module or reads a tensor,
    with several positional arguments (`min(a, b, key=k)`) and with `default=`. It does not
    break (and is not flagged) over literal constants (`max([3, 1, 2], key=f)`,
    `min(1, 2, key=abs)`), a dict of ints keyed by its `.get`, a list of floats from
    `.tolist()` (`max(range(len(s)), key=s.__getitem__)`), tuples keyed by an item
    (`lambda p: p[0]`), strings keyed by a string method. Over sizes (`max(x.shape, key=f)`,
    a list of ints keyed by a size) it folds while the shapes are static and breaks only once
    dynamo makes a size dynamic: not flagged. torch 2.14 takes `key=` and `default=`: every
    form above traces there except a key that is a tensor value, which breaks with its own
    message ("min/max with non-constant key"); the rule holds for torch < 2.14.

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
        if key is None or not _not_constant(ctx, node, key):
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
        if module_binds(tree, "sorted") or function_binds(tree, node, "sorted"):
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
