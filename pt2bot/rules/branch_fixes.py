"""The recipes for a branch on a tensor value (PTC201): what replaces `if cond:` so that
dynamo traces one graph.

In the order they are offered (most likely to be the author's intent first):

1. the branchless form, where the guarded statement is a no-op on the values that do not take
   the branch: `if not torch.isfinite(h).all(): h = torch.nan_to_num(h)` -> `h =
   torch.nan_to_num(h)` (also `(~torch.isfinite(h)).any()`; not under `torch.isnan(h).any()`,
   which lets the infs through that `nan_to_num` replaces: `torch.where` is the form there)
   (also clamps, masked fills, their in-place forms), and `if m.any(): x[m] = v` (writes of
   plain values through the mask the test reads: they change nothing when no entry is set,
   and a masked write does not break the graph where a masked read does), and a norm clipped to
   its bound, `if norm > bound: t *= bound / norm`, as `t *= torch.where(norm > bound, bound /
   torch.fmax(norm, torch.as_tensor(bound)), 1.0)` (FrEIA's spectral norm correction; exactly 1
   within the bound, and no division by a norm of 0 on the side not taken;
   `_clipped_scale_fixes`).
   Not safe: a clamp may reach values the condition did not test; the candidate carries the
   special values its condition guards (`guards`) so a verifier compares it on them too.
   And for an `if`/`else`, each arm alone, one level up (`_keep_arm_fixes`), where both arms
   compute the same on every input the model meets: peft's `if scaling == 1: result = result
   + lora_B(lora_A(dropout(x)))` / `else: result = result + lora_B(lora_A(dropout(x))) *
   scaling` (exact at 1: the maintainers kept the `else` arm), FastTD3's running variance,
   whose Chan update under `if self.count > 0:` gives the batch's variance when the count is 0
   (they kept the `if` arm). Tried before `torch.where`: the smaller edit, computing one arm
   where `torch.where` computes both. Not where the test has an effect of its own (a call
   that may change state, `:=`, a random draw), an arm can leave the function or loop, or a
   name one arm binds and the code after reads is not bound by the other. The proof accepts
   it only where a shape case ran the arm it drops (pt2bot/smoke/verify.py `_dropped_arm`):
   on the other cases the kept arm is what head ran;
2. `torch.where(cond, a, b)`: one assignment (or one `return`) on each side, the missing side
   the name's value before (or the `return` that follows the `if`). Warnings, log lines and
   prints before an arm's one assignment (torchmetrics' ROC, `if fps[-1] <= 0:
   rank_zero_warn(...); fpr = torch.zeros_like(thres)`) are set apart, given in eager only
   under the arm's own test (`if not torch.compiler.is_compiling() and fps[-1] <= 0:`): eager
   warns where head warns, and compiled code, where a warning breaks the graph, does not. `torch.where` computes
   both sides, so the largest call both sides make alike (peft's `lora_B(lora_A(dropout(x)))`
   in `result + ...` and `result + ... * scaling`) is computed once first, into a fresh local,
   as the branch computed it once (its dropout drawn once). A block of several assignments
   without an `else`, each of a name bound before the `if`, is each assignment selected on the
   test, computed once before the block into a fresh local (`_assignments_fixes`). A test of `and` / `or` / `not`
   is translated (`_where_test`): torchdiffeq's `if d0 < 1e-5 or d1 < 1e-5:` selects with
   `(d0 < 1e-5) | (d1 < 1e-5)`, where one part of each `and` / `or` is surely a tensor and
   the others may be Python bools (`&` / `|` with a bool tensor make one). And for a
   chain of early returns in one block, `if c1: return a1` ... `if c2: return a2` ...
   `return r` (each `if` without an `else`, local assignments between, and conditional ones,
   `if c: name = v` as `name = torch.where(c, v, name)`: torchdiffeq's step size, `if
   error_ratio < 1: dfactor = ...` between its zero-error return and the last; every value a
   tensor the source shows to be one: a `torch.Tensor` parameter, a torch call, a tensor
   method, arithmetic on those, a function of the file annotated `-> torch.Tensor`, a call of a
   submodule that `__init__` set to a torch layer returning one tensor), the
   assignments and then `return torch.where(c1, a1, torch.where(c2, a2, r))` (kornia's
   posterize and sharpness fixes; there `and`/`or`/`not` need every part a tensor and
   become `&`/`|`/`~`, and a reduction tested for its truth is compared with 0: torchmetrics'
   `if not target.sum(): return tensor(0.0, ...)` selects with `target.sum() == 0`, where
   `tensor` is imported from torch, and `target`, bound by unpacking a check function's
   return, is a tensor because the finding, or dynamo's break, is on it). Every value is now
   computed, and the code after an early return runs where head returned early, where it may
   raise (`position[0]` of an empty `nonzero`): the proof accepts the edit only where a shape
   case or a guard input takes the first early return (pt2bot/smoke/verify.py
   `_early_return_refusal`). `torch.where` lets no NaN or inf of
   the side it does not select through in the forward pass (in backward it does: an inf in the unselected side, `x / 0`, makes a
   NaN gradient; the proof compares the gradients on every shape case and on the guard inputs,
   and refuses that). So where the `if` side divides by, or takes the log or root of, an
   operand that reads a name of the test (`freq`, `valid.sum()`), which the test may be what
   keeps from 0, 1 stands in for that operand where the test fails: `safe_operand =
   torch.where(test, valid.sum(), torch.ones_like(valid.sum()))`, then `loss / safe_operand`
   selected. The shape cases rarely reach that 0 (a loss capped under `if freq > r * pix:`, at
   freq == pix == 0 when an estimate equals its target, was verified in the plain form and gave
   NaN in every gradient there), so the form is exact by construction, not left to the proof;
   where no stand-in can be given (beside a call both sides make, computed once first), the
   selection is not offered. In a chain, the code after an early return is what runs where
   the test holds: an operand there that reads the test's names gets 1 where it holds (`if hi
   - lo < 1e-6: return zeros`, then `(x - lo) / (hi - lo)`: a constant input made every
   gradient NaN), and the return is compared on zeros too (`_exit_guards`), which make a test
   with nothing special in it hold.
   A test or value that reads a name an assignment after it rebinds (posterize's `bits = 8 -
   bits`) is computed first, into a fresh local (`cond1 = bits == 0`), so it keeps the value
   it had at its `if`. An assignment between of the first nonzero index, `position =
   torch.nonzero(target).view(-1)` read only as `position[0]` (torchmetrics' reciprocal rank),
   becomes `position = (target != 0).int().argmax().reshape(1)`: the code after the returns
   now always runs, and `nonzero` there would break the graph again (`_first_index_form`).
   A tuple, `None`, a value not known to be a tensor, or a statement
   between that is not an assignment to a name (a call for its effect, an in-place method)
   gets no chain: each would now run or be selected where it did not before;
3. `torch.cond(cond, lambda: a, lambda: b, ())`, the same shapes of code, for large branches;
   and the chain from the finding's own `if` on, when that is not the chain's first (the
   diff's hunk may hold it where it does not hold the whole chain);
4. an early exit taken in eager only: `if <test>: break` (or `continue`, or a `return` of
   names and constants, `return target, None`, or of a value the module holds, `return
   self.cached_freqs[offset:(offset + n)].detach()`: a cache read) without an `else` becomes
   `if not torch.compiler.is_compiling() and <test>:` (kornia's distance_transform and
   mask_ignore_pixels fixes; rotary-embedding-torch's cached frequencies, which compiled code
   computes as on a miss). Right only where the exit skips work that changes nothing
   (a loop's later iterations that are no-ops, a mask of all True the caller applies to no
   effect, a cache that holds what a miss computes); a `break` whose skipped iterations still
   move the result, by however little (a Sinkhorn loop past its convergence test), is refused
   by the proof, which compares compiled code with the eager backend's own kernels exactly
   there (pt2bot/smoke/verify.py `_eager_only_refusal`). Eager runs exactly as before, so the
   proof runs such an edit compiled on the
   inputs that take the exit (pt2bot/smoke/verify.py `guard_checks`): what the test reads, and
   zeros for `.all()` or a test with nothing special in it (`_exit_guards`);
5. a block run always in compiled code: `if <test>: <block>` without an `else`, whose block
   cannot leave the function or loop and draws no random number, becomes `if
   torch.compiler.is_compiling() or <test>:` (aimnet's padding mask, applied under compile
   whether or not the input is padded: a `masked_fill` with a mask of all False is the
   identity). Right only where the block does nothing on the values that skip it; the proof
   runs the edit compiled on the shape cases and refuses it unless head skips the block on one
   of them and the compiled outputs equal head's eager ones there (`_compiled_block_fixes`);
6. work done in eager only: the same block becomes `if not torch.compiler.is_compiling() and
   <test>:` (a cache filled, statistics kept aside, skipped while compiling). Offered only
   where the block changes no local that the function reads after it: a block that does
   computes the result, and equal outputs would only say that the inputs hide the change
   (torchrl's truncation of a series below 1e-7 gets none). The proof runs the edit compiled
   on the shape cases and on inputs that make the test hold, compares with head's eager
   outputs, and refuses it unless head enters the block on one of the shape cases (an
   injected input alone may be one on which the work does nothing: zeros through an image
   augmentation) (`_eager_block_fixes`).

A convergence test's `break` at the top level of a `for` loop over `range(...)` gets, before 4,
the loop run to its end with what the `break` left held (`_frozen_loop_fixes`, rank 2): the test
kept in a bool tensor `done`, and each name read outside the loop selected on it, `f =
torch.where(done, f, <value>)`. Eager and compiled code then return the values head left the
loop with (otloss's Sinkhorn potentials, which 4 lets compiled code move on past convergence);
the proof accepts it only where an input takes the `break` (pt2bot/smoke/verify.py
`_frozen_exit`).

A block that only tells the user something (`if (var_x < bound).any() or ...:
rank_zero_warn(...)`, torchmetrics' Pearson) gets none of 4 to 6 but its own edit, the same
header as 6: `if not torch.compiler.is_compiling() and <test>:`, safe by construction where the
test only reads values (`_eager_notes_fixes`): eager tests and warns as before, compiled code
computes nothing there to skip, so the proof needs no shape case that warns.

Recipes 4 to 6 are also offered for the findings of other rules in such an `if`
(`is_compiling_fixes`): in its test (`if data["_input_padded"].item():`, the `.item()` of a
cached length), and, for recipe 6, inside its block (the `.item()` of the truncation index),
where the `if` tests a tensor's values (under a Python test, `if self.ignore_index is not
None:`, the block always runs: its work is not optional).

Two more shapes reach these recipes: an `and` test whose other parts are Python tests (`if
signed and torch.rand(()) <= 0.5:`), which stay an `if` around the edit of the tensor test
(`_python_part_fixes`), and an `if`/`elif` dispatch on one value over distinct constants, which
becomes one `torch.where` a case (`_dispatch_fixes`, rank 1). `x op= v` is a side `x op v`;
an `if`/`else` writing one element (`x[1] = a` / `x[1] = b`) is one write of the selection
(`_place`). And a test whose Python flags come after its tensor test (`if m.sum() != n and
self.training:`) gets the flags first (`_python_first_fixes`, rank 3): the tensor test then
runs only where they do not decide, so the edit removes the break in one mode (eval), which
is the mode the proof runs.
What gets no edit, and why (seen on the real-code benchmark): a `while` whose number of
iterations depends on the values (kornia's canny hysteresis gets the branch it keeps for export
instead: pt2bot/rules/capture_branch_fixes.py); a random draw that decides
whether more random draws and Python code run (torchvision's RandomErasing, RandomPerspective,
AutoAugment's policies, v2's `if torch.rand(1) >= self.p: return inputs`): computing that
branch always changes the random stream every later draw reads; and a branch on a draw whose
result must stay a Python number (`magnitude *= -1` after `magnitude = float(...)`, passed to
`F.rotate`): a tensor there breaks the graph again, or fails, further on.

Masked writes under a test of their mask (`_masked_rows_fixes`, rank 1): pytorch-ood's `if
contains_unknown(target): unknown = is_unknown(target); loss[unknown] = -(logits[unknown].mean(dim=1)
- torch.logsumexp(logits[unknown], dim=1))` becomes the mask's assignment and `loss =
torch.where(unknown, -(logits.mean(dim=1) - torch.logsumexp(logits, dim=1)), loss)`, with no
`if`: every row computed, the masked ones selected. Only where each row of the value comes from
the same row of what it reads through the mask (elementwise calls and arithmetic, reductions
along a dim after the first, per-row losses; `_row_wise`), the written tensor is a local made
before (not the caller's), and the test is the mask's having an entry (`m.any()`, or a call on
the arguments the block's mask is made from; `_tests_mask`). Dropping the test then differs from
head only where it fails, so the proof accepts the edit only where a shape case or a guard input
skips the block (pt2bot/smoke/verify.py `_dropped_test`).

A block that already selects on the mask its test reads (`_selected_block_fixes`, rank 0):
DINOv2's `if masks is not None and masks.any(): x = torch.where(masks.unsqueeze(-1), token, x)`
keeps `x` where the mask is empty, so the test's `.any()` is dropped and its Python part stays an
`if`; proven, like the masked rows, where a shape case or an empty mask skips the block.

A test that reads a tensor's number only to test it (`if flag and t.item():`, `if t.item() >
0.5:`; PTC101's finding there) gets these edits on the test rewritten to read the tensor
(`item_test_fixes`).

A conditional expression `a if cond else b` becomes `torch.where(cond, a, b)` (`cond`
translated as for an `if`). Everything else (`while`, branches of several statements) stays
the rule's text.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import re

from pt2bot.analysis.model import dotted
from pt2bot.analysis.torch_modules import is_torch_module_class
from pt2bot.rules.base import Candidate
from pt2bot.rules.check_fixes import tensor_test
from pt2bot.rules.logging_call import LOG_METHODS
from pt2bot.rules.edits import (BIN_OPS, BOOL_FUNCS, binds_torch, defined_before, enclosing_function, fresh_name,
                                function_binds, header_edit, identifiers, indent_unit, indentation, int_constant, is_elif,
                                node_span, owns_lines,
                                parameter_names, parameters, parents_of, partial_domain, pure, pure_indexed, replace_spans,
                                replace_statement, segment, source_lines, spans_string_lines, statement_at,
                                statement_in_function, statement_lines, torch_alias, with_replaced)

# the transforms that leave ordinary values alone, and the in-place forms of each
_NAN = frozenset({"nan_to_num"})
_CLAMP = frozenset({"clamp", "clamp_min", "clamp_max", "clip"})
_FILL = frozenset({"masked_fill"})
_INPLACE = {name + "_": name for name in _NAN | _CLAMP | _FILL}


def guards_of(test_text: str) -> tuple[str, ...]:
    """The special values a condition tests for, read from its text."""
    out = []
    if re.search(r"\bisnan\b|\bisfinite\b", test_text):
        out.append("nan")
    if re.search(r"\bisinf\b|\bisfinite\b|\bisposinf\b|\bisneginf\b", test_text):
        out.append("inf")
    if re.search(r"\bnumel\(\)\s*==\s*0|\.any\(\)|\btorch\.any\(", test_text):
        out.append("empty")
    if re.search(r"[=!]=\s*0(\.0*)?\b|\.eq\(0(\.0*)?\)", test_text):
        out.append("zero")
    return tuple(out)


def _arg(lines: list[str], node: ast.AST) -> str:
    """`node`'s text as one argument of a call (a bare tuple or `:=` gets its brackets back:
    `ast` spans leave the brackets around an expression out)."""
    text = segment(lines, node)
    return f"({text})" if isinstance(node, (ast.Tuple, ast.NamedExpr, ast.Starred, ast.Yield)) else text


def _is_value(test: ast.AST) -> bool:
    """A condition `torch.where` / `torch.cond` can take as it is: a comparison or a call
    (`x.sum() > 0`, `mask.any()`, `torch.isnan(h).any()`), not `and`/`or`/`not` (those take
    a Python truth value) nor a bare name (it may be a Python bool)."""
    return isinstance(test, (ast.Compare, ast.Call))


def _where_test(lines: list[str], test: ast.AST, at: tuple[int, int]) -> str | None:
    """The condition `torch.where` / `torch.cond` takes for `test`, None where there is none:
    a comparison or a call as it is (`_is_value`); `and` / `or` / `not` as `&` / `|` /
    `torch.logical_not` (torchdiffeq's `if d0 < 1e-5 or d1 < 1e-5:` ->
    `(d0 < 1e-5) | (d1 < 1e-5)`), through check_fixes.py's translation of a test, where one
    part of each `and` / `or` is surely a tensor (`at`, the finding's position, is one): the
    other parts may be Python bools, which `&` / `|` with a bool tensor turn into one. A bare
    name (`if flag and t.any():`), `is`, `in` or a chained comparison there, and `not` of a
    part not surely a tensor, get no edit. A bare name (or attribute) as the whole test is
    taken as it is where the finding is on it."""
    if _is_value(test):
        return _arg(lines, test)
    if isinstance(test, (ast.Name, ast.Attribute)) and (test.lineno, test.col_offset) == at:
        # the finding is on the bare name itself: the rule found it to be a tensor (a buffer,
        # `accept = err <= 1` above), or, with no finding, dynamo broke on branching on it
        return segment(lines, test)
    if not isinstance(test, ast.BoolOp) and not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return None
    return tensor_test(lines, test, at, one_tensor=True)


def _callee(call: ast.Call, lines: list[str]) -> tuple[str, str | None]:
    """(method or torch function name, the text of the tensor it works on)."""
    f = call.func
    if isinstance(f, ast.Attribute):
        if isinstance(f.value, ast.Name) and f.value.id == "torch":
            if f.attr == "where":   # torch.where(mask, fill, h): h is what it leaves alone
                return f.attr, segment(lines, call.args[2]) if len(call.args) == 3 else None
            return f.attr, segment(lines, call.args[0]) if call.args else None
        return f.attr, segment(lines, f.value)
    return "", None


def _not_all_finite(test: ast.AST) -> bool:
    """`not torch.isfinite(h).all()` (or `not h.isfinite().all()`): true where some value of
    `h` is NaN or inf, as `torch.isnan(h).any()` is where one is NaN."""
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return False
    call = test.operand
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "all"
            and not call.args and not call.keywords):
        return False
    inner = call.func.value
    return isinstance(inner, ast.Call) and isinstance(inner.func, (ast.Attribute, ast.Name)) and \
        (inner.func.attr if isinstance(inner.func, ast.Attribute) else inner.func.id) == "isfinite"


def _any_not_finite(test: ast.AST, lines: list[str]) -> bool:
    """`(~torch.isfinite(h)).any()` (or `torch.any(~h.isfinite())`): true where some value of
    `h` is NaN or inf."""
    mask = _any_mask(test, lines)
    node = ast.parse(mask, mode="eval").body if mask else None
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert)
            and isinstance(node.operand, ast.Call)):
        return False
    f = node.operand.func
    return (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "") == "isfinite"


def _noop_guarded(st: ast.If, lines: list[str]) -> bool:
    """`if <test>: h = f(h)` (or `h.f_()`) where f leaves h alone unless the test holds."""
    (stmt,) = st.body
    test = segment(lines, st.test)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
        name, recv = _callee(stmt.value, lines)
        if recv != segment(lines, stmt.targets[0]):
            return False
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name, recv = _callee(stmt.value, lines)
        if name not in _INPLACE or recv is None:
            return False
        name = _INPLACE[name]
    else:
        return False
    call = stmt.value
    if name in _NAN:
        # `nan_to_num` replaces NaN and inf alike, so it leaves `h` alone only where no value
        # is either: the test must hold wherever one is (`not torch.isfinite(h).all()`,
        # `(~torch.isfinite(h)).any()`). Under `torch.isnan(h).any()` the branchless form
        # changes the infs head keeps when no value is NaN (an overflow in the last layer),
        # and a guard input cannot show that where an inf injected upstream turns NaN on the
        # way (0 * inf in a zero-initialized layer): `torch.where` on the test is exact there
        return recv in test and (_not_all_finite(st.test) or _any_not_finite(st.test, lines))
    if name in _CLAMP:
        # a clamp leaves `h` alone only where no value is past its bounds: the test must hold
        # wherever one is (`h.max() > 1` for `clamp(max=1)`). Under any other test that reads
        # `h` (`torch.isinf(h).any()`), dropping the branch clamps the finite values past the
        # bounds that head keeps, which only a guard input reaching the line as such a value
        # can show: `torch.where` on the test is exact there
        return _bounds_tested(call, name, recv, st.test, lines)
    if name in _FILL or name == "where":
        # a fill through an all-false mask changes nothing: the test must hold wherever an
        # entry of the mask is set, `m.any()` (alone or as a part of an `or`), not merely read
        # the mask (`m.all()` fails where some entries are set)
        mask = call.args[0] if name == "where" else (call.args[-2] if len(call.args) >= 2 else None)
        return mask is not None and any(_any_mask(p, lines) == segment(lines, mask) for p in _or_parts(st.test))
    return False


def _or_parts(test: ast.AST) -> list[ast.AST]:
    """The operands of an `or` (the test itself where it is none): where the test fails,
    each of them fails."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [p for v in test.values for p in _or_parts(v)]
    return [test]


def _clamp_bounds(call: ast.Call, name: str) -> dict[str, ast.AST]:
    """The bounds a clamp call gives, `{"min": ..., "max": ...}` (a `None` bound left out):
    `h.clamp(lo, hi)`, `torch.clamp(h, min=lo)`, `h.clamp_max(hi)`, `h.clip(...)`."""
    f = call.func
    args = list(call.args[1:] if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                and f.value.id == "torch" else call.args)
    order = {"clamp_min": ("min",), "clamp_max": ("max",)}.get(name, ("min", "max"))
    out = dict(zip(order, args))
    out.update({k.arg: k.value for k in call.keywords if k.arg in ("min", "max")})
    return {k: v for k, v in out.items() if not (isinstance(v, ast.Constant) and v.value is None)}


def _bounds_tested(call: ast.Call, name: str, recv: str, test: ast.AST, lines: list[str]) -> bool:
    """Whether `test` holds wherever some value of `recv` is past a bound of the clamp `call`:
    each bound is tested by a part of an `or` (or of a `|` under `.any()`) that asks whether
    any value of `recv` is past the upper bound (`(h > hi).any()`) or below the lower one, or
    any magnitude past `hi` where the lower bound is `-hi` (`(h.abs() > hi).any()`).

    Only elementwise comparisons under `.any()`: a reduction to the largest or smallest value
    (`h.max() > hi`, `h.abs().max() > hi`) is NaN wherever one value is, so the test fails
    and head clamps nothing, while the clamp without its branch clamps every other value past
    the bound. DINO's attention, `if attn.abs().max() > 1e4: attn = attn.clamp(-1e4, 1e4)`,
    was verified without its branch, and an image with a NaN pixel changed the outputs of the
    other images of its batch (128 of 864 results). `torch.where` on the test is exact there."""
    nodes = _clamp_bounds(call, name)
    bounds = {k: segment(lines, v) for k, v in nodes.items()}
    if not bounds:
        return False

    def number(node: ast.AST | None) -> float | None:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = number(node.operand)
            return None if inner is None else -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        return None

    def within(threshold: ast.AST, side: str) -> bool:
        """Whether the test failing at `threshold` keeps every value within the bound of
        `side`: the bound itself, or a number inside it (`(x > 0.5).any()` for `max=1`)."""
        if side not in nodes:
            return False
        t, b = number(threshold), number(nodes[side])
        if t is not None and b is not None:
            return t <= b if side == "max" else t >= b
        return segment(lines, threshold) == bounds[side]

    def mirrored() -> bool:
        """The lower bound is minus the upper one (`clamp(-5, 5)`)."""
        if "min" not in nodes or "max" not in nodes:
            return False
        lo, hi = number(nodes["min"]), number(nodes["max"])
        if lo is not None and hi is not None:
            return lo == -hi
        return bounds["min"].replace(" ", "") == f"-{bounds['max']}"

    def parts(node: ast.AST, under_any: bool) -> list[tuple[ast.AST, bool]]:
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return [p for v in _or_parts(node) for p in parts(v, under_any)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and under_any:
            return parts(node.left, True) + parts(node.right, True)
        if not under_any and _any_mask(node, lines) is not None:
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            return parts(node.args[0] if node.args else node.func.value, True)
        return [(node, under_any)]

    def compared(node: ast.AST, under_any: bool) -> bool | None:
        """Where `node` is `recv` compared elementwise under `.any()`: False for `recv`
        itself, True for its magnitude (`recv.abs()`); else None."""
        text = segment(lines, node) if under_any else None
        return False if text == recv else True if text == f"{recv}.abs()" else None

    covered: set[str] = set()
    for part, under_any in parts(test, False):
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
            return False
        op, left, right = part.ops[0], part.left, part.comparators[0]
        if isinstance(op, (ast.Lt, ast.LtE)):
            left, right = right, left
        elif not isinstance(op, (ast.Gt, ast.GtE)):
            return False
        big, small = compared(left, under_any), compared(right, under_any)
        # `big > small`: values above the upper bound (magnitudes above it, for both bounds
        # of a clamp mirrored about 0), or the lower bound above values
        if big is not None and within(right, "max"):
            covered.add("max")
            if big:
                if not mirrored():
                    return False
                covered.add("min")
        elif small is False and within(left, "min"):
            covered.add("min")
        else:
            return False
    return covered >= set(bounds)


def _any_mask(test: ast.AST, lines: list[str]) -> str | None:
    """The text of `m` in a test `m.any()` / `torch.any(m)`, else None."""
    if not isinstance(test, ast.Call) or test.keywords:
        return None
    f = test.func
    if isinstance(f, ast.Attribute) and f.attr == "any" and not test.args:
        if isinstance(f.value, ast.Name) and f.value.id == "torch":
            return None
        return segment(lines, f.value)
    if isinstance(f, ast.Attribute) and f.attr == "any" and isinstance(f.value, ast.Name) and \
            f.value.id == "torch" and len(test.args) == 1:
        return segment(lines, test.args[0])
    return None


def _plain(node: ast.AST) -> bool:
    """A value without calls or indexing (a constant, a name, an attribute, `-1`): writing it
    has no side effect and reads no selection."""
    return all(isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.UnaryOp, ast.Load, ast.unaryop))
               for n in ast.walk(node))


