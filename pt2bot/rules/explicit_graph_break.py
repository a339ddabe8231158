from __future__ import annotations

import ast

from pt2bot.rules.base import Rule


class ExplicitGraphBreak(Rule):
    """## What it does
    Flags `torch._dynamo.graph_break()` in compiled code.

    ## Why is this bad?
    It does exactly what it says: GB0025 ("Call to `torch._dynamo.graph_break()`"), two graphs
    instead of one, and a failure under `fullgraph=True` or `torch.export`. It is a debugging
    aid that is easy to leave behind.

    ## Example
    ```python
    def forward(self, x):
        y = self.a(x)
        torch._dynamo.graph_break()
        return self.b(y)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return self.b(self.a(x))
    ```
    """

    code = "PTC109"
    name = "explicit-graph-break"
    summary = "`torch._dynamo.graph_break()` in compiled code"
    gb = "GB0025"
    node_types = (ast.Call,)
    call_keys = frozenset({"torch._dynamo.graph_break"})

    def check(self, ctx, node):
        if ctx.call_target == "torch._dynamo.graph_break":
            ctx.report(self.code, node, "explicit graph break left in compiled code; remove it")
