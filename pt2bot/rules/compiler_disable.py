from __future__ import annotations

import ast

from pt2bot.analysis.infer import DISABLE_FUNCS
from pt2bot.rules.base import Rule


class CompilerDisable(Rule):
    """## What it does
    Flags each call from compiled code (a `forward`, or a helper reached from one, in any file)
    of a function disabled with `@torch.compiler.disable` / `@torch._dynamo.disable` or
    `f = torch.compiler.disable(g)` at module level, and `torch.compiler.disable(fn)(...)`
    calls inside compiled code. The finding is at the call, where dynamo reports the break (at
    the decorator where compiled code only passes the function to one of yours that calls it:
    that call of a parameter is out of sight); a disabled function that compiled code never
    calls is not flagged.

    ## Why is this bad?
    A disabled function is a hole in the graph: torch 2.13 breaks the graph at every call and
    runs it eagerly (GB0098, "Skip calling `torch.compiler.disable()`d function"; GB0099, "Skip
    inlining", for a method called through `self`, a submodule's disabled `forward`, or
    `recursive=False`). On the hot path that means two graphs and a Python round-trip per call.
    It is the right tool only for code that truly cannot be traced, and then it should be as
    small as possible.

    ## Example
    ```python
    @torch.compiler.disable
    def scale(y):
        return y * 2

    class Net(nn.Module):
        def forward(self, x):
            return scale(x) + 1
    ```

    ## Use instead
    Let dynamo trace it (remove the decorator), or isolate only the untraceable part, or
    register it as a custom op (`torch.library.custom_op`) so it stays in the graph.
    ```python
    def scale(y):
        return y * 2
    ```
    """

    code = "PTC403"
    name = "compiler-disable"
    summary = "`torch.compiler.disable` on the hot path (graph break at every call)"
    severity = "warning"
    gb = "GB0098"
    node_types = (ast.Call,)
    call_keys = frozenset({"()"})

    def check(self, ctx, node):
        f = node.func
        if isinstance(f, ast.Call) and ctx.mod.resolve(f.func) in DISABLE_FUNCS:
            ctx.report(self.code, node, "calling a `torch.compiler.disable`d function from compiled code breaks "
                       "the graph; let dynamo trace it or make it a custom op")

    @staticmethod
    def decorator_message(qualname: str) -> str:
        return (f"`{qualname}` is disabled for torch.compile and compiled code calls it (passed by reference to a "
                "function that calls it): every call breaks the graph; remove the decorator or make it a custom op")

    @staticmethod
    def call_message(qualname: str, path: str, line: int) -> str:
        return (f"`{qualname}` is disabled for torch.compile ({path}:{line}): this call from compiled code "
                "breaks the graph and runs it eagerly; let dynamo trace it (remove the decorator) or make it "
                "a custom op")
