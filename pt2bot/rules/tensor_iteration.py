from __future__ import annotations

import ast

from pt2bot.rules._infer import TENSORISH
from pt2bot.rules._base import Rule


class TensorIteration(Rule):
    """## What it does
    Flags Python `for` loops (and comprehensions) that iterate over a tensor:
    `for row in x.unbind(0)` is explicit, `for row in torch.relu(x)` is not.

    ## Why is this bad?
    Dynamo unrolls the loop once per element, so the trace bakes in the size of the first
    dimension: torch 2.13 does not break the graph, but it specialises that dimension. Every new
    size recompiles (even with `dynamic=True`), and `torch.export` with a dynamic dim fails with a
    constraint violation. Long tensors also make huge graphs.

    ## Example
    ```python
    def forward(self, x):
        h = torch.tanh(x)
        out = [row * 2 for row in h]
        return torch.stack(out)
    ```

    ## Use instead
    Vectorise over the dimension:
    ```python
    def forward(self, x):
        return torch.tanh(x) * 2
    ```
    """

    code = "PTC202"
    name = "tensor-iteration"
    summary = "Python loop over a tensor (unrolled; specialises the size)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.For, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

    def check(self, ctx, node):
        if isinstance(node, ast.For):
            self._check_iter(ctx, node.iter)
        else:
            for g in node.generators:
                self._check_iter(ctx, g.iter)

    def _check_iter(self, ctx, it):
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "unbind":
            return self._report(ctx, it)
        if ctx.kind(it) in TENSORISH:
            self._report(ctx, it)

    def _report(self, ctx, node):
        ctx.report(self.code, node, "iterating over a tensor unrolls the loop and specialises its size "
                   "(recompiles per size); vectorise over the dimension instead")
