from __future__ import annotations

import ast

from pt2bot.analysis.infer import SIZE
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
    """

    code = "PTC303"
    name = "range-over-size"
    summary = "Python loop over `range(<tensor size>)` (unrolled per size)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.For, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

    def check(self, ctx, node):
        iters = [node.iter] if isinstance(node, ast.For) else [g.iter for g in node.generators]
        for it in iters:
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                    and any(ctx.kind(a) == SIZE for a in it.args):
                ctx.report(self.code, it, "a loop over `range(<size>)` is unrolled per size and recompiles "
                           "for every new size; vectorise over the dimension")
