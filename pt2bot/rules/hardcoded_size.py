from __future__ import annotations

import ast

from pt2bot.analysis.infer import PARAM, SIZE
from pt2bot.rules.base import Rule

# Not `expand`: it can only grow a dim of size 1 or add a new leading one, and any other size
# it is given must already be the input's (else it raises, compiled or not). So a literal there
# is the size of a dim the code builds (`pos[None].expand(3, n, -1)`: three axes) or of a
# broadcast size-1 dim, never a size of the input that could vary: nothing for it to specialise
# (measured on torch 2.13: `x.expand(3, -1, -1)` and `x[None].expand(3, x.shape[0], -1)` compile
# once over batch sizes and export with the batch dynamic).
_METHODS = frozenset({"view", "reshape"})


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
    """

    code = "PTC302"
    name = "hardcoded-size"
    summary = "hard-coded leading size in `view`/`reshape` (specialises the dim)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.Call,)
    call_keys = frozenset({"torch.reshape", *("." + m for m in _METHODS)})

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