def _masked_stores_guarded(st: ast.If, lines: list[str]) -> bool:
    """`if m.any(): x[m] = v` (each statement a write through `m` of a plain value): with no
    entry of `m` set, the writes change nothing, so the test is not needed."""
    mask = _any_mask(st.test, lines)
    return mask is not None and all(
        isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript)
        and segment(lines, s.targets[0].slice) == mask and _plain(s.value) for s in st.body)


def _dedented(lines: list[str], stmt: ast.stmt, indent: str) -> list[str]:
    """`stmt`'s lines at `indent` (one level up): its continuation lines move with it unless a
    string literal spans them."""
    own = lines[stmt.lineno - 1:(stmt.end_lineno or stmt.lineno)]
    inner = indentation(lines, stmt)
    if spans_string_lines(stmt):
        return [indent + own[0][len(inner):]] + own[1:]
    cut = len(inner) - len(indent)
    return [indent + ln[len(inner):] if i == 0 else
            (ln[cut:] if ln[:cut].strip() == "" else ln) for i, ln in enumerate(own)]


def _sides(st: ast.If, body: list[ast.stmt], tree: ast.Module, lines: list[str]):
    """(kind, target, then, otherwise, last statement replaced) for an `if` with one assignment
    or one `return` a side (`then`/`otherwise`: the values' nodes), else None.
    kind: "assign" | "return"."""
    if len(st.body) != 1:
        return None
    (then,) = st.body
    if isinstance(then, ast.AugAssign) and isinstance(then.target, ast.Name) and type(then.op) in BIN_OPS \
            and not st.orelse and _local_value(tree, st, then.target.id):
        # `x op= v` is `x = x op v` (the value the `then` node stands for; `_side_text`)
        return "assign", then.target.id, then, then.target, st
    if isinstance(then, ast.Assign) and len(then.targets) == 1 and isinstance(then.targets[0], ast.Name):
        target = then.targets[0]
        if not st.orelse:
            return ("assign", target.id, then.value, target, st) if defined_before(tree, st, target.id) else None
        if len(st.orelse) == 1 and isinstance(st.orelse[0], ast.Assign) and \
                [segment(lines, t) for t in st.orelse[0].targets] == [target.id]:
            return "assign", target.id, then.value, st.orelse[0].value, st
        return None
    if isinstance(then, ast.Assign) and len(then.targets) == 1 and _place(then.targets[0]) and \
            len(st.orelse) == 1 and isinstance(st.orelse[0], ast.Assign) and \
            [segment(lines, t) for t in st.orelse[0].targets] == [segment(lines, then.targets[0])]:
        # one write into the same element on each side (fish-speech's `codebooks[1] = 1` /
        # `codebooks[1] = codebooks[0] - 32311 + 2`): the element written once, with the value
        # selected. Not without an `else`: the element would be written where head wrote
        # nothing, which a leaf that requires grad, or a view of an input, refuses
        return "assign", segment(lines, then.targets[0]), then.value, st.orelse[0].value, st
    if isinstance(then, ast.Return) and then.value is not None:
        if st.orelse:
            other = st.orelse[0] if len(st.orelse) == 1 else None
            last = st
        else:
            i = next(i for i, s in enumerate(body) if s is st)
            other = body[i + 1] if i + 1 < len(body) else None
            last = other
        if isinstance(other, ast.Return) and other.value is not None and owns_lines(lines, other):
            return "return", None, then.value, other.value, last
    return None


def tensor_condition_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    lines = source_lines(source)
    st, body = statement_at(tree, finding.line, finding.col)
    if st is None or not owns_lines(lines, st) or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return []
    at = (finding.line, finding.col)
    if isinstance(st, ast.If) and _inside(st.test, at):
        return _if_fixes(code, finding, st, body, tree, lines)
    exps = [(e, test) for e in ast.walk(st) if isinstance(e, ast.IfExp) and _inside(e.test, at)
            for test in [_where_test(lines, e.test, at)] if test is not None]
    if not exps:
        return []
    e, test = max(exps, key=lambda et: (et[0].lineno, et[0].col_offset))   # the innermost
    if _no_tensor(e.body) or _no_tensor(e.orelse):
        return []
    text = f"torch.where({test}, {_arg(lines, e.body)}, {_arg(lines, e.orelse)})"
    return [replace_statement(code, finding.path, st, with_replaced(lines, st, e, text),
                              "select with `torch.where` instead of the conditional expression",
                              safe=False, guards=guards_of(test), rank=1)]


def _no_tensor(node: ast.AST) -> bool:
    """A side of a conditional expression that `torch.where` cannot take: `None`, a string, a
    container display or a lambda (rtdl's `mask if mask.any() else None`: the edit raised)."""
    return (isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, bytes)))) \
        or isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
                             ast.GeneratorExp, ast.Lambda, ast.JoinedStr))


def optional_value_reason(finding, source: str, tree: ast.Module) -> str | None:
    """Why a conditional expression on a tensor test whose one side is `None` gets no edit:
    no tensor operation selects between a tensor and None, so whether the value exists at all
    depends on the data."""
    st, _body = statement_at(tree, finding.line, finding.col)
    at = (finding.line, finding.col)
    exps = [e for e in ast.walk(st) if isinstance(e, ast.IfExp) and _inside(e.test, at)] if st is not None else []
    if not exps:
        return None
    e = max(exps, key=lambda e: (e.lineno, e.col_offset))
    side = next((s for s in (e.body, e.orelse) if isinstance(s, ast.Constant) and s.value is None), None)
    if side is None:
        return None
    return (f"one side of the conditional expression at line {e.lineno} is `None`, which no tensor operation "
            "selects: whether the value exists depends on the data; one graph needs a tensor on both sides "
            "(an empty or all-False one for none) and the code that reads it changed to match")


def early_return_reason(finding, source: str, tree: ast.Module) -> str | None:
    """What keeps an early return on a tensor test followed by several statements (a silent
    batch skipped before the encoder, the loss and their return): `torch.cond` over two
    functions, the return's and the rest's. No recipe writes it, since the rest is code the
    pull request often did not write (outside its diff), and a suggestion replaces only the
    lines of one hunk; the reason says the form, so the author need not work it out."""
    lines = source_lines(source)
    st, body = statement_at(tree, finding.line, finding.col)
    if not isinstance(st, ast.If) or st.orelse or not isinstance(st.body[-1], ast.Return) or \
            not _inside(st.test, (finding.line, finding.col)):
        return None
    rest = body[body.index(st) + 1:]
    if len(rest) < 2 or not isinstance(rest[-1], ast.Return) or \
            any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for s in rest[:-1] for n in ast.walk(s)):
        return None
    at = (finding.line, finding.col)
    test, python = _where_test(lines, st.test, at), []
    if test is None and isinstance(st.test, ast.BoolOp) and isinstance(st.test.op, ast.Or):
        # `if temperatures is None or (temperatures == 0).all(): return ...` (gemma's greedy
        # sampler): the leading parts that are surely Python bools stay an `if` of their own,
        # which dynamo decides as it traces and which keeps the tensor part from running on a
        # None; only the rest selects between the paths
        k = next((i for i, v in enumerate(st.test.values) if not _python_test(v)), 0)
        python, others = st.test.values[:k], st.test.values[k:]
        if python:
            tensor = others[0]
            if len(others) > 1:
                tensor = ast.BoolOp(op=ast.Or(), values=others, lineno=others[0].lineno,
                                    col_offset=others[0].col_offset, end_lineno=others[-1].end_lineno,
                                    end_col_offset=others[-1].end_col_offset)
            test = _where_test(lines, tensor, at)
    if test is None or "\n" in test:
        return None
    ret = st.body[-1]
    kept = ""
    if python:
        kept = (f"`if {' or '.join(segment(lines, v) for v in python)}:` stays as it is, "
                f"returning what line {ret.lineno} returns (a Python test: dynamo decides it as it "
                f"traces), and after it ")
    # (held-out batch 39's new user wrote it as said, with the labels its return computes
    # from the outputs inside the branches: `torch.cond` then fails in backward, "outs_to_grad
    # length (2) != tangents length (3)"; and the `torch.where` form gave NaN gradients from a
    # `torch.logit` of the side it does not select)
    return (f"no recipe rewrites an early return before {len(rest)} more statements: {kept}what "
            f"keeps both paths in one graph is `torch.cond({test}, early, rest, ())`, `early` returning "
            f"what line {ret.lineno} returns, `rest` lines {rest[0].lineno}-"
            f"{rest[-1].end_lineno or rest[-1].lineno}; both must return tensors of the same shapes "
            f"and dtypes, floating-point only where gradients flow (an integer result, labels from "
            f"the outputs, goes after `torch.cond`), and change no state (in training a BatchNorm, "
            f"whose statistics `torch.cond` refuses to update: there run `rest` always and select "
            f"with `torch.where`, which updates them where head returned early, its gradients NaN "
            f"where the side not selected has an infinite derivative: a log, a division); not "
            f"verified: no proof runs it")


# methods whose result is a view of their tensor (a `torch.cond` branch may not return one)
_VIEWS = frozenset({"view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "transpose", "t", "permute",
                    "squeeze", "unsqueeze", "expand", "expand_as", "narrow", "select", "unbind", "split",
                    "chunk", "movedim", "contiguous", "detach", "diagonal", "T", "mT"})


def _cond_branch(node: ast.AST, text: str) -> str:
    """A `torch.cond` branch may not return its input or a view of it (dynamo refuses the
    aliasing): such a side is cloned (same values, eager and compiled)."""
    if isinstance(node, ast.Tuple):
        return text
    aliases = isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEWS)
    return f"{text}.clone()" if aliases else text


