from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.rules.branch_fixes import is_compiling_fixes
from pt2bot.rules.capture_branch_fixes import capture_branch_fixes
from pt2bot.rules.check_fixes import check_fixes
from pt2bot.rules.edits import (binds_torch, finding_statement, function_binds, indentation, owns_lines,
                                replace_statement, segment)
from pt2bot.rules.scalar_fixes import keep_tensor_fixes, sizes_from_list_fixes
from pt2bot.rules.size_fixes import fill_value_fixes, numpy_product_fixes, sizes_tensor_fixes
from pt2bot.analysis.infer import NDARRAY, SHAPE, SIZES
from pt2bot.analysis.queries import generator_note, is_tensorish

# numpy factories (pt2bot/analysis/numpy_calls.py FUNCS): their arrays hold no value that dynamo's fake
# tensors know while tracing, so a Python scalar read from them is data-dependent.
_NP_FACTORIES = frozenset({"zeros", "ones", "full", "arange", "linspace"})


def _numpy_data(ctx, e: ast.AST, depth: int = 0) -> bool:
    """Whether a numpy value made in compiled code holds data dynamo cannot know while tracing.

    Measured on torch 2.13.0+cpu: `int`/`float`/`bool` of such a value breaks the graph with
    GB0033 (`aten._local_scalar_dense`, data-dependent): a factory's array (`np.ones(3).sum()`,
    `np.arange(5)[2]`), a reduction over several values (`np.prod(x.shape)`, `np.mean(x.shape)`,
    `np.array([0.25, 0.75])`), and what is computed from them. numpy on Python numbers alone
    (`np.ceil(h / 4)`, `np.sqrt(d)`, monai swin_unetr.py:1058) is a one-element constant that
    fake tensors propagate: `float()`/`int()` of a float one compile without a break, so those
    are not flagged (of an integer one, GB0208)."""
    if depth > 6:
        return False
    t = type(e)
    if t is ast.Call:
        f = e.func
        if type(f) is ast.Attribute and ctx.kind(f.value) == NDARRAY:     # `a.sum()`, `a.astype(...)`
            return _numpy_data(ctx, f.value, depth + 1)
        ns, _, fname = (ctx.mod.resolve(f) or "").rpartition(".")
        if ns != "numpy":
            return False
        return fname in _NP_FACTORIES or any(_several(ctx, a) or _numpy_data(ctx, a, depth + 1) for a in e.args)
    if t is ast.Subscript:
        return _numpy_data(ctx, e.value, depth + 1)
    if t is ast.BinOp:
        return _numpy_data(ctx, e.left, depth + 1) or _numpy_data(ctx, e.right, depth + 1)
    if t is ast.UnaryOp:
        return _numpy_data(ctx, e.operand, depth + 1)
    if t is ast.Name:
        # what the function assigns to the name (`a = np.ones(3) * 2; ... int(a.sum())`)
        return any(type(s) is ast.Assign and any(type(g) is ast.Name and g.id == e.id for g in s.targets)
                   and _numpy_data(ctx, s.value, depth + 1) for s in ast.walk(ctx.node))
    return False


def _several(ctx, a: ast.AST) -> bool:
    """An argument of several values: sizes (`x.shape`, `x.shape[1:]`, `(h, w)`) or a literal
    list/tuple of two or more (one element would be a constant fake tensors know)."""
    if type(a) in (ast.List, ast.Tuple):
        return len(a.elts) >= 2 or any(type(v) is ast.Starred for v in a.elts)
    return ctx.kind(a) in (SHAPE, SIZES)


