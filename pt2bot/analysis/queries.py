"""Small helpers shared by rule modules."""
from __future__ import annotations

import ast
from typing import Callable

from pt2bot.analysis.infer import BOOL_TENSOR, PARAM, TENSOR, TENSORISH, FunctionContext, is_compiling_check


def method_call(node: ast.Call, names: frozenset[str] | set[str] | tuple[str, ...], nargs: int | None = 0
                ) -> ast.expr | None:
    """The receiver of `recv.name(...)` when the method name matches (and arity, if given)."""
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr in names and (nargs is None or len(node.args) == nargs) \
            and not node.keywords:
        return f.value
    return None


def is_tensorish(ctx: FunctionContext, e: ast.AST, *, params: bool = False) -> bool:
    k = ctx.kind(e)
    return k in TENSORISH or (params and k == PARAM) or ctx.self_tensor_attr(e)


def live_operands(ctx: FunctionContext, test: ast.BoolOp) -> list[ast.expr]:
    """The operands dynamo evaluates: none after `not is_compiling()` in an `and`, or after
    `is_compiling()` in an `or` (short-circuited while compiling)."""
    skip = -1 if isinstance(test.op, ast.And) else 1
    out = []
    for v in test.values:
        out.append(v)
        if is_compiling_check(ctx.mod, v) == skip:
            break
    return out


def condition_part(ctx: FunctionContext, test: ast.AST,
                   leaf: Callable[[FunctionContext, ast.AST], ast.AST | None]) -> ast.AST | None:
    """The first part of a condition that `leaf` picks, with `not`, `and` and `or` unwrapped and
    the operands dynamo never evaluates skipped (`live_operands`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return condition_part(ctx, test.operand, leaf)
    if isinstance(test, ast.BoolOp):
        for v in live_operands(ctx, test):
            hit = condition_part(ctx, v, leaf)
            if hit is not None:
                return hit
        return None
    return leaf(ctx, test)


def _tensor_value(ctx: FunctionContext, test: ast.AST) -> ast.AST | None:
    if ctx.kind(test) in (TENSOR, BOOL_TENSOR):
        return test
    return self_tensor_value(ctx, test)


def self_tensor_value(ctx: FunctionContext, test: ast.AST) -> ast.AST | None:
    """`_tensor_value` of a test whose kind is not a tensor's: a tensor attribute of the module."""
    # `if not self.ready:` where `ready` is a registered buffer (or a tensor assigned in
    # `__init__`): the truth value of a tensor, on every call (GB0170)
    if ctx.self_tensor_attr(test):
        return test
    if isinstance(test, ast.Compare) and ctx.is_tensor_compare(test) and \
            any(ctx.self_tensor_attr(o) for o in [test.left, *test.comparators]):
        return test
    return None


def reads_tensor_value(ctx: FunctionContext, test: ast.AST) -> ast.AST | None:
    """The sub-expression whose truth value is a tensor's value, if any (`not`, `and`, `or` unwrapped)."""
    return condition_part(ctx, test, _tensor_value)


def mark_boolops(test: ast.AST, seen: set[int]) -> None:
    """Add to `seen` the `and`/`or` chains a condition is made of (through `not`): the rule
    reporting the condition reports them with it, not again as operands of their own."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        mark_boolops(test.operand, seen)
    elif isinstance(test, ast.BoolOp):
        seen.add(id(test))
        for v in test.values:
            mark_boolops(v, seen)


# Measured on torch 2.13 (Python 3.11): a graph break inside a generator expression, `.item()`,
# `.tolist()`, `float(t)`/`int(t)`/`bool(t)` (as the element, in a filter, or in a later `for`
# of the expression; whether `tuple`, `sum`, `any` or a `for` loop consumes it), is one dynamo
# cannot resume after ("Failed to handle graph break gracefully"): it compiles nothing of the
# function and runs all of it eagerly (the functions it calls are still compiled on their own).
# The same read in a list comprehension, or in the generator's first iterable (which the
# function itself evaluates), is an ordinary break: a graph before it and one after.
IN_GENERATOR = ("; inside a generator expression dynamo cannot resume after that break: it gives up on "
                "the whole function, which runs uncompiled (a list comprehension `[...]` makes it one "
                "ordinary break)")


def generator_note(ctx: FunctionContext) -> str:
    """What a graph break at the node being checked costs beyond one break: IN_GENERATOR inside
    the part of a generator expression that its generator evaluates, else nothing."""
    return IN_GENERATOR if ctx.in_generator else ""
