from __future__ import annotations

import ast

from pt2bot.analysis.infer import PARAM, SIZE
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import enclosing_function, finding_statement, node_span, replace_spans

# Not `expand`: it can only grow a dim of size 1 or add a new leading one, and any other size
# it is given must already be the input's (else it raises, compiled or not). So a literal there
# is the size of a dim the code builds (`pos[None].expand(3, n, -1)`: three axes) or of a
# broadcast size-1 dim, never a size of the input that could vary: nothing for it to specialise
# (measured on torch 2.13: `x.expand(3, -1, -1)` and `x[None].expand(3, x.shape[0], -1)` compile
# once over batch sizes and export with the batch dynamic).
_METHODS = frozenset({"view", "reshape"})


def _dim_of(e: ast.AST, recv: str, shape_names: dict[str, int]) -> int | None:
    """The dim of the tensor named `recv` that size expression `e` reads: `x.shape[1]`,
    `x.size(1)`, or a name a `b, n, d = x.shape` unpacking bound."""
    if isinstance(e, ast.Name):
        return shape_names.get(e.id)
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape" \
            and isinstance(e.value.value, ast.Name) and e.value.value.id == recv:
        idx = e.slice
    elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "size" \
            and isinstance(e.func.value, ast.Name) and e.func.value.id == recv and len(e.args) == 1 \
            and not e.keywords:
        idx = e.args[0]
    else:
        return None
    return idx.value if isinstance(idx, ast.Constant) and type(idx.value) is int else None


def _shape_names(fn: ast.AST, recv: str, before: int) -> dict[str, int]:
    """Names bound, once in the function and before line `before`, by unpacking `recv.shape`
    (`b, n, d = x.shape`): name -> the dim it holds."""
    stores: dict[str, int] = {}
    out: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
        if isinstance(n, ast.Assign) and n.lineno < before and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Tuple) and isinstance(n.value, ast.Attribute) and \
                n.value.attr == "shape" and isinstance(n.value.value, ast.Name) and n.value.value.id == recv:
            for i, t in enumerate(n.targets[0].elts):
                if isinstance(t, ast.Starred):
                    break
                if isinstance(t, ast.Name):
                    out[t.id] = i
    if stores.get(recv):
        return {}     # `x` rebound: a name unpacked from its shape may not be its size now
    return {k: v for k, v in out.items() if stores.get(k) == 1}


def _is_minus_one(e: ast.AST) -> bool:
    return isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
        and e.operand.value == 1


def _size_calls(st: ast.stmt):
    """(receiver name, sizes) of each `x.view(...)` / `x.reshape(...)` / `torch.reshape(x, ...)`."""
    for call in ast.walk(st):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args):
            continue
        options = []
        if call.func.attr in _METHODS and isinstance(call.func.value, ast.Name):
            options.append((call.func.value, list(call.args)))      # x.view(8, -1), x.view((8, -1))
        if call.func.attr == "reshape" and len(call.args) == 2 and isinstance(call.args[0], ast.Name):
            options.append((call.args[0], [call.args[1]]))          # torch.reshape(x, (8, -1))
        for recv, sizes in options:
            if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
                sizes = list(sizes[0].elts)
            yield recv, sizes


