"""The recipe for a tensor copied to Python (`.item()`, `.tolist()`, `float(t)`) whose value
only feeds tensor arithmetic: keep the tensor.

The edit is on the finding's own statement: `x * t.item()` -> `x * t`, or, for
`v = t.item()`, `v = t` when every later read of `v` in the function is an operand of
arithmetic (`x / v`, `-v`) outside a condition, an index, a size or a formatted string; there
a tensor behaves like the number (a 0-d tensor keeps the other operand's dtype), and dynamo
keeps it in the graph. Not safe: a one-element tensor of another shape broadcasts, a
float64 `t` may change a result's dtype; the candidate is run and compared before it is posted.
`int(t)` is never unwrapped (it truncates, and an int is nearly always a size or an index).
"""
from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate
from pt2bot.rules.edits import (enclosing_function, finding_statement, parents_of, replace_statement, segment,
                                with_replaced)

# reading a value in one of these is a Python number's job (a size, an index, a message)
_SCALAR_CALLS = frozenset({"range", "int", "float", "len", "round", "str", "print", "format", "bool", "list",
                           "tuple", "enumerate", "isinstance", "min", "max", "sum", "abs", "math"})


def _arith_only(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node` is an operand of arithmetic, and nothing above it needs a Python number."""
    p = parents.get(id(node))
    if not (isinstance(p, ast.BinOp) or (isinstance(p, ast.UnaryOp) and isinstance(p.op, (ast.USub, ast.UAdd)))):
        return False
    child = node
    while p is not None and not isinstance(p, ast.stmt):
        if isinstance(p, (ast.JoinedStr, ast.Compare, ast.BoolOp, ast.Slice)) or \
                (isinstance(p, ast.Subscript) and p.slice is child) or \
                (isinstance(p, ast.IfExp) and p.test is child):
            return False
        if isinstance(p, ast.Call):
            f = p.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in _SCALAR_CALLS or (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                         and f.value.id == "math"):
                return False
        child, p = p, parents.get(id(p))
    return not isinstance(p, (ast.If, ast.While)) or p.test is not child


def keep_tensor_fixes(code: str, finding, source: str, tree: ast.Module, what: str) -> list[Candidate]:
    """`what`: "item" / "tolist" (a method call at the finding) or "float" (`float(t)`)."""
    st, _, lines = finding_statement(finding, source, tree)
    if st is None:
        return []
    call = next((n for n in ast.walk(st) if isinstance(n, ast.Call)
                 and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    if call is None:
        return []
    if what == "float":
        if not (isinstance(call.func, ast.Name) and call.func.id == "float" and len(call.args) == 1
                and not call.keywords):
            return []
        tensor = call.args[0]
    else:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == what and not call.args
                and not call.keywords):
            return []
        tensor = call.func.value
    parents = parents_of(st)
    outer = call   # `float(t.item())`: the float goes too (a float of a float)
    p = parents.get(id(outer))
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "float" and p.args == [outer]:
        outer = p
    text = segment(lines, tensor)
    if not isinstance(tensor, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) and \
            isinstance(parents.get(id(outer)), (ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript)):
        text = f"({text})"   # `x * float(a + b)` -> `x * (a + b)`
    title = f"keep the tensor: drop `{'float()' if what == 'float' else '.' + what + '()'}`"
    if _arith_only(outer, parents):
        return [replace_statement(code, finding.path, st, with_replaced(lines, st, outer, text), title, safe=False)]
    if isinstance(st, ast.Assign) and st.value is outer and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
        fn = enclosing_function(tree, st)
        if fn is None:
            return []
        name = st.targets[0].id
        fparents = parents_of(fn)
        reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
                 and isinstance(n.ctx, ast.Load) and n.lineno > (st.end_lineno or st.lineno)]
        if reads and all(_arith_only(n, fparents) for n in reads):
            return [replace_statement(code, finding.path, st, with_replaced(lines, st, outer, text),
                                      title + f" (`{name}` only feeds tensor arithmetic)", safe=False)]
    return []


__all__ = ["keep_tensor_fixes"]
