from __future__ import annotations

import ast
import dataclasses
import json
import os
from functools import lru_cache
from typing import Callable

from pt2bot.analysis.infer import BOOL_TENSOR, PARAM, TENSORISH, WEAK_BOOL
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.branch_fixes import is_compiling_fixes
from pt2bot.rules.capture_branch_fixes import capture_branch_fixes
from pt2bot.rules.edits import (BIN_OPS, binds_torch, enclosing_function, finding_statement, fresh_name,
                                function_binds, identifiers, indentation, int_constant, node_span, parents_of, partial_domain,
                                pure, pure_indexed, replace_spans, replace_statement, segment, with_replaced)

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


# What follows a masked selection decides what replaces it (the rule's hint). Casts and copies
# between the selection and the reduction do not change that (`x[m].float().mean()`).
_PASS_THROUGH = frozenset({"float", "double", "half", "bfloat16", "to", "type", "type_as", "contiguous",
                           "clone", "detach"})
_REDUCTIONS = frozenset({"sum", "nansum", "mean", "nanmean", "max", "amax", "min", "amin", "prod"})
# The static-shape form of `<reduction>(x[mask])`: the others filled with the reduction's
# identity; a mean also divides by the number of selected values, not by every element.
_MASKED = {
    "sum": "use `torch.where(mask, x, 0).sum()` (or `(x * mask).sum()`)",
    "mean": "a mean over the selected values is `(x * mask).sum() / mask.sum()` (or "
            "`torch.where(mask, x, 0).sum() / mask.sum()`); `torch.where(mask, x, 0).mean()` would divide by "
            "every element",
    "max": "use `torch.where(mask, x, float(\"-inf\")).max()`",
    "min": "use `torch.where(mask, x, float(\"inf\")).min()`",
    "prod": "use `torch.where(mask, x, 1).prod()`",
}
_MASKED.update(nansum=_MASKED["sum"], nanmean=_MASKED["mean"], amax=_MASKED["max"], amin=_MASKED["min"])
_MASKED_OTHER = ("keep the shape static with the mask: `torch.where(mask, x, fill)` with a fill that leaves "
                 "what follows unchanged (0 for a sum; a mean also divides by `mask.sum()`, not by every "
                 "element)")
# nonzero / argwhere / where(cond): indices of the mask, whatever reads them
_INDICES_HINT = ("compute with the mask itself instead of its indices (`torch.where(mask, a, b)`, or multiply "
                 "by the mask), or set `torch._dynamo.config.capture_dynamic_output_shape_ops = True` "
                 "(it traces them, but where their number is then used, the break can move there)")
_INDEX_OPS = frozenset({"torch.nonzero", "torch.argwhere", "torch.where", "nonzero", "argwhere"})
# unique / bincount / repeat_interleave: no static-shape form in general
_CAPTURE_HINT = ("its size is only known from the data: set "
                 "`torch._dynamo.config.capture_dynamic_output_shape_ops = True` to trace it (where "
                 "that size is then used, the break can move there)")


def _parents(ctx) -> dict[int, ast.AST]:
    """id(node) -> its parent in the walked function, built once per function and only for a
    function with a masked selection (a small share of all functions)."""
    out = ctx.__dict__.get("_ptc304_parents")
    if out is None:
        out = ctx.__dict__["_ptc304_parents"] = {}
        for n in ast.walk(ctx.node):
            for c in ast.iter_child_nodes(n):
                out[id(c)] = n
    return out


def _reduction_after(ctx, node: ast.AST) -> str | None:
    """The reduction applied to the selected values right after `node` (`x[m].mean()`,
    `x[m].float().sum()`, `torch.mean(x[m])`), or None where the rule cannot see one."""
    parents = _parents(ctx)
    for _ in range(4):
        p = parents.get(id(node))
        if type(p) is ast.Attribute and p.value is node:
            call = parents.get(id(p))
            if type(call) is not ast.Call or call.func is not p:
                return None
            if p.attr in _REDUCTIONS:
                return p.attr
            if p.attr not in _PASS_THROUGH:
                return None
            node = call
            continue
        if type(p) is ast.Call and p.args and p.args[0] is node:
            ns, _, fname = (ctx.mod.resolve(p.func) or "").rpartition(".")
            return fname if ns == "torch" and fname in _REDUCTIONS else None
        return None
    return None