def _inside(node: ast.AST, at: tuple[int, int]) -> bool:
    return (node.lineno, node.col_offset) <= at <= (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _if_fixes(code, finding, st: ast.If, body, tree, lines) -> list[Candidate]:
    if is_elif(lines, st):
        return []
    python = _python_part_fixes(code, finding, st, body, tree, lines)
    # where the Python parts of an `and` can stay an `if` around the edit, that is the edit:
    # they keep deciding in Python whether the tensor test is evaluated at all
    test = None if python else _where_test(lines, st.test, (finding.line, finding.col))
    out = _branch_fixes(code, finding, st, body, tree, lines, test) if test is not None else []
    if test is not None:
        out += _assignments_fixes(code, finding, st, tree, lines, test) + \
            _frozen_loop_fixes(code, finding, st, tree, lines, test)
    return _clipped_scale_fixes(code, finding, st, lines) + _keep_arm_fixes(code, finding, st, tree, lines) + \
        _selected_block_fixes(code, finding, st, tree, lines) + out + python + \
        _masked_rows_fixes(code, finding, st, tree, lines) + \
        _dispatch_fixes(code, finding, st, tree, lines) + chain_fixes(code, finding, st, body, tree, lines) + \
        _python_first_fixes(code, finding, st, tree, lines) + \
        _compiling_fixes(code, finding, st, tree, lines)


def _assignments_fixes(code, finding, st: ast.If, tree, lines, test: str) -> list[Candidate]:
    """`if c: a = f(a); b = g(b)` (no `else`; each statement of the block assigns one name the
    function bound before it, `=` or `op=`) -> the test computed once, into a fresh local, then
    `a = torch.where(t, f(a), a)` and `b = torch.where(t, g(b), b)`: each name keeps its value
    where the test fails, and a statement that reads a name assigned before it in the block
    reads what head read there (the selected value is head's where the test holds). The test
    first, as head evaluated it before the block changed what it reads (torchreg's rescaling of
    a raw pair of scans, `if moving.max() > 1 or static.max() > 1:` then each scan divided by
    its own maximum). `torch.where` computes both sides: the proof compares gradients too
    (a side that divides by zero where the test fails). A value that reads a Python number
    out of a tensor (`.item()`, `.tolist()`, `int(t)`) gets none: it breaks the graph where it
    stands, and it is an index or a size more often than a value to select (torchrl's
    truncation of a series, `first = torch.where(c)[0][0].item()` then a slice to `first`)."""
    if st.orelse or len(st.body) < 2:
        return []
    picked: list[tuple[str, str]] = []
    for s in st.body:
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and type(s.op) in BIN_OPS:
            name = s.target.id
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            name = s.targets[0].id
        else:
            return []
        if not defined_before(tree, st, name):
            return []
        value = _side_text(lines, s if isinstance(s, ast.AugAssign) else s.value)
        if "\n" in value or any(_python_number(n) and isinstance(n, ast.Call) for n in ast.walk(s.value)):
            return []
        picked.append((name, value))
    indent = indentation(lines, st)
    taken = fresh_name(identifiers(tree), "taken")
    where = f"{torch_alias(tree) or 'torch'}.where"
    new = statement_lines(indent, f"{taken} = {test}")
    for name, value in picked:
        new += statement_lines(indent, f"{name} = {where}({taken}, {value}, {name})")
    # a test that a value exceeds a bound (`x.max() > 1`): large values take the block, which
    # inputs drawn small may never do
    large = ("large",) if re.search(r">=?\s*[-+]?(?:\d|\.\d)", test) else ()
    return [replace_statement(code, finding.path, st, new,
                              f"select each assignment of the block with `torch.where` on the test, "
                              f"computed once before it (`{taken}`)",
                              safe=False, guards=tuple(dict.fromkeys(guards_of(test) + large)), rank=1)]


def _clipped_scale_fixes(code, finding, st: ast.If, lines) -> list[Candidate]:
    """`if a > b: t *= b / a` (a norm clipped to its bound: FrEIA's spectral norm correction,
    `if spectral_norm > self.spectral_norm_max: self.layers[i].weight.data *=
    self.spectral_norm_max / spectral_norm`; also `>=`, `b < a`, `t = t * (b / a)`) -> `t *=
    torch.where(a > b, b / torch.fmax(a, torch.as_tensor(b)), 1.0)`, and `t /= a / b` -> `t /=
    torch.where(a > b, a / b, 1.0)`: where the test holds, head's factor computed as head
    computed it (`fmax` is `a` there; `b / a` is a reciprocal and a product in torch, so a
    factor `b / b` is not exactly 1), exactly 1 where it does not. The side `torch.where` does
    not take must stay finite, or its zero gradient times an infinite derivative is NaN: `fmax`
    holds the divisor at the bound, also where `a` is NaN (FrEIA's power method divides 0 by 0
    on weights all 0). `fmax` takes tensors only, hence `as_tensor` (a 0-d tensor, which moves
    the result to no other device or dtype). The values are head's for any `a` and `b`, since
    head's test decides; the gradients only where the side not taken stays finite (a bound of 0
    and `a` at most 0 divide 0 by 0 there), which the proof compares."""
    if st.orelse or len(st.body) != 1 or not isinstance(st.test, ast.Compare) or len(st.test.ops) != 1:
        return []
    op, left, right = st.test.ops[0], st.test.left, st.test.comparators[0]
    if isinstance(op, (ast.Gt, ast.GtE)):
        a, b = left, right
    elif isinstance(op, (ast.Lt, ast.LtE)):
        a, b = right, left
    else:
        return []
    (body,) = st.body
    if isinstance(a, ast.Constant):     # `torch.clamp` takes a tensor: the value tested, not its bound
        return []
    at, bt = segment(lines, a), segment(lines, b)

    def ratio(node: ast.AST, top: str, bottom: str) -> bool:
        return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
            segment(lines, node.left) == top and segment(lines, node.right) == bottom

    if isinstance(body, ast.AugAssign):
        scales = (isinstance(body.op, ast.Mult) and ratio(body.value, bt, at)) or \
            (isinstance(body.op, ast.Div) and ratio(body.value, at, bt))
    else:
        scales = isinstance(body, ast.Assign) and len(body.targets) == 1 and isinstance(body.value, ast.BinOp) and \
            isinstance(body.value.op, ast.Mult) and segment(lines, body.value.left) == segment(lines, body.targets[0]) \
            and ratio(body.value.right, bt, at)
    if not scales:
        return []
    # (`a` is computed once now, in the statement: it must not change state or draw)
    if not owns_lines(lines, body) or body.lineno == st.lineno or not _side_effect_free(st.test) or \
            _RANDOM.search(segment(lines, st.test)):
        return []
    target = segment(lines, body.target if isinstance(body, ast.AugAssign) else body.targets[0])
    b_text = f"({bt})" if isinstance(b, (ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare)) else bt
    test = segment(lines, st.test)
    if isinstance(body, ast.AugAssign) and isinstance(body.op, ast.Div):
        # `t /= a / b`: head's divisor where the test holds, 1 where not; `a / b` divides by the bound
        factor = f"torch.where({test}, {segment(lines, body.value)}, 1.0)"
        text = f"{target} /= {factor}"
    else:
        factor = f"torch.where({test}, {b_text} / torch.fmax({at}, torch.as_tensor({bt})), 1.0)"
        # in place where head scaled in place, a new tensor where head made one (autograd tells them apart)
        text = f"{target} *= {factor}" if isinstance(body, ast.AugAssign) else f"{target} = {target} * {factor}"
    return [replace_statement(code, finding.path, st, statement_lines(indentation(lines, st), text),
                              f"scale by `{factor}` without the `if`: head's factor where the test holds, 1 "
                              f"where it does not (head's test decides, as it did), and the side not taken "
                              f"never divides by a `{at}` of 0 or NaN",
                              safe=False, rank=0)]


# --------------------------------------------------------------------------- masked rows

# calls that compute each element from the same element alone
_ELEMENTWISE = frozenset({"relu", "pow", "sqrt", "rsqrt", "exp", "log", "log1p", "abs", "neg", "sigmoid", "tanh",
                          "clamp", "clamp_min", "clamp_max", "clip", "to", "float", "double", "half", "type_as",
                          "sign", "square", "reciprocal", "minimum", "maximum"})
# reductions and normalisations that are row by row along a dim after the first
_ALONG_DIM = frozenset({"mean", "sum", "logsumexp", "log_softmax", "softmax", "norm", "amax", "amin", "prod",
                        "squeeze"})
# losses that are one value a row with `reduction="none"`
_PER_ROW_LOSSES = frozenset({"cross_entropy", "nll_loss", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss",
                             "smooth_l1_loss"})


# a random draw: run always, it would change every later draw
_DRAWS = re.compile(r"\b(rand\w*|dropout|bernoulli|multinomial|normal_?)\b")


def _after_first_dim(call: ast.Call, name: str) -> bool:
    """A call of `_ALONG_DIM` that works along a dim after the first, given as a positive
    constant (`x.mean(dim=1)`, `torch.logsumexp(x, 1)`); `squeeze()` drops size-1 dims, which
    the rows keep or lose alike unless a side holds one row."""
    dims = [k.value for k in call.keywords if k.arg == "dim"]
    if not dims:
        own = isinstance(call.func, ast.Attribute) and not (
            isinstance(call.func.value, ast.Name) and call.func.value.id in ("torch", "F"))
        positional = call.args[0 if own else 1:]
        dims = positional[:1] if name not in ("norm",) else []
    if not dims:
        return name == "squeeze" and not call.args and not call.keywords
    return all(isinstance(d, ast.Constant) and isinstance(d.value, int) and not isinstance(d.value, bool)
               and d.value >= 1 for d in dims)


def _row_wise(value: ast.AST, mask: str, lines: list[str]) -> list[ast.Subscript] | None:
    """The `y[mask]` reads of `value` when every row of its result is computed from the same row
    of what it reads through the mask (elementwise calls and arithmetic, reductions along a
    dim after the first, per-row losses; names, attributes and constants read whole), else
    None. Then computing it on every row and selecting the masked rows gives what head wrote."""
    reads: list[ast.Subscript] = []
    for n in ast.walk(value):
        if isinstance(n, ast.Subscript):
            if segment(lines, n.slice) != mask or not pure(n.value):
                return None
            reads.append(n)
        elif isinstance(n, ast.Call):
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            if name in _PER_ROW_LOSSES:
                if not any(k.arg == "reduction" and isinstance(k.value, ast.Constant) and k.value.value == "none"
                           for k in n.keywords):
                    return None
            elif name in _ALONG_DIM:
                if not _after_first_dim(n, name):
                    return None
            elif name not in _ELEMENTWISE:
                return None
        elif isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Starred, ast.comprehension, ast.IfExp)):
            return None
    # a read through the mask nested in another (`y[m][m]`) is no row of `y`
    if any(r is not o and any(x is o for x in ast.walk(r)) for r in reads for o in reads):
        return None
    return reads


def _same_shape(value: ast.AST) -> bool:
    """Whether `value` keeps the shape of what it reads (no reduction or loss; a bare
    `squeeze()` only drops dims of size 1)."""
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            if name in _PER_ROW_LOSSES or name in _ALONG_DIM and not (name == "squeeze" and not n.args
                                                                     and not n.keywords):
                return False
    return True


def _made_from(fn: ast.AST, before: int, name: str, depth: int = 6) -> set[str]:
    """The names `name` is computed from, through the plain assignments of the function above
    line `before` (`valid_mask = ~zero_var_mask`, `zero_var_mask = (var_x < bound) | ...`:
    `zero_var_mask`, `var_x`, `bound`, ...), `depth` bindings deep."""
    binds: dict[str, list[ast.AST]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and n.lineno < before:
            for t in n.targets:
                if isinstance(t, ast.Name):
                    binds.setdefault(t.id, []).append(n.value)
    seen: set[str] = set()
    todo = [(name, 0)]
    while todo:
        cur, d = todo.pop()
        for value in binds.get(cur, []) if d < depth else []:
            for x in ast.walk(value):
                if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load) and x.id not in seen:
                    seen.add(x.id)
                    todo.append((x.id, d + 1))
    return seen


def _masked_store(s: ast.stmt) -> tuple[str, str] | None:
    """(x, m) for a write `x[m] = ...` through a mask named `m` into a name `x`, else None."""
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript) \
            and isinstance(s.targets[0].value, ast.Name) and isinstance(s.targets[0].slice, ast.Name):
        return s.targets[0].value.id, s.targets[0].slice.id
    return None


def _tests_mask(st: ast.If, lines: list[str]) -> bool:
    """Whether the `if`'s test is "the mask of its masked stores has an entry set": `m.any()`
    on that mask, or a call on the same arguments as the call the block binds the mask with
    (`if contains_unknown(target): unknown = is_unknown(target)`). Only then does dropping the
    test change nothing where it failed: the mask is empty there, and the proof compares on an
    empty mask; a test of something else (a flag, a count above 5) would fail on inputs whose
    mask is not empty, which no injected input is made to reach."""
    masks = {store[1] for store in map(_masked_store, st.body) if store is not None}
    if _any_mask(st.test, lines) in masks:
        return True
    test = st.test
    if not isinstance(test, ast.Call) or test.keywords or not test.args:
        return False
    return any(isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
               and s.targets[0].id in masks and isinstance(s.value, ast.Call) and not s.value.keywords
               and [segment(lines, a) for a in s.value.args] == [segment(lines, a) for a in test.args]
               for s in st.body)


# the calls that keep a mask's entries where they were (a view, a cast): all False stays so
_MASK_SHAPES = frozenset({"unsqueeze", "view", "view_as", "reshape", "reshape_as", "expand", "expand_as",
                          "flatten", "squeeze", "permute", "transpose", "contiguous", "bool", "to"})


def _from_mask(node: ast.AST, mask: str, lines: list[str]) -> bool:
    """Whether `node` is the mask `mask`, or a view or cast of it (`masks.unsqueeze(-1)`,
    `m[..., None]`): all False wherever the mask is."""
    while True:
        if segment(lines, node) == mask:
            return True
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _MASK_SHAPES:
            node = node.func.value
        else:
            return False