def _prefix_mask_fixes(code: str, finding, source: str, tree: ast.Module) -> list:
    """`for i in range(n): M[i, :L[i]] = v` (the finding on `L[i]`, v a constant) -> one
    masked write of the first `n` rows: `M[:n][torch.arange(M.shape[1], device=M.device) <
    L[:n, None]] = v`."""
    st, body, lines = finding_statement(finding, source, tree)
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and len(body) == 1
            and _constant(st.value)) or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return []
    loop = next((n for n in ast.walk(tree) if isinstance(n, ast.For) and n.body is body), None)
    if loop is None or loop.orelse or not isinstance(loop.target, ast.Name) or not owns_lines(lines, loop):
        return []
    i, it = loop.target.id, loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords and (len(it.args) == 1 or (len(it.args) == 2 and _zero(it.args[0])))):
        return []
    target = st.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Tuple)
            and len(target.slice.elts) == 2):
        return []
    row, cols = target.slice.elts
    bound = cols.upper if isinstance(cols, ast.Slice) else None
    if not (isinstance(row, ast.Name) and row.id == i and isinstance(cols, ast.Slice)
            and (cols.lower is None or _zero(cols.lower)) and cols.step is None
            and isinstance(bound, ast.Subscript) and isinstance(bound.slice, ast.Name)
            and bound.slice.id == i and (bound.lineno, bound.col_offset) == (finding.line, finding.col)):
        return []
    n, m, lengths = it.args[-1], target.value, bound.value
    if any(isinstance(x, ast.Name) and x.id == i for e in (n, m, lengths) for x in ast.walk(e)):
        return []
    # the loop's variable is gone with the loop: nothing after it may read it
    end = loop.end_lineno or loop.lineno
    fn = next((f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
               and f.lineno <= loop.lineno and end <= (f.end_lineno or f.lineno)), tree)
    if any(isinstance(x, ast.Name) and x.id == i and x.lineno > end for x in ast.walk(fn)):
        return []
    ms, count = segment(lines, m), segment(lines, n)
    text = (f"{ms}[:{count}][torch.arange({ms}.shape[1], device={ms}.device) < "
            f"{segment(lines, lengths)}[:{count}, None]] = {segment(lines, st.value)}")
    return [replace_statement(code, finding.path, loop, [indentation(lines, loop) + text],
                              "write the first rows' prefixes at once: a mask from `torch.arange` "
                              "and the lengths instead of the loop", safe=False)]


def _constant(e: ast.AST) -> bool:
    """`True`, `0`, `-1.5`: a value the same in every row (a masked write takes it as it is)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        e = e.operand
    return isinstance(e, ast.Constant) and isinstance(e.value, (bool, int, float))


def _zero(e: ast.AST) -> bool:
    return isinstance(e, ast.Constant) and e.value == 0 and not isinstance(e.value, bool)


# A tensor where these calls need Python ints (sizes) or a Python number (a fill value): dynamo
# reads it back, GB0033 (`aten._local_scalar_dense`), measured on torch 2.13 for each of them.
# `torch.full(size, t)`, `masked_fill`, `fill_` and `index_fill` take a 0-d tensor fill value.
_SIZE_METHODS = frozenset({"view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_empty", "new_full"})
_SIZE_FUNCS = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.arange", "torch.full"})
_FILL_AT = {"new_full": 1, "torch.full_like": 1}   # the fill value's position (keyword `fill_value`)

def _on_self(e: ast.AST) -> bool:
    return type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self"


def _size_call_arguments(ctx, node: ast.Call) -> tuple[list[ast.AST], list[ast.AST]] | None:
    """(the arguments that are sizes, those that are fill values) of a call that needs Python
    numbers there (`x.view(n, r)`, `torch.zeros(n)`, `x.new_full(size, t)`); None when the call is
    none of those. A module's function or a layer named like a Tensor method has none."""
    f = node.func
    if type(f) is not ast.Attribute:
        return None
    name = ctx.mod.resolve(f) or ""
    if f.attr in _SIZE_METHODS and name not in _SIZE_FUNCS:
        v = f.value
        if (type(v) is ast.Name and (v.id in ctx.mod.imports or v.id in ctx.mod.summary.module_names
                                     or v.id == "self")) or ctx.kind(v) == NDARRAY \
                or (_on_self(v) and not ctx.self_tensor_attr(v)):
            # a module's function (`einops.repeat(...)`), numpy's method, or a submodule
            # named like one (`self.expand(x)`: a layer called on a tensor)
            return [], []
        key = f.attr
    elif name in _SIZE_FUNCS or name == "torch.full_like":
        key = name
    else:
        return None
    fill_at = _FILL_AT.get(key)
    sizes: list[ast.AST] = []
    fills: list[ast.AST] = []
    for i, a in enumerate(node.args):
        if key == "torch.full_like" and i == 0:
            continue
        if i == fill_at:
            fills.append(a)
        elif key != "torch.full" or i == 0:
            sizes.extend(a.elts if type(a) in (ast.List, ast.Tuple) else [a])
    for k in node.keywords:
        if k.arg == "fill_value" and fill_at is not None:
            fills.append(k.value)
        elif k.arg == "size":
            sizes.extend(k.value.elts if type(k.value) in (ast.List, ast.Tuple) else [k.value])
    return sizes, fills


