from __future__ import annotations

import ast

from pt2bot.rules._infer import SIZE, SIZE_BOOL, is_size_order_compare
from pt2bot.rules._base import Rule
from pt2bot.rules._util import mark_boolops


def _conditions(test: ast.AST):
    """The comparisons that decide a condition (through `not`, `and`, `or`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _conditions(test.operand)
    elif isinstance(test, ast.BoolOp):
        for v in test.values:
            yield from _conditions(v)
    else:
        yield test


def _size_compare(ctx, test: ast.AST) -> ast.AST | None:
    """The first part of a condition that compares a size with `<`/`<=`/`>`/`>=` (not against
    0 or 1: `_infer.is_size_order_compare`), directly (`min(h // 2, w // 2) < PS`) or through
    a name or a helper of this file that holds such a comparison (`if not _fits(nbytes):`)."""
    for sub in _conditions(test):
        if not isinstance(sub, ast.Compare):
            if type(sub) in (ast.Name, ast.Call) and ctx.kind(sub) == SIZE_BOOL:
                return sub
            continue
        if any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in sub.ops):
            continue
        if not is_size_order_compare(sub):
            continue
        if SIZE in [ctx.kind(o) for o in [sub.left, *sub.comparators]]:
            return sub
    return None


def _only_raises(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Raise)


class ShapeBranch(Rule):
    """## What it does
    Flags `if` / `while` / conditional expressions that compare a size (`x.shape[0]`,
    `x.size(1)`, `B, T = x.shape`) with `<`, `<=`, `>`, `>=` against something other than 0 or
    1, e.g. `if x.shape[0] > 4:`. Equality tests (`if x.shape[-1] == 2:`) are not flagged: they
    nearly always dispatch on a dimension that does not vary. Sizes are followed through
    arithmetic, `min`/`max`, `numel()`, lists and tuples of sizes, names holding a comparison
    (`big = n > 4; if big:`), a helper of the same file that returns one
    (`if not _fits(h * w * 4):`), and the operands of `and`/`or` before the last (their truth
    value decides whether to go on). A size the code names a channel or head count (`ch`,
    `heads`) is fixed per model and not followed.

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
    node_types = (ast.If, ast.While, ast.IfExp, ast.BoolOp)

    def check(self, ctx, node):
        # The tests of if/while/ternaries, and the operands of `and`/`or` before the last one
        # (`a and n >= T and b` takes the truth value of `n >= T` to decide whether to go on:
        # kornia's `_bilateral_blur_cpu_eligible` returns such a chain). A BoolOp that is an
        # if's test is the if's: seen once (the walk visits the If before its test).
        seen = ctx.__dict__.setdefault("_ptc301_seen", set())
        if type(node) is ast.BoolOp:
            if id(node) in seen:
                return
            tests = node.values[:-1]
        else:
            mark_boolops(node.test, seen)
            if isinstance(node, ast.If) and _only_raises(node.body):
                return
            tests = [node.test]
        for test in tests:
            hit = _size_compare(ctx, test)
            if hit is not None:
                ctx.report(self.code, hit, _message(hit, type(node) is ast.BoolOp))
                return


def _message(hit: ast.AST, operand: bool) -> str:
    why = "branching on a tensor size guards on it"
    if operand:
        why = "`and`/`or` takes the truth value of this tensor size comparison: dynamo guards on it"
    elif type(hit) is ast.Call:
        why = f"`{ast.unparse(hit.func)}(...)` compares a tensor size: branching on it guards on the size"
    elif type(hit) is ast.Name:
        why = f"`{hit.id}` holds a comparison of a tensor size: branching on it guards on the size"
    return (f"{why}: other sizes recompile and export cannot keep the dim dynamic; make the code "
            "size-independent (or decide outside the compiled code, or mark the dim static)")
