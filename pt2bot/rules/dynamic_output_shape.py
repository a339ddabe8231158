from __future__ import annotations

import ast

from pt2bot.rules._infer import BOOL_TENSOR, PARAM, TENSORISH, WEAK_BOOL
from pt2bot.rules._base import Rule

_FUNCS = frozenset({"torch.nonzero", "torch.masked_select", "torch.unique", "torch.unique_consecutive",
                    "torch.argwhere"})
_METHODS = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere"})


class DynamicOutputShape(Rule):
    """## What it does
    Flags operators whose output *shape* depends on tensor data: `nonzero`, `argwhere`,
    `masked_select`, `unique`, `unique_consecutive`, single-argument `torch.where(cond)`, and
    boolean-mask indexing `x[mask]` where `mask` is a comparison result.

    ## Why is this bad?
    The size of the result is only known after running the operator. torch 2.13 breaks the
    graph on each of them (GB0036, "Dynamic shape operator") unless
    `torch._dynamo.config.capture_dynamic_output_shape_ops = True`, and export needs extra
    annotations (`torch._check`) to handle the unbacked size.

    ## Example
    ```python
    def forward(self, x):
        return x[x > 0].sum()
    ```

    ## Use instead
    Keep shapes static with a mask:
    ```python
    def forward(self, x):
        return torch.where(x > 0, x, 0).sum()
    ```
    """

    code = "PTC304"
    name = "dynamic-output-shape"
    summary = "data-dependent output shapes (`nonzero`, `x[mask]`, `unique`, ...) (graph break)"
    gb = "GB0036"
    fullgraph_captures = True   # tests/test_rules_torch.py: captured under fullgraph=True
    node_types = (ast.Call, ast.Subscript)

    def check(self, ctx, node):
        if isinstance(node, ast.Subscript):
            if isinstance(node.ctx, ast.Load) and ctx.kind(node.slice) in (BOOL_TENSOR, WEAK_BOOL) \
                    and ctx.kind(node.value) in TENSORISH + (PARAM,):
                ctx.report(self.code, node, "boolean-mask indexing has a data-dependent shape and breaks the "
                           "graph; use `torch.where(mask, x, 0)` or multiply by the mask")
            return
        f = node.func
        target = ctx.call_target
        name = None
        if target in _FUNCS:
            name = target
        elif target == "torch.where" and len(node.args) == 1 and not node.keywords:
            name = "torch.where(cond)"
        elif isinstance(f, ast.Attribute) and f.attr in _METHODS and ctx.kind(f.value) in TENSORISH + (PARAM,):
            name = f".{f.attr}()"
        if name:
            ctx.report(self.code, node, f"`{name}` has a data-dependent output shape and breaks the graph; "
                       "keep shapes static with masks (`torch.where(mask, x, 0)`)")
