from __future__ import annotations

import ast

from pt2bot.rules._base import Rule


def _compiled_attribute(ctx, node: ast.Call) -> ast.AST | None:
    """`torch.compile(self.enc)` / `model.enc.compile()`: the submodule being compiled."""
    if ctx.call_target == "torch.compile" and node.args and isinstance(node.args[0], ast.Attribute):
        return node.args[0]
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "compile" and isinstance(f.value, ast.Attribute) \
            and ctx.mod.resolve(f.value) not in ("torch", "re", "regex"):
        return f.value
    return None


class CompileSubmodules(Rule):
    """## What it does
    Flags a function (or class/module body) that applies `torch.compile` to two or more
    submodules separately (`self.enc = torch.compile(self.enc)`, `model.dec.compile()`), instead of
    compiling the top-level module once.

    ## Why is this bad?
    Each compiled submodule is its own graph, and the code between them runs eagerly: torch 2.13
    produces one graph per submodule where compiling the parent gives one graph, so the
    optimiser cannot fuse across the boundaries, and every boundary costs a guard check and a
    Python round-trip. Compile regionally on purpose only (e.g. repeated transformer blocks to
    cut compile time).

    ## Example
    ```python
    model.encoder = torch.compile(model.encoder)
    model.decoder = torch.compile(model.decoder)
    ```

    ## Use instead
    ```python
    model = torch.compile(model)
    ```
    """

    code = "PTC401"
    name = "compile-submodules"
    summary = "`torch.compile` applied to several submodules instead of once at the top"
    severity = "warning"
    claim = "graphs"
    doc_url = "https://docs.pytorch.org/tutorials/recipes/regional_compilation.html"
    node_types = (ast.Call,)

    def check(self, ctx, node):
        target = _compiled_attribute(ctx, node)
        if target is not None:
            per_scope = ctx.mod.__dict__.setdefault("_ptc401", {})
            per_scope.setdefault(ctx.info.qualname, []).append((node, ast.unparse(target)))

    def finish(self, mod):
        for qualname, calls in mod.__dict__.get("_ptc401", {}).items():
            if len({name for _, name in calls}) < 2:
                continue
            first = calls[0][1]
            for node, name in calls[1:]:
                mod.report(self.code, node, f"`{name}` is compiled separately from `{first}`: each is its own graph "
                           "with eager code between them; compile the parent module once", qualname, "any")