def _selected_block_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if [<Python test> and] m.any(): x = torch.where(<m or a view of it>, a, x)` (DINOv2's
    `if masks is not None and masks.any():` around the mask-token `torch.where`, which a PR
    added to skip the work when nothing is masked) -> the block with no tensor test: where the
    mask is empty, `torch.where` on it keeps `x` (as a new tensor of the same values), which is
    what head's skipped block left; only the Python part stays an `if`. Every statement of the
    block must be such a selection back into its own target. The proof compares on an empty
    mask (`empty`) and where a shape case skips the block (pt2bot/smoke/verify.py
    `_dropped_test`); a part the edit keeps computed where head skipped it (`a`) has its
    gradient compared there too (a parameter whose gradient is then zero where head's was None
    is said first)."""
    test = st.test
    parts = list(test.values) if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    masks = [(i, _any_mask(v, lines)) for i, v in enumerate(parts) if _any_mask(v, lines)]
    if st.orelse or len(masks) != 1 or spans_string_lines(st) or \
            st.body[0].lineno <= (test.end_lineno or st.lineno):
        return []
    k, mask = masks[0]
    python = parts[:k] + parts[k + 1:]
    # a part after the mask's test ran only where the mask had an entry: it must be a Python
    # bool that is safe to evaluate first
    if not all(_python_test(v) for v in parts[k + 1:]):
        return []
    where = f"{torch_alias(tree) or 'torch'}.where"
    for s in st.body:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                and isinstance(s.value, ast.Call) and not s.value.keywords and len(s.value.args) == 3
                and segment(lines, s.value.func) == where and _side_effect_free(s.value)
                and segment(lines, s.value.args[2]) == s.targets[0].id
                and _from_mask(s.value.args[0], mask, lines)):
            return []
    indent = indentation(lines, st)
    body = lines[st.body[0].lineno - 1:st.end_lineno]
    if python:
        new = [f"{indent}if {_test_text(lines, python)}:"] + body
        title = (f"drop the test `{segment(lines, parts[k])}`: the `torch.where` it guards keeps the "
                 "values where the mask is empty; the Python part of the test stays an `if`")
    else:
        new = [ln for s in st.body for ln in _dedented(lines, s, indent)]
        title = (f"drop the `if`: the `torch.where` on `{mask}` keeps the values where the mask "
                 "is empty, as the skipped block did")
    guards = tuple(dict.fromkeys(guards_of(segment(lines, test)) + ("empty",)))
    return [replace_statement(code, finding.path, st, new, title, safe=False, guards=guards, rank=0)]


def _masked_rows_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if <test>: [m = <mask>]; x[m] = f(y[m], ...)` (pytorch-ood's losses under `if
    contains_unknown(target):`): the value computed on every row and the masked rows selected,
    `x = torch.where(m, f(y, ...), x)`, with no `if`. Not where the mask is made from a `y` it
    reads (`_made_from`; torchmetrics' Pearson under `if valid_mask.any():`, the mask of its
    variances that are neither small nor infinite): the rows left out are then those whose `y`
    is degenerate, where the layers that computed `y` may have an infinite derivative, and
    where head skipped the block its result had no gradient, the edit's has zeros through that
    derivative: NaN in the layers (on constant predictions, an independent re-run found). The
    proof's call of the function alone, with the mask emptied, cannot see it; its run of the
    model on inputs all alike (pt2bot/smoke/verify.py `constant_checks`) sees it only where
    those layers make the degenerate rows from such inputs. Each row of `f`
    must come from the same row of what it reads through the mask (`_row_wise`); the test is
    dropped, which is right only where it fails just when the mask is empty (then
    `torch.where` keeps `x` whole, as head's skipped block did), so the proof compares on an
    empty mask ("empty"), and the other statements of the block, plain assignments, now run
    always. Rows the mask leaves out are computed too: a value that is
    inf or NaN there stays out of the forward pass, but not out of the backward one (0 times
    inf). So where the value divides or calls a function not defined everywhere
    (`partial_domain`) and keeps the shape of its reads (`_same_shape`), each read of those rows
    is 1 first, `torch.where(m, y, 1)` (a division by a count that is 0 on the rows the labels
    leave out is 1 / 1 there); elsewhere the proof compares the gradients."""
    if st.orelse or not _tests_mask(st, lines):
        return []
    indent = indentation(lines, st)
    out: list[str] = []
    stores = stand_ins = 0
    for s in st.body:
        store = _masked_store(s)
        if store is not None:
            x, mask = store
            # `x` a local made before (not a parameter, nor a name for another's tensor the
            # write reached through: head wrote in place, the edit rebinds the name)
            reads = _row_wise(s.value, mask, lines) if x != mask and _local_value(tree, st, x) else None
            if not reads or not owns_lines(lines, s) or spans_string_lines(s):
                return []
            # a mask made from what the value reads through it (Pearson's `valid_mask`, from
            # the variances' being small or not finite) leaves out the rows where those values
            # are degenerate, and whatever computed them upstream may have an infinite
            # derivative there (`pow(max_abs_dev, -2)` at a constant input). Where head skips
            # the block its result has no gradient; the edit's `torch.where` links it, and zero
            # times that derivative is NaN in the layers before. The proof calls the function
            # with the mask emptied, and the model on inputs all alike, not the layers with
            # every input that empties it: no edit
            fn = enclosing_function(tree, st)
            if fn is None or {segment(lines, r.value) for r in reads} & _made_from(fn, s.lineno, mask):
                return []
            vs, ve = node_span(s.value)
            # a value that divides or leaves a function's domain, computed on the rows the mask
            # leaves out, may be inf or NaN there: `torch.where` drops it in the forward pass,
            # not in backward (0 times inf), so those rows read 1 instead. Only for values of
            # the rows' own shape: a row's read of more dims (a reduction along dim 1 follows)
            # would broadcast against the mask by its last dim
            safe = partial_domain(s.value) and _same_shape(s.value)
            stand_ins += safe
            new = replace_spans(lines, s.lineno, s.end_lineno or s.lineno,
                                [(*node_span(s.targets[0]), x), (vs, vs, f"torch.where({mask}, "), (ve, ve, f", {x})")]
                                + [(*node_span(r), f"torch.where({mask}, {segment(lines, r.value)}, 1)" if safe
                                    else segment(lines, r.value)) for r in reads])
            cut = len(indentation(lines, s)) - len(indent)
            out += [indent + new[0].lstrip()] + [ln[cut:] if ln[:cut].strip() == "" else ln for ln in new[1:]]
            stores += 1
        elif isinstance(s, (ast.Assign, ast.AugAssign)) and all(isinstance(t, ast.Name) for t in (
                s.targets if isinstance(s, ast.Assign) else [s.target])) and _side_effect_free(s) \
                and not _DRAWS.search(segment(lines, s)):
            out += _dedented(lines, s, indent)
        else:
            return []
    if not stores:
        return []
    title = "compute every row and select the masked ones with `torch.where`, with no `if`"
    if stand_ins:
        title += "; the rows it leaves out read as 1 first (no inf/NaN there, in gradients either)"
    guards = tuple(dict.fromkeys(guards_of(segment(lines, st.test)) + ("empty",)))
    return [replace_statement(code, finding.path, st, out, title, safe=False, guards=guards, rank=1)]


# --------------------------------------------------------------------------- Python parts of a test

_PYTHON_CALLS = frozenset({"isinstance", "issubclass", "hasattr", "callable"})


def _python_test(node: ast.AST) -> bool:
    """A test that is surely a Python bool, whatever its operands are: `x is None`, `x is not
    None`, a comparison with a string (`classes == "present"`), `isinstance(...)`,
    `hasattr(...)`, `callable(...)`, and `not` of those."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _python_test(node.operand)
    if isinstance(node, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) or any(
            isinstance(c, ast.Constant) and isinstance(c.value, str) for c in [node.left, *node.comparators])
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PYTHON_CALLS


def _test_text(lines: list[str], parts: list[ast.AST]) -> str:
    """`parts` joined with `and` (each bracketed where `and` would bind tighter)."""
    return " and ".join(f"({segment(lines, p)})" if isinstance(p, (ast.BoolOp, ast.IfExp, ast.NamedExpr, ast.Lambda))
                        else segment(lines, p) for p in parts)


def _python_part_fixes(code, finding, st: ast.If, body, tree, lines) -> list[Candidate]:
    """`if flag and <tensor test>: <one statement>` (no `else`) -> `if flag:` around the
    recipes' edit of `if <tensor test>: <statement>`. The parts before the tensor test are the
    ones the rule did not find to be tensors (`signed` in torchvision's `if signed and
    torch.rand(()) <= 0.5:`); a part after it must be surely a Python bool (`_python_test`),
    and the tensor test then without a random draw or an in-place write: it is evaluated after
    that part now, so not at all where that part is false."""
    test = st.test
    if st.orelse or not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)) or spans_string_lines(st):
        return []
    at = (finding.line, finding.col)
    k = next((i for i, v in enumerate(test.values) if _inside(v, at)), None)
    if k is None:
        return []
    tensor, python = test.values[k], test.values[:k] + test.values[k + 1:]
    where = _where_test(lines, tensor, at)
    if where is None:
        return []
    after = test.values[k + 1:]
    if not all(_python_test(v) for v in after) or (after and not _side_effect_free(tensor)) or \
            (after and _RANDOM.search(segment(lines, tensor))):
        return []
    inner = ast.If(test=tensor, body=st.body, orelse=[])
    ast.copy_location(inner, st)
    inner.end_lineno, inner.end_col_offset = st.end_lineno, st.end_col_offset
    indent = indentation(lines, st)
    unit = indent_unit(indent, lines)
    out = []
    for c in _branch_fixes(code, finding, inner, [inner if s is st else s for s in body], tree, lines, where):
        if c.start_line != st.lineno:
            continue
        new = [f"{indent}if {_test_text(lines, python)}:"] + [unit + ln if ln.strip() else ln for ln in c.lines]
        # the statements after the `if` that the edit replaced too (a `return` that follows)
        new += lines[(st.end_lineno or st.lineno):c.end_line]
        out.append(Candidate(code=c.code, path=c.path, start_line=c.start_line, end_line=c.end_line,
                             lines=tuple(new), title=c.title + "; the Python part of the test stays an `if`",
                             safe=False, guards=c.guards, rank=c.rank))
    return out


def _known_flag(node: ast.AST, fn: ast.AST | None) -> bool:
    """A part of a test that is a Python bool dynamo reads as a constant and that is safe to
    evaluate before the parts written ahead of it: `self.training`, a parameter annotated
    `bool` or defaulting to `True` / `False` (`use_cache: bool = False`), a `_python_test`
    whose attributes hang off `self` or a module (`mask is not None`, `isinstance(x,
    torch.Tensor)`; not `x.y is None`, which raises where an earlier part guarded against `x`
    being None), and `not` of those."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _known_flag(node.operand, fn)
    if isinstance(node, ast.Attribute):
        return node.attr == "training" and isinstance(node.value, ast.Name) and node.value.id == "self"
    if isinstance(node, ast.Name):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        return any(a.arg == node.id and (
            (isinstance(a.annotation, ast.Name) and a.annotation.id == "bool")
            or (isinstance(d, ast.Constant) and isinstance(d.value, bool))) for a, d in parameters(fn))
    if not _python_test(node):
        return False
    for n in ast.walk(node):
        if isinstance(n, (ast.Subscript, ast.NamedExpr, ast.Lambda)):
            return False
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _PYTHON_CALLS):
            return False
        if isinstance(n, ast.Attribute) and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "torch")):
            return False
    return True


# what a tensor's metadata says, which dynamo knows while tracing (no value read): a test of it
# only is a constant in the graph
_META_ATTRS = frozenset({"dtype", "ndim", "is_cuda", "is_sparse", "is_quantized", "is_meta", "requires_grad",
                         "layout"})
_META_METHODS = frozenset({"dim", "is_floating_point", "is_complex"})
# tests that guard what a name is, before its metadata is read (`torch.is_tensor(x) and ...`)
_TYPE_TESTS = frozenset({"isinstance", "hasattr", "callable", "type", "is_tensor"})


def _metadata_of(node: ast.AST) -> str | None:
    """The name whose metadata `node` reads (`x.dtype`, `x.ndim`, `x.dim()`,
    `x.is_floating_point()`), else None."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func
        if not (isinstance(node, ast.Attribute) and node.attr in _META_METHODS):
            return None
    elif not (isinstance(node, ast.Attribute) and node.attr in _META_ATTRS):
        return None
    return node.value.id if isinstance(node.value, ast.Name) and node.value.id != "torch" else None


def _metadata_test(node: ast.AST) -> str | None:
    """The name a test reads only the metadata of (`losses.dtype == torch.float16`, `x.dtype in
    (torch.half, torch.bfloat16)`, `x.ndim == 3`, `x.is_floating_point()`, `not` of those):
    dynamo reads it as a constant, and reading it first raises nothing the test did not."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _metadata_test(node.operand)
    if not isinstance(node, ast.Compare):
        return _metadata_of(node) if isinstance(node, ast.Call) else None
    roots = set()
    for side in [node.left, *node.comparators]:
        items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
        for v in items:
            root = _metadata_of(v)
            if root is not None:
                roots.add(root)
            elif not (isinstance(v, ast.Constant) or isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)
                      and v.value.id == "torch"):
                return None
    return roots.pop() if len(roots) == 1 else None


def _type_tested(node: ast.AST, name: str) -> bool:
    """Whether `node` tests what `name` is (`name is None`, `isinstance(name, ...)`,
    `torch.is_tensor(name)`): a metadata read moved ahead of it may raise where it guarded."""
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops) and any(
                isinstance(x, ast.Name) and x.id == name for x in [n.left, *n.comparators]):
            return True
        if isinstance(n, ast.Call) and (n.func.attr if isinstance(n.func, ast.Attribute) else getattr(
                n.func, "id", "")) in _TYPE_TESTS and any(isinstance(a, ast.Name) and a.id == name for a in n.args):
            return True
    return False


def _bracketed_span(lines: list[str], node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    """`node`'s span with the brackets around it in the source, where it has its own (`(a or
    b)` in `(a or b) and c`; `ast` leaves them out of the node): a part moved elsewhere takes
    them along, or drops them where it needs none."""
    (l0, c0), (l1, c1) = node_span(node)
    first, last = lines[l0 - 1].encode(), lines[l1 - 1].encode()
    before, after = first[:c0].rstrip(), last[c1:].lstrip()
    if before.endswith(b"(") and after.startswith(b")"):
        c0 = len(before) - 1
        c1 = len(last) - len(after) + 1
    return (l0, c0), (l1, c1)


def _python_first_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if <tensor test> and ... and self.training:` -> `if self.training and ... and <tensor
    test>:` (llm-foundry's MPT fix, "change order of operands to enable PT2 compile for
    inference"): the parts that are Python bools dynamo knows (`_known_flag`, and tests of a
    tensor's metadata only, pytorch-metric-learning's `if torch.isnan(output) and losses.dtype
    == torch.float16:`, where no other part tests what the tensor is: `_metadata_test`) are
    tested first, so where they decide the test (`self.training` false in eval, for `and`; true, for `or`)
    the tensor test is not evaluated and the graph does not break there. Where they do not, it
    still breaks: the edit is for the mode the model is compiled in. Each part is pure in
    eager: moving a flag ahead changes which parts are evaluated, never the test's truth. The
    flags keep their order, the other parts theirs; each part takes the place (and the line)
    of the one it replaces, in brackets where it holds an `and` / `or` of its own."""
    test = st.test
    if not isinstance(test, ast.BoolOp) or spans_string_lines(st) or not owns_lines(lines, st):
        return []
    at = (finding.line, finding.col)
    k = next((i for i, v in enumerate(test.values) if _inside(v, at)), None)
    fn = enclosing_function(tree, st)
    known = [i for i, v in enumerate(test.values) if i != k and _known_flag(v, fn)]

    def metadata(i: int) -> bool:
        # a part that tests what the tensor is must stay ahead of the read: a flag before it
        # does, as the flags keep their order
        name = _metadata_test(test.values[i])
        return name is not None and not any(_type_tested(w, name) for j, w in enumerate(test.values)
                                            if j != i and not (j in known and j < i))

    flags = sorted(known + [i for i in range(len(test.values)) if i != k and i not in known and metadata(i)])
    if k is None or not any(i > k for i in flags) or not all(_side_effect_free(v) for v in test.values):
        return []
    order = flags + [i for i in range(len(test.values)) if i not in flags]

    def text(i: int) -> str:
        v = test.values[i]
        wrap = isinstance(v, (ast.BoolOp, ast.IfExp, ast.NamedExpr, ast.Lambda))
        return f"({segment(lines, v)})" if wrap else segment(lines, v)

    end = test.end_lineno or test.lineno
    new = replace_spans(lines, st.lineno, end, [(*_bracketed_span(lines, slot), text(i))
                                                for slot, i in zip(test.values, order)])
    moved = ", ".join(f"`{segment(lines, test.values[i])}`" for i in flags if i > k)
    word = "false" if isinstance(test.op, ast.And) else "true"
    return [Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=end, lines=tuple(new),
                      title=f"test {moved} first: where it is {word}, the tensor test is not evaluated and "
                            "nothing breaks (where it is not, the graph still breaks there)",
                      # after the edits that remove the break whatever the flags say: this one
                      # keeps it in the other mode. No guard values: the test's truth is the
                      # same on every input, so there is no special value to compare on (an
                      # `.any()` in it is no mask the edit could mishandle)
                      safe=False, guards=(), rank=3)]


# --------------------------------------------------------------------------- dispatch on a value

def _case(node: ast.AST, lines: list[str]) -> tuple[str, object, ast.Compare, list[ast.AST]] | None:
    """(the tested expression's text, the constant, the comparison, the other parts) of a
    link's test `e == K`, or `e == K` and Python tests (`_python_test`) joined by `and` (K an
    int or a string), else None."""
    parts = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    cases = [p for p in parts if isinstance(p, ast.Compare) and len(p.ops) == 1 and isinstance(p.ops[0], ast.Eq)]
    if len(cases) != 1:
        return None
    (cmp,) = cases
    rest = [p for p in parts if p is not cmp]
    if not all(_python_test(p) for p in rest):
        return None
    for e, k in ((cmp.left, cmp.comparators[0]), (cmp.comparators[0], cmp.left)):
        if isinstance(k, ast.Constant) and type(k.value) in (int, str) and pure(e) and not isinstance(e, ast.Constant):
            return segment(lines, e), k.value, cmp, rest
    return None


def _dispatch_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """An `if`/`elif` chain that tests one value against distinct constants, each link one
    assignment to the same name (torchvision's ColorJitter: `if fn_id == 0 and b is not None:
    img = F.adjust_brightness(img, b)` `elif fn_id == 1 and ...`), no `else` -> one
    `img = torch.where(fn_id == 0, F.adjust_brightness(img, b), img)` a link, in order, each
    under `if <its Python part>:`. The value equals one constant at most, so at most one link
    selects its value, from the name's value before, as head's chain does; the others compute
    theirs and leave the name as it was. Not where a value draws random numbers or writes in
    place (it now runs where it did not), nor where a test reads the name (it is rebound
    between the tests now); `x op= v` as for one `if` (`_local_value`)."""
    links, link = [], st
    while True:
        links.append(link)
        if not link.orelse:
            break
        if len(link.orelse) != 1 or not isinstance(link.orelse[0], ast.If) or not is_elif(lines, link.orelse[0]):
            return []
        link = link.orelse[0]
    if len(links) < 2 or spans_string_lines(st) or not owns_lines(lines, st):
        return []
    fn = enclosing_function(tree, st)
    if fn is None:
        return []
    cases, name = [], None
    for link in links:
        case = _case(link.test, lines)
        if case is None or len(link.body) != 1:
            return []
        s = link.body[0]
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            target, value = s.targets[0].id, s.value
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and type(s.op) in BIN_OPS and \
                _local_value(tree, st, s.target.id):
            target, value = s.target.id, s
        else:
            return []
        if name not in (None, target) or not _side_effect_free(value) or _RANDOM.search(segment(lines, value)):
            return []
        if target in _reads(link.test):
            return []
        name = target
        cases.append((case, link, value))
    if name is None or len({(type(k), k) for (_e, k, _c, _r), _l, _v in cases}) != len(cases) or \
            len({e for (e, _k, _c, _r), _l, _v in cases}) != 1 or not defined_before(tree, st, name) or \
            not _inside(cases[0][0][2], (finding.line, finding.col)):
        return []
    indent = indentation(lines, st)
    unit = indent_unit(indent, lines)
    new: list[str] = []
    special: list[str] = []
    for (_e, _k, cmp, rest), _link, value in cases:
        special += guards_of(segment(lines, cmp))
        stmt = f"{name} = torch.where({segment(lines, cmp)}, {_side_text(lines, value)}, {name})"
        if rest:
            new += [f"{indent}if {_test_text(lines, rest)}:"] + statement_lines(indent + unit, stmt)
        else:
            new += statement_lines(indent, stmt)
    return [replace_statement(code, finding.path, st, new,
                              f"select each case of the dispatch on `{cases[0][0][0]}` with `torch.where` "
                              "(distinct constants: one case applies at most)",
                              safe=False, guards=tuple(dict.fromkeys(special)), rank=1)]


def _branch_fixes(code, finding, st: ast.If, body, tree, lines, test: str) -> list[Candidate]:
    """Recipes 1 to 3 for `st`, whose test is `test` as `torch.where` takes it (`_where_test`)."""
    guards = guards_of(test)
    indent = indentation(lines, st)
    out = []
    # the branchless forms only for a comparison or a call: whether a guard leaves the other
    # values alone is not worked out for a test of several parts (`and` / `or` / `not`), but
    # for `if not torch.isfinite(h).all(): h = torch.nan_to_num(h)`, the idiom that reads as
    # "some value is not finite" (a `not` of anything else may invert what the test guards)
    plain = _is_value(st.test)
    # an `or` too, where the guarded statement's own test is one of its parts: where the
    # whole test fails, that part fails (`_noop_guarded` reads the parts)
    either = isinstance(st.test, ast.BoolOp) and isinstance(st.test.op, ast.Or)
    if (plain or either or _not_all_finite(st.test)) and not st.orelse and len(st.body) == 1 and \
            _noop_guarded(st, lines):
        # `nan_to_num` replaces inf as well as NaN, whatever the test looked for: the verifier
        # must compare on both
        done = segment(lines, st.body[0])
        extra = ("nan", "inf") if "nan_to_num" in done else ()
        # a clamp changes finite values past its bounds, which a test for inf or NaN (or any
        # test but the bounds' own) lets through: compare on large finite values too
        if any(re.search(rf"\b{name}_?\(", done) for name in _CLAMP):
            extra += ("large",)
        out.append(replace_statement(code, finding.path, st, _dedented(lines, st.body[0], indent),
                                     "drop the branch: the guarded statement leaves other values unchanged",
                                     safe=False, guards=tuple(dict.fromkeys(guards + extra)), rank=0))
    elif plain and not st.orelse and _masked_stores_guarded(st, lines):
        out.append(replace_statement(code, finding.path, st,
                                     [ln for s in st.body for ln in _dedented(lines, s, indent)],
                                     "drop the branch: writing through an all-false mask changes nothing",
                                     safe=False, guards=guards, rank=0))
    notes, bare = _notes_apart(st)
    sides = _sides(bare, body, tree, lines)
    if sides is None or (notes and sides[0] != "assign"):
        return out
    kind, target, a, b, last = sides
    if notes:
        # the warning an arm gives, in eager only and under the arm's own test: eager warns
        # where head warns, compiled code (where a warning breaks the graph) does not
        own = segment(lines, st.test)
        if "\n" in own:
            return out
        heads = {"if": f"({own})" if isinstance(st.test, (ast.BoolOp, ast.IfExp, ast.NamedExpr)) else own,
                 "else": f"not ({own})"}
        noted: list[str] = []
        for arm, stmts in notes:
            noted += [f"{indent}if not torch.compiler.is_compiling() and {heads[arm]}:"]
            noted += [ln for n in stmts for ln in lines[n.lineno - 1:n.end_lineno or n.lineno]]
    then, other = _side_text(lines, a), _arg(lines, b)
    lead = f"{target} = " if kind == "assign" else "return "
    end = last.end_lineno or last.lineno
    ways = [(2, f"torch.cond({test}, lambda: {_cond_branch(a, then)}, lambda: {_cond_branch(b, other)}, ())",
             "branch inside the graph with `torch.cond`")]
    first: list[str] = []
    if not (isinstance(a, ast.Tuple) or isinstance(b, ast.Tuple)):   # where selects one tensor
        shared = None if isinstance(a, ast.AugAssign) else _shared_call(a, b, lines)
        # replaced as text only where every occurrence of the text is one of the call
        # (`f(x)` inside `ff(x)` is not)
        if shared is not None and all(
                text_of.count(segment(lines, shared)) == _occurrences(side, shared, lines)
                for side, text_of in ((a, then), (b, other))):
            # torch.where computes both sides: what both compute is computed once, before,
            # as the branch did (a dropout inside is drawn once, as on head)
            name = fresh_name(identifiers(tree), _call_name(shared) + "_out")
            text = segment(lines, shared)
            first = [f"{indent}{name} = {text}"]
            then, other = then.replace(text, name), other.replace(text, name)
        where_title = "select with `torch.where` instead of branching"
        divisors = [n for n in _bounded_names(st.test) if _divides_by(b, n) and not _divides_by(a, n)]
        if divisors and not first and _side_effect_free(b):
            # the `else` side divides by what the test compares with zero or a small bound:
            # computed everywhere by `torch.where`, it would divide by that zero where the
            # branch did not (an integer division raises, a float one puts NaN into the
            # gradient: torchdiffeq's first step, `if d0 < 1e-5 or d1 < 1e-5:` then `0.01 * d0
            # / d1`, on an ODE that starts at 0); 1 stands in there, where nothing selects it
            taken = identifiers(tree)
            safe: dict[str, str] = {}
            for n in divisors:
                safe[n] = fresh_name(taken, f"safe_{n}")
                taken.add(safe[n])
                first.append(f"{indent}{safe[n]} = torch.where({test}, torch.ones_like({n}), {n})")
            other = _safe_arg(lines, b, safe)
            where_title += _stands_in(divisors, zero=_zero_tested(st.test) is not None)
        # and the `if` side, where it divides by (or takes the log or root of) a name the test
        # reads: computed everywhere, it does so where the test fails too, maybe at 0. The value
        # is not selected there, but its gradient is: 0 * inf is NaN (a loss capped under `if
        # freq > r * pix: freq = freq * (r * pix / freq).detach()`, with freq == pix == 0 when
        # an estimate equals its target, made every gradient NaN where head's were finite)
        singular = _singular_operands(a, _test_names(st.test), lines)
        given = False
        if singular and not first and not divisors and _side_effect_free(a):
            given = True
            taken = identifiers(tree)
            stand: dict[str, str] = {}
            for text in dict.fromkeys(segment(lines, n) for n in singular):
                stand[text] = fresh_name(taken, f"safe_{text}" if text.isidentifier() else "safe_operand")
                taken.add(stand[text])
                first.append(f"{indent}{stand[text]} = torch.where({test}, {text}, torch.ones_like({text}))")
            then = _replaced_arg(lines, a, [(*node_span(n), stand[segment(lines, n)]) for n in singular])
            where_title += _stands_in(list(stand), fails=True)
        if not singular or given:
            # (with a stand-in it could not give, beside a call computed once or the other
            # side's, the selection is not offered: its gradient may be NaN where head's is not)
            ways.insert(0, (1, f"torch.where({test}, {then}, {other})", where_title))
    elif kind == "return" and isinstance(a, ast.Tuple) and isinstance(b, ast.Tuple):
        # `if c: return torch.full_like(masks, -1e4), iou_pred` then `return masks, iou_pred`
        # (SAM's mask decoder): each value selected apart, one the two returns share as is
        selected = _tuple_selection(a, b, st.test, test, lines)
        if selected is not None:
            ways.insert(0, (1, selected, "select each returned value with `torch.where` instead of "
                                         "branching"))
    for rank, text, title in ways:
        pre = first if rank == 1 else []
        if notes:
            pre, title = noted + pre, f"{title}, the warning given in eager only"
        out.append(Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=end,
                             lines=tuple(pre + statement_lines(indent, lead + text)), title=title, safe=False,
                             guards=guards, rank=rank))
    return out


def _tuple_selection(a: ast.Tuple, b: ast.Tuple, cond: ast.AST, test: str,
                     lines: list[str]) -> str | None:
    """`torch.where(test, a_i, b_i), ...` for two returned tuples of one length, an element the
    two write alike kept as it is; None where an element is starred, where none differs, or
    where a selected side divides by (or takes the log or root of) what the test reads, as
    the single selection refuses."""
    if len(a.elts) != len(b.elts) or any(isinstance(e, ast.Starred) for e in a.elts + b.elts):
        return None
    parts = []
    for ea, eb in zip(a.elts, b.elts):
        ta, tb = segment(lines, ea), segment(lines, eb)
        if "\n" in ta or "\n" in tb:
            return None
        if ta == tb:
            parts.append(_arg(lines, ea))
            continue
        if _singular_operands(ea, _test_names(cond), lines) or \
                any(_divides_by(eb, n) for n in _bounded_names(cond)):
            return None
        parts.append(f"torch.where({test}, {_arg(lines, ea)}, {_arg(lines, eb)})")
    return ", ".join(parts) if any(p.startswith("torch.where(") for p in parts) else None


# what a note's callee is called besides `print` and a logger's methods (`warnings.warn`,
# `logger.warning`, `info_once`): the wrappers named after them (`rank_zero_warn`,
# `rank_zero_info`); not a method that merely ends in one of those words (`update_info`)
_NOTE = re.compile(r"^rank_zero_|_warn(ing)?$")


def _note(st: ast.stmt) -> bool:
    """A call for what it tells the user only (`rank_zero_warn(...)`, `warnings.warn(...)`,
    `logger.warning(...)`, `print(...)`), not torch's, reading no more than it formats."""
    if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)):
        return False
    f = st.value.func
    parts = []
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if not isinstance(f, ast.Name) or f.id == "torch":
        return False
    parts.append(f.id)
    name = parts[0]
    return (name == "print" or name in LOG_METHODS or bool(_NOTE.search(name))) and _side_effect_free(st.value)


