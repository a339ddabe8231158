from __future__ import annotations

import ast

from pt2bot.rules.base import Rule


class CompileInLoop(Rule):
    """## What it does
    Flags `torch.compile(...)` of a function created inside a loop (a lambda, a nested `def`,
    a `functools.partial`), and `torch.compile(...)` called inside compiled code (`forward`
    and what it calls). A loop that compiles the same module again, or each of several
    distinct components once, is not flagged: torch 2.13 compiles each distinct code once.

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
    node_types = (ast.Call, ast.For, ast.AsyncFor, ast.While)
    call_keys = frozenset({"torch.compile"})

    def check(self, ctx, node):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            # the functions a loop body defines are new objects on every iteration
            # (what they are is computed only for a `torch.compile(name)` inside the loop: an
            # `ast.walk` of every loop body cost ~4 % of a cold check on transformers)
            loops = ctx.__dict__.setdefault("_ptc402_loops", [])
            loops.append((node.lineno, node.end_lineno or node.lineno, node.body))
            return
        if ctx.call_target != "torch.compile":
            return
        if ctx.loop_depth:
            if node.args and _new_closure(ctx, node, node.args[0]):
                ctx.report(self.code, node, "`torch.compile` of a function created inside the loop compiles "
                           "again when what it captures changes; compile once before the loop and pass what "
                           "varies as an argument", scope="any")
        elif ctx.info.qualname != "<module>":
            ctx.report(self.code, node, "`torch.compile` inside compiled code (e.g. `forward`) is re-applied on "
                       "every call; compile once at set-up time")


def _defined_in(body: list[ast.stmt]) -> frozenset[str]:
    """Names a loop body binds to a new function: `def f`, `f = lambda ...`, `f = partial(...)`."""
    out: set[str] = set()
    for st in body:
        for n in ast.walk(st):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.add(n.name)
            elif isinstance(n, ast.Assign) and (isinstance(n.value, ast.Lambda) or
                                                isinstance(n.value, ast.Call) and
                                                getattr(n.value.func, "id", getattr(n.value.func, "attr", None))
                                                == "partial"):
                out.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return frozenset(out)


def _new_closure(ctx, call: ast.Call, arg: ast.AST) -> bool:
    """The compiled object is a function made anew on each iteration (a lambda, a def or a
    `partial` in the loop body). Compiling the same module or function again, or a distinct
    one per iteration, compiles once per distinct code (measured on torch 2.13: 1 compile for
    the same nn.Module or function compiled 4 times, or for 4 distinct modules; 2 for a lambda
    capturing the loop counter), so those are not flagged: the loop does not compile them again."""
    if isinstance(arg, ast.Lambda):
        return True
    if isinstance(arg, ast.Call) and getattr(arg.func, "id", getattr(arg.func, "attr", None)) == "partial":
        return True
    if isinstance(arg, ast.Name):
        for first, last, body in ctx.__dict__.get("_ptc402_loops", ()):
            if first <= call.lineno <= last and arg.id in _defined_in(body):
                return True
    return False
