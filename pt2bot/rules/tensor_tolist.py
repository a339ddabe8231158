from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.rules.scalar_fixes import keep_tensor_fixes
from pt2bot.analysis.queries import generator_note, method_call


class TensorTolist(Rule):
    """## What it does
    Flags `Tensor.tolist()` in compiled code.

    ## Why is this bad?
    `.tolist()` turns every element into a Python number: a host-device copy and a graph
    break. torch 2.13 breaks with GB0109 ("Tensor.tolist() with non-integer tensor") for
    floating tensors and with GB0033 ("Data dependent operator") for integer ones. Inside a
    generator expression dynamo cannot resume after the break: it runs the whole function
    uncompiled (as for `.item()`, PTC101).

    ## Example
    ```python
    def forward(self, x):
        lengths = x.sum(dim=1).tolist()
        return x * len(lengths)
    ```

    ## Use instead
    Compute with the tensor itself (indexing, `torch.gather`, masks) and leave conversion to
    Python values outside compiled code.
    ```python
    def forward(self, x):
        lengths = x.sum(dim=1)
        return x * lengths.shape[0]
    ```
    Fix offered (not safe: run and compared before it is posted) when the value only feeds
    tensor arithmetic: `.tolist()` dropped, in the expression (`x * t.tolist()` -> `x * t`) or in the
    assignment `v = t.tolist()` when every later read of `v` in the function is an operand of
    arithmetic (`x *= v` too; also the one bound of a clamp, `x.clamp(max=v)`, or a value of
    `torch.where(c, x, v)`) outside a condition, an index, a size or a formatted string, or one element of it
    with a constant index that is such an operand (`w = t.tolist()`, `x * w[0] + w[1]` ->
    `w = t`: `t[0]` is a 0-d tensor).
    """

    code = "PTC102"
    name = "tensor-tolist"
    summary = "`Tensor.tolist()` in compiled code (host sync, graph break)"
    gb = "GB0109"
    node_types = (ast.Call,)
    call_keys = frozenset({".tolist"})

    @classmethod
    def fixes(cls, finding, source, tree):
        return keep_tensor_fixes(cls.code, finding, source, tree, "tolist")

    def check(self, ctx, node):
        if method_call(node, ("tolist",)) is not None:
            ctx.report(self.code, node, "`.tolist()` copies the tensor into Python values and breaks the graph"
                       f"{generator_note(ctx)}; keep working on the tensor (indexing, gather, masks)")
