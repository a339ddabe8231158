from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.rules.branch_fixes import is_compiling_fixes, item_test_fixes
from pt2bot.rules.capture_branch_fixes import capture_branch_fixes
from pt2bot.rules.check_fixes import check_fixes
from pt2bot.rules.scalar_fixes import keep_tensor_fixes, sizes_from_list_fixes, stored_number_reason
from pt2bot.rules.size_fixes import item_to_fill_fixes, sizes_tensor_fixes
from pt2bot.analysis.queries import generator_note, method_call


class TensorItem(Rule):
    """## What it does
    Flags `Tensor.item()` in compiled code (a module's `forward`, a function given to
    `torch.compile` / `torch.export`, and what they call).

    ## Why is this bad?
    `.item()` copies a value from the device to a Python number. Dynamo cannot keep a Python
    number in the graph, so it breaks the graph there (GB0124, "Unsupported Tensor.item() call
    with capture_scalar_outputs=False"); on a GPU it also synchronises the host with the device.
    Inside a generator expression (`sum(v.item() for v in xs)`, `any(...)`, `tuple(...)`) it is
    worse than a break: dynamo cannot resume in the generator, gives up on the whole function
    ("Failed to handle graph break gracefully") and runs it uncompiled (measured on torch 2.13,
    Python 3.11); in a list comprehension it is one ordinary break.

    ## Example
    ```python
    def forward(self, x):
        scale = x.abs().max().item()
        return x / scale
    ```

    ## Use instead
    Keep the value a tensor, detached where the number carried no gradient (`.item()` cut it;
    the tensor alone lets gradients flow through `max`, which changes training):
    ```python
    def forward(self, x):
        scale = x.abs().max().detach()
        return x / scale
    ```
    If a Python number is really needed, `torch._dynamo.config.capture_scalar_outputs = True`
    traces it as an unbacked SymInt/SymFloat instead of breaking; but where the number then
    decides a size or a branch, the break moves there, or dynamo raises (on the real-code
    benchmark it removed `.item()` breaks cleanly on few models:
    benchmarks/results/capture_settings.md). A review proves the setting on the target's
    models after every edit, and says it only where it holds (pt2bot/fixes.py, SETTINGS).
    Fix offered (not safe: run and compared before it is posted) when the value only feeds
    tensor arithmetic: `.item()` dropped, in the expression (`x * t.item()` -> `x * t`) or in the
    assignment `v = t.item()` when every later read of `v` in the function is an operand of
    arithmetic (`x *= v` too; also the one bound of a clamp, `x.clamp(max=v)`, or a value of
    `torch.where(c, x, v)`) outside a condition, an index, a size or a formatted string. `int(t.item())`
    becomes `t.long()` (it truncates toward zero as `int()` does), or `t` where `t` is already
    an integer draw or index (`int(torch.randint(3, (1,)).item())` -> `torch.randint(3, (1,))`).
    `.item()` also cut the gradient: where the tensor depends on trainable parameters (`scale =
    x.abs().max().item()`), the kept tensor lets gradients through where head's did not, which
    the proof sees in the parameters' gradients; the same edit with the tensor detached
    (`x.abs().max().detach()`) is tried next. Where the value meets a Python float before any
    tensor (`delta = eps * torch.norm(M).item()` with `eps: float`, a float literal, a
    parameter with a float default), or is read into Python's own arithmetic (torchvision's
    `math.sqrt(target_area * aspect_ratio)`, also `round`, `int`, `float`), head computed with
    it in double, and a float32 tensor kept
    there rounds every step to float32 (an SVD's rank threshold then decides otherwise at a
    rounding boundary); those two forms are first tried in float64, `torch.norm(M).double()`
    and `torch.norm(M).detach().double()`, which compute as Python did and take the dtype of
    the tensors they meet, and the float32 ones after them. Where `v` is also passed on to the
    project's own functions (tntorch's `delta = delta.item()` then `tn.truncated_svd(M, delta=delta)`), only
    the detached form, 0-d as the number was, `delta = delta.detach().reshape(())`: the callee
    may take a tensor where it took a
    number, or make a size or a condition of it (a new break), which only the proof shows.
    A size read back from a tensor the function built from Python numbers,
    `lengths = torch.tensor([s.shape[0] for s in seqs])` then `n = int(lengths.amax().item())`,
    becomes the builtin on those numbers, `n = int(max(s.shape[0] for s in seqs))` (also
    `min`/`amin`/`sum`; neither the tensor nor the list changed in between).
    A number of sizes made through a tensor, `torch.tensor(x.shape[1:]).prod().item()` (also
    `torch.prod(...)`, `sum`, `max`, `min`), becomes the Python int `x.shape[1:].numel()`
    (`sum(x.shape)`, `max(...)`, `min(...)`; `a * b` for a list `[a, b]` of sizes;
    pt2bot/rules/size_fixes.py). A fill value read back, `v = t.item() - 1` then
    `out = x.new_full(size, v)` (or `torch.full_like(x, v)`, which read a tensor fill back),
    keeps the tensor and fills in place, in one edit from the `.item()` to that read:
    `v = t - 1` ... `out = x.new_empty(size).fill_(v)`; dropping `.item()` alone would move the
    break to `new_full`, so it is not offered where a later read of `v` needs a number.
    `masked_fill`, `fill_`, `index_fill` and `torch.full` take a 0-d tensor fill value without
    a break, so a `.item()` that only feeds them is dropped as for arithmetic.
    A range check that raises, `if t.item() < 0.0: raise ValueError(...)` (also in an `and`
    with other tensor tests, in an `elif` chain, or in a check call `CHECK(t.item() >= 0,
    msg)`), is kept in compiled code as `torch._assert_async(torch.logical_not(t < 0.0),
    "...")` under `if torch.compiler.is_compiling():`, the original test and raise in eager
    after `elif` (pt2bot/rules/check_fixes.py, the same recipe as PTC201's).
    Inside a block that only does optional work, `if first_below_thr.any(): i =
    torch.where(first_below_thr)[0][0].item(); g = g[..., :i, :]`, the block can run in eager
    only: `if not torch.compiler.is_compiling() and first_below_thr.any():`, posted only where
    the proof shows compiled outputs equal to head's eager ones on shape cases that enter the
    block (pt2bot/rules/branch_fixes.py `is_compiling_fixes`, PTC201's recipe 6).
    In the test of an `if` (`if data["_input_padded"].item():`, a cached length read in the
    test of an early `return self.cached[:n]`), the `if` gets PTC201's recipes 4 to 6: the
    early exit taken in eager only, the block run always in compiled code, or in eager only,
    each posted only where the proof shows it right on the model's own shape cases. Where the
    number is only tested (the whole test or a part of an `and`/`or`, `t.item()` becoming
    `t.bool()`; or compared, `t.item() > 0.5` becoming `t > 0.5`), the `if` also gets PTC201's
    edits of a tensor test on the test so rewritten: X-MoE's `if hasattr(self, "b2_stack") and
    self._has_bias_2.item(): h2 = h2 + ...` becomes `h2 = torch.where(self._has_bias_2.bool(),
    h2 + ..., h2)` under `if hasattr(self, "b2_stack"):` (pt2bot/rules/branch_fixes.py
    `item_test_fixes`). Where the number is bound to a name that the test of the `if` right
    after it reads, and nothing after that `if` does (`peak = x.max().item()`, then `if peak >
    1.0: x = x / peak`), both statements are one edit: the value kept, detached, and the `if`
    as PTC201's edits of a tensor test make it, `x = torch.where(peak > 1.0, x / peak, x)` first,
    then `torch.cond`, never one that lets compiled code decide otherwise than eager code
    (pt2bot/rules/scalar_fixes.py `_kept_then_selected`; not safe: where the
    arm head skipped divides by zero, `torch.where`'s gradient is NaN, which the proof refuses
    on weights all 0, and `torch.cond` runs only the arm taken).
    Where the number is read only by a check right after it that raises (`peak = ...item()`,
    then `if peak > 1e4: raise ...`), compiled code asserts the test on the tensor and eager
    code runs both statements as they were (pt2bot/rules/check_fixes.py `number_check_fixes`;
    also for PTC104's `int(t)`).
    Where several numbers are read at once and an early return further down tests them, the
    rest of the function reading them in arithmetic only (`lo, hi = x.min().item(),
    x.max().item()`, then `if hi - lo < 1e-6: return zeros`, then `x = (x - lo) / (hi - lo)`: a
    window of intensities), the values are kept, detached, and the return selected over the
    rest with PTC201's chain of early returns, 1 standing in for `hi - lo` where the test holds
    (`_kept_then_chained`); where the numbers are made in one arm of an `if` and the other arm
    binds numbers (`if in_range is None: ... else: lo, hi = in_range`), the rest of the
    function is repeated in that arm, with tensors, and the other path runs it as it was.
    A number only kept on the module for a log, `self.last_losses = {"pixel": pix.item()}`,
    gets no edit: storing `pix.detach()` hands whoever reads the attribute a 0-d tensor where
    head gave a float, which the proof compares and refuses; the reason says that edit and
    what it changes, for the author to decide.
    """

    code = "PTC101"
    name = "tensor-item"
    summary = "`Tensor.item()` in compiled code (host sync, graph break)"
    gb = "GB0124"
    fullgraph_captures = True   # tests/test_rules_torch.py: captured under fullgraph=True
    node_types = (ast.Call,)
    call_keys = frozenset({".item"})

    @classmethod
    def fixes(cls, finding, source, tree):
        return (sizes_from_list_fixes(cls.code, finding, source, tree, "item")
                + keep_tensor_fixes(cls.code, finding, source, tree, "item")
                + sizes_tensor_fixes(cls.code, finding, source, tree)
                + item_to_fill_fixes(cls.code, finding, source, tree)
                + check_fixes(cls.code, finding, source, tree)
                + item_test_fixes(cls.code, finding, source, tree)
                + capture_branch_fixes(cls.code, finding, source, tree)
                + is_compiling_fixes(cls.code, finding, source, tree))

    @classmethod
    def no_fix_reason(cls, finding, source, tree):
        return stored_number_reason(finding, source, tree)

    def check(self, ctx, node):
        if method_call(node, ("item",)) is not None:
            # the setting is torch's own hint, but on real models it more often moves the break
            # to where the number is used than removes it (benchmarks/results/capture_settings.md):
            # said as what it is, which a review then proves or refutes on the models
            maths = _math_around(ctx.node, node)
            keep = ("keep it a tensor and select with `torch.where(cond, a, b)` instead of branching "
                    "(without `.item()` the test is an `if` on a tensor, which breaks the graph too)"
                    if _in_test(ctx.node, node) else
                    "keep it a tensor (`.detach()` where `.item()` was: the number carried no gradient, "
                    "and a tensor kept without `.detach()` would pass gradients back to the input"
                    + "".join(f"; `torch.{f}` for `math.{f}`" for f in maths)
                    + (", which takes Python numbers only: given the tensor, it converts it to one "
                       "itself, the same break" if maths else "") + ")")
            ctx.report(self.code, node, "`.item()` copies the tensor to a Python number and breaks the graph"
                       f"{generator_note(ctx)}; {keep}; "
                       "capture_scalar_outputs=True traces it instead, but the break then often moves "
                       "to where the number is used (a size, an `if`)")


