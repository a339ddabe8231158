from __future__ import annotations

import ast
import json
import os
from functools import lru_cache

from pt2bot.analysis.infer import BOOL_TENSOR, PARAM, TENSORISH, WEAK_BOOL
from pt2bot.rules.base import Rule

# Generated from torch's own op tags by tools/gen_dynamic_ops.py (a reviewed mapping from the
# tagged ATen overloads to Python spellings, with the argument condition where there is one).
_DATA = os.path.join(os.path.dirname(__file__), "..", "data", "dynamic_output_ops.json")


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, dict], dict[str, dict]]:
    with open(_DATA, encoding="utf-8") as fh:
        data = json.load(fh)
    return data["functions"], data["methods"]


def _holds(ctx, when: str | None, node: ast.Call, is_method: bool) -> bool:
    """The argument condition under which the op is data-dependent (see the generator)."""
    if when is None:
        return True
    args = node.args
    if when == "one_arg":                   # torch.where(cond) is nonzero; where(c, a, b) is not
        return len(args) == 1 and not node.keywords
    if when == "repeats_tensor":            # repeat_interleave(x, repeats): a tensor `repeats`
        repeats = next((k.value for k in node.keywords if k.arg == "repeats"), None)
        if repeats is None:
            if not is_method and len(args) == 1 and not node.keywords:
                return True                 # torch.repeat_interleave(counts)
            rest = args if is_method else args[1:]
            repeats = rest[0] if rest else None
        return repeats is not None and (ctx.kind(repeats) in TENSORISH or ctx.self_tensor_attr(repeats))
    return False


def _mask_in(ctx, index: ast.AST, value: ast.AST) -> bool:
    """The index is (or holds, as in `x[:, mask]`) a boolean tensor: a surely-boolean one
    whatever `value` is (a helper's result is untyped here), a comparison involving a
    parameter (`labels == 0`) when `value` looks like a tensor."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    kinds = [ctx.kind(p) for p in parts]
    if BOOL_TENSOR in kinds:
        return True
    return WEAK_BOOL in kinds and ctx.kind(value) in TENSORISH + (PARAM,)


class DynamicOutputShape(Rule):
    """## What it does
    Flags operators whose output *shape* depends on tensor data, as torch tags them itself
    (`torch.Tag.dynamic_output_shape`, read at development time into
    `pt2bot/data/dynamic_output_ops.json`): `nonzero`, `argwhere`, `masked_select`, `unique`,
    `unique_consecutive`, `bincount`, `repeat_interleave` with a tensor of repeats,
    single-argument `torch.where(cond)`; and boolean-mask indexing `x[mask]` (also
    `x[:, mask]` and `x[mask] += v`) where `mask` is surely a bool tensor, whatever `x` is,
    wherever the indexing sits (a call's argument, a return value, inside an expression).
    A comparison of a parameter indexed with slices (`target = x[:, 1:]; mask = target != -100`)
    is such a mask: only a tensor takes a tuple of slices.

    ## Why is this bad?
    The size of the result is only known after running the operator. torch 2.13 breaks the
    graph on each of them (GB0036, "Dynamic shape operator") unless
    `torch._dynamo.config.capture_dynamic_output_shape_ops = True`, and export needs extra
    annotations (`torch._check`) to handle the unbacked size. An augmented assignment through
    a mask (`emb[labels == 0] += w`) reads `emb[mask]` first and breaks the same way; a plain
    masked store (`x[mask] = 0`) does not.

    ## Example
    ```python
    def forward(self, x):
        return x[x > 0].sum()
    ```

    ## Use instead
    Keep shapes static with a mask:
    ```python
    def forward(self, x):
        return torch.where(x > 0, x, 0).sum()
    ```
    """

    code = "PTC304"
    name = "dynamic-output-shape"
    summary = "data-dependent output shapes (`nonzero`, `x[mask]`, `unique`, ...) (graph break)"
    gb = "GB0036"
    fullgraph_captures = True   # tests/test_rules_torch.py: captured under fullgraph=True
    node_types = (ast.Call, ast.Subscript, ast.AugAssign)
    call_keys = frozenset(_table()[0]) | frozenset("." + m for m in _table()[1])

    def check(self, ctx, node):
        if isinstance(node, ast.AugAssign):
            t = node.target
            if isinstance(t, ast.Subscript) and _mask_in(ctx, t.slice, t.value):
                ctx.report(self.code, t, "an augmented assignment through a boolean mask reads `x[mask]` first: "
                           "a data-dependent shape that breaks the graph; use "
                           "`x = torch.where(mask, x + v, x)`")
            return
        if isinstance(node, ast.Subscript):
            if not isinstance(node.ctx, ast.Load):
                return
            if _mask_in(ctx, node.slice, node.value):
                ctx.report(self.code, node, "boolean-mask indexing has a data-dependent shape and breaks the "
                           "graph; use `torch.where(mask, x, 0)` or multiply by the mask")
            return
        functions, methods = _table()
        f = node.func
        target = ctx.call_target
        row = functions.get(target) if target else None
        name = None
        if row is not None:
            if _holds(ctx, row["when"], node, False):
                name = "torch.where(cond)" if row["when"] == "one_arg" else target
        elif isinstance(f, ast.Attribute) and f.attr in methods \
                and (ctx.kind(f.value) in TENSORISH + (PARAM,) or ctx.self_tensor_attr(f.value)):
            row = methods[f.attr]
            if _holds(ctx, row["when"], node, True):
                name = f".{f.attr}()"
        if name:
            ctx.report(self.code, node, f"`{name}` has a data-dependent output shape and breaks the graph; "
                       "keep shapes static with masks (`torch.where(mask, x, 0)`)",
                       gb=None if row["gb"] == self.gb else row["gb"])
