from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.analysis.torch_modules import is_torch_module_class


def _compiled_attribute(ctx, node: ast.Call) -> ast.AST | None:
    """`torch.compile(self.enc)` / `model.enc.compile()`: the submodule being compiled."""
    if ctx.call_target == "torch.compile" and node.args and isinstance(node.args[0], ast.Attribute):
        return node.args[0]
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "compile" and isinstance(f.value, ast.Attribute) \
            and ctx.mod.resolve(f.value) not in ("torch", "re", "regex"):
        return f.value
    return None


def _is_module_class(mod, dotted: str | None, depth: int = 0) -> bool:
    """A class this file can tell is an `nn.Module`: `torch.nn.Linear`, or a class of this file
    whose bases are (classes of other files are not known here, so they do not count)."""
    if not dotted or depth > 8:
        return False
    head, _, last = dotted.rpartition(".")
    if is_torch_module_class(dotted):
        return True
    cls = mod.summary.classes.get(last) if head == mod.summary.module or not head else None
    return cls is not None and any(_is_module_class(mod, b, depth + 1) for b in cls.bases)


def _local_ctor(ctx, name: str) -> str | None:
    """`m = Net(...)` in the function being walked: the resolved constructor of `m`."""
    for st in ast.walk(ctx.node):
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and \
                any(isinstance(t, ast.Name) and t.id == name for t in st.targets):
            return ctx.mod.resolve(st.value.func)
    return None


def _surely_module(ctx, e: ast.AST) -> bool:
    """`self` in an nn.Module class, `m` built from one, `self.sub` assigned one."""
    if isinstance(e, ast.Name):
        if e.id == "self":
            cls = ctx.cls
            return cls is not None and any(_is_module_class(ctx.mod, b) for b in cls.bases)
        return _is_module_class(ctx.mod, _local_ctor(ctx, e.id))
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" \
            and ctx.cls is not None:
        return _is_module_class(ctx.mod, ctx.cls.attrs.get(e.attr))
    return False


def _is_function(ctx, target: ast.Attribute) -> bool:
    """`self._step_fn` naming a method of the class (or an attribute built by `partial`)."""
    if isinstance(target.value, ast.Name) and target.value.id == "self" and ctx.cls is not None:
        ctor = ctx.cls.attrs.get(target.attr) or ""
        return target.attr in ctx.cls.methods or ctor in ("functools.partial", "partial")
    return False


class CompileSubmodules(Rule):
    """## What it does
    Flags a function (or class/module body) that applies `torch.compile` to two or more
    submodules separately (`self.enc = torch.compile(self.enc)`, `model.dec.compile()`), instead of
    compiling the top-level module once. Only where the parent is surely an `nn.Module` (a class
    of this file or of `torch.nn`): the methods of a class, or the components of an object that
    is not a module (a pipeline), can only be compiled one by one.

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
    call_keys = frozenset({"torch.compile", ".compile"})

    def check(self, ctx, node):
        target = _compiled_attribute(ctx, node)
        # Only submodules of a parent that is surely an nn.Module: compiling the
        # functions of a class, or the components of a pipeline object that is not a module,
        # one by one is the only way to compile them; "compile the parent" does not apply.
        if target is not None and not _is_function(ctx, target) and _surely_module(ctx, target.value):
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
