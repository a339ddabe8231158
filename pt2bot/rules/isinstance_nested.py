from __future__ import annotations

import ast

from pt2bot.analysis.infer import BOOL_TENSOR, PARAM, RESULT, TENSOR
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import replace_spans, source_lines

# A first argument of these kinds takes, or may take, dynamo's tensor path of `isinstance`, which
# accepts a nested tuple (measured on torch 2.13): no break there. PARAM: a parameter nothing says
# is not a tensor (unannotated, no constant default), as `forward(self, x)`'s `x`.
_TENSORS = frozenset({TENSOR, BOOL_TENSOR, RESULT, PARAM})
# Names of the tensor types: a test that lists one expects a tensor as well, which may take that
# path; the break is then not certain, and the call is not flagged.
_TENSOR_TYPES = frozenset({"Tensor", "Parameter"})


def _nested(types: ast.AST) -> list[ast.Tuple]:
    """The tuples written inside the tuple `types`, at any depth (none: a flat tuple)."""
    if not isinstance(types, ast.Tuple) or any(isinstance(e, ast.Starred) for e in ast.walk(types)):
        return []
    return [n for n in ast.walk(types) if isinstance(n, ast.Tuple) and n is not types]


def _trailing_comma(lines: list[str], last: ast.AST, close: tuple[int, int]) -> tuple[int, int] | None:
    """Where the comma after the element `last` and before the closing parenthesis at `close`
    is, as (line, byte column), outside comments; None where there is none."""
    line, col = last.end_lineno or last.lineno, last.end_col_offset or 0
    while (line, col) < close:
        text = lines[line - 1].encode()
        stop = close[1] if line == close[0] else len(text)
        for i in range(col, stop):
            if text[i:i + 1] == b"#":
                break
            if text[i:i + 1] == b",":
                return line, i
        line, col = line + 1, 0
    return None


def _names_a_tensor_type(types: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id in _TENSOR_TYPES
               or isinstance(n, ast.Attribute) and n.attr in _TENSOR_TYPES for n in ast.walk(types))


def _isinstance_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
            and len(node.args) == 2 and not node.keywords)


class IsinstanceNested(Rule):
    """## What it does
    Flags `isinstance(x, (A, (B, C)))` in compiled code: a tuple of types that holds another
    tuple, where `x` is not a tensor or a parameter that may be one (an attribute of the
    module, a parameter annotated as something else, a value the function computed).

    ## Why is this bad?
    Python accepts nested tuples of types, and flattens them. Dynamo's `isinstance` takes a type,
    a union or a flat tuple of types: for anything else it raises TypeError inside its trace, and
    cannot resume from it. The whole function then runs in eager, not only the line (torch 2.13
    and 2.14.1: GB0088, "Observed exception", "Failed to handle graph break gracefully. Skipping
    the function"). torchvision's `affine` and v2's `affine` check `shear` this way. On a tensor
    `x`, dynamo takes another path that accepts the nested form, so those calls are not flagged,
    and neither are unannotated parameters (which may be tensors) and tests whose types include
    `Tensor` or `Parameter`.

    ## Example
    ```python
    def forward(self, x):
        if not isinstance(self.shear, (numbers.Number, (list, tuple))):
            raise TypeError("shear must be a number or a sequence")
        ...
    ```

    ## Use instead
    The flat tuple is the same test:
    ```python
        if not isinstance(self.shear, (numbers.Number, list, tuple)):
    ```
    Fix offered: the inner tuples' parentheses removed, which changes nothing in eager (Python
    flattens nested tuples of types itself), so the edit is safe by construction.
    """

    code = "PTC114"
    name = "isinstance-nested-tuple"
    summary = "`isinstance()` with a nested tuple of types in compiled code (the function runs in eager)"
    gb = "GB0088"
    node_types = (ast.Call,)
    call_keys = frozenset({"isinstance"})

    def check(self, ctx, node):
        if not _isinstance_call(node) or "isinstance" in ctx.mod.imports \
                or "isinstance" in ctx.mod.summary.module_names or "isinstance" in ctx.env:
            return
        value, types = node.args
        if not _nested(types) or ctx.kind(value) in _TENSORS or _names_a_tensor_type(types):
            return
        ctx.report(self.code, node, "dynamo's `isinstance` takes a flat tuple of types: this nested "
                   "one raises TypeError inside the trace and the whole function runs in eager "
                   "(GB0088); the flat tuple is the same test")

    @classmethod
    def fixes(cls, finding, source, tree):
        node = next((n for n in ast.walk(tree) if _isinstance_call(n)
                     and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
        if node is None:
            return []
        inner = _nested(node.args[1])
        if not inner:
            return []
        lines = source_lines(source)
        edits = []
        for t in inner:
            start, end = (t.lineno, t.col_offset), (t.end_lineno or t.lineno, t.end_col_offset or 0)
            # a tuple's node spans its parentheses where it has them, and one inside a tuple must
            end_char = lines[end[0] - 1].encode()[end[1] - 1:end[1]]
            if not t.elts or lines[start[0] - 1].encode()[start[1]:start[1] + 1] != b"(" \
                    or end_char != b")":
                return []
            edits += [(start, (start[0], start[1] + 1), ""), ((end[0], end[1] - 1), end, "")]
            # `(int,)`'s own trailing comma would follow the outer tuple's next comma
            comma = _trailing_comma(lines, t.elts[-1], (end[0], end[1] - 1))
            if comma is not None:
                edits.append((comma, (comma[0], comma[1] + 1), ""))
        first, last = node.lineno, node.end_lineno or node.lineno
        new = replace_spans(lines, first, last, sorted(edits))
        try:
            ast.parse("\n".join(lines[:first - 1] + new + lines[last:]))
        except SyntaxError:
            return []
        return [Candidate(code=cls.code, path=finding.path, start_line=first, end_line=last,
                          lines=tuple(new), title="flatten the tuple of types (the same test)",
                          safe=True)]