# math's functions that torch has under the same name (a tensor in, a tensor out)
_TORCH_MATH = frozenset({"log", "log10", "log2", "log1p", "exp", "expm1", "sqrt", "sin", "cos", "tan",
                         "tanh", "sinh", "cosh", "asin", "acos", "atan", "atan2", "floor", "ceil",
                         "isnan", "isinf", "isfinite", "erf", "erfc", "lgamma"})


def _math_around(fn: ast.AST, node: ast.AST) -> list[str]:
    """The `math.<f>(...)` calls of `fn` whose arguments hold `node`, innermost last, where
    torch has `<f>` too: dasp-pytorch's `math.log10(peak.item() + 1e-12)`, where "`.detach()`
    where `.item()` was" alone still breaks ("Data dependent operator"): math converts the
    tensor to a Python number itself."""
    out = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                isinstance(n.func.value, ast.Name) and n.func.value.id == "math" and \
                n.func.attr in _TORCH_MATH and n.func.attr not in out and \
                any(x is node for a in n.args for x in ast.walk(a)):
            out.append(n.func.attr)
    return out


def _in_test(fn: ast.AST, node: ast.AST) -> bool:
    """Whether `node` is in the test of an `if`, a `while` or a conditional expression of `fn`
    (CLIP's `if logit_scale.item() > 100:`: "drop `.item()`" there left an `if` on a tensor)."""
    return any(isinstance(n, (ast.If, ast.While, ast.IfExp)) and any(x is node for x in ast.walk(n.test))
               for n in ast.walk(fn))
