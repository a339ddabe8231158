from __future__ import annotations

import ast

from pt2bot.analysis.infer import SIZE, SIZE_BOOL, is_size_order_compare
from pt2bot.rules.base import Rule
from pt2bot.analysis.queries import condition_part, live_operands, mark_boolops


def _size_compare(ctx, test: ast.AST) -> ast.AST | None:
    """The first part of a condition that compares a size with `<`/`<=`/`>`/`>=` (not against
    0 or 1: `analysis.infer.is_size_order_compare`), directly (`min(h // 2, w // 2) < PS`) or through
    a name or a helper of this file that holds such a comparison (`if not _fits(nbytes):`).
    Through `not`, `and`, `or`, without the operands dynamo never evaluates
    (`not torch.compiler.is_compiling() and x.shape[0] > 3`: analysis/queries.py `live_operands`)."""
    return condition_part(ctx, test, _size_leaf)


def _size_leaf(ctx, sub: ast.AST) -> ast.AST | None:
    if not isinstance(sub, ast.Compare):
        return sub if type(sub) in (ast.Name, ast.Call) and ctx.kind(sub) == SIZE_BOOL else None
    if any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in sub.ops):
        return None
    if not is_size_order_compare(sub):
        return None
    return sub if SIZE in [ctx.kind(o) for o in [sub.left, *sub.comparators]] else None


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
    value decides whether to go on). A size the code names a channel, head, class or
    vocabulary count (`ch`, `n_pred_ch`, `heads`, `head_dim`, `vocab_size`) is fixed per model
    and not followed, nor is a dim other than the batch compared with a setting so named
    (`x.shape[1] < self.in_channels`); the sizes of a module's own parameters, buffers and
    gradients (`self.weight.shape`, `p.grad.shape` of `for p in self.parameters()`) are not
    sizes of the input.

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
            # the operands whose truth value decides whether to go on (all but the last), up to
            # one that short-circuits while compiling
            live = live_operands(ctx, node)
            tests = live if len(live) < len(node.values) else live[:-1]
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