def _masked_hint(ctx, node: ast.AST) -> str:
    return _MASKED.get(_reduction_after(ctx, node) or "", _MASKED_OTHER)


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
    Keep shapes static with the mask, filling the other values with what leaves the reduction
    that follows unchanged (the message names the form for a `sum`/`mean`/`max`/`min`/`prod`
    it sees):
    ```python
    def forward(self, x):
        return torch.where(x > 0, x, 0).sum()
    ```
    A mean over the selected values divides by their count, not by every element:
    `(x * mask).sum() / mask.sum()` (`torch.where(mask, x, 0).mean()` is a different number).
    Indices (`nonzero`, `torch.where(cond)`) are best replaced by using the mask itself; for
    `unique`, `bincount` and the like, `torch._dynamo.config.capture_dynamic_output_shape_ops =
    True` traces them with an unbacked size.

    Fix offered (not safe: run and compared before it is posted) for `x[mask]` followed by a
    whole-tensor `sum`/`nansum`/`mean`/`max`/`amax`/`min`/`amin`/`prod` (casts such as
    `.float()` in between kept): the form above with the same result, a mean as
    `torch.where(mask, x, 0).sum() / mask.sum()` (an empty mask: NaN, as before; the mask
    written once more only when it is a name or a comparison without calls, which has no side
    effect). It assumes the mask has `x`'s shape; a mask over leading dimensions, a reduction
    over one dimension, `masked_select` and the index ops stay text.
    Fix offered (not safe) for a selection into a name, `v = x[mask]`, whose every later read
    in the statements after it in its block is such a reduction (`v.sum()`, `v.float().mean()`),
    also of a slice with constant bounds (torchvision's equalize: `nonzero_hist = hist[hist !=
    0]` ... `nonzero_hist[:-1].sum()`): each reduction computed over `x` with the mask, the
    selection gone; a slice keeps the entries whose rank among the selected (counted in
    `x[mask]`'s row-major order, `mask.flatten().cumsum(0)`) is in it, into a fresh local
    `kept`. The mask goes into a fresh local first unless it is a name, and `x` into `v` unless
    it is a name; nothing between may rebind or write into them, and `v` is not rebound after.
    A selection that leaves the function or feeds anything else (a sort, a loss function of
    another file, a returned value whose size is the data's) has no static-shape form and stays
    text.
    Fix offered (not safe) for `torch.repeat_interleave(x, torch.tensor(counts))` (and the
    method), the repeats made of a name's Python numbers (vit-pytorch's NaViT): the output's
    length, `output_size=sum(counts)`, which torch then need not read from the data (no break
    on torch 2.13). Wrong where `counts` is not those numbers: torch raises on the mismatch.
    Fix offered (not safe) for a masked write that reads through the mask, `x[m] = y[m]` and
    `x[m] += v` (any arithmetic operator): the same values written in place with static shapes,
    `x.copy_(torch.where(m, y, x))` / `x.copy_(torch.where(m, x + v, x))`, where the mask is an
    elementwise test of `x` (or of `y`, or of the tensor `x` was cloned or made like): then it
    has `x`'s shape. Any other mask may cover only `x`'s leading dimensions (`emb[labels == 0]
    += w`, a row mask `C[~row_uncovered] += v`), which indexing aligns with the leading ones and
    `torch.where` with the trailing ones: it is reshaped to `x`'s number of dimensions first,
    `m.reshape(m.shape + (1,) * (x.dim() - m.dim()))` (a mask with a call computed once, into a
    fresh local). On a square matrix the plain form broadcasts a row mask over the columns
    without an error, and was once posted as verified so. The masked reductions and the masked
    computed writes below read the mask the same way (a mean then divided by the number of
    values the reshaped mask selects). `x` must be a name or an attribute (it is written three times).
    Fix offered (not safe) for a masked write of an elementwise function of values read through
    the same mask, `y[m] = (-1 / x[m]).exp()` (e3nn's soft_unit_step), also through a local
    bound just before it (`xm = x[m]` then `dx[m] = (-1 / xm).exp() / xm.pow(2)`): arithmetic,
    unary minus and pointwise torch functions and methods (`exp`, `log`, `sqrt`, `rsqrt`, `pow`,
    `sin`, `tanh`, `sigmoid`, `abs`, `clamp`, ...), and besides the masked reads only numbers and
    names or attributes that are not read through the mask, the mask or `y` (such a tensor has
    the mask's shape and would broadcast differently) nor computed from a masked read (kornia's
    bessel kernels: `t = 3.75 / x[m]`, the selection's shape). The value computed over every element
    and the mask's elements kept: `y = torch.where(m, (-1 / x).exp(), y)` where `y` was made by
    a factory (`torch.zeros_like`, `.clone()`, ...) earlier in the block and not read since
    (nothing else holds it), else in place, `y.copy_(torch.where(m, (-1 / x).exp(), y))` (a
    caller's tensor or another reference to `y` sees the write, as it saw head's). A mask
    computed from `x` by a reduction or an indexing (`x[:, 0] > 0`) has another shape: no edit.
    Where the value divides or calls a function not defined everywhere (`log`, `sqrt`, `pow`,
    ...), the values computed on the unselected elements may be inf or NaN (here -1 / 0):
    `torch.where` discards them in the forward pass, but the gradient through them is NaN
    (0 * inf), on inputs the model's shape cases need not hold (torchmetrics' R2 on a constant
    target column). So there, and only there, the unselected elements are set first to a value
    inside the domain: for a mask `x > c` (`>=`, `<`, `<=`, `!=`; `c` a number) where `x` is the
    only tensor read through it, c + 1 (c - 1 for `<`, `<=`),
    `(-1 / torch.where(m, x, 1.0)).exp()`, a value the mask selects; else 1, each masked read
    `t[m]` as `torch.where(m, t, 1)` (e3nn's own `safe_x`).
    Fix offered (not safe) for `torch.bincount(x, minlength=m)` (and `x.bincount(minlength=m)`)
    without weights: the counts written into `m` bins with `scatter_add_`, `torch.zeros(m,
    dtype=torch.long, device=x.device).scatter_add_(0, x.long(), torch.ones_like(x,
    dtype=torch.long))`, the maintainers' own fix in X-MoE's expert counts. The same counts
    where every value is below `m` (an expert index from `topk` over `m` experts, a uint8
    pixel under 256 bins); past it `bincount` grows its output and `scatter_add_` raises (on
    CUDA a device-side assert), so the proof compares it on the model's own inputs and the
    title says so. `x` is written twice: a name, an attribute or an index of them, through
    view-like methods (`img.reshape(-1)`); `m` moves before `x`, so it calls nothing but
    `len`, `numel`, `size` and `dim`.
    Fix offered (not safe) for `torch.linalg.lstsq(a, b).solution` (or `[0]`): `torch.linalg.solve(a,
    b)`, the same solution where `a` is square and invertible (torchvision's perspective
    coefficients, eight equations in eight unknowns), up to rounding; the proof compares it on
    the model's own inputs. For a rank-deficient or non-square `a`, `solve` raises where `lstsq`
    gave the least-squares (or minimum-norm) solution.
    Fix offered (not safe) for a count per value over a loop on its distinct values, `for c in
    y.unique(): counts[c] += (y == c).sum()` (also `c.item()`, `torch.unique(y)`, `torch.sum(y
    == c)`; seesawloss's running class counts): `y_flat = y.reshape(-1)` then
    `counts.index_add_(0, torch.where(y_flat < 0, y_flat + len(counts), y_flat),
    torch.ones_like(y_flat, dtype=counts.dtype))`, one 1 added per element at its value, which is
    what the loop adds up, with no loop over a size the data decides; a negative value counted
    from the end, as `counts[c]` indexes (an ignored label of -1 counted for the last class,
    where `index_add_` alone raises: the independent re-run found it on seesawloss), a value
    out of range raising IndexError as indexing does. A `counts` of more than one dimension (a
    row per class) refuses a source of one, which the proof shows on the model's own inputs;
    not where the loop's name is read outside the loop (the edit no longer binds it).
    A selection inside a block of optional work (`if first_below_thr.any(): i =
    torch.where(first_below_thr)[0][0].item()`), where none of the above fits, gets the block
    run in eager only (pt2bot/rules/branch_fixes.py `is_compiling_fixes`, PTC201's recipe 6).
    """

    code = "PTC304"
    name = "dynamic-output-shape"
    summary = "data-dependent output shapes (`nonzero`, `x[mask]`, `unique`, ...) (graph break)"
    gb = "GB0036"
    fullgraph_captures = True   # tests/test_rules_torch.py: captured under fullgraph=True
    node_types = (ast.Call, ast.Subscript, ast.AugAssign)
    call_keys = frozenset(_table()[0]) | frozenset("." + m for m in _table()[1])

    @classmethod
    def fixes(cls, finding, source, tree):
        return _masked_reduction_fixes(cls.code, finding, source, tree) or \
            _masked_values_fixes(cls.code, finding, source, tree) or \
            _masked_store_fixes(cls.code, finding, source, tree) or \
            _masked_compute_fixes(cls.code, finding, source, tree) or \
            _output_size_fixes(cls.code, finding, source, tree) or \
            _counted_bins_fixes(cls.code, finding, source, tree) or \
            _count_loop_fixes(cls.code, finding, source, tree) or \
            _square_solve_fixes(cls.code, finding, source, tree) or \
            (capture_branch_fixes(cls.code, finding, source, tree) + is_compiling_fixes(cls.code, finding, source, tree))

    def check(self, ctx, node):
        if isinstance(node, ast.AugAssign):
            t = node.target
            if isinstance(t, ast.Subscript) and _mask_in(ctx, t.slice, t.value):
                # (a mask over the leading dims only, SAM's `point_embedding[labels == -1] += ...`
                # over [B, N] of a [B, N, C] tensor, needs a trailing dim to broadcast: without it
                # `torch.where` raises, or broadcasts to another shape where a size is 1)
                ctx.report(self.code, t, "an augmented assignment through a boolean mask reads `x[mask]` first: "
                           "a data-dependent shape that breaks the graph; use "
                           "`x = torch.where(mask, x + v, x)`, the mask given a trailing dim of 1 for each "
                           "dim of `x` it does not cover (`mask[..., None]`)")
            return
        if isinstance(node, ast.Subscript):
            if not isinstance(node.ctx, ast.Load):
                return
            if _mask_in(ctx, node.slice, node.value):
                ctx.report(self.code, node, "boolean-mask indexing has a data-dependent shape and breaks the "
                           f"graph; {_masked_hint(ctx, node)}")
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
            op = target if row is functions.get(target or "") else f.attr
            hint = _masked_hint(ctx, node) if op in ("torch.masked_select", "masked_select") else \
                _INDICES_HINT if op in _INDEX_OPS else _CAPTURE_HINT
            ctx.report(self.code, node, f"`{name}` has a data-dependent output shape and breaks the graph; {hint}",
                       gb=None if row["gb"] == self.gb else row["gb"])


# `<reduction>(x[mask])` with the others filled by the reduction's identity: (fill, method).
# A mean is a sum divided by the mask's count (written by the recipe), never `.mean()` of the
# filled tensor, whose denominator is every element.
_FILLED = {"sum": ("0", "sum"), "nansum": ("0", "nansum"), "prod": ("1", "prod"),
           "max": ('float("-inf")', "max"), "amax": ('float("-inf")', "amax"),
           "min": ('float("inf")', "min"), "amin": ('float("inf")', "amin"), "mean": ("0", "sum")}


# elementwise tests a mask may be made of and keep its tensor's shape (`torch.isnan(x)`, `x.isfinite()`)
_ELEMENTWISE_TESTS = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit",
                                "logical_not", "logical_and", "logical_or", "logical_xor",
                                "eq", "ne", "gt", "ge", "lt", "le", "bool", "isclose"})


def tests_elementwise(mask: ast.AST, x: str, lines: list[str],
                      defined: Callable[[ast.Name], ast.AST] | None = None) -> bool:
    """Whether `mask` is an elementwise test of the tensor written `x` (`x > 0`, `torch.isnan(x)
    | (x < lo)`, `~x.isfinite()`, `p_c <= e - s`): x itself an operand of its comparisons, `~`,
    `&`, `|` and elementwise test calls. Wherever `x[mask]` runs, such a mask has x's shape:
    the other operands, whatever they are, only broadcast against x, and one that broadcast it
    to more dimensions would make that indexing raise. Not a test of `x[:, 0]` or `x.sum(1)`,
    whose shape is another. `defined`: what a name was last bound to before the mask is read
    (torchmetrics' `cond = cond_rss & cond_tss`, each a test of `rss` or `tss`)."""
    seen: set[str] = set()

    def walk(n: ast.AST) -> bool:       # x read as an operand of elementwise steps
        if segment(lines, n) == x or shape_root(n, lines) == x:    # x, `x.abs()`, `x * 2`
            return True
        if isinstance(n, ast.Name) and defined is not None and n.id not in seen:
            seen.add(n.id)
            bound = defined(n)
            return bound is not n and walk(bound)
        parts: list[ast.AST] = []
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Invert, ast.USub)):
            parts = [n.operand]
        elif isinstance(n, ast.BinOp) and isinstance(n.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            parts = [n.left, n.right]
        elif isinstance(n, ast.Compare):
            parts = [n.left, *n.comparators]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in _ELEMENTWISE_TESTS and (not n.keywords or n.func.attr == "isclose"):
            on_torch = isinstance(n.func.value, ast.Name) and n.func.value.id == "torch"
            parts = list(n.args) if on_torch else [n.func.value, *n.args]
        return any(walk(p) for p in parts)

    return walk(mask)


# methods that keep their tensor's shape besides the pointwise ones (`_POINTWISE`), with no argument
_KEEP_SHAPE = frozenset({"half", "bfloat16", "int", "long", "bool", "detach", "clone", "contiguous"})


def shape_root(node: ast.AST, lines: list[str]) -> str | None:
    """The text of the tensor whose shape `node` has for sure: the tensor itself, or an
    elementwise expression of it with numbers only (`x + 1`, `(x * 2).float()`); None for
    anything else (another tensor in the expression may broadcast it to more dimensions)."""
    if isinstance(node, ast.BinOp):
        roots = [shape_root(s, lines) for s in (node.left, node.right)
                 if not (isinstance(s, ast.Constant) or int_constant(s) is not None)]
        return roots[0] if len(roots) == 1 else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert)):
        return shape_root(node.operand, lines)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
            and not node.keywords and (node.func.attr in _POINTWISE or node.func.attr in _KEEP_SHAPE):
        return shape_root(node.func.value, lines)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "torch" and \
            node.func.attr in ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"):
        return shape_root(node.args[0], lines)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "expand_as" \
            and len(node.args) == 1:
        return shape_root(node.args[0], lines)     # torchvision's `mask = mask.expand_as(img)`
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return segment(lines, node)
    return None


def leading_mask(mask: str, x: str) -> str:
    """The mask `mask` (an atom) given `x`'s number of dimensions, the new ones of size 1 at the
    end: what `torch.where` must take to select what `x[mask]` selects. Indexing aligns a mask
    with x's leading dimensions, `torch.where` broadcasts it against the trailing ones: a row
    mask of a square matrix selected its columns (fast-bss-eval's Hungarian step,
    `state.C[~state.row_uncovered] += minval`, was once posted so, "verified")."""
    return f"{mask}.reshape({mask}.shape + (1,) * ({x}.dim() - {mask}.dim()))"


def _atom(lines: list[str], node: ast.AST) -> str:
    """`node`'s text, bracketed unless a method call on it binds to all of it."""
    text = segment(lines, node)
    return text if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)) else f"({text})"


def _reduced(parents: dict[int, ast.AST], node: ast.AST, lines: list[str]) -> tuple[ast.Call, str, str] | None:
    """(the reduction call, its name, the casts' text) where `node`'s values go through casts
    and copies (`.float()`) into a whole-tensor reduction (`.sum()`), else None."""
    casts = ""
    for _ in range(4):
        p = parents.get(id(node))
        call = parents.get(id(p))
        if not (isinstance(p, ast.Attribute) and isinstance(call, ast.Call) and call.func is p):
            return None
        if p.attr in _FILLED and not call.args and not call.keywords:
            return call, p.attr, casts
        if p.attr not in _PASS_THROUGH:
            return None
        casts += segment(lines, call)[len(segment(lines, node)):]
        node = call
    return None


def _filled(reduction: str, mask: str, count: str, values: str, parent: ast.AST | None) -> str:
    """`reduction` over the values `mask` selects, with static shapes: the others filled with
    the reduction's identity; a mean is the sum divided by `count`, the number of values the
    mask selects (bracketed unless the statement takes the whole value, `parent`)."""
    fill, method = _FILLED[reduction]
    text = f"torch.where({mask}, {values}, {fill}).{method}()"
    if reduction == "mean":
        text = f"{text} / {count}"
        if not isinstance(parent, (ast.Expr, ast.Return, ast.Assign)):   # `y / x[m].mean()`
            text = f"({text})"
    return text


def _masked_reduction_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    st, body, lines = finding_statement(finding, source, tree)
    if st is None or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return []
    sub = next((n for n in ast.walk(st) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
                and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    if sub is None or isinstance(sub.slice, (ast.Tuple, ast.Slice)):
        return []
    parents = parents_of(st)
    found = _reduced(parents, sub, lines)
    if found is None:
        return []
    call, reduction, casts = found
    x = segment(lines, sub.value)
    root = shape_root(sub.value, lines)
    if root is not None and tests_elementwise(sub.slice, root, lines, _definer(tree, body, st)):
        if reduction == "mean" and not pure(sub.slice):
            return []
        mask, count = segment(lines, sub.slice), f"{_atom(lines, sub.slice)}.sum()"
    elif pure_indexed(sub.slice) and pure_indexed(sub.value):
        # a mask over x's leading dimensions (rows): given x's dimensions, and a mean divided
        # by the number of values it selects, each row's entries
        mask = leading_mask(_atom(lines, sub.slice), _atom(lines, sub.value))
        count = f"{mask}.expand_as({_atom(lines, sub.value)}).sum()"
    else:
        return []
    values = (_atom(lines, sub.value) if casts else x) + casts
    text = _filled(reduction, mask, count, values, parents.get(id(call)))
    fill = _FILLED[reduction][0]
    title = (f"the masked {reduction} with the same result: the others filled with {fill}"
             + (", divided by the mask's count" if reduction == "mean" else ""))
    return [replace_statement(code, finding.path, st, with_replaced(lines, st, call, text), title,
                              safe=False, guards=("empty",))]


def _int_bound(node: ast.AST | None) -> int | None | bool:
    """A slice bound: None, an int constant (`-1` too), else False."""
    if node is None:
        return None
    v = int_constant(node)
    return False if v is None else v


def _sliced_mask(mask: str, sl: ast.Slice) -> str | None:
    """The mask of the entries `v[a:b]` keeps of `v = x[mask]` (constant bounds, no step):
    those whose rank among the selected, counted in `x[mask]`'s order (row-major), is in the
    slice; None for another slice."""
    lo, hi = _int_bound(sl.lower), _int_bound(sl.upper)
    if sl.step is not None or lo is False or hi is False:
        return None
    rank, count = f"{mask}.flatten().cumsum(0).view_as({mask})", f"{mask}.sum()"   # rank: 1 for the first
    conds = []
    if lo:
        conds.append(f"{rank} > {lo}" if lo > 0 else f"{rank} > {count} - {-lo}")
    if hi is not None:
        conds.append(f"{rank} <= {hi}" if hi >= 0 else f"{rank} <= {count} - {-hi}")
    return " & ".join([mask] + [f"({c})" for c in conds])


def _roots(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _changes(stmts: list[ast.stmt], names: set[str]) -> bool:
    """Whether `stmts` rebind one of `names` or write into one (`x[i] = v`, `x.add_(1)`,
    `x.attr = v`), as far as the text shows."""
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id in names:
                return True
            if isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load) and \
                    _roots(n) & names:
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") and \
                    not n.func.attr.startswith("_") and _roots(n.func.value) & names:
                return True
    return False


def _masked_values_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`v = x[m]` whose every later read, in the statements after it in its block, is a
    whole-tensor reduction (`v.sum()`, `v.float().mean()`, `v[:-1].sum()`): each reduction
    computed with the mask over `x` (see `_filled`, `_sliced_mask`), the selection gone. The
    mask is read into a fresh local first unless it is a name, and `x` into `v` unless it is a
    name; a name read at the reductions must not change between."""
    st, body, lines = finding_statement(finding, source, tree)
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
        return []
    sub, v = st.value, st.targets[0].id
    if not (isinstance(sub, ast.Subscript) and (sub.lineno, sub.col_offset) == (finding.line, finding.col)) or \
            isinstance(sub.slice, (ast.Tuple, ast.Slice)) or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return []
    fn = enclosing_function(tree, st)
    i = next((k for k, s in enumerate(body) if s is st), None)
    if fn is None or i is None:
        return []
    end = (st.end_lineno or st.lineno, st.end_col_offset or 0)
    after = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == v and (n.lineno, n.col_offset) > end]
    if not after or any(not isinstance(n.ctx, ast.Load) for n in after):
        return []   # never read, or rebound after
    if _read_in_loop_before(fn, st, v):
        return []
    # the statements of the block that hold the reads, up to the last one
    holder = {}
    for k, s in enumerate(body[i + 1:], start=i + 1):
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id == v:
                holder[id(n)] = k
            if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                              ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    any(isinstance(m, ast.Name) and m.id == v for m in ast.walk(n)):
                return []   # read in another scope
    if any(id(n) not in holder for n in after):
        return []
    last = max(holder.values())
    stmts = body[i + 1:last + 1]
    taken = identifiers(tree)
    indent = indentation(lines, st)
    head: list[str] = []
    x, m = sub.value, sub.slice
    root = shape_root(x, lines)
    # a mask not surely of x's shape is taken over x's leading dimensions (rows); a slice of
    # `v` then cuts rows, and the ranks `_sliced_mask` counts are of single values: no edit
    lead = root is None or not tests_elementwise(m, root, lines, _definer(tree, body, st))
    if isinstance(m, ast.Name):
        mask = m.id
    else:
        mask = fresh_name(taken, "mask")
        head.append(f"{mask} = {segment(lines, m)}")
    if isinstance(x, ast.Name):
        values, watched = x.id, {x.id, mask}
    else:
        values, watched = v, {v, mask}
        head.append(f"{v} = {segment(lines, x)}")
    if _changes(stmts, watched):
        return []
    parents = {id(c): n for s in stmts for n in ast.walk(s) for c in ast.iter_child_nodes(n)}
    edits = []
    done = set()
    kept: dict[str, str] = {}   # a slice's mask, into a fresh local of its own
    for n in after:
        node, sel = n, mask
        p = parents.get(id(n))
        if isinstance(p, ast.Subscript) and p.value is n and isinstance(p.slice, ast.Slice):
            sliced = None if lead else _sliced_mask(mask, p.slice)
            if sliced is None:
                return []
            if sliced != mask and sliced not in kept:
                kept[sliced] = fresh_name(taken, "kept")
                head.append(f"{kept[sliced]} = {sliced}")
            sel, node = kept.get(sliced, mask), p
        found = _reduced(parents, node, lines)
        if found is None:
            return []
        call, reduction, casts = found
        if lead:
            sel = leading_mask(sel, values)
            count = f"{sel}.expand_as({values}).sum()"
        else:
            count = f"{sel}.sum()"
        text = _filled(reduction, sel, count, values + casts, parents.get(id(call)))
        edits.append((*node_span(call), text))
        done.add(reduction)
    edits.append(((st.lineno, st.col_offset), end, ("\n" + indent).join(head)))
    new = replace_spans(lines, st.lineno, stmts[-1].end_lineno or stmts[-1].lineno, edits)
    if not head:
        new = new[1:] if not new[0].strip() else new
    title = (f"reduce over `{segment(lines, x)}` with the mask instead of selecting `{v}`: the same "
             + ", ".join(sorted(done)) + " (the others filled with the reduction's identity"
             + ("; a mean divided by the mask's count)" if "mean" in done else ")"))
    return [Candidate(code=code, path=finding.path, start_line=st.lineno,
                      end_line=stmts[-1].end_lineno or stmts[-1].lineno, lines=tuple(new), title=title,
                      safe=False, guards=("empty",), rank=1)]


def _read_in_loop_before(fn: ast.AST, st: ast.stmt, v: str) -> bool:
    """Whether a loop around `st` reads `v` before `st` without binding it first in the loop
    (the next pass would read the selection the edit removes)."""
    pos = (st.lineno, st.col_offset)
    for loop in ast.walk(fn):
        if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) or not any(s is st for s in ast.walk(loop)):
            continue
        names = sorted(((n.lineno, n.col_offset), isinstance(n.ctx, ast.Load)) for n in ast.walk(loop)
                       if isinstance(n, ast.Name) and n.id == v and (n.lineno, n.col_offset) < pos)
        if names and names[0][1]:
            return True
    return False


def _masked_store_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`x[m] = y[m]` and `x[m] op= v`: the same values written in place through `torch.where`,
    whose shapes are static: `x.copy_(torch.where(m, y, x))`, `x.copy_(torch.where(m, x op v, x))`
    where the mask surely has `x`'s shape (an elementwise test of `x`, of `y` or of the tensor
    `x` was made like); any other mask may cover `x`'s leading dimensions only (`emb[labels ==
    0] += w`), and is given `x`'s number of dimensions first (`leading_mask`; a mask with a call
    computed once, first, since it is read twice)."""
    st, body, lines = finding_statement(finding, source, tree)
    if st is None or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return []
    at = (finding.line, finding.col)
    if isinstance(st, ast.Assign) and len(st.targets) == 1:
        target, value = st.targets[0], st.value
        if not (isinstance(value, ast.Subscript) and (value.lineno, value.col_offset) == at
                and isinstance(target, ast.Subscript)
                and segment(lines, value.slice) == segment(lines, target.slice)):
            return []
        new = _atom(lines, value.value)
    elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Subscript) and \
            (st.target.lineno, st.target.col_offset) == at:
        target = st.target
        op = BIN_OPS.get(type(st.op))
        if op is None:
            return []
        new = f"{_atom(lines, target.value)} {op} {_atom(lines, st.value)}"
    else:
        return []
    if isinstance(target.slice, (ast.Tuple, ast.Slice)) or not isinstance(target.value, (ast.Name, ast.Attribute)):
        return []
    x, mask = segment(lines, target.value), target.slice
    indent = indentation(lines, st)
    title = "write the masked values in place with `torch.where` (static shapes)"
    source_of = [x, *_made_like(body[:body.index(st)] if st in body else [], target.value)]
    if isinstance(st, ast.Assign):
        source_of.append(segment(lines, value.value))
    defined = _definer(tree, body, st)
    if any(tests_elementwise(mask, t, lines, defined) for t in source_of):
        # the mask has x's shape (in `y[m] = x[m]`, x's and so y's: the values selected fill
        # the selection only where the mask covers every dimension): taken as it is
        return [replace_statement(code, finding.path, st,
                                  [f"{indent}{x}.copy_(torch.where({segment(lines, mask)}, {new}, {x}))"],
                                  title, safe=False)]
    first = []
    a = _atom(lines, mask)
    if not pure_indexed(mask):
        # the mask is read twice in the reshaped form: one with a call is computed once, first
        # (RoMa's `quat[:, 3] < 0` only indexes, which reads the same twice)
        a = fresh_name(identifiers(tree), "mask")
        first = [f"{indent}{a} = {segment(lines, mask)}"]
    return [replace_statement(
        code, finding.path, st,
        first + [f"{indent}{x}.copy_(torch.where({leading_mask(a, x)}, {new}, {x}))"],
        title + ", the mask over the leading dimensions", safe=False)]


def _method_call_at(finding, source: str, tree: ast.Module, attr: str
                    ) -> tuple[ast.stmt, list[str], ast.Call | None]:
    """The finding's statement, the file's lines and the call of `torch.<attr>` or `x.<attr>`
    at the finding; no call where the statement does not own its lines or `torch` is not the
    module's torch there (a recipe writes `torch.`)."""
    st, _, lines = finding_statement(finding, source, tree)
    if st is None or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return st, lines, None
    return st, lines, next((n for n in ast.walk(st) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                            and n.func.attr == attr and (n.lineno, n.col_offset) == (finding.line, finding.col)),
                           None)


def _output_size_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`torch.repeat_interleave(x, torch.tensor(counts))` (or `x.repeat_interleave(...)`),
    the repeats a tensor made of a name's Python numbers (vit-pytorch's NaViT: `patch_counts =
    [seq.shape[0] for seq in sequences]`): the output's length is `sum(counts)`, known in
    Python, and `output_size=` tells torch so (measured on torch 2.13: no break). Where
    `counts` is not those numbers (one count broadcast over `x`, a tensor), torch raises on
    the mismatch and the proof refuses it."""
    st, lines, call = _method_call_at(finding, source, tree, "repeat_interleave")
    if call is None or any(k.arg in ("output_size", None) for k in call.keywords) or \
            any(isinstance(a, ast.Starred) for a in call.args):
        return []
    torch_fn = isinstance(call.func.value, ast.Name) and call.func.value.id == "torch"
    given = [k.value for k in call.keywords if k.arg == "repeats"]
    repeats = (given or call.args[1 if torch_fn else 0:][:1] or [None])[0]
    if not (isinstance(repeats, ast.Call) and isinstance(repeats.func, ast.Attribute)
            and isinstance(repeats.func.value, ast.Name) and repeats.func.value.id == "torch"
            and repeats.func.attr in ("tensor", "as_tensor") and repeats.args
            and isinstance(repeats.args[0], ast.Name)):
        return []
    counts = repeats.args[0].id
    last = max([*call.args, *(k.value for k in call.keywords)], key=lambda n: (n.end_lineno, n.end_col_offset))
    at = (last.end_lineno or last.lineno, last.end_col_offset or 0)
    new = replace_spans(lines, st.lineno, st.end_lineno or st.lineno, [(at, at, f", output_size=sum({counts})")])
    return [replace_statement(code, finding.path, st, new,
                              f"give `repeat_interleave` its output size, `sum({counts})`, from the Python numbers "
                              "its repeats are made of", safe=False)]


# methods that give the same elements of the same tensor, read twice (a view, a cast)
_VIEWS = frozenset({"reshape", "view", "flatten", "ravel", "long", "int", "contiguous", "squeeze", "t"})
# calls a bin count's `minlength` may make: they read a size, with no side effect
_SIZES = frozenset({"len", "numel", "size", "dim"})


def _viewed(node: ast.AST) -> ast.AST | None:
    """The name, attribute or index of them (`pure_indexed`) that `node` views through
    `_VIEWS` methods with constant arguments (`img_chan.reshape(-1)`: `img_chan`), else None."""
    while isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in _VIEWS and not node.keywords
                and all(pure(a) and not isinstance(a, ast.Starred) for a in node.args)):
            return None
        node = node.func.value
    return node if pure_indexed(node) else None


def _counted_bins_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`torch.bincount(x, minlength=m)` / `x.bincount(minlength=m)`, no weights: `scatter_add_`
    into `m` zeros (the rule's docstring says where that is the same)."""
    st, lines, call = _method_call_at(finding, source, tree, "bincount")
    if call is None or any(isinstance(a, ast.Starred) for a in call.args) or \
            any(k.arg not in ("input", "minlength", "weights") for k in call.keywords):
        return []
    torch_fn = isinstance(call.func.value, ast.Name) and call.func.value.id == "torch"
    given = {k.arg: k.value for k in call.keywords}
    positional = ["input", "weights", "minlength"] if torch_fn else ["weights", "minlength"]
    if len(call.args) > len(positional):
        return []
    given.update(zip(positional, call.args))
    x = given.get("input") if torch_fn else call.func.value
    weights, m = given.get("weights"), given.get("minlength")
    if x is None or m is None or not (weights is None or (isinstance(weights, ast.Constant) and weights.value is None)):
        return []
    base = _viewed(x)
    if base is None or any(isinstance(n, ast.Call) and not (
            isinstance(n.func, ast.Name) and n.func.id in _SIZES
            or isinstance(n.func, ast.Attribute) and n.func.attr in _SIZES) for n in ast.walk(m)) or \
            any(isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(m)):
        return []
    xs, ms = segment(lines, x), segment(lines, m)
    text = (f"torch.zeros({ms}, dtype=torch.long, device={segment(lines, base)}.device)"
            f".scatter_add_(0, {xs}.long(), torch.ones_like({xs}, dtype=torch.long))")
    new = with_replaced(lines, st, call, text)
    return [replace_statement(code, finding.path, st, new,
                              f"count into `{ms}` bins with `scatter_add_`: the same counts as `bincount` "
                              f"where every value is below `{ms}` (past it `bincount` grows its output and "
                              "`scatter_add_` raises; on CUDA, a device-side assert)", safe=False)]


def _count_of(node: ast.AST, values: str, var: str, lines: list[str]) -> bool:
    """Whether `node` is the number of `values`' elements equal to `var` (or `var.item()`):
    `(values == var).sum()`, `torch.sum(values == var)`, either side of the `==`, and
    `.item()` of those."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item" \
            and not node.args and not node.keywords:
        node = node.func.value
    if not (isinstance(node, ast.Call) and not node.keywords):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "sum" and not node.args:
        test = node.func.value
    elif isinstance(node.func, ast.Attribute) and node.func.attr == "sum" and len(node.args) == 1 \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        test = node.args[0]
    else:
        return False
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False

    def is_var(n: ast.AST) -> bool:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "item" \
                and not n.args and not n.keywords:
            n = n.func.value
        return isinstance(n, ast.Name) and n.id == var
    left, right = test.left, test.comparators[0]
    return (segment(lines, left) == values and is_var(right)) or (segment(lines, right) == values and is_var(left))


def _count_loop_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`for c in y.unique(): counts[c] += (y == c).sum()` -> one `index_add_` of ones at `y`'s
    values (the rule's docstring says where that is the same)."""
    st, lines, call = _method_call_at(finding, source, tree, "unique")
    if call is None or not isinstance(st, ast.For) or st.iter is not call or st.orelse or \
            not isinstance(st.target, ast.Name) or len(st.body) != 1 or \
            any(k.arg != "sorted" for k in call.keywords):
        return []
    torch_fn = isinstance(call.func.value, ast.Name) and call.func.value.id == "torch"
    if len(call.args) != (1 if torch_fn else 0):
        return []
    values = call.args[0] if torch_fn else call.func.value
    body = st.body[0]
    var = st.target.id
    if not (pure_indexed(values) and isinstance(body, ast.AugAssign) and isinstance(body.op, ast.Add)
            and isinstance(body.target, ast.Subscript) and isinstance(body.target.slice, ast.Name)
            and body.target.slice.id == var and pure(body.target.value)
            and _count_of(body.value, segment(lines, values), var, lines)):
        return []
    fn = enclosing_function(tree, st)
    if fn is None or any(isinstance(n, ast.Name) and n.id == var and not (st.lineno <= n.lineno <= (st.end_lineno or 0))
                         for n in ast.walk(fn)):
        return []       # the loop's name read elsewhere: the edit no longer binds it
    ys, acc = segment(lines, values), segment(lines, body.target.value)
    indent = indentation(lines, st)
    base = values.attr if isinstance(values, ast.Attribute) else values.id if isinstance(values, ast.Name) else "values"
    index = fresh_name(identifiers(tree), f"{base}_flat")
    # a negative value counts from the end, as indexing `counts[c]` did (an ignored label of -1
    # went to the last class there); `index_add_` alone raises on it
    new = [f"{indent}{index} = {ys}.reshape(-1)",
           f"{indent}{acc}.index_add_(0, torch.where({index} < 0, {index} + len({acc}), {index}), "
           f"torch.ones_like({index}, dtype={acc}.dtype))"]
    return [replace_statement(code, finding.path, st, new,
                              f"count every value of `{ys}` into `{acc}` at once with `index_add_`, not in a "
                              f"loop over its distinct values (a negative value counted from the end, as "
                              f"indexing does)", safe=False)]


def _square_solve_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`torch.linalg.lstsq(a, b).solution` (or `[0]`): `torch.linalg.solve(a, b)`, the rule's
    docstring says where that is the same."""
    st, lines, call = _method_call_at(finding, source, tree, "lstsq")
    if call is None or segment(lines, call.func) != "torch.linalg.lstsq" or len(call.args) != 2 or \
            any(k.arg not in ("driver", "rcond") for k in call.keywords):
        return []
    parent = parents_of(st).get(id(call))
    solution = (isinstance(parent, ast.Attribute) and parent.attr == "solution") or (
        isinstance(parent, ast.Subscript) and isinstance(parent.slice, ast.Constant) and parent.slice.value == 0)
    if not solution:
        return []
    a, b = (segment(lines, x) for x in call.args)
    new = with_replaced(lines, st, parent, f"torch.linalg.solve({a}, {b})")
    return [replace_statement(code, finding.path, st, new,
                              f"solve the system with `torch.linalg.solve`: the least-squares solution where "
                              f"`{a}` is square and invertible (`lstsq`'s other outputs have a size read from the "
                              "data; for a rank-deficient or non-square matrix `solve` raises)", safe=False)]


# Elementwise torch functions and tensor methods a masked value may go through: each maps every
# element to one element of the same position (no reduction, no broadcast of its own, no
# data-dependent shape), so computing it over every element and keeping the mask's elements gives
# the selected values. Anything else (`.sum()`, `torch.cumsum`, `torch.cat`) has no such form.
_POINTWISE = frozenset({
    "exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "square", "pow",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "sigmoid", "abs", "neg", "reciprocal", "sign", "erf", "erfc", "floor", "ceil", "round",
    "trunc", "frac", "clamp", "clamp_min", "clamp_max", "clip", "relu", "minimum", "maximum", "add",
    "sub", "mul", "div", "true_divide", "float", "double"})
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
# Fresh tensors: a local bound to one of these is referenced by nothing else until it is read
_FACTORIES = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "zeros", "ones", "empty",
                        "full", "new_zeros", "new_ones", "new_empty", "new_full", "clone"})


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _prefixes(lines: list[str], node: ast.AST) -> list[str]:
    """The texts of an attribute chain and of each object it is read from: `self.w.T` ->
    `self.w.T`, `self.w`, `self`."""
    out = []
    while isinstance(node, ast.Attribute):
        out.append(segment(lines, node))
        node = node.value
    return out + [segment(lines, node)]


def _elementwise(node: ast.AST, lines: list[str], mask: str, banned: set[str], local: str | None,
                 reads: list[ast.AST], functions: frozenset[str] = frozenset()) -> bool:
    """Whether `node` is elementwise in the values read through `mask` (`x[mask]`, or `local`
    holding such a read): arithmetic, unary minus, `torch.<f>(...)` and methods of a masked
    value for `f` in `_POINTWISE`, and besides the masked reads only numbers and names or
    attributes none of whose prefixes is in `banned` (a tensor of `x`'s shape read without the
    mask would broadcast differently). The masked reads go into `reads`. A call of one of
    `functions` (the file's own module-level functions, Liger's `sapo_loss_fn(coef_1[m], t)`)
    is taken as elementwise too: nothing here can tell, so its candidate comes after the
    others and the proof's comparison of outputs decides (a function that normalises over its
    input gives other values on every element than on the selected ones)."""
    def ok(n: ast.AST) -> bool:
        return _elementwise(n, lines, mask, banned, local, reads, functions)

    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.Name):
        if node.id == local:
            reads.append(node)
            return True
        return node.id not in banned
    if isinstance(node, ast.Attribute):
        return _root(node) not in (None, local) and not set(_prefixes(lines, node)) & banned
    if isinstance(node, ast.Subscript):
        if isinstance(node.value, (ast.Name, ast.Attribute)) and _root(node.value) not in (None, local) \
                and segment(lines, node.slice) == mask:
            reads.append(node)
            return True
        return False
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and ok(node.operand)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _ARITH) and ok(node.left) and ok(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _POINTWISE:
        if any(isinstance(a, ast.Starred) for a in node.args) or \
                any(k.arg in (None, "out") for k in node.keywords):
            return False
        f = node.func.value
        if not (isinstance(f, ast.Name) and f.id == "torch"):    # a method: of a masked value only
            n = len(reads)                                       # (not `math.exp(v)`, `np.exp(v)`)
            if not ok(f) or len(reads) == n:
                return False
        return all(ok(a) for a in [*node.args, *(k.value for k in node.keywords)])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return False
        n = len(reads)
        return all(ok(a) for a in [*node.args, *(k.value for k in node.keywords)]) and len(reads) > n
    return False


def _selected(fn: ast.AST, lines: list[str], mask: str, local: str | None) -> set[str]:
    """The names the function binds to a value computed from a read through `mask` (kornia's
    `y = 3.75 / ax[idx]`, then `coef = 0.39 + y * ...`): the selection's shape, not the mask's,
    so a masked write may not use them in the `torch.where` form. `local` is left out."""
    found: set[str] = set()
    binds = [(s.targets[0].id, s.value) for s in ast.walk(fn) if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id != local]
    grew = True
    while grew:
        grew = False
        for name, v in binds:
            if name not in found and any(
                    isinstance(n, ast.Subscript) and segment(lines, n.slice) == mask
                    or isinstance(n, ast.Name) and n.id in found for n in ast.walk(v)):
                found.add(name)
                grew = True
    return found


def _mask_definition(body: list[ast.stmt], before: ast.stmt, mask: ast.AST) -> ast.AST:
    """The expression a mask name was last bound to in the block before `before` (the mask
    itself when it is not a name, or its binding is not a plain assignment there)."""
    found = mask
    if not isinstance(mask, ast.Name):
        return found
    for s in body:
        if s is before:
            break
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and s.targets[0].id == mask.id:
            found = s.value
        elif any(isinstance(n, ast.Name) and n.id == mask.id and not isinstance(n.ctx, ast.Load)
                 for n in ast.walk(s)):
            found = mask
    return found


def _made_like(before: list[ast.stmt], y: ast.AST) -> set[str]:
    """The tensor a name was last made like in the statements `before` (`y =
    torch.zeros_like(x)`, `x.clone()`, `x.new_zeros(x.shape)`): its text, whose shape `y` has."""
    if not isinstance(y, ast.Name):
        return set()
    made = next((s for s in reversed(before) if isinstance(s, ast.Assign) and len(s.targets) == 1
                 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == y.id), None)
    call = made.value if made is not None else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return set()
    f = call.func
    if isinstance(f.value, ast.Name) and f.value.id == "torch" and f.attr.endswith("_like") and call.args:
        return {ast.unparse(call.args[0])}
    if f.attr in ("clone", "detach") and not call.args:
        return {ast.unparse(f.value)}
    return set()


def _definer(tree: ast.Module, body: list[ast.stmt], st: ast.stmt) -> Callable[[ast.Name], ast.AST]:
    """What a name read at `st` was bound to: its last plain assignment in `st`'s block before
    it (`_mask_definition`), else the only assignment of it in the enclosing function, made
    before `st` (nflows' `outside_interval_mask = ~inside_interval_mask`, above the `if` whose
    block writes through it); the name itself where neither is known."""
    fn = enclosing_function(tree, st)

    def defined(name: ast.Name) -> ast.AST:
        local = _mask_definition(body, st, name)
        if local is not name or fn is None:
            return local
        binds = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name.id
                 and not isinstance(n.ctx, ast.Load)]
        made = [a for a in ast.walk(fn) if isinstance(a, ast.Assign) and len(a.targets) == 1
                and isinstance(a.targets[0], ast.Name) and a.targets[0].id == name.id and a.lineno < st.lineno]
        return made[0].value if len(binds) == 1 and len(made) == 1 else name
    return defined


def _fresh(before: list[ast.stmt], name: str) -> bool:
    """Whether the last of the statements `before` (a block, up to a masked write) that binds
    `name` assigns it a new tensor (`torch.zeros_like(x)`, `x.clone()`) and none after it reads
    `name`: no other reference to that tensor exists, so rebinding `name` is writing into it."""
    k = max((k for k, s in enumerate(before) if isinstance(s, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)), default=None)
    if k is None:
        return False
    made = before[k]
    call = made.value
    return len(made.targets) == 1 and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
        and call.func.attr in _FACTORIES \
        and not any(isinstance(n, ast.Name) and n.id == name for s in before[k + 1:] for n in ast.walk(s))


def _number(node: ast.AST) -> int | float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _number(node.operand)
        return None if v is None else -v
    return node.value if isinstance(node, ast.Constant) and type(node.value) in (int, float) else None


def _inside(defn: ast.AST, lines: list[str]) -> tuple[str, str] | None:
    """For a mask `t > c` / `t >= c` / `t < c` / `t <= c` / `t != c` (`t` a name or an
    attribute, `c` a number): (`t`'s text, a number strictly on the selected side, c ± 1),
    which every unselected element of `t` can take before an elementwise function without
    leaving the domain the mask selects; else None."""
    if not (isinstance(defn, ast.Compare) and len(defn.ops) == 1
            and isinstance(defn.left, (ast.Name, ast.Attribute)) and _root(defn.left)):
        return None
    c = _number(defn.comparators[0])
    if c is None or abs(c) > 1e6:   # c ± 1 must differ from c in float32
        return None
    op = type(defn.ops[0])
    v = c + 1 if op in (ast.Gt, ast.GtE, ast.NotEq) else c - 1 if op in (ast.Lt, ast.LtE) else None
    return None if v is None else (segment(lines, defn.left), repr(v))


def _masked_compute_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`y[m] = E` where `E` is elementwise in values read through the same mask (`x[m]`, see
    `_elementwise`), also through a local bound just before (`xm = x[m]` then `dx[m] = f(xm)`):
    `E` computed over every element and the mask's elements kept, `y = torch.where(m, E', y)`
    for a `y` made by a factory in the block with no read of it since (nothing else can hold
    it), else in place, `y.copy_(torch.where(m, E', y))` (another reference sees the write, as
    it saw head's). Where `E` divides or calls a function not defined everywhere (`partial_domain`),
    the unselected elements are set first to a value inside the function's domain, and that
    form only: for a mask `x > c` (`>=`, `<`, `<=`, `!=`) whose tensor is the only one read
    through it, c ± 1; else 1 (`torch.where(m, tss, 1)`, e3nn's own `safe_x`). Computed as they
    are, the discarded values may be inf or NaN, and give NaN gradients where head's are
    finite, on inputs (a zero denominator) the shape cases may not hold."""
    st, body, lines = finding_statement(finding, source, tree)
    if st is None or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return []
    fn = enclosing_function(tree, st)
    i = next((k for k, s in enumerate(body) if s is st), None)
    if fn is None or i is None:
        return []
    at = (finding.line, finding.col)
    first, store, local = st, st, None
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and \
            isinstance(st.value, ast.Subscript) and (st.value.lineno, st.value.col_offset) == at:
        if i + 1 >= len(body):
            return []
        local, picked, store = st.targets[0].id, st.value, body[i + 1]
    if not (isinstance(store, ast.Assign) and len(store.targets) == 1 and isinstance(store.targets[0], ast.Subscript)):
        return []
    target = store.targets[0]
    y, mask_node, value = target.value, target.slice, store.value
    if not isinstance(y, (ast.Name, ast.Attribute)) or isinstance(mask_node, (ast.Tuple, ast.Slice)) or \
            not pure(mask_node) or isinstance(value, ast.Subscript):
        return []   # `y[m] = x[m]` is `_masked_store_fixes`'s
    mask = segment(lines, mask_node)
    if local is not None:
        if segment(lines, picked.slice) != mask or not isinstance(picked.value, (ast.Name, ast.Attribute)):
            return []
        # the local is read by the store's value only: the edit removes it
        uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == local]
        in_value = {id(n) for n in ast.walk(value)}
        if any(id(n) not in in_value for n in uses if n is not first.targets[0]):
            return []
    defn = _mask_definition(body, first, mask_node)
    # `y`, the mask and what is read through it are tensors of the mask's shape: none may be
    # read without the mask (a comparison's other operand, `x > t`, may be a number: allowed)
    banned = {segment(lines, y)} | ({mask} if isinstance(mask_node, (ast.Name, ast.Attribute)) else set())
    banned |= {segment(lines, n.value) for n in ast.walk(value) if isinstance(n, ast.Subscript)
               and segment(lines, n.slice) == mask}
    if local is not None:
        banned.add(segment(lines, picked.value))
    banned |= _selected(fn, lines, mask, local)
    reads: list[ast.AST] = []
    functions = frozenset(s.name for s in tree.body if isinstance(s, ast.FunctionDef))
    if not _elementwise(value, lines, mask, banned, local, reads, functions) or not reads:
        return []
    # the finding at a masked read; or, for a break dynamo put on the store's first line (a
    # value written over several lines reads through the mask on a later one), at the target
    if local is None and not any(isinstance(r, ast.Subscript) and (r.lineno, r.col_offset) == at
                                 for r in reads + [target]):
        return []
    assumed = sorted({n.func.id for n in ast.walk(value) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name) and n.func.id in functions})
    tensors = [picked.value] if local is not None else []
    tensors += [r.value for r in reads if isinstance(r, ast.Subscript)]
    # a mask computed from a read tensor by anything but elementwise steps (`x[:, 0] > 0`,
    # `x.norm(dim=-1) > eps`) has another shape than the tensor: no edit
    if isinstance(defn, ast.Compare) and len(defn.ops) == 1:
        names = {_root(t) for t in tensors}
        if _roots(defn.left) & names and any(
                isinstance(n, ast.Subscript) or isinstance(n, ast.Call) and not (
                    isinstance(n.func, ast.Attribute) and n.func.attr in _POINTWISE) for n in ast.walk(defn.left)):
            return []
    y_text = segment(lines, y)
    fresh = isinstance(y, ast.Name) and _fresh(body[:body.index(first)], y.id)
    # A mask that is an elementwise test of `y`, of a tensor `y` was made like
    # (`torch.zeros_like(x)`) or of a tensor read through it has that tensor's shape, and then
    # `y`'s too: the value read through it is one value per selected element, which `y[m]`
    # takes only where the mask covers all of `y`'s dimensions. It is taken as it is; any
    # other mask over the leading dimensions of the tensor it meets (a row mask).
    alike = {y_text} | _made_like(body[:body.index(first)], y) | {segment(lines, t) for t in tensors}
    defined = _definer(tree, body, first)
    whole = any(tests_elementwise(defn, s, lines, defined) for s in alike)

    def aligned(t: str) -> str:
        return mask if whole else leading_mask(_atom(lines, mask_node), t)

    def rewritten(swap: dict[int, str]) -> str:
        """The value's text with each masked read (`id` -> text) replaced."""
        vl, ve = value.lineno, value.end_lineno or value.lineno
        start, stop = node_span(value)
        eol = (ve, len(lines[ve - 1].encode("utf-8", "surrogateescape")))
        edits = [((vl, 0), start, ""), (stop, eol, "")]   # only the value's own text
        edits += [(*node_span(r), swap[id(r)]) for r in reads if id(r) in swap]
        return "\n".join(replace_spans(lines, vl, ve, edits))

    indent = indentation(lines, first)

    def stored(e: str) -> str:
        where = f"torch.where({aligned(y_text)}, {e}, {y_text})"
        return f"{indent}{y_text} = {where}" if fresh else f"{indent}{y_text}.copy_({where})"

    end = store.end_lineno or store.lineno
    how = "rebound" if fresh else "written in place"

    def stand_in(v: str) -> list[str]:
        """The value over every element, each masked read's unselected elements set to `v`
        first."""
        if local is None:
            return stored(rewritten({id(r): f"torch.where({aligned(segment(lines, r.value))}, {segment(lines, r.value)}, {v})"
                                     for r in reads})).split("\n")
        kept = f"torch.where({aligned(segment(lines, picked.value))}, {segment(lines, picked.value)}, {v})"
        return [f"{indent}{local} = {kept}"] + stored(rewritten({})).split("\n")

    out = []
    if not partial_domain(value):
        plain = rewritten({id(r): segment(lines, r.value if isinstance(r, ast.Subscript) else picked.value)
                           for r in reads})
        out.append(Candidate(code=code, path=finding.path, start_line=first.lineno, end_line=end,
                             lines=tuple(stored(plain).split("\n")), safe=False, guards=("empty", "zero", "nan"),
                             title=f"compute the value over every element and keep the masked ones with "
                                   f"`torch.where` (static shapes; `{y_text}` {how}); the other elements' "
                                   "values are discarded"))
    inside = _inside(defn, lines)
    if inside is not None and all(segment(lines, t) == inside[0] for t in tensors):
        x, v = inside
        out.append(Candidate(code=code, path=finding.path, start_line=first.lineno, end_line=end,
                             lines=tuple(stand_in(v)), safe=False, guards=("empty", "zero", "nan"), rank=len(out),
                             title=f"compute the value over every element, `{x}`'s unselected ones set to {v} "
                                   f"first (no inf/NaN there, in gradients either), and keep the masked ones "
                                   "with `torch.where`"))
    elif partial_domain(value):
        out.append(Candidate(code=code, path=finding.path, start_line=first.lineno, end_line=end,
                             lines=tuple(stand_in("1")), safe=False, guards=("empty", "zero", "nan"), rank=len(out),
                             title="compute the value over every element, the unselected elements read as 1 "
                                   "first (no inf/NaN there, in gradients either), and keep the masked ones "
                                   "with `torch.where`"))
    if assumed:
        # nothing here shows the file's own function to be elementwise: tried after the rest
        note = f" (assuming `{'`, `'.join(assumed)}` elementwise, which the proof checks)"
        out = [dataclasses.replace(c, rank=c.rank + 2, title=c.title + note) for c in out]
    return out
