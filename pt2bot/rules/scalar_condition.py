from __future__ import annotations

import ast

from pt2bot.analysis.infer import SCALAR
from pt2bot.rules.base import Rule
from pt2bot.analysis.queries import condition_part


def _reads_directly(e: ast.AST) -> bool:
    """`x.item() > 0`, `bool(t.any())`: the read is in the condition itself, where PTC101 /
    PTC104 already report it on the same line (one problem, one finding)."""
    for n in ast.walk(e):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in ("item", "tolist") or \
                    isinstance(f, ast.Name) and f.id in ("int", "float", "bool"):
                return True
    return False


def _scalar(ctx, test: ast.AST) -> ast.AST | None:
    """A condition part that is (or compares) a number read from a tensor earlier."""
    if isinstance(test, ast.Compare):
        if any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in test.ops):
            return None
        operands = [test.left, *test.comparators]
        return test if any(ctx.kind(o) == SCALAR for o in operands) and not _reads_directly(test) else None
    return test if ctx.kind(test) == SCALAR and not _reads_directly(test) else None


class ScalarCondition(Rule):
    """## What it does
    Flags `if` / `while` / conditional expressions on a Python number read from a tensor's
    data earlier in the function: the result of `.item()`, `int(t)` / `float(t)`, an element of
    `.tolist()`, and what is computed from them (`n = x.sum().item(); if n * 2 > 3:`). A read
    inside the condition itself (`if x.item() > 0:`) is left to PTC101/PTC104 on that line.

    ## Why is this bad?
    The read itself already breaks the graph (PTC101/PTC102/PTC104). The branch is what keeps
    the fix from working: with `torch._dynamo.config.capture_scalar_outputs = True` or
    `fullgraph=True` torch 2.13 captures the read as an unbacked symbol, and the branch on it
    is then data-dependent branching (GB0170, "Data-dependent branching"; `fullgraph=True`
    raises); `torch.export` fails on it (`GuardOnDataDependentSymNode`). With the default
    settings the branch adds no break of its own (the read broke the graph before it).

    ## Example
    ```python
    def forward(self, x):
        n = x.sum().item()
        if n > 0:
            return x * 2
        return x
    ```

    ## Use instead
    Keep the value a tensor and select with it:
    ```python
    def forward(self, x):
        return torch.where(x.sum() > 0, x * 2, x)
    ```
    """

    code = "PTC203"
    name = "scalar-condition"
    summary = "branch on a number read from a tensor (`.item()`, `int(t)`; fails export/fullgraph)"
    severity = "warning"
    claim = "export"
    node_types = (ast.If, ast.While, ast.IfExp)

    def check(self, ctx, node):
        hit = condition_part(ctx, node.test, _scalar)
        if hit is not None:
            ctx.report(self.code, hit, "a branch on a number read from a tensor: with capture_scalar_outputs=True, "
                       "fullgraph=True or torch.export it is data-dependent branching (GB0170); keep it a tensor "
                       "and use `torch.where`")
