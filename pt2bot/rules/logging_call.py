from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.rules.edits import call_target, guard_eager_only, import_targets
from pt2bot.rules.size_specialised import break_message_sizes

# a logger's methods (also what pt2bot/rules/branch_fixes.py takes for a call that only tells the user)
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log",
                      "warning_once", "info_once"})
# The `warnings` functions that break (GB0007: dynamo cannot trace the C builtins `_warnings.warn`
# and `_warnings._filters_mutated`), measured on torch 2.13.0 and 2.14.1 (tests/fixtures/rules/
# ptc106_warnings_warn.py). `warnings.catch_warnings()` itself is traced: not here.
_WARN = frozenset({"warnings.warn", "warnings.warn_explicit"})
_FILTERS = frozenset({"warnings.simplefilter", "warnings.filterwarnings", "warnings.resetwarnings"})
# their call keys: `warnings.warn(...)` (".warn") and `from warnings import warn; warn(...)` ("warn")
_WARNINGS_KEYS = frozenset(k for t in _WARN | _FILTERS for n in (t.rpartition(".")[2],) for k in (n, "." + n))


class LoggingCall(Rule):
    """## What it does
    Flags logging calls in compiled code: methods of a `logging.Logger` (a module-level
    `logger = logging.getLogger(...)`, or a name such as `logger`/`log`), the `logging.info`
    style module functions, and the `warnings` calls that break: `warnings.warn` (also
    `from warnings import warn`), `warnings.warn_explicit`, and the filter setters
    `warnings.simplefilter`, `filterwarnings` and `resetwarnings`.

    ## Why is this bad?
    torch 2.13 breaks the graph on `Logger` methods (GB0291, "logging.Logger method not
    supported for non-export cases") and on the `logging.*` functions (GB4841 in 2.13).
    Each log line in `forward` splits the graph. An f-string argument that formats a tensor size
    (`logger.info(f"rows {x.shape[0]}")`) is built before the call breaks, so it also
    specialises the size (each size compiles again): this finding says so, PTC307 does not
    repeat it. Lazy arguments (`logger.info("rows %s", n)`) keep the size symbolic.

    `warnings.warn` breaks too (GB0007, "Attempted to call function marked as skipped": the C
    builtin `_warnings.warn`), measured on torch 2.13 and 2.14 with a literal or an f-string
    message, any category (`DeprecationWarning`, `UserWarning`, `FutureWarning`) and
    `stacklevel=`; `fullgraph=True` raises. A warning given once (`if not self._warned:`) still
    breaks the first call; most warnings sit in a branch taken only on request (a deprecated
    argument), and the finding then carries that condition. Changing the filters breaks as well
    (`_warnings._filters_mutated`); `with warnings.catch_warnings():` alone is traced. Dynamo's
    hint, `torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)`, traces only
    calls without a category or keyword argument (GB0296 otherwise).

    ## Example
    ```python
    logger = logging.getLogger(__name__)

    def forward(self, x):
        logger.info("forward %s", x.shape)
        return self.proj(x)
    ```

    ## Use instead
    Log (or warn) outside the compiled region, or guard it:
    ```python
    def forward(self, x):
        if not torch.compiler.is_compiling():
            logger.info("forward %s", x.shape)
            warnings.warn("`scale` is deprecated", FutureWarning)
        return self.proj(x)
    ```
    Fixes offered: the guard above around the one call (safe: the test is False in eager, so
    the call runs as before; `pt2bot check --fix` applies it when the file has `import torch`),
    then removing the call. The same for a warning only dynamo found (GB0007 on a
    `warnings.warn` line in code the checker did not reach, a property `forward` reads).
    """

    code = "PTC106"
    name = "logging-call"
    summary = "logging and `warnings.warn` calls in compiled code (graph break)"
    gb = "GB0291"
    gb_also = ("GB0007", "GB4841")   # a `warnings` function; `logging.<level>(...)`
    node_types = (ast.Call,)
    call_keys = frozenset("." + m for m in LOG_METHODS) | _WARNINGS_KEYS

    def check(self, ctx, node):
        f = node.func
        target = ctx.call_target
        if target in _WARN or target in _FILTERS:
            self._warnings(ctx, node, target)
            return
        if not isinstance(f, ast.Attribute) or f.attr not in LOG_METHODS:
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

    @classmethod
    def fixes(cls, finding, source, tree):
        if finding.gb == "GB0007" and not _warns(finding, tree):
            # dynamo's GB0007 names any skipped function (`time.time()`, a C builtin): a
            # finding made for its line (a `warnings.warn` in a property the checker did not
            # reach, tensorly-torch's lasso loss) is this rule's only where the call warns
            return []
        what = "`warnings` call" if finding.gb == "GB0007" else "log call"
        return guard_eager_only(cls.code, finding, source, tree, what)

    def _warnings(self, ctx, node, target):
        if isinstance(node.func, ast.Name) and node.func.id in _local_names(ctx):   # a local `warn`
            return
        if target in _FILTERS:
            ctx.report(self.code, node, f"`{target}` breaks the graph (it mutates the warning filters, "
                       "which dynamo cannot trace); set warning filters outside compiled code", gb="GB0007")
            return
        also = break_message_sizes(ctx, node)
        ctx.report(self.code, node, f"`{target}` breaks the graph{also}; warn outside compiled code (e.g. in "
                   "`__init__`) or guard it with `if not torch.compiler.is_compiling():`", gb="GB0007")


def _warns(finding, tree: ast.Module) -> bool:
    """The call at `finding` is one of the `warnings` functions that break (`_WARN`, `_FILTERS`),
    by the module's name for `warnings` or as `from warnings import warn` binds it."""
    call = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    return call is not None and call_target(call.func, import_targets(tree)) in _WARN | _FILTERS


def _local_names(ctx) -> frozenset[str]:
    """Names the walked function binds itself (assignments, parameters, nested defs): a bare
    `warn(...)` there is not the imported `warnings.warn`. Scanned once per function, and only
    for a bare call that resolves to a `warnings` function (rare), so off the hot path."""
    names = ctx.__dict__.get("_ptc106_locals")
    if names is None:
        out = set()
        for n in ast.walk(ctx.node):
            t = type(n)
            if t is ast.Name and type(n.ctx) is ast.Store:
                out.add(n.id)
            elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) and n is not ctx.node:
                out.add(n.name)
            elif t is ast.arg:
                out.add(n.arg)
        names = ctx.__dict__["_ptc106_locals"] = frozenset(out)
    return names
