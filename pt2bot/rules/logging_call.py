from __future__ import annotations

import ast

from pt2bot.rules._base import Rule

_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log",
                      "warning_once", "info_once"})


class LoggingCall(Rule):
    """## What it does
    Flags logging calls in compiled code: methods of a `logging.Logger` (a module-level
    `logger = logging.getLogger(...)`, or a name such as `logger`/`log`) and the `logging.info`
    style module functions.

    ## Why is this bad?
    torch 2.13 breaks the graph on `Logger` methods (GB0291, "logging.Logger method not
    supported for non-export cases") and on the `logging.*` functions (GB4841 in 2.13).
    Each log line in `forward` splits the graph.

    ## Example
    ```python
    logger = logging.getLogger(__name__)

    def forward(self, x):
        logger.info("forward %s", x.shape)
        return self.proj(x)
    ```

    ## Use instead
    Log outside the compiled region, or guard it:
    ```python
    def forward(self, x):
        if not torch.compiler.is_compiling():
            logger.info("forward %s", x.shape)
        return self.proj(x)
    ```
    """

    code = "PTC106"
    name = "logging-call"
    summary = "logging calls in compiled code (graph break)"
    gb = "GB0291"
    node_types = (ast.Call,)
    call_keys = frozenset("." + m for m in _METHODS)

    def check(self, ctx, node):
        f = node.func
        if not isinstance(f, ast.Attribute) or f.attr not in _METHODS:
            return
        recv = f.value
        target = ctx.mod.resolve(recv)
        if target == "logging":
            ctx.report(self.code, node, f"`logging.{f.attr}` breaks the graph; log outside compiled code or "
                       "guard it with `if not torch.compiler.is_compiling():`", gb="GB4841")
        elif (isinstance(recv, ast.Name) and recv.id in ctx.mod.loggers and recv.id not in ctx.env) or (
                isinstance(recv, ast.Attribute) and recv.attr in ("logger", "_logger", "log")):
            ctx.report(self.code, node, f"`Logger.{f.attr}` breaks the graph; log outside compiled code or "
                       "guard it with `if not torch.compiler.is_compiling():`")