# Parts of a statement that may not run when it does: a ternary's branches, the operands after
# the first of `and`/`or`, and what lambdas and comprehensions evaluate later or per element.
_MAYBE_RUN = (ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BLOCKS = ("body", "orelse", "finalbody")


def _surely_run(e: ast.AST):
    """The nodes of `e` evaluated whenever `e` is."""
    todo = [e]
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, _MAYBE_RUN):
            continue
        if type(n) is ast.BoolOp:
            todo.append(n.values[0])
            continue
        todo.extend(ast.iter_child_nodes(n))


def _statements_before(body: list[ast.stmt], target: ast.AST) -> list[ast.stmt] | None:
    """The statements that surely ran before the one holding `target`: the earlier statements
    of its block and of each block around it, outermost first (None: `target` is not in `body`)."""
    for i, st in enumerate(body):
        if any(n is target for n in ast.walk(st)):
            inner: list[ast.stmt] = []
            blocks = [getattr(st, b, None) for b in _BLOCKS] + [h.body for h in getattr(st, "handlers", ())]
            for block in blocks:
                if type(block) is list:
                    found = _statements_before(block, target)
                    if found is not None:
                        inner = found
                        break
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return inner     # a nested def's body runs when it is called, not here
            return body[:i] + inner
    return None


def _read_back_before(ctx, a: ast.AST) -> bool:
    """Whether the local tensor `a` was already passed as a size or a fill value by a simple
    statement that surely ran before this one, with no binding of the name in between.

    That first use reads the value back (a graph break, reported there). Dynamo resumes after
    a break in a new frame whose inputs are the live locals, and a frame input used as a size
    is a value dynamo guards on (`n.item() == 4`, recompiled per value; measured on torch
    2.13), not a break: the second `x.view(n, -1)` of monai's median filter does not break."""
    if type(a) is not ast.Name:
        return False
    before = _statements_before(ctx.node.body, a)
    for st in reversed(before or ()):
        if any(type(n) is ast.Name and n.id == a.id and type(n.ctx) is ast.Store for n in ast.walk(st)):
            return False     # bound again: a new tensor, made in this frame
        if not isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            continue         # a compound statement: its inner uses may not have run
        for n in _surely_run(st):
            if type(n) is not ast.Call:
                continue
            found = _size_call_arguments(ctx, n)
            if found and any(type(x) is ast.Name and x.id == a.id for x in found[0] + found[1]):
                return True
    return False


_SLICE_WHY = ("a tensor as a slice bound is converted to a Python int (`int(t)` underneath): it copies "
              "the value to Python and breaks the graph")