def _notes_apart(st: ast.If) -> tuple[list[tuple[str, list[ast.stmt]]], ast.If]:
    """The notes (`_note`) that open an arm of `st` with one statement after them, as
    [(arm, statements)], and a copy of `st` without them (`st` itself where there are none):
    torchmetrics' `if fps[-1] <= 0: rank_zero_warn(...); fpr = torch.zeros_like(thres)` /
    `else: fpr = fps / fps[-1]` selects `fpr` once the warning is set apart."""
    notes = []
    arms = {}
    for arm, stmts in (("if", st.body), ("else", st.orelse)):
        k = 0
        while k < len(stmts) - 1 and _note(stmts[k]):
            k += 1
        if k:
            notes.append((arm, list(stmts[:k])))
        arms[arm] = stmts[k:] if k else stmts
    if not notes:
        return [], st
    bare = copy.copy(st)
    bare.body, bare.orelse = arms["if"], arms["else"]
    return notes, bare


def _place(node: ast.AST) -> bool:
    """An element written by index, `x[1]` or `self.buf[:, i]`: the index and what it indexes
    are names, attributes, constants and arithmetic of them (no call), so reading the place in
    the edit picks the element head wrote."""
    return isinstance(node, ast.Subscript) and pure_indexed(node)


def _side_text(lines: list[str], node: ast.AST) -> str:
    """The text of a side's value: `x op= v` is `x op v` (`v` bracketed unless it is an atom)."""
    if isinstance(node, ast.AugAssign):
        v = node.value
        atom = isinstance(v, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)) or (
            isinstance(v, ast.UnaryOp) and isinstance(v.operand, ast.Constant))
        value = segment(lines, v) if atom else f"({segment(lines, v)})"
        return f"{segment(lines, node.target)} {BIN_OPS[type(node.op)]} {value}"
    return _arg(lines, node)


# calls whose result is a Python number, never a tensor
_NUMBER_CALLS = frozenset({"float", "int", "round", "len", "bool"})


def _python_number(node: ast.AST | None) -> bool:
    """A value that is surely a Python number: a numeric constant, `float(...)`, `int(...)`,
    `round(...)`, `len(...)`, `t.item()`, and a conditional expression of those."""
    if isinstance(node, ast.UnaryOp):
        return _python_number(node.operand)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, complex))
    if isinstance(node, ast.IfExp):
        return _python_number(node.body) and _python_number(node.orelse)
    if isinstance(node, ast.Call):
        f = node.func
        return (isinstance(f, ast.Name) and f.id in _NUMBER_CALLS) or (
            isinstance(f, ast.Attribute) and f.attr == "item" and not node.args)
    return False


def _local_value(tree: ast.Module, st: ast.stmt, name: str) -> bool:
    """Whether `x op= v` at `st` may become `x = torch.where(c, x op v, x)`: `x` is a local
    assigned before `st` (not a parameter: on a tensor `op=` writes in place, into the caller's
    tensor too, where the rebinding would not), and not surely a Python number (a number made
    a tensor by `torch.where` reaches code that needs a number, torchvision's `magnitude *= -1`
    before `F.rotate(img, magnitude)`)."""
    fn = enclosing_function(tree, st)
    if fn is None or name in parameter_names(fn):
        return False
    bound = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and n.lineno < st.lineno
             and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    return bool(bound) and not all(_python_number(n.value) for n in bound)


def _shared_call(a: ast.AST, b: ast.AST, lines: list[str]) -> ast.Call | None:
    """The largest call both sides compute, written alike in both (`lora_B(lora_A(x))` in
    `r + lora_B(lora_A(x))` and `r + lora_B(lora_A(x)) * s`); None when none is, or when it is
    one side whole (then `torch.where` has nothing to share)."""
    def calls(side: ast.AST) -> list[ast.Call]:
        # not one inside a comprehension or lambda: it may read names bound there only
        scoped = {id(n) for s in ast.walk(side) if isinstance(s, _SCOPES) for n in ast.walk(s)}
        return [n for n in ast.walk(side) if isinstance(n, ast.Call) and id(n) not in scoped]

    theirs = {ast.dump(n): segment(lines, n) for n in calls(b)}
    both = [n for n in calls(a) if n is not a
            and theirs.get(ast.dump(n)) == segment(lines, n) and ast.dump(n) != ast.dump(b)]
    return max(both, key=lambda n: len(segment(lines, n)), default=None)


_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _occurrences(side: ast.AST, call: ast.Call, lines: list[str]) -> int:
    key, text = ast.dump(call), segment(lines, call)
    return sum(1 for n in ast.walk(side) if isinstance(n, ast.Call) and ast.dump(n) == key
               and segment(lines, n) == text)


def _call_name(call: ast.Call) -> str:
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "shared"
    return name if name.isidentifier() else "shared"

# --------------------------------------------------------------------------- chains of returns

# torch functions and tensor methods whose result is not a tensor (a number, a bool, a size)
_NOT_TENSOR = frozenset({"item", "tolist", "size", "dim", "ndimension", "numel", "nelement",
                         "element_size", "stride", "data_ptr", "storage_offset", "get_device",
                         "is_contiguous", "is_floating_point", "is_complex", "is_tensor", "is_nonzero",
                         "equal", "allclose", "numpy", "type", "__len__", "is_grad_enabled",
                         "get_default_dtype", "is_storage", "result_type", "promote_types", "Size",
                         "device", "finfo", "iinfo", "is_scripting", "is_tracing", "is_compiling",
                         "is_autocast_enabled", "get_autocast_dtype"})
# tensor attributes that are tensors themselves (`shape`, `dtype`, `device` are not)
_TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})
# reductions that give one element when called with no argument
_REDUCTIONS = frozenset({"sum", "prod", "max", "min", "amax", "amin", "mean", "nansum", "count_nonzero"})


def _is_tensor_annotation(ann: ast.AST | None) -> bool:
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.strip() in ("torch.Tensor", "Tensor")
    return (isinstance(ann, ast.Name) and ann.id == "Tensor") or (
        isinstance(ann, ast.Attribute) and ann.attr == "Tensor" and isinstance(ann.value, ast.Name)
        and ann.value.id == "torch")


def _own_nodes(fn: ast.AST):
    """The nodes of `fn`'s body outside the functions, lambdas and classes defined in it."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))


class _Tensors:
    """Which expressions of one function are surely tensors, from the source text alone: the
    parameters annotated `torch.Tensor` or whose `.device` the function reads (torchdiffeq's
    `_optimal_step_size(last_step, ...)` makes `torch.ones((), device=last_step.device)`), the locals every assignment of which is a tensor
    expression, torch calls, tensor methods and arithmetic on those, and calls of the file's
    functions annotated `-> torch.Tensor`, and calls of the class's submodules that are torch
    layers returning one tensor (`self.head(h)` where `__init__` set `self.head = nn.Linear(...)`).
    What it does not know is not a tensor."""

    def __init__(self, tree: ast.Module, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                 at: tuple[int, int] | None = None) -> None:
        self.helpers = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and _is_tensor_annotation(n.returns)}
        # torch's tensor factories imported by name (torchmetrics' `from torch import tensor`)
        self.helpers |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "torch"
                         for a in n.names if a.name[:1].islower() and a.name not in _NOT_TENSOR}
        # the names of torch.nn.functional: `import torch.nn.functional as F`,
        # `from torch.nn import functional as F`
        self.functional = {a.asname or a.name for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
                           for a in n.names
                           if (isinstance(n, ast.Import) and a.name == "torch.nn.functional" and a.asname)
                           or (isinstance(n, ast.ImportFrom) and n.module == "torch.nn" and a.name == "functional")}
        self.layers = _torch_layers(tree, fn)
        args = fn.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        nodes = list(_own_nodes(fn))
        on_device = {n.value.id for n in nodes if isinstance(n, ast.Attribute) and n.attr == "device"
                     and isinstance(n.value, ast.Name)}
        bindings: dict[str, list[ast.AST | None]] = {}   # None: a binding that is not a tensor
        for a in params + [a for a in (args.vararg, args.kwarg) if a is not None]:
            bindings.setdefault(a.arg, []).append(
                a if _is_tensor_annotation(a.annotation) or a.arg in on_device else None)
        plain: set[int] = set()   # the targets of the assignments read here
        for n in nodes:
            if isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) for t in n.targets):
                for t in n.targets:
                    bindings.setdefault(t.id, []).append(n.value)
                    plain.add(id(t))
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and isinstance(n.target, ast.Name):
                bindings.setdefault(n.target.id, []).append(
                    n if isinstance(n, ast.AugAssign) else n.value)
                plain.add(id(n.target))
        for n in nodes:
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in plain:
                bindings.setdefault(n.id, []).append(None)   # unpacking, `for`, `with`, `del`
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bindings.setdefault(n.name, []).append(None)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    bindings.setdefault((a.asname or a.name).split(".")[0], []).append(None)
        # the largest set of names consistent with their bindings (`bits = 8 - bits` keeps a
        # tensor parameter a tensor)
        # the name the finding is on: its rule found it a tensor, or, with no finding, dynamo
        # broke on a test that reads it (torchmetrics' `if not target.sum():`, `target` bound
        # by unpacking a check function's return)
        anchored = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                    and (n.lineno, n.col_offset) == at}
        self.names = {k for k, v in bindings.items() if None not in v} | anchored
        changed = True
        while changed:
            changed = False
            for name in list(self.names - anchored):
                if not all(isinstance(b, ast.arg) or self.binds(b, name) for b in bindings[name]):
                    self.names.discard(name)
                    changed = True

    def binds(self, b: ast.AST, name: str) -> bool:
        if isinstance(b, ast.AugAssign):
            return name in self.names or self.has(b.value)
        return self.has(b)

    def has(self, e: ast.AST | None) -> bool:
        if isinstance(e, ast.Name):
            return e.id in self.names
        if isinstance(e, ast.Attribute):
            return e.attr in _TENSOR_ATTRS and self.has(e.value)
        if isinstance(e, ast.Subscript):
            return self.has(e.value)
        if isinstance(e, ast.BinOp):
            return self.has(e.left) or self.has(e.right)
        if isinstance(e, ast.UnaryOp):
            return not isinstance(e.op, ast.Not) and self.has(e.operand)
        if isinstance(e, ast.Call):
            f = e.func
            if isinstance(f, ast.Name):
                return f.id in self.helpers
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                    and f.attr in self.layers:
                return True
            if not isinstance(f, ast.Attribute) or f.attr in _NOT_TENSOR:
                return False
            root = f.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (root.id == "torch" or root.id in self.functional) \
                    and root.id not in self.names:
                return True   # torch.where(...), torch.nn.functional.pad(...), F.pad(...)
            return self.has(f.value)
        return False

    def mask(self, test: ast.AST, lines: list[str]) -> str | None:
        """`test` written as a bool tensor: a comparison with a tensor or a call that gives a
        bool tensor; `and`/`or`/`not` of those as `&`/`|`/`~` (None: something else)."""
        if isinstance(test, ast.BoolOp):
            parts = [self.mask(v, lines) for v in test.values]
            if None in parts:
                return None
            return (" & " if isinstance(test.op, ast.And) else " | ").join(f"({p})" for p in parts)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            if self._number(test.operand):
                return f"{segment(lines, test.operand)} == 0"
            inner = self.mask(test.operand, lines)
            return None if inner is None else f"~({inner})"
        if isinstance(test, ast.Compare):
            if len(test.ops) != 1 or isinstance(test.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                return None
            return segment(lines, test) if self.has(test.left) or self.has(test.comparators[0]) else None
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in BOOL_FUNCS:
            return segment(lines, test) if self.has(test) else None
        if self._number(test):
            return f"{segment(lines, test)} != 0"
        return None

    def _number(self, e: ast.AST) -> bool:
        """A one-element tensor tested for its truth (`if not target.sum():`): a reduction of a
        tensor, true where it is not 0 (NaN included, as Python's `bool` of it)."""
        return isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and not e.args and \
            not e.keywords and e.func.attr in _REDUCTIONS and self.has(e)


# torch layers whose call returns a tuple (outputs and state, or attention weights), not one tensor
# (a pooling layer built with `return_indices=True` too: `_torch_layers` reads that keyword)
_TUPLE_LAYERS = frozenset({"RNN", "LSTM", "GRU", "LSTMCell", "MultiheadAttention"})


def _torch_layers(tree: ast.Module, fn: ast.AST) -> set[str]:
    """The attributes `self.<name>` that the class of method `fn` sets, and only sets, to a torch
    layer returning one tensor (`self.head = nn.Linear(d, n)`, `torch.nn.LayerNorm(d)`)."""
    cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                and any(s is fn for s in c.body)), None)
    if cls is None:
        return set()
    found: dict[str, bool] = {}
    for n in ast.walk(cls):
        if not isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                v = n.value if len(targets) == 1 and not isinstance(n, ast.AugAssign) else None
                name = dotted(v.func) if isinstance(v, ast.Call) else None
                layer = name is not None and name.startswith(("nn.", "torch.nn.")) and \
                    not name.startswith(("nn.functional.", "torch.nn.functional.")) and \
                    is_torch_module_class("torch.nn." + name.rpartition(".")[2]) and \
                    name.rpartition(".")[2] not in _TUPLE_LAYERS and \
                    not any(k.arg == "return_indices" for k in v.keywords)
                found[t.attr] = found.get(t.attr, True) and layer
    return {k for k, v in found.items() if v}


