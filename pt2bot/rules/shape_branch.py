from __future__ import annotations

import ast

from pt2bot.rules._infer import SIZE
from pt2bot.rules._base import Rule


def _conditions(test: ast.AST):
    """The comparisons that decide a condition (through `not`, `and`, `or`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _conditions(test.operand)
    elif isinstance(test, ast.BoolOp):
        for v in test.values:
            yield from _conditions(v)
    else:
        yield test


def _size_compare(ctx, test: ast.AST) -> ast.Compare | None:
    for sub in _conditions(test):
        if not isinstance(sub, ast.Compare) or any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
                                                   for o in sub.ops):
            continue
        operands = [sub.left] + list(sub.comparators)
        kinds = [ctx.kind(o) for o in operands]
        if SIZE not in kinds:
            continue
        # `==` / `!=` dispatch on a size is nearly always on a fixed dim (`if x.shape[-1] == 2`);
        # the pitfall is bucketing a varying size with an ordering comparison.
        if not any(isinstance(o, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for o in sub.ops):
            continue
        # `x.shape[0] == 0` / `== 1`: sizes 0 and 1 are specialised by dynamo anyway
        if any(isinstance(o, ast.Constant) and o.value in (0, 1) for o in operands):
            continue
        return sub
    return None


def _only_raises(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Raise)


class ShapeBranch(Rule):
    """## What it does
    Flags `if` / `while` / conditional expressions that compare a size (`x.shape[0]`,
    `x.size(1)`, `B, T = x.shape`) with `<`, `<=`, `>`, `>=` against something other than 0 or
    1, e.g. `if x.shape[0] > 4:`. Equality tests (`if x.shape[-1] == 2:`) are not flagged: they
    nearly always dispatch on a dimension that does not vary.

    ## Why is this bad?
    A branch on a size is not a graph break, but dynamo must guard on it: the compiled graph is
    valid only for sizes on the same side of the comparison, so inputs on the other side
    recompile, and `torch.export` with that dimension dynamic fails with a constraint
    violation. Checks that only `raise` (input validation) are not flagged; comparisons with
    0 and 1 are not either (dynamo specialises those sizes anyway).

    ## Example
    ```python
    def forward(self, x):
        if x.shape[0] > 4:
            return self.big(x)
        return self.small(x)
    ```

    ## Use instead
    Make the behaviour independent of the size, or decide outside the compiled model (for
    example at construction time):
    ```python
    def forward(self, x):
        return self.big(x)
    ```
    """

    code = "PTC301"
    name = "shape-branch"
    summary = "branch on a tensor size (guard, recompiles, export constraint)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.If, ast.While, ast.IfExp)

    def check(self, ctx, node):
        if isinstance(node, ast.If) and _only_raises(node.body):
            return
        hit = _size_compare(ctx, node.test)
        if hit is not None:
            ctx.report(self.code, hit, "branching on a tensor size guards on it: other sizes recompile and "
                       "export cannot keep the dim dynamic; make the code size-independent")