# `n = int(mask.sum(1).max())` then `x[:, :n]` (trimming a batch's padding): a tensor bound
# is still a value of the data, and the sliced shape follows it, so "keep a tensor" cannot
# help; the shape has to stop depending on the data, or the slice leave the compiled code.
_BOUND_ADVICE = ("`{0}` then bounds a slice (line {1}: `{2}`), so a tensor cannot stand in: the sliced "
                 "shape follows the data (a recompile when it first changes, dynamic shapes after); keep "
                 "the full length and mask what the slice drops, or slice before the compiled code (in "
                 "the collate function)")


def _bounds_a_slice(ctx, call: ast.Call) -> tuple[str, int, str] | None:
    """(name, line, source) where `name = int(t)` is later a bound of a slice in the function."""
    assign = next((s for s in ast.walk(ctx.node) if type(s) is ast.Assign and s.value is call
                   and len(s.targets) == 1 and type(s.targets[0]) is ast.Name), None)
    if assign is None:
        return None
    name = assign.targets[0].id
    for sub in ast.walk(ctx.node):
        if type(sub) is not ast.Subscript or sub.lineno <= assign.lineno:
            continue
        parts = sub.slice.elts if type(sub.slice) is ast.Tuple else (sub.slice,)
        if any(type(p) is ast.Slice and any(type(b) is ast.Name and b.id == name
                                            for b in (p.lower, p.upper, p.step)) for p in parts):
            line = ctx.line_text(sub).encode("utf-8")     # (ast's columns count bytes)
            text = line[sub.col_offset:sub.end_col_offset] if sub.end_lineno == sub.lineno else line
            return name, sub.lineno, text.decode("utf-8", "replace").strip()[:120]
    return None


