from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.branch_fixes import is_compiling_fixes
from pt2bot.rules.capture_branch_fixes import capture_branch_fixes
from pt2bot.rules.edits import enclosing_function, finding_statement, function_binds, module_binds, module_names, \
    replace_statement, segment, with_replaced
from pt2bot.rules.scalar_fixes import INT_DTYPES, keep_tensor_fixes
from pt2bot.rules.size_fixes import int_valued
from pt2bot.analysis.queries import generator_note, method_call


def _made_then_tolist(finding, source: str, tree: ast.Module):
    """(statement, lines, the `.tolist()` call at the finding, the call it reads back), or
    None where the finding is not at `<call>.tolist()`."""
    st, _, lines = finding_statement(finding, source, tree)
    if st is None:
        return None
    call = next((n for n in ast.walk(st) if isinstance(n, ast.Call)
                 and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    if call is None or call.args or call.keywords or method_call(call, ("tolist",)) is None \
            or not isinstance(call.func.value, ast.Call):
        return None
    return st, lines, call, call.func.value


def range_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`torch.arange(<ints>).tolist()` -> `list(range(<ints>))`: the same list of Python ints,
    without a tensor read back (the rule's doc)."""
    got = _made_then_tolist(finding, source, tree)
    fn = enclosing_function(tree, got[0]) if got is not None else None
    if fn is None:
        return []
    st, lines, call, made = got
    if not (isinstance(made.func, ast.Attribute) and made.func.attr == "arange"
            and segment(lines, made.func.value) == "torch" and 1 <= len(made.args) <= 3):
        return []
    bounds = list(made.args)
    for k in made.keywords:
        if k.arg == "dtype":
            if not (isinstance(k.value, ast.Attribute) and k.value.attr in INT_DTYPES
                    and segment(lines, k.value.value) == "torch"):
                return []
        elif k.arg != "device":   # start=/end=/step=, requires_grad=, out=: not the plain form
            return []
    if not all(int_valued(b, fn) for b in bounds) or \
            any(function_binds(tree, st, name) for name in ("torch", "list", "range", "len")):
        return []
    text = "list(range(" + ", ".join(segment(lines, b) for b in bounds) + "))"
    return [replace_statement(code, finding.path, st, with_replaced(lines, st, call, text),
                              "the same Python ints without a tensor: `list(range(...))` for `torch.arange(...).tolist()`",
                              safe=False)]


def unique_list_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`np.unique(<a Python list>).tolist()` -> `sorted(set(<the list>))`: the sorted distinct
    values without numpy (the rule's doc)."""
    got = _made_then_tolist(finding, source, tree)
    if got is None:
        return []
    st, lines, call, made = got
    if not (isinstance(made.func, ast.Attribute) and made.func.attr == "unique"
            and len(made.args) == 1 and not made.keywords
            and isinstance(made.args[0], (ast.List, ast.ListComp, ast.Tuple, ast.SetComp, ast.Set))):
        return []
    if segment(lines, made.func.value) not in module_names(tree, "numpy") or \
            any(module_binds(tree, n) or function_binds(tree, st, n) for n in ("sorted", "set")):
        return []
    text = f"sorted(set({segment(lines, made.args[0])}))"
    return [replace_statement(code, finding.path, st, with_replaced(lines, st, call, text),
                              "the sorted distinct values without numpy: `sorted(set(...))` for "
                              "`np.unique(...).tolist()`", safe=False)]


class TensorTolist(Rule):
    """## What it does
    Flags `Tensor.tolist()` in compiled code.

    ## Why is this bad?
    `.tolist()` turns every element into a Python number: a host-device copy and a graph
    break. torch 2.13 breaks with GB0109 ("Tensor.tolist() with non-integer tensor") for
    floating tensors and with GB0033 ("Data dependent operator") for integer ones. Inside a
    generator expression dynamo cannot resume after the break: it runs the whole function
    uncompiled (as for `.item()`, PTC101).

    ## Example
    ```python
    def forward(self, x):
        lengths = x.sum(dim=1).tolist()
        return x * len(lengths)
    ```

    ## Use instead
    Compute with the tensor itself (indexing, `torch.gather`, masks) and leave conversion to
    Python values outside compiled code.
    ```python
    def forward(self, x):
        lengths = x.sum(dim=1)
        return x * lengths.shape[0]
    ```
    Fix offered (not safe: run and compared before it is posted) when the value only feeds
    tensor arithmetic: `.tolist()` dropped, in the expression (`x * t.tolist()` -> `x * t`) or in the
    assignment `v = t.tolist()` when every later read of `v` in the function is an operand of
    arithmetic (`x *= v` too; also the one bound of a clamp, `x.clamp(max=v)`, or a value of
    `torch.where(c, x, v)`) outside a condition, an index, a size or a formatted string, or one element of it
    with a constant index that is such an operand (`w = t.tolist()`, `x * w[0] + w[1]` ->
    `w = t`: `t[0]` is a 0-d tensor).
    A break dynamo records as GB0033 on a line no finding flags gets these recipes too (an
    integer tensor's `.tolist()` breaks with that id), and PTC104's (a tensor as a size or a
    fill value).
    Inside a block that only does optional work, `if first_below_thr.any(): i =
    torch.where(first_below_thr)[0][0].item(); g = g[..., :i, :]`, the block can run in eager
    only: `if not torch.compiler.is_compiling() and first_below_thr.any():`, posted only where
    the proof shows compiled outputs equal to head's eager ones on shape cases that enter the
    block (pt2bot/rules/branch_fixes.py `is_compiling_fixes`, PTC201's recipe 6).
    In the test of an `if` (`if data["_input_padded"].item():`, a cached length read in the
    test of an early `return self.cached[:n]`), the `if` gets PTC201's recipes 4 to 6: the
    early exit taken in eager only, the block run always in compiled code, or in eager only,
    each posted only where the proof shows it right on the model's own shape cases.
    The sorted distinct values of a Python list through numpy, `np.unique([v[1:] for v in
    names]).tolist()` (makani's pressure levels from channel names; numpy on it breaks, GB0087),
    become `sorted(set([v[1:] for v in names]))`, which dynamo folds: the same list where the
    values share one type (numpy would cast a mix of ints and floats to floats; the proof
    compares).
    """

    code = "PTC102"
    name = "tensor-tolist"
    summary = "`Tensor.tolist()` in compiled code (host sync, graph break)"
    gb = "GB0109"
    gb_also = ("GB0033",)   # `.tolist()` of an integer tensor
    node_types = (ast.Call,)
    call_keys = frozenset({".tolist"})

    @classmethod
    def fixes(cls, finding, source, tree):
        return (range_fixes(cls.code, finding, source, tree) or
                unique_list_fixes(cls.code, finding, source, tree) or
                keep_tensor_fixes(cls.code, finding, source, tree, "tolist")) + \
            capture_branch_fixes(cls.code, finding, source, tree) + is_compiling_fixes(cls.code, finding, source, tree)

    def check(self, ctx, node):
        if method_call(node, ("tolist",)) is not None:
            ctx.report(self.code, node, "`.tolist()` copies the tensor into Python values and breaks the graph"
                       f"{generator_note(ctx)}; keep working on the tensor (indexing, gather, masks)")