def _guarded_return(st: ast.stmt) -> bool:
    """`if <test>: return <value>` without an `else`."""
    return isinstance(st, ast.If) and not st.orelse and len(st.body) == 1 and \
        isinstance(st.body[0], ast.Return) and st.body[0].value is not None


def _set_if(st: ast.stmt) -> bool:
    """`if <test>: name = value` without an `else`: a conditional assignment to a plain name,
    which a chain of early returns writes as `name = torch.where(<test>, value, name)`."""
    return isinstance(st, ast.If) and not st.orelse and len(st.body) == 1 and \
        isinstance(st.body[0], ast.Assign) and len(st.body[0].targets) == 1 and \
        isinstance(st.body[0].targets[0], ast.Name)


def _local_assignment(st: ast.stmt) -> bool:
    """An assignment to plain names only (`res = a + b`, `k += 1`): it touches no state."""
    if isinstance(st, ast.Assign):
        return all(isinstance(t, ast.Name) for t in st.targets)
    return isinstance(st, (ast.AugAssign, ast.AnnAssign)) and isinstance(st.target, ast.Name) and \
        getattr(st, "value", None) is not None


def _assigned(st: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _side_effect_free(node: ast.AST) -> bool:
    """No in-place method (`x.add_(1)`), `:=`, `yield` or `await`: evaluating it where it was
    not evaluated before changes nothing but the time it takes."""
    for n in ast.walk(node):
        if isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr.endswith("_") and not n.func.attr.startswith("_"):
            return False
    return True


def _nested_where(indent: str, cases: list[tuple[str, str]], last: str) -> list[str]:
    """`return torch.where(c1, a1, torch.where(c2, a2, ... last))` on one line, or one case
    a line with each inner `torch.where` under its argument list."""
    text = last
    for c, a in reversed(cases):
        text = f"torch.where({c}, {a}, {text})"
    one = f"{indent}return {text}"
    if len(one) <= 100 and "\n" not in one:
        return [one]
    col = len(indent) + len("return ")
    out = []
    for k, (c, a) in enumerate(cases):
        lead = f"{indent}return " if k == 0 else " " * col
        out.append(f"{lead}torch.where({c}, {a},")
        col += len("torch.where(")
    return "\n".join(out + [" " * col + last + ")" * len(cases)]).split("\n")


def _chain_at(body: list[ast.stmt], i: int) -> tuple[int, int] | None:
    """(first, last) indexes in `body` of the chain of guarded returns through `body[i]`:
    guarded returns and local assignments up to the `return` that ends it; `first` is its
    first guarded return."""
    last = next((k for k in range(i, len(body)) if not (_guarded_return(body[k]) or _set_if(body[k]) or
                                                         _local_assignment(body[k]))), None)
    if last is None or not (isinstance(body[last], ast.Return) and body[last].value is not None):
        return None
    first = i
    for k in range(i - 1, -1, -1):
        if _guarded_return(body[k]):
            first = k
        elif not (_local_assignment(body[k]) or _set_if(body[k])):
            break
    return first, last


# what makes a 1-D tensor's `nonzero` the flat list of its indexes
_FLAT = frozenset({"view", "reshape", "flatten", "ravel", "squeeze"})


def _nonzero_of(node: ast.AST, lines: list[str]) -> str | None:
    """The text of `t` where `node` is the flat indexes of `t`'s nonzero entries:
    `torch.nonzero(t)` or `t.nonzero()` flattened (`.view(-1)`, `.reshape(-1)`, `.flatten()`,
    `.squeeze(1)` / `.squeeze(-1)`), or `torch.where(t)[0]` / `t.nonzero(as_tuple=True)[0]`."""
    def nonzero(call: ast.AST, as_tuple: bool) -> str | None:
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return None
        kw = {k.arg: k.value for k in call.keywords}
        flag = kw.get("as_tuple")
        # `nonzero` gives the tuple only when asked (`torch.nonzero(t)[0]` is a row of indexes)
        if set(kw) - {"as_tuple"} or (flag is None and as_tuple and call.func.attr == "nonzero") or (
                flag is not None and not (isinstance(flag, ast.Constant) and flag.value is as_tuple)):
            return None
        of_torch = isinstance(call.func.value, ast.Name) and call.func.value.id == "torch"
        if of_torch and len(call.args) == 1 and (call.func.attr == "nonzero" or (
                call.func.attr == "where" and as_tuple and not kw)):
            arg = call.args[0]
        elif not of_torch and call.func.attr == "nonzero" and not call.args:
            arg = call.func.value
        else:
            return None
        return segment(lines, arg) if pure_indexed(arg) else None

    if isinstance(node, ast.Subscript) and int_constant(node.slice) == 0:
        return nonzero(node.value, True)    # the one index tuple of a 1-D tensor
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FLAT
            and not node.keywords):
        return None
    dims = [int_constant(a) for a in node.args]
    if {"flatten": [], "ravel": [], "view": [-1], "reshape": [-1]}.get(node.func.attr, dims) != dims or \
            node.func.attr == "squeeze" and dims not in ([1], [-1]):
        return None
    return nonzero(node.func.value, False)


def _first_index_form(tree: ast.Module, st: ast.stmt, lines: list[str]) -> str | None:
    """`st`'s text with its value, the flat indexes of `t`'s nonzero entries (`_nonzero_of`),
    as the first of them in a one-element tensor, `(t != 0).int().argmax().reshape(1)`
    (`argmax` gives the first of equal maxima), where the name `st` binds is read only as
    `name[0]` in its function (and bound only there), so every read reads what it read; else
    None. For a chain's assignment between its returns: where `t` has no nonzero entry head
    raises IndexError at `name[0]` and this gives 0, which only an early return before it
    (torchmetrics' `if not target.sum():`) leaves unread. Not offered alone: the proof
    compares the name after the edit with head's, and one index is not the list of them."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
        return None
    t = _nonzero_of(st.value, lines)
    fn = enclosing_function(tree, st)
    if t is None or fn is None:
        return None
    name = st.targets[0].id
    parents = parents_of(fn)
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and n is not st.targets[0]]
    if not uses or any(not isinstance(n.ctx, ast.Load) for n in uses) or not all(
            isinstance(p := parents.get(id(n)), ast.Subscript) and p.value is n and int_constant(p.slice) == 0
            for n in uses):
        return None
    return "\n".join(with_replaced(lines, st, st.value, f"({t} != 0).int().argmax().reshape(1)"))


def _chain(code, finding, body: list[ast.stmt], first: int, last: int, tree, lines, rank: int
           ) -> Candidate | None:
    """The candidate for the chain `body[first..last]` (see `chain_fixes`), or None."""
    run = body[first:last + 1]
    fn = enclosing_function(tree, run[0])
    if fn is None or not all(owns_lines(lines, s) for s in run) or not all(_side_effect_free(s) for s in run):
        return None
    guards = [s for s in run if _guarded_return(s)]
    if len(guards) == 1 and len(run) == 2:
        return None   # `if c: return a` then `return b`: the plain `torch.where` recipe's
    tensors = _Tensors(tree, fn, (finding.line, finding.col))
    final = run[-1].value
    if isinstance(final, ast.Tuple) or not tensors.has(final):
        return None
    indent = indentation(lines, run[0])
    taken = identifiers(tree)
    new: list[str] = []
    cases: list[tuple[str, str]] = []
    special: list[str] = []
    safe: dict[str, str] = {}   # a divisor an early return guards against zero -> its stand-in
    held: set[str] = set()      # those guarded by a test that holds there, not by one against zero
    prev_end = run[0].lineno - 1
    for k, s in enumerate(run[:-1]):
        new += lines[prev_end:s.lineno - 1]   # comments and blank lines between statements
        prev_end = s.end_lineno or s.lineno
        if _set_if(s):
            # `if c: name = v` -> `name = torch.where(c, v, name)`: a name bound before, a tensor test
            name, value = s.body[0].targets[0].id, s.body[0].value
            mask = tensors.mask(s.test, lines)
            if mask is None or not defined_before(tree, s, name) or "\n" in mask:
                return None
            special += guards_of(f"{segment(lines, s.test)} {mask}")
            new += statement_lines(indent, f"{name} = torch.where({mask}, {_safe_arg(lines, value, safe)}, {name})")
            continue
        if not _guarded_return(s):
            # the code after an early return now always runs, where head returned too: a
            # first nonzero index read there gets a form that does not break the graph
            # (torchmetrics' reciprocal rank, `position = torch.nonzero(target).view(-1)`)
            static = None if _safe_reads(s, safe) else _first_index_form(tree, s, lines)
            if static is not None:
                # where nothing is nonzero head raises IndexError and this gives 0: compared on
                # an empty mask, so that an early return must be what keeps that input from it
                special.append("empty")
            new += static.split("\n") if static is not None else _with_safe(lines, s, safe)
            continue
        value = s.body[0].value
        if isinstance(value, ast.Tuple) or not (tensors.has(value) or _parameter_as_is(value, fn)):
            return None
        mask = tensors.mask(s.test, lines)
        if mask is None:
            return None
        # `not t.sum()` is `t.sum() == 0`; zeros take a test with nothing special in it (`hi - lo
        # < 1e-6` of a min and a max), where no shape case may reach the return
        special += _exit_guards(f"{segment(lines, s.test)} {mask}")
        zero, safe_line = _zero_tested(s.test), ""
        if zero is not None and zero not in safe and tensors.has(ast.Name(id=zero, ctx=ast.Load())) and \
                not any(zero in _assigned(t) for t in run[k + 1:-1]) and \
                any(_divides_by(t, zero) for t in run[k + 1:]):
            # `torch.where` computes the code after the return where it returned too: dividing by
            # the zero it returned on raises for integers (torchvision's equalize, `step == 0`)
            # and puts NaN into the gradient for floats; 1 stands in there, where nothing reads it
            safe[zero] = fresh_name(taken, f"safe_{zero}")
            taken.add(safe[zero])
            safe_line = f"{safe[zero]} = torch.where({mask}, torch.ones_like({zero}), {zero})"
        # and what the statements after it divide by (or take the log or root of) that reads the
        # test's names: computed where the test holds too, it may be the zero the return kept
        # away (`if hi - lo < 1e-6: return zeros` then `(x - lo) / (hi - lo)`: a constant input
        # gave NaN gradients); 1 stands in for the whole operand there, where nothing selects it
        rebound = set().union(*(_assigned(t) for t in run[k + 1:-1]))
        for t in run[k + 1:]:
            for op in _singular_operands(t, _test_names(s.test), lines):
                text = segment(lines, op)
                if text in safe or _reads(op) & rebound or not tensors.has(op):
                    continue
                safe[text] = fresh_name(taken, f"safe_{text}" if text.isidentifier() else "safe_operand")
                taken.add(safe[text])
                held.add(text)
                safe_line += ("\n" if safe_line else "") + \
                    f"{safe[text]} = torch.where({mask}, torch.ones_like({text}), {text})"
        # what the statements after it rebind: a test or value that reads such a name is
        # computed here, into a fresh local, so that it keeps the value it had here
        later = set().union(*(_assigned(t) for t in run[k + 1:-1] if not _guarded_return(t)))
        picked = []
        for what, node, text in (("cond", s.test, mask), ("value", value, _arg(lines, value))):
            if _reads(node) & later:
                name = fresh_name(taken, f"{what}{len(cases) + 1}")
                new += statement_lines(indent, f"{name} = " + (f"({text})" if "\n" in text else text))
                text = name
            picked.append(text)
        cases.append((picked[0], picked[1]))
        for one in safe_line.split("\n") if safe_line else ():
            new += statement_lines(indent, one)
    new += lines[prev_end:run[-1].lineno - 1]
    while new and not new[0].strip():   # the blank line after a first `if` that is gone
        new.pop(0)
    new += _nested_where(indent, cases, _safe_arg(lines, final, safe))
    return Candidate(code=code, path=finding.path, start_line=run[0].lineno,
                     end_line=run[-1].end_lineno or run[-1].lineno, lines=tuple(new),
                     title="select the early returns' values with nested `torch.where`"
                     + "".join(_stands_in([z], zero=z not in held) for z in safe),
                     safe=False, guards=tuple(dict.fromkeys(special)), rank=rank)


def _parameter_as_is(value: ast.AST, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`value` is a parameter of `fn` that it never rebinds, returned as it is early by a chain
    whose last return is a tensor (torchdiffeq's `_linear_interp`: `if t == t0: return y0`, then
    `return y0 + slope * (y1 - y0)`): the same role as that tensor to every caller. Were it a
    Python number, `torch.where` would return a tensor instead, which the proof sees: it compares
    what the function returns with head's, types included."""
    return (isinstance(value, ast.Name) and value.id in parameter_names(fn)
            and not any(isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)
                        for n in ast.walk(fn)))


