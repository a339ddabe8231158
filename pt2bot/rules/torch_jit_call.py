from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import function_binds, module_binds, node_span, replace_spans, source_lines

# The torch.jit helpers dynamo does not trace (it calls them "marked as skipped", GB0007), measured
# on torch 2.13.0+cpu and 2.14.1 (tests/fixtures/rules/ptc111_torch_jit_call.py through
# tests/test_rules_torch.py). The others real code calls in `forward` compile without a break and
# are not listed: torch.jit.is_scripting / is_tracing (False under dynamo), annotate,
# _unwrap_optional, and functions decorated with unused / ignore / export / _overload /
# script_if_tracing.
_SKIPPED = {
    "torch.jit.isinstance": "use the builtin `isinstance(x, torch.Tensor)` (or `x is not None` for an "
                            "Optional), which dynamo evaluates at trace time",
    "torch._jit_internal._isinstance": "use the builtin `isinstance`",
    "torch.jit.fork": "call the function directly: inside torch.compile the compiler schedules the work",
    "torch.jit.wait": "use the value itself: call the function directly instead of `torch.jit.fork`",
    "torch.jit._fork": "call the function directly",
    "torch.jit._wait": "use the value itself",
}


class TorchJitCall(Rule):
    """## What it does
    Flags the TorchScript helpers that dynamo does not trace, called in compiled code:
    `torch.jit.isinstance(...)`, `torch.jit.fork(...)` and `torch.jit.wait(...)`.

    ## Why is this bad?
    dynamo treats these functions as "marked as skipped": torch 2.13 and 2.14 break the graph
    at each call (GB0007, "Attempted to call function marked as skipped"), on every call of the
    model. Code written for TorchScript uses `torch.jit.isinstance` to refine an `Optional` or
    a container type; under torch.compile the builtin `isinstance` does the same and is
    evaluated while tracing. (`torch.jit.is_scripting()`, `torch.jit.is_tracing()`,
    `torch.jit.annotate(...)` and functions decorated with `@torch.jit.unused`,
    `@torch.jit.ignore` or `@torch.jit.export` compile without a break and are not flagged.)

    ## Example
    ```python
    def forward(self, x, skip: Optional[torch.Tensor] = None):
        if skip is not None and torch.jit.isinstance(skip, torch.Tensor):
            x = x + skip
        return x
    ```

    ## Use instead
    ```python
    def forward(self, x, skip: Optional[torch.Tensor] = None):
        if isinstance(skip, torch.Tensor):
            x = x + skip
        return x
    ```
    Fix offered (not safe: run and compared before it is posted): `torch.jit.isinstance(x, T)`
    as the builtin `isinstance(x, T)` (torchmultimodal's `assert torch.jit.isinstance(output,
    Tensor)`), where `T` is a class or a tuple of classes written as names (`Tensor`,
    `torch.Tensor`, `(int, float)`). A typing form (`List[str]`, `Optional[Tensor]`,
    `Dict[str, int]`) is what `torch.jit.isinstance` refines and the builtin rejects
    (TypeError): no edit. `torch.jit.fork` / `torch.jit.wait` come in pairs over two statements
    and stay text.
    """

    code = "PTC111"
    name = "torch-jit-call"
    summary = "`torch.jit.isinstance` / `torch.jit.fork` / `torch.jit.wait` in compiled code (graph break)"
    gb = "GB0007"
    node_types = (ast.Call,)
    call_keys = frozenset(_SKIPPED)

    @classmethod
    def fixes(cls, finding, source, tree):
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
        if node is None or len(node.args) != 2 or node.keywords or not _plain_classes(node.args[1]):
            return []
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in ("isinstance", "_isinstance")):
            return []
        if module_binds(tree, "isinstance") or function_binds(tree, node, "isinstance"):
            return []   # the file's own `isinstance` is not the builtin
        lines = source_lines(source)
        first, last = node.lineno, node.end_lineno or node.lineno
        new = replace_spans(lines, first, last, [(*node_span(node.func), "isinstance")])
        return [Candidate(code=cls.code, path=finding.path, start_line=first, end_line=last,
                          lines=tuple(new), title="use the builtin `isinstance`, which dynamo evaluates "
                          "while tracing", safe=False)]

    def check(self, ctx, node):
        target = ctx.call_target
        fix = _SKIPPED.get(target or "")
        if fix is not None:
            ctx.report(self.code, node, f"`{target}()` is not traced by dynamo (a function marked as skipped) "
                       f"and breaks the graph on every call; {fix}")


def _plain_classes(node: ast.AST) -> bool:
    """A class written as a name or dotted name, or a tuple of them: what the builtin takes."""
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_plain_classes(e) for e in node.elts)
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)

