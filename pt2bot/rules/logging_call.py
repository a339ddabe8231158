from __future__ import annotations

import ast

from pt2bot.rules._base import Rule
from pt2bot.rules.size_specialised import break_message_sizes

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
    Each log line in `forward` splits the graph. An f-string argument that formats a tensor size
    (`logger.info(f"rows {x.shape[0]}")`) is built before the call breaks, so it also
    specialises the size (each size compiles again): this finding says so, PTC307 does not
    repeat it. Lazy arguments (`logger.info("rows %s", n)`) keep the size symbolic.

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
            what, gb = f"logging.{f.attr}", "GB4841"
        elif (isinstance(recv, ast.Name) and recv.id in ctx.mod.loggers and recv.id not in ctx.env) or (
                isinstance(recv, ast.Attribute) and recv.attr in ("logger", "_logger", "log")):
            what, gb = f"Logger.{f.attr}", None
        else:
            return
        # an f-string argument that formats a size is said here, not again as PTC307
        also = break_message_sizes(ctx, node)
        ctx.report(self.code, node, f"`{what}` breaks the graph{also}; log outside compiled code or guard it "
                   "with `if not torch.compiler.is_compiling():`", gb=gb)
