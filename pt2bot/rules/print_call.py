from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.rules.edits import guard_eager_only
from pt2bot.rules.size_specialised import break_message_sizes


class PrintCall(Rule):
    """## What it does
    Flags `print(...)` in compiled code.

    ## Why is this bad?
    Dynamo cannot put a print in the graph: torch 2.13 breaks the graph at every `print`
    (GB0059, "Failed to trace builtin operator") and runs it eagerly, splitting the function
    in two graphs. Inside a loop the whole frame falls back to eager (GB7000). An f-string
    argument that formats a tensor size (`print(f"rows {x.shape[0]}")`) is built before the
    break, so it also specialises the size (each size compiles again): this finding says so,
    PTC307 does not repeat it.

    ## Example
    ```python
    def forward(self, x):
        y = self.proj(x)
        print("activations", y.shape)
        return y.relu()
    ```

    ## Use instead
    Remove it, or keep it for eager runs only:
    ```python
    def forward(self, x):
        y = self.proj(x)
        if not torch.compiler.is_compiling():
            print("activations", y.shape)
        return y.relu()
    ```
    Fixes offered: the guard above (safe: `torch.compiler.is_compiling()` is False in eager,
    so the print runs exactly as before; `pt2bot check --fix` applies it when the file has
    `import torch`), then removing the print (changes what eager prints).
    """

    code = "PTC105"
    name = "print-call"
    summary = "`print()` in compiled code (graph break)"
    gb = "GB0059"
    node_types = (ast.Call,)
    call_keys = frozenset({"print"})

    def check(self, ctx, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print" and "print" not in ctx.mod.imports \
                and "print" not in ctx.mod.summary.module_names:
            # an f-string argument that formats a size is said here, not again as PTC307
            also = break_message_sizes(ctx, node)
            ctx.report(self.code, node, f"`print` breaks the graph{also}; remove it or guard it with "
                       "`if not torch.compiler.is_compiling():`")

    @classmethod
    def fixes(cls, finding, source, tree):
        return guard_eager_only(cls.code, finding, source, tree, "print")
