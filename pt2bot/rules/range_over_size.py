from __future__ import annotations

import ast

from pt2bot.analysis.infer import OTHER, SIZE, SIZES
from pt2bot.rules.base import Rule


class RangeOverSize(Rule):
    """## What it does
    Flags Python loops over `range(...)` of a tensor size: `for i in range(x.shape[0])`,
    `for t in range(T)` after `B, T, C = x.shape`, and the same in comprehensions.

    ## Why is this bad?
    Dynamo unrolls Python loops, so the number of iterations is baked into the graph. torch
    2.13 recompiles for every new size, even with `dynamic=True`, and `torch.export` with that
    dimension dynamic fails with a constraint violation. The unrolled graph also grows with the
    size (slow compiles).

    What is baked in is the count, so the cost depends on how the count is made from the size
    (measured on torch 2.13 over several sizes):
    - a chunk count, `range(n // c)`, `range(math.ceil(n / c))`, `range((n + c - 1) // c)`:
      one compile per count (sizes with the same number of chunks share a graph);
    - `range(0, n, c)` needs `n` itself: one compile per size;
    - a count bounded by a number that is not a size, `range(min(h, overlap))` (tile blending):
      dynamo guards `h >= overlap` and unrolls `overlap` passes, so every size of at least
      `overlap` shares one graph; only each smaller size compiles again, and export needs the
      dim's `min` to be at least `overlap`. The finding carries that condition (so it is
      demoted by default, `static.conditional`). A bound of 2 or less is not flagged: dynamo
      specialises sizes 0 and 1 anyway.

    ## Example
    ```python
    def forward(self, x):
        out = []
        for t in range(x.shape[1]):
            out.append(self.cell(x[:, t]))
        return torch.stack(out, 1)
    ```

    ## Use instead
    Vectorise over the dimension (batched ops, `torch.cumsum`, `torch.func.vmap`), or use
    `torch._higher_order_ops.scan` for real recurrences.
    ```python
    def forward(self, x):
        return self.cell(x)
    ```
    For a loop over chunks, put the chunks in a dim of their own and compute them at once:
    `x.view(n // c, c, ...)`, `x.unfold(0, c, c)`, or pad to a multiple of `c` first (one graph
    for every size with two chunks or more; dynamo still specialises a count of 1). Splitting
    with `x.split(c)` and looping over the pieces is the same unrolled loop.
    """

    code = "PTC303"
    name = "range-over-size"
    summary = "Python loop over `range(<tensor size>)` (unrolled per size)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.For, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

    def check(self, ctx, node):
        loops = [(node.iter, node.target)] if isinstance(node, ast.For) else \
            [(g.iter, g.target) for g in node.generators]
        for it, target in loops:
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                    and any(ctx.kind(a) == SIZE for a in it.args) and not _indexes_a_setting(ctx, node, target):
                self._report(ctx, it)

    def _report(self, ctx, it: ast.Call):
        args = it.args
        if len(args) == 3 and not _is_one(args[2]):
            ctx.report(self.code, it, f"a loop over `{_src(it)}` steps through a size: it is unrolled per size "
                       f"and recompiles for every new size; to walk chunks, {_CHUNKS}")
            return
        count = args[0] if len(args) == 1 else None
        if count is None:
            ctx.report(self.code, it, _PLAIN)
            return
        value = _value(ctx, count, it)
        bounded = _bounded(ctx, value, count, it)
        if bounded is _SMALL_BOUND:
            return
        if bounded is not None:
            sizes, bounds = bounded
            bound = ", ".join(_src(b) for b in bounds)
            bound = bound if len(bounds) == 1 else f"min({bound})"
            least = ", ".join(_src(s) for s in sizes)
            least = least if len(sizes) == 1 else f"min({least})"
            ctx.report(self.code, it, f"a loop over `{_src(it)}` runs at most `{bound}` times: every size of at "
                       f"least `{bound}` shares one unrolled graph, but each smaller size recompiles and "
                       f"`torch.export` needs the dim's `min` to be at least `{bound}`",
                       condition=f"{least} < {bound}")
            return
        if _is_chunk_count(ctx, value):
            ctx.report(self.code, it, f"a loop over `{_src(it)}` runs a count divided from a size: it is unrolled "
                       f"per count and compiles again for each new count (sizes with the same count share a "
                       f"graph); if it walks chunks, {_CHUNKS}")
            return
        ctx.report(self.code, it, _PLAIN)


