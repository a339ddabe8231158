from __future__ import annotations

import ast

from pt2bot.rules._base import Rule
from pt2bot.rules._util import is_tensorish


class ScalarConversion(Rule):
    """## What it does
    Flags `float(t)`, `int(t)` and `bool(t)` where `t` is a tensor computed in compiled code.

    ## Why is this bad?
    Converting a tensor to a Python scalar calls `Tensor.item()` underneath: torch 2.13 breaks
    the graph with GB0124 and, on a GPU, waits for the device. Sizes are fine:
    `int(x.shape[0])` is a (Sym)int, not a tensor, and is not flagged.

    ## Example
    ```python
    def forward(self, x):
        n = int(x.sum())
        return x * n
    ```

    ## Use instead
    ```python
    def forward(self, x):
        n = x.sum().to(torch.int64)
        return x * n
    ```
    """

    code = "PTC104"
    name = "tensor-to-scalar"
    summary = "`float()`/`int()`/`bool()` of a tensor (host sync, graph break)"
    gb = "GB0124"
    fullgraph_captures = frozenset({"int", "float"})   # not bool(t): tests/test_rules_torch.py
    node_types = (ast.Call,)
    call_keys = frozenset({"float", "int", "bool"})
    _FUNCS = {"float": "torch.float32", "int": "torch.int64", "bool": "torch.bool"}

    def check(self, ctx, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id in self._FUNCS and len(node.args) == 1 and not node.keywords \
                and f.id not in ctx.mod.imports and f.id not in ctx.mod.summary.module_names \
                and is_tensorish(ctx, node.args[0]):
            ctx.report(self.code, node, f"`{f.id}(tensor)` copies the value to Python and breaks the graph; "
                       f"keep a tensor, e.g. `t.to({self._FUNCS[f.id]})`")
