from __future__ import annotations

import ast

from pt2bot.rules._base import Rule


class CompileInLoop(Rule):
    """## What it does
    Flags `torch.compile(...)` called inside a loop or inside compiled code (`forward` and
    what it calls).

    ## Why is this bad?
    `torch.compile` belongs at set-up time. Called in a loop or on every `forward`, it wraps a
    new function each time; a lambda or closure that captures a different value on each call
    fails its guards, so torch 2.13 compiles it again (measured: a closure over the loop
    counter compiles twice in 4 iterations where compiling once outside the loop compiles once;
    a lambda reading a changing *global* compiles on every iteration, up to the recompile
    limit, then runs eagerly).
    Inside an already compiled region the inner `torch.compile` is ignored and only adds
    confusion.

    ## Example
    ```python
    for k in range(steps):
        step = torch.compile(lambda z: z * k + 1)
        y = step(x)
    ```

    ## Use instead
    Compile once, outside the loop, and pass what varies as an argument (a tensor, so that a
    new value is not a new constant):
    ```python
    step = torch.compile(lambda z, k: z * k + 1)
    for k in range(steps):
        y = step(x, torch.tensor(float(k)))
    ```
    """

    code = "PTC402"
    name = "compile-in-loop"
    summary = "`torch.compile` called inside a loop or inside `forward` (recompiles)"
    severity = "warning"
    claim = "recompile"
    node_types = (ast.Call,)

    def check(self, ctx, node):
        if ctx.call_target != "torch.compile":
            return
        if ctx.loop_depth:
            ctx.report(self.code, node, "`torch.compile` inside a loop compiles again on every iteration when "
                       "what it wraps changes; compile once before the loop", scope="any")
        elif ctx.info.qualname != "<module>":
            ctx.report(self.code, node, "`torch.compile` inside compiled code (e.g. `forward`) is re-applied on "
                       "every call; compile once at set-up time")