class ScalarConversion(Rule):
    """## What it does
    Flags `float(t)`, `int(t)` and `bool(t)` where `t` is a tensor computed in compiled code,
    or a numpy value made there from data dynamo cannot know while tracing (a numpy factory's
    array, a reduction over several values: `int(np.prod(x.shape[1:]))`,
    `float(np.ones(3).mean())`), also as the count of `range()` (`n = np.prod(x.shape[1:])`
    then `for _ in range(n)`, normflows' autoregressive inverse); a tensor as a slice bound
    (`x[:t]`, `mask[i, :lengths[i]]`), which is `int(t)` underneath; and a tensor where a call needs a size or a fill value:
    `x.view(n, r)`, `x.reshape(...)`, `x.expand(...)`, `x.repeat(...)`, `x.new_zeros(...)` /
    `new_ones` / `new_empty` / `new_full`, `torch.zeros/ones/empty/arange(...)`, `torch.full`'s
    size, and the fill value of `x.new_full(size, t)` and `torch.full_like(x, t)`.

    ## Why is this bad?
    Converting a tensor to a Python scalar calls `Tensor.item()` underneath: torch 2.13 breaks
    the graph with GB0124 and, on a GPU, waits for the device; inside a generator expression
    dynamo cannot resume after it and runs the whole function uncompiled (as for `.item()`,
    PTC101). dynamo traces numpy into torch ops (`torch._numpy`), so a numpy array in compiled
    code is a tensor too: converting it breaks with GB0033 ("Data dependent operator"; GB0208
    where the array is a single integer known while tracing, e.g. `np.prod` of a one-element
    shape slice); `range()` cannot take it at all (GB0059 on torch 2.13, GB0208 on 2.14.1).
    A tensor as a size or a fill value is read back the same way (GB0033, measured
    on torch 2.13 for each call listed; a tensor made of two sizes or more, such as
    `torch.prod(torch.tensor(x.shape[1:]))`, holds values fake tensors do not know either).
    `torch.full(size, t)`, `masked_fill`, `fill_` and `index_fill` keep a 0-d tensor fill
    value in the graph and are not flagged, nor is a second use of a tensor as a size after
    a statement that surely ran passed it as one: dynamo resumes after that first break in a
    new frame whose input the tensor is, and guards on its value there instead of breaking.
    Sizes are fine:
    `int(x.shape[0])` is a (Sym)int, not a tensor, and is not flagged; nor are `len(a)`,
    `a.ndim`, `a.shape[0]` of an array, or numpy on Python numbers alone
    (`int(np.ceil(h / 4))`, `float(np.sqrt(d))`), which dynamo evaluates while tracing.
    Where the name an `int(t)` is bound to later bounds a slice in the function (trimming a
    batch's padding: `longest = int(mask.sum(1).max())`, then `tokens[:, :longest]`), no tensor
    can stand in, since the sliced shape follows the data either way: the message says so and
    points at the slice, and advises a static length with a mask, or slicing before the
    compiled code, instead of "keep a tensor".

    ## Example
    ```python
    def forward(self, x):
        n = int(x.sum())
        return x * n
    ```

    ## Use instead
    ```python
    def forward(self, x):
        n = x.sum().to(torch.int64)
        return x * n
    ```
    For numpy on sizes, compute with Python numbers: `math.prod(x.shape[1:])`.
    Fix offered (not safe: run and compared before it is posted) when the value only feeds
    tensor arithmetic: `float()` dropped, in the expression (`x * float(t)` -> `x * t`) or in the
    assignment `v = float(t)` when every later read of `v` in the function is an operand of
    arithmetic (`x *= v` too; also the one bound of a clamp, `x.clamp(max=v)`, or a value of
    `torch.where(c, x, v)`) outside a condition, an index, a size or a formatted string. The
    same holds where the number reaches the name through arithmetic with literals or an arm of
    a conditional expression, `n = int(i.max()) + 1 if i.numel() > 0 else 0`: kept as a tensor,
    `n` read later as a size (`(n,) + x.shape[1:]`) would break there again, so no edit.
    `lo, hi = float(x.min()), float(x.max())` tested by an early return further down (`if hi ==
    lo: return torch.full_like(x, out_lo)`) and read after it in arithmetic or as both bounds
    of a clamp: the values kept, detached, and the return selected over the rest, as for
    `.item()` (PTC101's `_kept_then_chained`).
    `int(t)` becomes `t.long()` in the same places (it truncates toward zero as `int()` does;
    just `t` for an integer draw or index: `int(x.argmax())` -> `x.argmax()`), and
    `int(lengths.max())` of a tensor the function built from Python numbers
    (`lengths = torch.tensor(sizes)`) becomes `max(sizes)`, as for `.item()` (PTC101).
    `bool()` gets no edit (a branch), but a check that raises on it, `if bool((t < 0).any()):
    raise ...` or `CHECK(bool((t >= 0).all()), msg)`, is kept in compiled code as
    `torch._assert_async` under `torch.compiler.is_compiling()`, the original in eager
    (pt2bot/rules/check_fixes.py, as for PTC201).
    A tensor where Python needs a size or a fill value (pt2bot/rules/size_fixes.py; dynamo
    reads it back with GB0033, "Data dependent operator"; these recipes are also tried at such
    a break where no finding flags the line): a number of sizes made through a tensor,
    `r = torch.prod(torch.tensor(out.shape[1:]))` passed to `out.view(out.shape[0], r)` or
    `int(...)` of it, becomes the Python int `r = out.shape[1:].numel()` (`sum(S)`,
    `max(S)`, `min(S)`; `a * b` for a list `[a, b]` of sizes), edited where the tensor is made
    when no read uses it as a tensor; numpy's reductions of sizes the same way (`np.prod(S)`,
    `np.array(S).prod()` -> `S.numel()`, `np.sum(S)` -> `sum(S)`; also in the assignment of a
    count `range()` takes, and in the test of an `if` on it, PTC201); where `r` is read once,
    by the `view`/`reshape` right after it, a second candidate drops the assignment and writes `-1` there (second: `-1`
    cannot be inferred when another dim is 0). `int(np.prod(S))` of an S not known to be sizes
    (unfoldNd's `int(numpy.prod(shape_tuple))`, a parameter) becomes `math.prod(S)` where the
    file binds `math`, else the product as a loop over S before the statement (no import,
    which would be an edit outside the hunk); so do the products `n = np.prod(S)` at the top of
    the function, each its name's one binding, where a later statement reads one as a size and
    dynamo breaks there (complextorch's `prod_kernel_size = np.prod(kernel_size)`, then
    `x.view(batch, c, prod_kernel_size, L)`): all of them in one edit, the loop written into
    the same name. A tensor fill value of `x.new_full(size, t)`
    or `torch.full_like(x, t)` becomes `x.new_empty(size).fill_(t)` /
    `torch.empty_like(x).fill_(t)` (the other arguments kept). Not safe: run and compared.
    A loop writing each row's prefix from a tensor of lengths,
    `for i in range(n): mask[i, :lengths[i]] = True` (a constant on the right; the finding on
    `lengths[i]`), becomes one masked write of the first `n` rows that replaces the loop's two
    lines (not safe: run and compared before it is posted):
    `mask[:n][torch.arange(mask.shape[1], device=mask.device) < lengths[:n, None]] = True`.
    For lengths of 0 or more it writes what the loop writes (a negative length counts from the
    end in the loop's slice and selects nothing in the comparison), for a mask of any rank.
    Inside a block that only does optional work, `if first_below_thr.any(): i =
    torch.where(first_below_thr)[0][0].item(); g = g[..., :i, :]`, the block can run in eager
    only: `if not torch.compiler.is_compiling() and first_below_thr.any():`, posted only where
    the proof shows compiled outputs equal to head's eager ones on shape cases that enter the
    block (pt2bot/rules/branch_fixes.py `is_compiling_fixes`, PTC201's recipe 6).
    In the test of an `if` (`if data["_input_padded"].item():`, a cached length read in the
    test of an early `return self.cached[:n]`), the `if` gets PTC201's recipes 4 to 6: the
    early exit taken in eager only, the block run always in compiled code, or in eager only,
    each posted only where the proof shows it right on the model's own shape cases.
    """

    code = "PTC104"
    name = "tensor-to-scalar"
    summary = ("`float()`/`int()`/`bool()` of a tensor, or a tensor as a slice bound, a size or a fill value "
               "(host sync, graph break)")
    gb = "GB0124"
    # a numpy value's conversion, a tensor as a size or a fill value (GB0033); `int()` of a numpy
    # value of one element, and `range()` of any on torch 2.14.1 (GB0208); `range()` of one on
    # torch 2.13 (GB0059): where no finding flags the line, its recipes are tried at such breaks
    gb_also = ("GB0033", "GB0208", "GB0059")
    fullgraph_captures = frozenset({"int", "float"})   # not bool(t): tests/test_rules_torch.py
    node_types = (ast.Call, ast.Subscript)
    call_keys = frozenset({"float", "int", "bool", "range", ".full_like", ".zeros", ".ones", ".empty", ".arange",
                           ".full"} | {"." + m for m in _SIZE_METHODS})
    _FUNCS = {"float": "torch.float32", "int": "torch.int64", "bool": "torch.bool"}

    @classmethod
    def fixes(cls, finding, source, tree):
        return (sizes_from_list_fixes(cls.code, finding, source, tree, "float")
                + keep_tensor_fixes(cls.code, finding, source, tree, "float")
                + sizes_tensor_fixes(cls.code, finding, source, tree)
                + numpy_product_fixes(cls.code, finding, source, tree)
                + fill_value_fixes(cls.code, finding, source, tree)
                + _prefix_mask_fixes(cls.code, finding, source, tree)
                + check_fixes(cls.code, finding, source, tree)
                + capture_branch_fixes(cls.code, finding, source, tree)
                + is_compiling_fixes(cls.code, finding, source, tree))

    def check(self, ctx, node):
        if type(node) is ast.Subscript:
            self._slice_bound(ctx, node)
            return
        if self._size_argument(ctx, node):
            return
        f = node.func
        if isinstance(f, ast.Name) and f.id == "range" and not node.keywords and f.id not in ctx.mod.imports \
                and f.id not in ctx.mod.summary.module_names:
            self._numpy_count(ctx, node)
            return
        if not (isinstance(f, ast.Name) and f.id in self._FUNCS and len(node.args) == 1 and not node.keywords
                and f.id not in ctx.mod.imports and f.id not in ctx.mod.summary.module_names):
            return
        a = node.args[0]
        if is_tensorish(ctx, a):
            bound = _bounds_a_slice(ctx, node) if f.id == "int" else None
            ctx.report(self.code, node, f"`{f.id}(tensor)` copies the value to Python and breaks the graph"
                       f"{generator_note(ctx)}; " + (_BOUND_ADVICE.format(*bound) if bound else
                                                      f"keep a tensor, e.g. `t.to({self._FUNCS[f.id]})`"))
        elif ctx.kind(a) == NDARRAY and _numpy_data(ctx, a):
            ctx.report(self.code, node, f"`{f.id}()` of a numpy value made in compiled code reads a tensor's "
                       "value (dynamo traces numpy into torch ops) and breaks the graph; compute it with "
                       "Python numbers on the sizes (`math.prod(x.shape[1:])`) or keep a tensor", gb="GB0033")

    def _numpy_count(self, ctx, node: ast.Call) -> None:
        """`range(n)` with `n` a numpy value made in compiled code (`n = np.prod(x.shape[1:])`):
        dynamo holds it as a traced tensor, which `range` cannot take (GB0059, measured on
        torch 2.13; normflows' autoregressive flow loops `for _ in range(num_inputs)`)."""
        for a in node.args:
            if ctx.kind(a) == NDARRAY and _numpy_data(ctx, a):
                ctx.report(self.code, a, "a numpy value made in compiled code as a count of `range()` is a "
                           "tensor to dynamo (it traces numpy into torch ops), which `range` cannot take: "
                           "the graph breaks; compute the count with Python numbers on the sizes "
                           "(`x.shape[1:].numel()`, `math.prod(...)`)", gb="GB0059")
                return

    def _size_argument(self, ctx, node: ast.Call) -> bool:
        """A tensor passed where the call needs a size (`x.view(n, r)`, `torch.zeros(n)`,
        `x.new_zeros([n, 2])`) or a fill value (`x.new_full(size, t)`, `torch.full_like(x, t)`);
        reported at the argument. True when the call is one of those (reported or not)."""
        found = _size_call_arguments(ctx, node)
        if found is None:
            return False
        f = node.func
        sizes, fills = found
        for a in sizes + fills:
            if type(a) is not ast.Starred and is_tensorish(ctx, a) and not _read_back_before(ctx, a):
                what = "fill value" if a in fills else "size"
                ctx.report(self.code, a, f"a tensor as a {what} of `{f.attr}` is read back as a Python number "
                           f"(data-dependent, GB0033) and breaks the graph{generator_note(ctx)}; "
                           + ("compute sizes from sizes (`x.shape[1:].numel()`) or let `-1` infer one"
                              if what == "size" else "fill in place: `x.new_empty(size).fill_(t)`"),
                           gb="GB0033")
                return True
        return True

    def _slice_bound(self, ctx, node: ast.Subscript) -> None:
        s = node.slice
        for part in (s.elts if type(s) is ast.Tuple else (s,)):
            if type(part) is not ast.Slice:
                continue
            for b in (part.lower, part.upper, part.step):
                if b is not None and is_tensorish(ctx, b):
                    ctx.report(self.code, b, f"{_SLICE_WHY}{generator_note(ctx)}; under `fullgraph=True` "
                               "torch captures it as an unbacked symbol instead; a prefix per row is a "
                               "mask: `torch.arange(n) < lengths[:, None]`")
                    return
