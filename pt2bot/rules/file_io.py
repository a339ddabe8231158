from __future__ import annotations

import ast

from pt2bot.rules.base import Rule

_IO = {"open": "GB0059", "input": "GB0059", "torch.save": "GB0007", "torch.load": "GB0007",
       "numpy.save": "GB0007", "numpy.load": "GB0007", "numpy.savetxt": "GB0007", "numpy.loadtxt": "GB0007"}


class FileIO(Rule):
    """## What it does
    Flags file and console I/O in compiled code: `open(...)`, `input()`, `torch.save` /
    `torch.load`, `numpy.save` / `numpy.load`.

    ## Why is this bad?
    I/O cannot be part of a graph. torch 2.13 breaks on `open` (GB0059, then GB0142 for the
    `with` block) and on `torch.save` (GB0007), and runs the I/O eagerly between two graphs,
    on every call.

    ## Example
    ```python
    def forward(self, x):
        y = self.proj(x)
        torch.save(y, "debug.pt")
        return y
    ```

    ## Use instead
    Return what you want to keep and write it from the training loop, or use a forward hook
    outside the compiled region.
    ```python
    def forward(self, x):
        return self.proj(x)
    ```
    """

    code = "PTC108"
    name = "file-io"
    summary = "file or console I/O in compiled code (graph break)"
    gb = "GB0059"
    node_types = (ast.Call,)
    call_keys = frozenset({"open", "input", *_IO})

    def check(self, ctx, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id not in ("open", "input") or f.id in ctx.mod.imports or f.id in ctx.mod.summary.module_names \
                    or f.id in ctx.env:
                return
            target = f.id
        else:
            target = ctx.call_target
        if target in _IO:
            ctx.report(self.code, node, f"`{target}` does I/O inside compiled code and breaks the graph; "
                       "move it out of the model", gb=_IO[target])
