"""The recipes for a branch on a tensor value (PTC201): what replaces `if cond:` so that
dynamo traces one graph.

In the order they are offered (most likely to be the author's intent first):

1. the branchless form, where the guarded statement is a no-op on the values that do not take
   the branch: `if torch.isnan(h).any(): h = torch.nan_to_num(h)` -> `h = torch.nan_to_num(h)`
   (also clamps, masked fills, their in-place forms), and `if m.any(): x[m] = v` (writes of
   plain values through the mask the test reads: they change nothing when no entry is set,
   and a masked write does not break the graph where a masked read does). Not safe: `nan_to_num` also replaces
   inf, a clamp may reach values the condition did not test; the candidate carries the special
   values its condition guards (`guards`) so a verifier compares it on them too;
2. `torch.where(cond, a, b)`: one assignment (or one `return`) on each side, the missing side
   the name's value before (or the `return` that follows the `if`);
3. `torch.cond(cond, lambda: a, lambda: b, ())`, the same shapes of code, for large branches.

A conditional expression `a if cond else b` becomes `torch.where(cond, a, b)`. Everything else
(`while`, `and`/`or`, branches of several statements) stays the rule's text.
"""
from __future__ import annotations

import ast
import re

from pt2bot.rules.base import Candidate
from pt2bot.rules.edits import (binds_torch, defined_before, function_binds, indentation, is_elif,
                                owns_lines, replace_statement, segment, source_lines, spans_string_lines,
                                statement_at, statement_lines, with_replaced)

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
        return bool(re.search(r"\bis(nan|inf|finite|posinf|neginf)\b", test)) and recv in test
    if name in _CLAMP:
        return recv in test
    if name in _FILL or name == "where":
        mask = call.args[0] if name == "where" else (call.args[-2] if len(call.args) >= 2 else None)
        return mask is not None and segment(lines, mask) in test
    return False


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
    if isinstance(then, ast.Assign) and len(then.targets) == 1 and isinstance(then.targets[0], ast.Name):
        target = then.targets[0]
        if not st.orelse:
            return ("assign", target.id, then.value, target, st) if defined_before(tree, st, target.id) else None
        if len(st.orelse) == 1 and isinstance(st.orelse[0], ast.Assign) and \
                [segment(lines, t) for t in st.orelse[0].targets] == [target.id]:
            return "assign", target.id, then.value, st.orelse[0].value, st
        return None
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
    exps = [e for e in ast.walk(st) if isinstance(e, ast.IfExp) and _inside(e.test, at) and _is_value(e.test)]
    if not exps:
        return []
    e = max(exps, key=lambda e: (e.lineno, e.col_offset))   # the innermost
    test = _arg(lines, e.test)
    text = f"torch.where({test}, {_arg(lines, e.body)}, {_arg(lines, e.orelse)})"
    return [replace_statement(code, finding.path, st, with_replaced(lines, st, e, text),
                              "select with `torch.where` instead of the conditional expression",
                              safe=False, guards=guards_of(test), rank=1)]


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
    if is_elif(lines, st) or not _is_value(st.test):
        return []
    test = _arg(lines, st.test)
    guards = guards_of(test)
    indent = indentation(lines, st)
    out = []
    if not st.orelse and len(st.body) == 1 and _noop_guarded(st, lines):
        # `nan_to_num` replaces inf as well as NaN, whatever the test looked for: the verifier
        # must compare on both
        extra = ("nan", "inf") if "nan_to_num" in segment(lines, st.body[0]) else ()
        out.append(replace_statement(code, finding.path, st, _dedented(lines, st.body[0], indent),
                                     "drop the branch: the guarded statement leaves other values unchanged",
                                     safe=False, guards=tuple(dict.fromkeys(guards + extra)), rank=0))
    elif not st.orelse and _masked_stores_guarded(st, lines):
        out.append(replace_statement(code, finding.path, st,
                                     [ln for s in st.body for ln in _dedented(lines, s, indent)],
                                     "drop the branch: writing through an all-false mask changes nothing",
                                     safe=False, guards=guards, rank=0))
    sides = _sides(st, body, tree, lines)
    if sides is None:
        return out
    kind, target, a, b, last = sides
    then, other = _arg(lines, a), _arg(lines, b)
    lead = f"{target} = " if kind == "assign" else "return "
    end = last.end_lineno or last.lineno
    ways = [(2, f"torch.cond({test}, lambda: {_cond_branch(a, then)}, lambda: {_cond_branch(b, other)}, ())",
             "branch inside the graph with `torch.cond`")]
    if not (isinstance(a, ast.Tuple) or isinstance(b, ast.Tuple)):   # where selects one tensor
        ways.insert(0, (1, f"torch.where({test}, {then}, {other})", "select with `torch.where` instead of branching"))
    for rank, text, title in ways:
        out.append(Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=end,
                             lines=tuple(statement_lines(indent, lead + text)), title=title, safe=False,
                             guards=guards, rank=rank))
    return out


__all__ = ["tensor_condition_fixes", "guards_of"]
