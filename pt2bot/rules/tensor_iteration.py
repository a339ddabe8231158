from __future__ import annotations

import ast

from pt2bot.analysis.infer import PARAM, TENSORISH, TENSORS
from pt2bot.rules.base import Rule


class TensorIteration(Rule):
    """## What it does
    Flags Python `for` loops (and comprehensions) that iterate over a tensor:
    `for row in x.unbind(0)` is explicit, `for row in torch.relu(x)` is not; and over the pieces
    of a tensor split along dim 0 (`for part in x.chunk(4)`, `x.split(2)`). Pieces split along
    another dim (`x.chunk(3, dim=-1)`), the outputs of `torch.meshgrid`, and a module's own
    buffers (a size fixed per model) are not flagged: their count does not depend on the batch.

    ## Why is this bad?
    Dynamo unrolls the loop once per element, so the trace bakes in the size of the first
    dimension: torch 2.13 does not break the graph, but it specialises that dimension. Every new
    size recompiles (even with `dynamic=True`), and `torch.export` with a dynamic dim fails with a
    constraint violation. Long tensors also make huge graphs.

    ## Example
    ```python
    def forward(self, x):
        h = torch.tanh(x)
        out = [row * 2 for row in h]
        return torch.stack(out)
    ```

    ## Use instead
    Vectorise over the dimension:
    ```python
    def forward(self, x):
        return torch.tanh(x) * 2
    ```
    """

    code = "PTC202"
    name = "tensor-iteration"
    summary = "Python loop over a tensor (unrolled; specialises the size)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.For, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

    def check(self, ctx, node):
        if isinstance(node, ast.For):
            self._check_iter(ctx, node.iter)
        else:
            for g in node.generators:
                self._check_iter(ctx, g.iter)

    def _check_iter(self, ctx, it):
        if isinstance(it, ast.Call):
            split = _split_dim(ctx, it)
            if split is not None:
                # Iterating over `x.chunk(n, dim)` runs once per piece: the number of pieces
                # depends on a size only when splitting along dim 0 (the batch); measured on
                # torch 2.13: chunk/split along dim 0 fail export with a dynamic batch,
                # along -1, unbind(1) and meshgrid outputs do not.
                if split == 0:
                    self._report(ctx, it)
                return
        if ctx.self_tensor_attr(it):
            return      # a module's own buffer: its size is fixed per model, nothing to specialise
        if ctx.kind(it) in TENSORISH:
            self._report(ctx, it)

    def _report(self, ctx, node):
        ctx.report(self.code, node, "iterating over a tensor unrolls the loop and specialises its size "
                   "(recompiles per size); vectorise over the dimension instead")


# (position of `dim` in the method form, in the function form, dim when absent)
_SPLITS = {"split": (1, 2, 0), "chunk": (1, 2, 0), "unbind": (0, 1, 0), "tensor_split": (1, 2, 0),
           "vsplit": (None, None, 0), "hsplit": (None, None, 1), "dsplit": (None, None, 2)}


def _split_dim(ctx, call: ast.Call) -> int | None:
    """The dim a `split`/`chunk`/`unbind` call splits along (-1 when unknown), else None;
    `meshgrid`/`broadcast_tensors` (a fixed number of outputs) count as a split along 1."""
    f = call.func
    target = ctx.mod.resolve(f)     # not ctx.call_target: the `for` is visited before its iter
    if target in ("torch.meshgrid", "torch.broadcast_tensors"):
        return 1
    if isinstance(f, ast.Attribute) and f.attr in _SPLITS and ctx.kind(f.value) in TENSORISH + (PARAM,) \
            and ctx.kind(call) == TENSORS:
        pos = _SPLITS[f.attr][0]
    elif target and target.startswith("torch.") and target[6:] in _SPLITS:
        pos = _SPLITS[target[6:]][1]
        f = None
    else:
        return None
    name = target[6:] if f is None else f.attr
    dim: ast.AST | None = next((k.value for k in call.keywords if k.arg == "dim"), None)
    if dim is None and pos is not None and len(call.args) > pos:
        dim = call.args[pos]
    if dim is None:
        return _SPLITS[name][2]
    if isinstance(dim, ast.Constant) and type(dim.value) is int:
        return dim.value
    return -1       # `dim=-1`, `dim=self.dim`: not the batch dim as far as we can tell