_PLAIN = ("a loop over `range(<size>)` is unrolled per size and recompiles for every new size; vectorise over "
          "the dimension")
_CHUNKS = ("put the chunks in a dim of their own and compute them at once (`x.view(n // c, c, ...)`, "
           "`x.unfold(0, c, c)`, or pad to a multiple of `c` first), or use `torch._higher_order_ops.scan` "
           "for a recurrence over chunks")


def _indexes_a_setting(ctx, loop: ast.AST, target: ast.AST) -> bool:
    """The loop's index subscripts a list the module holds (`self.axes_dim[i]`, `self.heads[i]`,
    not a tensor buffer): the count is that list's length, fixed per model (diffusers'
    `for i in range(ids.shape[-1])` over the rotary axes; held out, measured: one graph)."""
    if type(target) is not ast.Name:
        return False
    body = loop.body if type(loop) is ast.For else \
        [loop.key, loop.value] if type(loop) is ast.DictComp else [loop.elt]
    for st in body:
        for e in ast.walk(st):
            if type(e) is ast.Subscript and type(e.slice) is ast.Name and e.slice.id == target.id:
                v = e.value
                while type(v) is ast.Attribute and type(v.value) is ast.Attribute:
                    v = v.value
                if type(v) is ast.Attribute and type(v.value) is ast.Name and v.value.id == "self" \
                        and not ctx.self_tensor_attr(e.value):
                    return True
    return False


def _src(e: ast.AST, limit: int = 60) -> str:
    s = ast.unparse(e)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _is_one(e: ast.AST) -> bool:
    return type(e) is ast.Constant and e.value == 1


def _value(ctx, e: ast.AST, at: ast.AST) -> ast.AST:
    """`e`, or for a name the value of its assignment that surely runs last before `at`
    (DefinedNames.before): `for i in range(num_chunks)` after `num_chunks = n // 4`."""
    if type(e) is ast.Name:
        st = _defs(ctx).before(e.id, at)
        if st is not None and st.value is not None:
            return st.value
    return e


def _bounded(ctx, value: ast.AST, count: ast.AST,
             at: ast.AST) -> tuple[list[ast.expr], list[ast.expr]] | None:
    """(sizes, bounds) of a `min(...)` count with an argument that is not a size; _SMALL_BOUND
    where a bound is 2 or less (nothing to flag); None for any other count. In
    `e = min(a.shape[2], b.shape[2], e)` the `e` inside is the value before the assignment (a
    parameter or an earlier value), read as such."""
    if not (type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "min"
            and ctx.mod.resolve(value.func) == "min" and len(value.args) >= 2 and not value.keywords):
        return None
    sizes, bounds = [], []
    for a in value.args:
        if type(a) is ast.Starred:
            return None
        if type(a) is ast.Name and type(count) is ast.Name and a.id == count.id:
            k = _kind_before(ctx, a.id, at)     # `e = min(..., e)`: the old `e`
        else:
            k = ctx.kind(a)
        if k is None:
            return None
        (sizes if k in (SIZE, SIZES) else bounds).append(a)
    if not sizes or not bounds:
        return None
    if any(type(b) is ast.Constant and isinstance(b.value, (int, float)) and b.value <= 2 for b in bounds):
        return _SMALL_BOUND     # only sizes 0 and 1 lie below: dynamo specialises those anyway
    return sizes, bounds


_SMALL_BOUND = ([], [])


def _kind_before(ctx, name: str, at: ast.AST) -> str | None:
    """The kind `name` had before its latest assignment preceding `at`: that of the assignment
    before it, or, where there is none, of the parameter of that name (never a size: sizes are
    read in the body). None where it cannot be told."""
    d = _defs(ctx)
    last = d.before(name, at)
    if last is None:
        return None
    prev = d.before(name, last)
    if prev is None:
        return OTHER if name in d.params and not d.bound_before(name, last) else None
    if prev.value is None or any(type(n) is ast.Name and n.id == name for n in ast.walk(prev.value)):
        return None
    return ctx.kind(prev.value)