def _zero_tested(test: ast.AST) -> str | None:
    """The name an early return's test compares with zero (`step == 0`, `0 == n`, `not n`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return test.operand.id
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        a, b = test.left, test.comparators[0]
        for x, y in ((a, b), (b, a)):
            if isinstance(x, ast.Name) and isinstance(y, ast.Constant) and not isinstance(y.value, bool) \
                    and y.value == 0:
                return x.id
    return None


# torch's functions that divide their first argument by their second
_DIVIDES = frozenset({"div", "true_divide", "floor_divide", "remainder", "fmod"})


def _divides_by(node: ast.AST, name: str) -> bool:
    """Whether `node` divides by `name` itself (`x / n`, `x // n`, `x % n`, `torch.div(x, n)`)."""
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)) and \
                isinstance(n.right, ast.Name) and n.right.id == name:
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _DIVIDES and \
                len(n.args) >= 2 and isinstance(n.args[1], ast.Name) and n.args[1].id == name:
            return True
    return False


def _bounded_names(test: ast.AST) -> list[str]:
    """The names a part of `test` holds true for at zero: compared with zero (`_zero_tested`)
    or found below a bound that is not negative (`d1 < 1e-5`, `1e-5 > d1`, `n <= 0`), alone or
    as a part of an `or` or an `and` (`d0 < 1e-5 or d1 < 1e-5`), in order, once each. Where the
    test holds such a name may be 0 (under `and`, surely below its bound)."""
    if isinstance(test, ast.BoolOp):
        return list(dict.fromkeys(n for v in test.values for n in _bounded_names(v)))
    zero = _zero_tested(test)
    if zero is not None:
        return [zero]
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        a, op, b = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, (ast.Gt, ast.GtE)):
            a, b, op = b, a, ast.Lt()
        if isinstance(op, (ast.Lt, ast.LtE)) and isinstance(a, ast.Name) and isinstance(b, ast.Constant) \
                and isinstance(b.value, (int, float)) and not isinstance(b.value, bool) and b.value >= 0:
            return [a.id]
    return []


def _stands_in(names: list[str], zero: bool = True, fails: bool = False) -> str:
    """What a title adds for the divisors given a stand-in (`_chain`, `_branch_fixes`): where
    they are 0 (`zero`, a test of each against zero), else where the test holds (where it
    fails: `fails`, the `if` side's)."""
    which = " and ".join(f"`{n}`" for n in names)
    where = ("the test fails" if fails else ("it is 0" if len(names) == 1 else "they are 0") if zero
             else "the test holds")
    return f"; 1 stands in for {which} where {where}, so that the division computed there and not selected is defined"


# torch's functions singular at 0 in value or gradient (a log's -inf, a root's infinite slope)
_SINGULAR = frozenset({"log", "log2", "log10", "sqrt", "rsqrt", "reciprocal"})


def _singular_operands(node: ast.AST, names: list[str], lines: list[str]) -> list[ast.AST]:
    """The operands in `node` that it divides by (`x / d`, `torch.div(x, d)`) or takes the log,
    root or reciprocal of (`torch.log(d)`, `d.sqrt()`), where the operand reads one of `names`
    (the test's: `n`, `valid.sum()`) and no part of it is itself such an operand: undefined, or
    of an undefined gradient, where the operand is 0, which the test may be what kept away."""
    found: list[ast.AST] = []
    for n in ast.walk(node):
        ops: list[ast.AST] = []
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            ops.append(n.right)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            on_torch = dotted(n.func.value) == "torch"
            if n.func.attr in _DIVIDES and len(n.args) >= (2 if on_torch else 1):
                ops.append(n.args[1 if on_torch else 0])
            elif n.func.attr in _SINGULAR and (n.args or not on_torch):
                ops.append(n.args[0] if on_torch else n.func.value)
        for op in ops:
            reads = {x.id for x in ast.walk(op) if isinstance(x, ast.Name)}
            if not isinstance(op, ast.Constant) and reads & set(names) \
                    and "\n" not in segment(lines, op):
                found.append(op)
    # the outermost only: `1 / (n * d)` stands `n * d` in, not `n` within it too
    return [op for op in found if not any(o is not op and any(x is op for x in ast.walk(o)) for o in found)]


def _replaced_arg(lines: list[str], node: ast.AST,
                  spans: list[tuple[tuple[int, int], tuple[int, int], str]]) -> str:
    """`_arg` of `node` with each of `spans` (start, end, text) replaced by its text."""
    if not spans:
        return _arg(lines, node)
    start, end = node_span(node)
    # the node's own span marked, so that its text is found again once the parts are replaced
    text = "\n".join(replace_spans(lines, start[0], end[0], [(start, start, "\0"), (end, end, "\1")] + spans))
    text = text[text.index("\0") + 1:text.index("\1")]
    return f"({text})" if isinstance(node, (ast.Tuple, ast.NamedExpr, ast.Starred, ast.Yield)) else text


def _test_names(test: ast.AST) -> list[str]:
    """The local names a test reads, in order, once each (not `self`, `torch` or a module)."""
    return list(dict.fromkeys(n.id for n in ast.walk(test) if isinstance(n, ast.Name)
                              and isinstance(n.ctx, ast.Load) and n.id not in ("self", "torch", "math", "np")))


def _safe_reads(node: ast.AST, safe: dict[str, str],
                lines: list[str] | None = None) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """The spans of `node`'s reads of a name of `safe`, each with its stand-in; with `lines`,
    also of the expressions whose text is a key of `safe` (`hi - lo`), outermost only."""
    found: list[tuple[ast.AST, str]] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in safe:
            found.append((n, safe[n.id]))
        elif lines is not None and isinstance(n, ast.expr) and not isinstance(n, ast.Name) and \
                segment(lines, n) in safe:
            found.append((n, safe[segment(lines, n)]))
    inner = {id(x) for n, _ in found for x in ast.walk(n) if x is not n}
    return [_ungrouped(lines, *node_span(n), text) if lines is not None and not isinstance(n, ast.Name)
            else (*node_span(n), text) for n, text in found if id(n) not in inner]


def _ungrouped(lines: list[str], start: tuple[int, int], end: tuple[int, int],
               name: str) -> tuple[tuple[int, int], tuple[int, int], str]:
    """The span `start..end` that `name` replaces, widened over the parentheses that only group
    it (`x / (hi - lo)` -> `x / safe_operand`, not `x / (safe_operand)`); a call's stay."""
    (l0, c0), (l1, c1) = start, end
    before, after = lines[l0 - 1][:c0].rstrip(), lines[l1 - 1][c1:].lstrip()
    if before.endswith("(") and after.startswith(")") and \
            not re.search(r"[\w)\]]\s*\($", before):
        c0 = len(before) - 1
        c1 = len(lines[l1 - 1]) - len(after) + 1
    return (l0, c0), (l1, c1), name


def _with_safe(lines: list[str], st: ast.stmt, safe: dict[str, str]) -> list[str]:
    """`st`'s lines with each read of a name of `safe` replaced by its stand-in."""
    end = st.end_lineno or st.lineno
    return replace_spans(lines, st.lineno, end, _safe_reads(st, safe, lines))


def _safe_arg(lines: list[str], node: ast.AST, safe: dict[str, str]) -> str:
    """`_arg` of `node` with each read of a name of `safe` replaced by its stand-in."""
    if isinstance(node, ast.Name) and node.id in safe:
        return safe[node.id]
    return _replaced_arg(lines, node, _safe_reads(node, safe, lines))


def chain_fixes(code, finding, st: ast.If, body: list[ast.stmt], tree, lines) -> list[Candidate]:
    """`if c1: return a1` ... `if c2: return a2` ... `return r` (guarded returns of tensors
    and local assignments, in one block) -> the assignments, then
    `return torch.where(c1, a1, torch.where(c2, a2, r))`; and from `st` on when `st` is not
    the chain's first guard (an edit that the diff's hunk may hold when the whole chain's
    does not)."""
    i = next((k for k, s in enumerate(body) if s is st), None)
    if i is None or not _guarded_return(st):
        return []
    span = _chain_at(body, i)
    if span is None:
        return []
    first, last = span
    out = [_chain(code, finding, body, first, last, tree, lines, rank=1)]
    if first < i:
        out.append(_chain(code, finding, body, i, last, tree, lines, rank=2))
    return [c for c in out if c is not None]


# --------------------------------------------------------------------------- eager-only exits

def _exit_guards(test_text: str) -> tuple[str, ...]:
    """The inputs that take an early exit: what the test reads (`guards_of`), and zeros for a
    test with nothing special in it or with `.all()` (zeros make a comparison with a nonzero
    constant hold everywhere: `(t != ignore).all()`)."""
    kinds = guards_of(test_text)
    if not kinds or re.search(r"\.all\(\)|\btorch\.all\(", test_text):
        kinds += ("zero",)
    return tuple(dict.fromkeys(kinds))


# a draw of random numbers: an exit on one (`if torch.rand(1) >= self.p: return x`) is what
# the code means to do, never work skipped; and with the proof's fixed seed the draw may not
# take the exit at all, so no run would show the difference
_RANDOM = re.compile(r"\b(rand|randn|randint|randperm|rand_like|randn_like|randint_like|bernoulli|"
                     r"multinomial|normal|uniform_|random|choice)\b\s*\(|\brandom\.")


# methods that return what their tensor holds, as it is or as a view (`.detach()` of a cached
# value: no new values computed)
_AS_HELD = frozenset({"detach", "clone", "contiguous", "view", "view_as", "reshape", "flatten",
                      "unsqueeze", "squeeze", "expand", "expand_as", "to"})


def _index(node: ast.AST) -> bool:
    """An index of names, constants and arithmetic on them (`offset:(offset + seq_len)`)."""
    return all(isinstance(n, (ast.Name, ast.Constant, ast.Attribute, ast.Slice, ast.Tuple, ast.BinOp,
                              ast.UnaryOp, ast.operator, ast.unaryop, ast.expr_context))
               for n in ast.walk(node))


def _held(node: ast.AST) -> bool:
    """A value already held, read: `self.cached_freqs[offset:(offset + seq_len)].detach()`,
    an attribute of `self` indexed by names and arithmetic, through methods that compute no
    new values."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _AS_HELD \
            and all(_index(a) for a in node.args) and all(_index(k.value) for k in node.keywords):
        node = node.func.value
    while isinstance(node, ast.Subscript) and _index(node.slice):
        node = node.value
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _nothing_computed(node: ast.AST | None) -> bool:
    """A returned value that computes nothing: names, constants, a tuple of them (`return
    target, None`), or a value the module holds (`return self.cached_freqs[:n].detach()`: a
    cache read, whose miss computes the same values further on). An exit that returns a
    value it computes is a special case, not a skip."""
    if isinstance(node, ast.Tuple):
        return all(_nothing_computed(e) for e in node.elts)
    return node is None or isinstance(node, (ast.Name, ast.Constant)) or _held(node)


def _innermost_loop(tree: ast.Module, st: ast.stmt) -> ast.stmt | None:
    """The innermost `for`/`while` whose body holds `st` (within its function)."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and any(
                s is st for b in (node.body, node.orelse) for top in b for s in ast.walk(top)):
            if found is None or node.lineno > found.lineno:
                found = node
    return found


def _told(st: ast.stmt) -> bool:
    """A statement that only tells the user something: a note (`_note`), or an `if` on a test
    with no effect whose arms are such statements (`if self.verbose: print(...)`)."""
    if isinstance(st, ast.If):
        return _side_effect_free(st.test) and all(_told(s) for s in st.body + st.orelse)
    return _note(st)


# calls that make a longer tensor or list out of a name and more: an accumulation
_GROWING = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "append", "extend"})