def size_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`x.view(8, -1)` -> `x.view(x.shape[0], -1)` where the other sizes say the literal stands
    for dim 0 of `x`: they are `-1` alone (the rest flattened), or `x`'s own dims 1, 2, ... in
    their order (`x.shape[1]`, `x.size(2)`, a name `b, n, d = x.shape` bound), then maybe `-1`."""
    st, _, lines = finding_statement(finding, source, tree)
    if st is None:
        return []
    lit = next((n for n in ast.walk(st) if isinstance(n, ast.Constant) and type(n.value) is int
                and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    for recv, sizes in _size_calls(st):
        if lit is not None and len(sizes) >= 2 and sizes[0] is lit:
            break
    else:
        return []
    fn = enclosing_function(tree, st)
    names = _shape_names(fn, recv.id, st.lineno) if fn is not None else {}
    rest = sizes[1:-1] if _is_minus_one(sizes[-1]) else sizes[1:]
    if any(_dim_of(e, recv.id, names) != i for i, e in enumerate(rest, start=1)):
        return []
    dim0 = next((n for n, i in names.items() if i == 0), None) or f"{recv.id}.shape[0]"
    new = replace_spans(lines, st.lineno, st.end_lineno or st.lineno, [(*node_span(lit), dim0)])
    return [Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=st.end_lineno or st.lineno,
                      lines=tuple(new), title=f"read the size from the input: `{dim0}` instead of {lit.value}",
                      safe=False)]


class HardcodedSize(Rule):
    """## What it does
    Flags `view` / `reshape` of a function's *input* whose leading size is an integer literal
    (2 or more) while the other sizes are inferred (`-1`) or taken from the input, e.g.
    `x.view(8, -1)`. Tensors computed inside the function are not considered: their leading
    size is often a real constant. `expand` is not flagged: its sizes can only be new dims or
    broadcast size-1 dims (`x[None].expand(3, n, -1)`), never an input size that varies.

    ## Why is this bad?
    The literal is almost always the batch size the author tested with. Under dynamic shapes it
    ties the input's size to that number: torch 2.13 specialises the dimension (a recompile for
    each other size) and `torch.export` with that dimension dynamic fails with a constraint
    violation. Hard-coded sizes in `torch.zeros(8, ...)` alone do not specialise anything and
    are not flagged.

    ## Example
    ```python
    def forward(self, x):
        return x.view(8, -1)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return x.view(x.shape[0], -1)
    ```
    Fix offered (not safe: run and compared before it is posted) where the other sizes say
    which dim the literal stands for: `-1` alone (`x.view(8, -1)`: the leading dim kept, the rest
    flattened) or the input's own dims 1, 2, ... in order (`x.view(8, x.shape[1], -1)`,
    `x.reshape(8, n, d)` after `b, n, d = x.shape`): the literal becomes `x.shape[0]` (or the
    name the unpacking bound to it, `b`). Elsewhere (`x.view(8, -1, x.shape[-1])`: the literal
    may be a product of dims) there is no candidate.
    """

    code = "PTC302"
    name = "hardcoded-size"
    summary = "hard-coded leading size in `view`/`reshape` (specialises the dim)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.Call,)
    call_keys = frozenset({"torch.reshape", *("." + m for m in _METHODS)})

    @classmethod
    def fixes(cls, finding, source, tree):
        return size_fixes(cls.code, finding, source, tree)

    def check(self, ctx, node):
        f = node.func
        if ctx.call_target == "torch.reshape" and len(node.args) == 2:
            recv = node.args[0]
            sizes = [node.args[1]]
            if ctx.kind(recv) != PARAM:
                return
        elif isinstance(f, ast.Attribute) and f.attr in _METHODS:
            recv = f.value
            # Only inputs of the function: a computed tensor's leading dim is often a fixed
            # count (e.g. `torch.cat(parts).reshape(3, -1)` for 3 position axes).
            if ctx.kind(recv) != PARAM:
                return
            sizes = list(node.args)
        else:
            return
        if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
            sizes = list(sizes[0].elts)
        if len(sizes) < 2:
            return
        first = sizes[0]
        if not (isinstance(first, ast.Constant) and type(first.value) is int and first.value >= 2):
            return
        rest_dynamic = any(
            (isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub) and isinstance(s.operand, ast.Constant)
             and s.operand.value == 1) or ctx.kind(s) == SIZE for s in sizes[1:])
        if not rest_dynamic:
            return
        name = ast.unparse(recv) if isinstance(recv, (ast.Name, ast.Attribute)) else None
        ctx.report(self.code, first, f"hard-coded size {first.value} specialises the input's dimension; "
                   f"take it from the input (e.g. `{name or 'x'}.shape[0]`)")