def _is_chunk_count(ctx, e: ast.AST) -> bool:
    """A count made from a size by integer division: `n // c`, `(n + c - 1) // c`,
    `-(-n // c)`, `math.ceil(n / c)` / `int(n / c)`, plus or minus a constant."""
    t = type(e)
    if t is ast.BinOp:
        op = type(e.op)
        if op is ast.FloorDiv:
            return True
        if op in (ast.Add, ast.Sub) and (type(e.right) is ast.Constant or type(e.left) is ast.Constant):
            return _is_chunk_count(ctx, e.left if type(e.right) is ast.Constant else e.right)
        return False
    if t is ast.UnaryOp and type(e.op) is ast.USub:
        return _is_chunk_count(ctx, e.operand)
    if t is ast.Call and len(e.args) == 1 and not e.keywords:
        f = ctx.mod.resolve(e.func)
        a = e.args[0]
        return f in ("math.ceil", "math.floor", "int", "round") and type(a) is ast.BinOp and \
            type(a.op) in (ast.Div, ast.FloorDiv)
    return False


class DefinedNames:
    """The simple assignments (`name = value`) of the walked function, to read a loop count's
    value: built once per function, only for a function with a PTC303 candidate."""

    def __init__(self, fn: ast.AST) -> None:
        # name -> [(statement, its block, its index there)]; a statement with value None binds
        # the name otherwise (a loop target, a tuple target, `+=`, `with ... as`)
        self.defs: dict[str, list[tuple[ast.stmt, list[ast.stmt], int]]] = {}
        args = getattr(fn, "args", None)
        self.params = {a.arg for a in (args.posonlyargs + args.args + args.kwonlyargs)} if args else set()
        self._scan(getattr(fn, "body", []))

    def _add(self, name: str, st: ast.stmt, block: list[ast.stmt], i: int) -> None:
        self.defs.setdefault(name, []).append((st, block, i))

    def _scan(self, block: list[ast.stmt]) -> None:
        for i, st in enumerate(block):
            t = type(st)
            if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                continue
            if t is ast.Assign:
                for tg in st.targets:
                    for n in ast.walk(tg):
                        if type(n) is ast.Name:
                            self._add(n.id, st if tg is n else _Opaque(st), block, i)
            elif t in (ast.AnnAssign, ast.AugAssign) and type(st.target) is ast.Name:
                self._add(st.target.id, st if t is ast.AnnAssign else _Opaque(st), block, i)
            elif t in (ast.For, ast.AsyncFor):
                for n in ast.walk(st.target):
                    if type(n) is ast.Name:
                        self._add(n.id, _Opaque(st), block, i)
            elif t in (ast.With, ast.AsyncWith):
                for w in st.items:
                    if w.optional_vars is not None:
                        for n in ast.walk(w.optional_vars):
                            if type(n) is ast.Name:
                                self._add(n.id, _Opaque(st), block, i)
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(st, field, None)
                if sub:
                    self._scan(sub)
            for h in getattr(st, "handlers", ()):
                self._scan(h.body)

    def bound_before(self, name: str, at: ast.AST) -> bool:
        """Whether anything binds `name` above `at`."""
        return any((st.end_lineno or st.lineno) < at.lineno for st, _, _ in self.defs.get(name, ()))

    def before(self, name: str, at: ast.AST):
        """The assignment of `name` that runs last before `at` on every path, if it is a plain
        `name = value`: the latest one above `at` (by line), provided it sits in a block that a
        later statement of which holds `at` (it runs before `at` and nothing reassigns between,
        short of a loop around both). None where that does not hold."""
        best = None
        for st, block, i in self.defs.get(name, ()):
            end = st.end_lineno or st.lineno
            if end < at.lineno and (best is None or st.lineno > best[0].lineno):
                best = (st, block, i)
        if best is None:
            return None
        st, block, i = best
        if type(st) is _Opaque:
            return None
        if not any(s.lineno <= at.lineno <= (s.end_lineno or s.lineno) for s in block[i + 1:]):
            return None
        return st


class _Opaque:
    """An assignment whose value is not the name's (a loop target, `a, b = ...`, `+=`)."""

    def __init__(self, st: ast.stmt) -> None:
        self.lineno, self.end_lineno, self.value = st.lineno, st.end_lineno, None


def _defs(ctx) -> DefinedNames:
    d = ctx.__dict__.get("_ptc303_defs")
    if d is None:
        d = ctx.__dict__["_ptc303_defs"] = DefinedNames(ctx.node)
    return d