def _grows_result(tree: ast.Module, loop: ast.stmt) -> bool:
    """Whether `loop` grows a name each iteration that is read after it (`out =
    torch.cat((out, sample), dim=-1)`, `tokens.append(t)`): a `break` there ends a generation,
    and compiled code running on past it would return more (a sampler's end-of-sequence
    test), so the exit is never work that changes nothing. So does a counter (`n_iter += 1`):
    a solver that reports its iterations would report every one compiled code ran."""
    fn = enclosing_function(tree, loop)
    grown = set()
    for n in ast.walk(loop):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and \
                isinstance(n.value, ast.Constant):
            grown.add(n.target.id)
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and \
                _call_name(n.value).rsplit(".", 1)[-1] in _GROWING:
            stored = {t.id for t in n.targets if isinstance(t, ast.Name)}
            grown |= stored & _reads(n.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in ("append", "extend") and isinstance(n.func.value, ast.Name):
            grown.add(n.func.value.id)
    return fn is not None and any(_read_after(fn, loop, name) for name in grown)


def _eager_exit_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if <test>: break` (or `continue`, or `return` of names and constants) without an
    `else` -> `if not torch.compiler.is_compiling() and <test>:`: compiled code never exits
    early. The exit may follow statements that only tell the user (`if self.verbose:
    print("converged ...")`, torch-kmeans' convergence test), which eager still runs with it.
    Not for a `break`/`continue` of a `while` loop (its test may be the only way out:
    compiled code would never leave it), a `break` out of a loop that grows a result each
    iteration (`_grows_result`: a sampler's end-of-sequence test), nor a test that binds a
    name (`:=`: unbound in compiled code)."""
    if st.orelse or not st.body or not isinstance(st.body[-1], (ast.Break, ast.Continue, ast.Return)) or \
            not all(_told(s) for s in st.body[:-1]):
        return []
    leave = st.body[-1]
    if isinstance(leave, ast.Return) and not _nothing_computed(leave.value):
        return []
    if any(isinstance(n, ast.NamedExpr) for n in ast.walk(st.test)):
        return []
    loop = _innermost_loop(tree, st) if isinstance(leave, (ast.Break, ast.Continue)) else None
    if isinstance(loop, ast.While):
        return []
    if isinstance(leave, ast.Break) and loop is not None and _grows_result(tree, loop):
        return []
    text = segment(lines, st.test)
    if re.search(r"\bis_(torchdynamo_|dynamo_)?compiling\b", text) or _RANDOM.search(text):
        return []
    if isinstance(st.test, (ast.BoolOp, ast.IfExp, ast.NamedExpr, ast.Lambda)) and not (
            isinstance(st.test, ast.BoolOp) and isinstance(st.test.op, ast.And)):
        text = f"({text})"
    exit_word = type(leave).__name__.lower()
    value = leave.value if isinstance(leave, ast.Return) else None
    # a cache's test compares its key (a length, an offset), which zeros in a tensor argument
    # do not decide: injected, they would only break the link between the cache and its key
    # that the caller keeps (rotary positions `t` whose table is cached by their count); only
    # the special values the test itself reads are injected there
    cached = value is not None and any(_held(v) for v in (value.elts if isinstance(value, ast.Tuple) else [value]))
    return [header_edit(code, finding, st, lines, f"not torch.compiler.is_compiling() and {text}",
                         f"take the early `{exit_word}` in eager only: compiled code runs on",
                         guards_of(text) if cached else _exit_guards(text), rank=3)]


def _frozen_loop_fixes(code, finding, st: ast.If, tree, lines, test: str) -> list[Candidate]:
    """`if <test>: break` at the top level of a `for` loop over `range(...)` whose other
    statements assign names only (otloss's Sinkhorn loop, `f = ...`, `g = ...`, then `if (f -
    f_prev).abs().max().item() < tol: break`) -> the loop run to its end: the test, where the
    `if` was, kept in a bool tensor (`done = done | (<test>)`, `done` False before the loop),
    and each assignment of a name read outside the loop selected on it (`f =
    torch.where(done, f, <value>)`): from the iteration whose test held on, those names keep
    the values head left the loop with, in eager and compiled code alike. Exact by
    construction where every value is a tensor of one shape throughout; the iterations past
    the exit still run (their cost, and a NaN their values might make in a gradient, which
    `torch.where` passes on): the proof compares outputs and gradients, and accepts the edit
    only where a shape case or a guard input takes the `break` (pt2bot/smoke/verify.py
    `_frozen_exit`); where none does, head and the edit run the same iterations.
    Not for a loop whose other statements do anything but bind names (an in-place update, a
    call for its effect, an `if`, a nested loop: later iterations would repeat them), bind a
    name by `+=` (in place on a tensor, and a counter counts on), draw random numbers or grow a
    result (`_grows_result`); nor where the code outside the loop reads its loop variable (it
    would end at the last iteration, not the exit's) or a name the loop binds that is not bound
    before it (`torch.where` reads the name's value in the first iteration)."""
    if st.orelse or len(st.body) != 1 or not isinstance(st.body[0], ast.Break):
        return []
    loop = _innermost_loop(tree, st)
    fn = enclosing_function(tree, st)
    if not isinstance(loop, ast.For) or loop.orelse or fn is None or enclosing_function(tree, loop) is not fn \
            or not any(s is st for s in loop.body):
        return []
    if not (isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "range"
            and not function_binds(tree, loop, "range")):
        return []
    text = segment(lines, st.test)
    if any(isinstance(n, ast.NamedExpr) for n in ast.walk(st.test)) or _RANDOM.search(text) or \
            re.search(r"\bis_(torchdynamo_|dynamo_)?compiling\b", text) or _grows_result(tree, loop):
        return []
    body = [s for s in loop.body if s is not st]
    for s in body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and (
                isinstance(s.targets[0], ast.Name) or (isinstance(s.targets[0], ast.Tuple) and s.targets[0].elts
                                                       and all(isinstance(e, ast.Name) for e in s.targets[0].elts)))):
            return []
        if not _side_effect_free(s.value) or _RANDOM.search(segment(lines, s.value)) or any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                and n.func.value.id == "self" for n in ast.walk(s.value)):
            return []   # (a submodule's call may keep state of its own: a batch norm's statistics)

    def outside(name: str) -> bool:
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                   and not loop.lineno <= n.lineno <= (loop.end_lineno or loop.lineno) for n in ast.walk(fn))

    if any(outside(n) for n in _assigned(loop.target)):
        return []
    kept = [n for s in body if isinstance(s, ast.Assign) for n in _assigned(s.targets[0]) if outside(n)]
    kept = list(dict.fromkeys(kept))
    if not kept or not all(defined_before(tree, loop, n) for n in kept):
        return []
    taken = identifiers(tree)
    done = fresh_name(taken, "done")
    edits = []
    for s in body:
        if not isinstance(s, ast.Assign):
            continue
        target = s.targets[0]
        if isinstance(target, ast.Name):
            if target.id in kept:
                edits.append((*node_span(s.value),
                              f"torch.where({done}, {target.id}, {segment(lines, s.value)})"))
            continue
        names = [e.id for e in target.elts]
        if not set(names) & set(kept):
            continue
        steps = {n: fresh_name(taken, f"{n}_step") for n in names if n in kept}
        indent = indentation(lines, s)
        edits.append((*node_span(target), ", ".join(steps.get(n, n) for n in names)))
        end = (s.end_lineno or s.lineno, s.end_col_offset or 0)
        edits.append((end, end, "".join(f"\n{indent}{n} = torch.where({done}, {n}, {step})"
                                        for n, step in steps.items())))
    edits.append((*node_span(st), f"{done} = {done} | ({test})"))
    end = loop.end_lineno or loop.lineno
    try:
        new = replace_spans(lines, loop.lineno, end, edits)
    except ValueError:
        return []
    indent = indentation(lines, loop)
    first = f"{indent}{done} = torch.zeros((), dtype=torch.bool, device={kept[0]}.device)"
    named = ", ".join(f"`{n}`" for n in kept)
    return [Candidate(code=code, path=finding.path, start_line=loop.lineno, end_line=end, lines=(first, *new),
                      title=f"run the loop to its end and keep what its `break` left: {named} held by "
                            f"`torch.where` from the iteration whose test holds (every iteration now runs)",
                      safe=False, guards=_exit_guards(test), rank=2)]


EAGER_BLOCK = "run the block in eager only: compiled code skips it"
COMPILED_BLOCK = "run the block always in compiled code: eager keeps the test"
# statements that leave a block other than by its end: a block holding one is not work that
# compiled code can skip (`_eager_exit_fixes` takes the exits that are the whole body)
_LEAVES = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Await)


def _stored_names(body: list[ast.stmt]) -> set[str]:
    return {n.id for st in body for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _written_roots(body: list[ast.stmt], in_place: bool = False) -> set[str]:
    """The names at the root of what `body` writes through (`p[mask] += n`, `p.attr = v`,
    `self.count += 1`, `self.cache[k] = v`), and, with `in_place`, of what it hands to an
    in-place method (`p.add_(1)`, `p.copy_(q)`)."""
    out = set()
    for n in (n for st in body for n in ast.walk(st)):
        t = None
        if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
            t = n.value
        elif in_place and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr.endswith("_") and not n.func.attr.startswith("__"):
            t = n.func.value
        while isinstance(t, (ast.Subscript, ast.Attribute)):
            t = t.value
        if isinstance(t, ast.Name):
            out.add(t.id)
    return out


def _changed_names(body: list[ast.stmt]) -> set[str]:
    """The local names `body` binds or changes in place: assigned, written through or handed
    to an in-place method; not `self`, whose state is the module's."""
    return _stored_names(body) | (_written_roots(body, in_place=True) - {"self"})


def _read_after(fn: ast.AST, st: ast.stmt, name: str) -> bool:
    end = st.end_lineno or st.lineno
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno > end
               for n in ast.walk(fn))


def _block_test(st: ast.If, lines: list[str]) -> str | None:
    """The test's text where `st` is `if <test>: <block>` without an `else`, whose block is
    work on lines of its own (a block on the `if`'s own line: no line event tells whether it
    ran) that cannot leave its function or loop (no `return`, `raise`, `break`, `continue`,
    `yield`), under a test that binds no name (`:=`), asks no "am I compiling?" already and
    draws no random number (a random branch is what the code means to do, not work whose
    running is optional). None for any other statement. The two blocks whose running
    compiled code decides alone (`_eager_block_fixes`, `_compiled_block_fixes`) start here."""
    if st.orelse or is_elif(lines, st) or st.body[0].lineno <= (st.test.end_lineno or st.lineno):
        return None
    if len(st.body) == 1 and isinstance(st.body[0], (ast.Break, ast.Continue, ast.Return)):
        return None   # an early exit: `_eager_exit_fixes`
    if any(isinstance(n, _LEAVES) for b in st.body for n in ast.walk(b)):
        return None
    if any(isinstance(n, ast.NamedExpr) for n in ast.walk(st.test)):
        return None
    text = segment(lines, st.test)
    if re.search(r"\bis_(torchdynamo_|dynamo_)?compiling\b", text) or _RANDOM.search(text):
        return None
    return text


def _eager_block_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if <test>: <work>` without an `else` -> `if not torch.compiler.is_compiling() and
    <test>:`: the block runs in eager only, as an early exit does in `_eager_exit_fixes`
    (torchrl's truncation of a geometric series below 1e-7, a cache of masks keyed by a data
    pointer). Right only where skipping the work leaves the result as it was, which is for the
    proof to show: it runs the edit compiled, on the shape cases and on inputs that make the
    test hold, and compares with head's eager outputs. Offered only for a block `_block_test`
    takes that changes no local the function reads after it (`_changed_names`): work whose
    effects are the module's state, a cache, a record kept aside. A block that changes a value
    read later computes the result, and equal outputs would only say that these inputs hide
    the change (pytorch-metric-learning's cross-batch memory shifts the wrapped indices of
    `p_c` in place under `if e <= s:`; compiled code skipping it kept self-pairs its miner
    never produced on the benchmark's inputs, and the proof verified it). torchrl's truncation
    of a series below 1e-7 (`g = g[..., :i]`) is such a block too."""
    text = _block_test(st, lines)
    if text is None:
        return []
    fn = enclosing_function(tree, st)
    if fn is None or any(_read_after(fn, st, name) for name in _changed_names(st.body)):
        return []
    # a test for NaN or inf guards against them: that block is the point, never work to skip;
    # so is a transform that is a no-op on ordinary values, or a write through the tested mask
    # (recipe 1 drops the branch there and keeps the work)
    if {"nan", "inf"} & set(guards_of(text)) or (len(st.body) == 1 and _noop_guarded(st, lines)) \
            or _masked_stores_guarded(st, lines):
        return []
    if isinstance(st.test, (ast.BoolOp, ast.IfExp, ast.Lambda)) and not (
            isinstance(st.test, ast.BoolOp) and isinstance(st.test.op, ast.And)):
        text = f"({text})"
    return [header_edit(code, finding, st, lines, f"not torch.compiler.is_compiling() and {text}",
                         EAGER_BLOCK, _exit_guards(text), rank=4)]


def _compiled_block_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if <test>: <work>` without an `else` -> `if torch.compiler.is_compiling() or <test>:`:
    compiled code always runs the block, eager reads the test as head does (aimnet's padding
    mask, applied under compile whether or not the input is padded: `masked_fill` with a mask
    of all False is the identity). Right only where the work changes nothing on the values
    that do not take the branch, which is for the proof to show: it runs the edit compiled on
    the shape cases on which head skips the block and compares with head's eager outputs. The
    mirror of `_eager_block_fixes`; no condition on the names the block binds (it always binds
    them now), but none for a block that draws random numbers (running it would move every
    later draw), that stores into the module (`self.steps += 1`: state that every later call
    reads, which the proof's few calls may not show), nor for the shapes recipe 1 turns
    branchless in eager too."""
    text = _block_test(st, lines)
    if text is None or enclosing_function(tree, st) is None:
        return []
    if any(_RANDOM.search(segment(lines, b)) for b in st.body) or _stores_into_self(st.body):
        return []
    # a test for NaN or inf guards against them: run always, its block would meet ordinary
    # values too (where it leaves them alone, recipe 1 drops the branch in eager as well)
    if {"nan", "inf"} & set(guards_of(text)) or (len(st.body) == 1 and _noop_guarded(st, lines)) \
            or _masked_stores_guarded(st, lines):
        return []
    if isinstance(st.test, (ast.IfExp, ast.Lambda)) or (
            isinstance(st.test, ast.BoolOp) and isinstance(st.test.op, ast.And)):
        text = f"({text})"
    return [header_edit(code, finding, st, lines, f"torch.compiler.is_compiling() or {text}",
                         COMPILED_BLOCK, guards_of(text), rank=4)]


def _stores_into_self(body: list[ast.stmt]) -> bool:
    """Whether a statement of `body` assigns to an attribute of `self`, or to an element of
    one (`self.count += 1`, `self.cache[k] = v`)."""
    return "self" in _written_roots(body)


_NOTES_BLOCK = "give the warning in eager only: compiled code skips the test and the block"
# calls a test may make and stay a pure reading of values: tensor methods (no in-place one:
# `_side_effect_free`), these builtins, and the functions of these modules
_READING_BUILTINS = frozenset({"len", "abs", "min", "max", "any", "all", "isinstance", "float", "int", "bool"})
_READING_MODULES = frozenset({"torch", "math", "numpy", "np"})


def _imported(tree: ast.Module) -> set[str]:
    """The names the file's imports bind."""
    return {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}


def _reads_only(test: ast.AST, tree: ast.Module) -> bool:
    """Whether evaluating `test` changes nothing: no `:=`, in-place method or random draw, and
    every call torch's (or math's, numpy's), a method of a value other than `self` or an
    imported module (`(x < b).any()`, `torch.isfinite(v).any()`), or a builtin that reads
    (`len`, `abs`, ...). A method of the module (`self.check(x)`) or a function of the user's
    (`utils.check(x)`, `check(x)`) may change state."""
    if not _side_effect_free(test) or _RANDOM.search(ast.unparse(test)):
        return False
    imported = _imported(tree) - _READING_MODULES
    for n in ast.walk(test):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if isinstance(f, ast.Name):
            if f.id not in _READING_BUILTINS:
                return False
        elif isinstance(f, ast.Attribute):
            root = f.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (root.id in imported or (
                    root.id == "self" and isinstance(f.value, ast.Name))):
                return False
        else:
            return False
    return True


def _eager_notes_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if <test>: <notes>` without an `else`, whose block only tells the user something
    (`_told`: torchmetrics' Pearson, `if (var_x < bound).any() or ...: rank_zero_warn(...)`)
    -> `if not torch.compiler.is_compiling() and <test>:`. Safe by construction where the
    test only reads values (`_reads_only`): eager evaluates the same test and warns exactly as
    before, and compiled code, which computes nothing in the block, skips both (a warning is
    also a graph break of its own). PTC105/PTC106's guard of a print or a warning
    (`guard_eager_only`), for a warning under a tensor test."""
    if st.orelse or not st.body or not all(_told(b) for b in st.body) or \
            st.body[0].lineno <= (st.test.end_lineno or st.lineno) or not _reads_only(st.test, tree):
        return []
    text = segment(lines, st.test)
    if re.search(r"\bis_(torchdynamo_|dynamo_)?compiling\b", text):
        return []
    if isinstance(st.test, (ast.BoolOp, ast.IfExp, ast.Lambda)) and not (
            isinstance(st.test, ast.BoolOp) and isinstance(st.test.op, ast.And)):
        text = f"({text})"
    return [header_edit(code, finding, st, lines, f"not torch.compiler.is_compiling() and {text}",
                         _NOTES_BLOCK, (), rank=1, safe=True)]


def _compiling_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """The edits of an `if` that let compiled code decide alone, without the test: a block of
    notes given in eager only (safe), an early exit never taken, a block always run, a block
    never run (most likely right first: running the work keeps head's computation where it
    may matter). A block of notes gets the first, or, under a test that may do something
    (`self.check(x)`), the block in eager only as work, which the proof must see entered;
    never run always, which would only warn in compiled code."""
    if not st.orelse and st.body and all(_told(b) for b in st.body):
        return _eager_notes_fixes(code, finding, st, tree, lines) or \
            _eager_block_fixes(code, finding, st, tree, lines)
    return (_eager_exit_fixes(code, finding, st, tree, lines) + _compiled_block_fixes(code, finding, st, tree, lines)
            + _eager_block_fixes(code, finding, st, tree, lines))


def is_compiling_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """The edits of `_compiling_fixes` for the finding of another rule than PTC201 in an `if`
    on a tensor's value: in its test (`if data["_input_padded"].item():`, a `.item()` that
    reads a cache's length in an early exit's test), or inside its block (the `.item()` of a
    truncation index in the body of `if first_below_thr.any():`, which may run in eager only:
    the innermost `if` whose body holds the finding's statement, in the same function)."""
    found = statement_in_function(finding, source, tree)
    if found is None:
        return []
    lines, st, fn = found
    if isinstance(st, ast.If) and _inside(st.test, (finding.line, finding.col)):
        if is_elif(lines, st) or not owns_lines(lines, st):
            return []
        return _compiling_fixes(code, finding, st, tree, lines)
    ifs = [n for n in ast.walk(fn) if isinstance(n, ast.If)
           and any(s is st for b in n.body for s in ast.walk(b))]
    if not ifs:
        return []
    inner = max(ifs, key=lambda n: (n.lineno, n.col_offset))
    if not owns_lines(lines, inner) or enclosing_function(tree, inner) is not fn or \
            not _tensor_test(inner.test):
        return []
    return _eager_block_fixes(code, finding, inner, tree, lines)


def item_test_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """The edits of a tensor test (`tensor_condition_fixes`: `torch.where`, one arm kept, ...)
    for an `if` whose test reads a tensor's number with `.item()` only to test it: X-MoE's `if
    hasattr(self, "b2_stack") and self._has_bias_2.item(): h2 = h2 + self.b2_stack.unsqueeze(1)`
    becomes `if hasattr(self, "b2_stack"):` around `h2 = torch.where(self._has_bias_2.bool(),
    h2 + ..., h2)`. The tensor answers the same test: as a whole part of the test, `t.item()`
    is `t.bool()` (a one-element tensor's truth: nonzero), and compared, `t.item() > 0.5` is
    `t > 0.5`. Read any other way (`t.item() * 2 > x`, an argument), or spread over lines, it
    gets none. The recipes run on the test so rewritten, anchored on the tensor, and only their
    edits of the whole `if` are kept (the header's `.item()` must go); the ones that ask
    `is_compiling()` are offered on the test as it is (`is_compiling_fixes`)."""
    lines = source_lines(source)
    st, _body = statement_at(tree, finding.line, finding.col)
    at = (finding.line, finding.col)
    if not isinstance(st, ast.If) or not _inside(st.test, at):
        return []
    parents = parents_of(st.test)
    call = next((n for n in ast.walk(st.test) if isinstance(n, ast.Call) and not n.args and not n.keywords
                 and isinstance(n.func, ast.Attribute) and n.func.attr == "item"
                 and (n.lineno, n.col_offset) == at and n.end_lineno == n.lineno), None)
    if call is None:
        return []
    parent = parents.get(id(call))
    tensor = segment(lines, call.func.value)
    if not isinstance(call.func.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        tensor = f"({tensor})"
    if isinstance(parent, ast.Compare):
        text = tensor
    elif call is st.test or isinstance(parent, ast.BoolOp) or (
            isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
        text = f"{tensor}.bool()"
    else:
        return []
    rewritten = replace_spans(lines, call.lineno, call.lineno, [(*node_span(call), text)])
    new_source = "\n".join(lines[:call.lineno - 1] + rewritten + lines[call.lineno:]) + \
        ("\n" if source.endswith("\n") else "")
    try:
        new_tree = ast.parse(new_source)
    except SyntaxError:
        return []
    # (the tensor starts where the call did: the finding anchors it in the rewritten test)
    out = []
    for c in tensor_condition_fixes(code, finding, new_source, new_tree):
        if not c.start_line <= st.lineno <= c.end_line or \
                any("is_compiling" in ln for ln in c.lines):
            continue
        out.append(dataclasses.replace(c, title=f"{c.title}; the test reads the tensor, not `.item()`",
                                       variants=()))
    return out


def _tensor_test(test: ast.AST) -> bool:
    """The test surely reads a tensor's values: a call of torch's or of a reduction or truth
    method (`first_below_thr.any()`, `torch.isnan(h).any()`, `t.item() > 0`). Only such a
    block is entered when the data says so, which is what makes its work optional; under a
    Python test (`if self.ignore_index is not None:`) the block always runs, and skipping it
    drops work that only looks optional on inputs where it changes nothing."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
        n.func.attr in BOOL_FUNCS | _TENSOR_TRUTH or
        isinstance(n.func.value, ast.Name) and n.func.value.id == "torch")
        for n in ast.walk(test))



# --------------------------------------------------------------------------- keep one arm

# (what the edit does, not a claim that it is equal: a refused one is shown with this title, and
# DETR's "the `if` arm computes the same where the test is false" was false on every padded mask)
KEEP_ARM = "drop the branch and run the `{kept}` arm where the test is {where} too"


def _reading_call(call: ast.Call) -> bool:
    """A call that only reads: a torch function (not an in-place one, no `out=`), a tensor
    method that reduces or compares (`x.sum()`, `m.any()`, `t.item()`), `float(...)` and the
    like. Any other call may change state (a method of the model's own)."""
    f = call.func
    if any(k.arg == "out" for k in call.keywords):
        return False
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "torch":
        return not f.attr.endswith("_")
    if isinstance(f, ast.Attribute):
        return f.attr in BOOL_FUNCS | _TENSOR_TRUTH
    return isinstance(f, ast.Name) and f.id in _NUMBER_CALLS


def _written_places(lines: list[str], arm: list[ast.stmt]) -> set[str]:
    """The attributes and elements `arm` writes (`self._var = ...`, `out[:, 0] = ...`), as text."""
    return {segment(lines, n) for s in arm for n in ast.walk(s)
            if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store)}


def _arm_lines(lines: list[str], arm: list[ast.stmt], indent: str, header: int) -> list[str]:
    """The statements of `arm` (an `if`'s body or its `else`) at `indent`, one level up, with
    the comments and blank lines between them and the comment lines right above the first
    (below line `header`, the arm's `if ...:` or `else:`)."""
    cut = len(indentation(lines, arm[0])) - len(indent)

    def up(ln: str) -> str:
        return ln[cut:] if ln[:cut].strip() == "" else ln

    first = arm[0].lineno - 1
    while first - 1 >= header and lines[first - 1].strip().startswith("#"):
        first -= 1
    out = [up(ln) for ln in lines[first:arm[0].lineno - 1]]
    prev = None
    for s in arm:
        if prev is not None:
            out += [up(ln) for ln in lines[prev:s.lineno - 1]]
        out += _dedented(lines, s, indent)
        prev = s.end_lineno or s.lineno
    return out


def _constant(node: ast.expr) -> bool:
    """A literal (`1.`, `-1`, `None`, a tuple of them) or a class constant (`Perturb.PREV`:
    an attribute of a capitalised name)."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Tuple):
        return all(_constant(e) for e in node.elts)
    if isinstance(node, ast.Attribute):
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id[:1].isupper()
    return isinstance(node, ast.Constant)


def _constants_set(lines: list[str], arm: list[ast.stmt]) -> dict[str, str]:
    """name -> the constant's text, for each `name = <constant>` statement of the arm."""
    return {st.targets[0].id: segment(lines, st.value) for st in arm
            if isinstance(st, ast.Assign) and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name) and _constant(st.value)}


def _keep_arm_fixes(code, finding, st: ast.If, tree, lines) -> list[Candidate]:
    """`if <test>: <A> else: <B>` -> A alone, and B alone: the branch does not decide where
    both arms compute the same on every input the model meets (peft's `if scaling == 1:`
    before `lora_B(lora_A(x))` and after it `* scaling`, which is exact at 1: the maintainers
    kept the `else` arm; FastTD3's Chan update of a running variance, which gives the batch's
    variance when the count before is 0: they kept the `if` arm). Which arm, if either, is for
    the proof to show: it compares the edit with head on a shape case where head ran the arm
    the edit drops (pt2bot/smoke/verify.py), since elsewhere the kept arm is what head ran.
    Offered only where the test has no effect of its own (no `:=`, no random draw, no call
    but a reading one: dropping it must drop nothing else), neither arm can leave the function
    or loop (`return`, `raise`, `break`, `continue`, `yield`), each name an arm binds that is
    read after the `if` (or anywhere in the loop around it) is bound by the other arm too,
    and both write the same attributes and elements: else the kept arm leaves a name unbound,
    or a value stale, where the other arm ran on head. Not for an `elif` chain, nor for arms
    that set a name to different constants."""
    if not st.orelse or (len(st.orelse) == 1 and is_elif(lines, st.orelse[0])):
        return []
    arms = (st.body, st.orelse)
    # each statement on lines of its own (not `if c: x = 1` nor `else: x = 2`), no decorator
    # (its lines come before the statement's own), nothing that leaves the arm early
    if not all(owns_lines(lines, s) and not getattr(s, "decorator_list", None) for arm in arms for s in arm) \
            or any(isinstance(n, _LEAVES) for arm in arms for s in arm for n in ast.walk(s)):
        return []
    text = segment(lines, st.test)
    if not _side_effect_free(st.test) or _RANDOM.search(text) or \
            not all(_reading_call(n) for n in ast.walk(st.test) if isinstance(n, ast.Call)):
        return []
    fn = enclosing_function(tree, st)
    if fn is None:
        return []
    loop = _innermost_loop(tree, st)
    if loop is not None and loop.lineno < fn.lineno:
        loop = None

    def read_later(name: str) -> bool:
        # after the `if`, or anywhere in the loop around it (the next iteration reads it)
        return _read_after(fn, st, name) or (loop is not None and name in _reads(loop))

    bound = [set().union(*(_assigned(s) for s in arm)) for arm in arms]
    if any(read_later(name) for mine, other in ((0, 1), (1, 0)) for name in bound[mine] - bound[other]) or \
            _written_places(lines, st.body) != _written_places(lines, st.orelse):
        return []
    # arms that set one name to two different constants never compute the same (torchdiffeq's
    # `perturb = Perturb.PREV` against `Perturb.NONE`); a model that never reads the name would
    # still show equal outputs, so the proof cannot be the one to refuse it
    constants = [_constants_set(lines, arm) for arm in arms]
    if any(constants[1].get(name, text) != text for name, text in constants[0].items()):
        return []
    indent = indentation(lines, st)
    # the `else:` line: the last line above the arm's first statement that starts with `else`
    header = next(k for k in range(st.orelse[0].lineno - 1, 0, -1) if lines[k - 1].strip().startswith("else"))
    guards = guards_of(text)
    # before `torch.where` (rank 1): where an arm is right, it is the smaller edit, the one
    # the maintainers make, and it computes one arm where `torch.where` computes both
    return [replace_statement(code, finding.path, st, _arm_lines(lines, arm, indent, after),
                              KEEP_ARM.format(kept=kept, where=where), safe=False, guards=guards, rank=0)
            for arm, after, kept, where in ((st.body, st.test.end_lineno or st.lineno, "if", "false"),
                                            (st.orelse, header, "else", "true"))]


# reductions whose result a test compares (`x.sum() > 0`), and `.item()`
_TENSOR_TRUTH = frozenset({"item", "sum", "mean", "max", "min", "amax", "amin", "prod", "norm",
                           "count_nonzero"})


__all__ = ["COMPILED_BLOCK", "EAGER_BLOCK", "KEEP_ARM", "chain_fixes", "guards_of", "is_compiling_fixes",
           "tensor_condition_fixes"]
