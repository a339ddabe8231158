"""A recipe shared by the rules whose findings sit in Python-only code that a function already
has an alternative to: the branch it keeps for another graph capture, taken when compiling too.

Library code often carries a second form of a data-dependent step for the tracers and backends
that cannot run the first: kornia's canny hysteresis is a `while` on the edges' values in eager,
a `torch.while_loop` under `is_exporting()`, a fixed loop under `torch.jit.is_tracing()`;
torchmetrics' `_bincount` compares with an `arange` where `torch.bincount` has no deterministic
or XLA kernel. dynamo breaks on the first form and traces the second, so the edit is the header
of that branch: `if is_exporting():` becomes `if torch.compiler.is_compiling() or
is_exporting():`. Offered where the finding's statement lies in the code that test's branch
skips (its `else`, an `elif` after it, or the code after an `if` whose block ends with a
`return`) and the test is such a predicate, alone or as a part of an `or`; one candidate per
such `if`, the outermost first (the export branch of an export/tracing/eager chain is the one
closest to what dynamo traces).

Eager code runs as before, so the proof compares what compiled code now computes, the other
branch, with head's eager outputs and gradients on every shape case (pt2bot/smoke/verify.py:
an edit that asks `is_compiling()` and is not an exit or a block run in one mode only). The
alternative branch is the library's own claim of equivalence, not ours: where it computes
something else (a fixed number of iterations, a different kernel's rounding), the comparison
refuses it.
"""
from __future__ import annotations

import ast
import re

from pt2bot.rules.base import Candidate
from pt2bot.rules.edits import header_edit, parents_of, segment, statement_in_function

# the last name of a call, attribute or name that tells another capture or backend than eager
# CPython: export, ONNX export, TorchScript, jit and FX tracing, XLA, MPS, deterministic kernels
_CAPTURE = re.compile(r"^_*(is_exporting|is_in_onnx_export|in_onnx_export|is_onnx_export|is_tracing|"
                      r"is_scripting|is_fx_tracing|is_torch_fx_tracing|are_deterministic_algorithms_enabled|"
                      r"is_xla|is_mps|xla_available|is_xla_available|is_torch_xla_available)$",
                      re.IGNORECASE)
_COMPILING = re.compile(r"\bis_(torchdynamo_|dynamo_)?compiling\b")
TITLE = ("take the function's own `{what}` branch when compiling too: dynamo traces it, and compiled "
         "code is compared with head's eager code on every shape case")


def _predicate(node: ast.AST) -> str | None:
    """The name of a capture predicate that `node` is (`is_exporting()`, `torch.jit.is_tracing()`,
    `_XLA_AVAILABLE`, `x.is_mps`), or None."""
    target = node.func if isinstance(node, ast.Call) and not node.args and not node.keywords else node
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else None
    return name if name is not None and _CAPTURE.match(name) else None


def _capture_part(test: ast.AST) -> ast.AST | None:
    """The capture predicate a test takes its branch on: the whole test, or a part of its `or`."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    return next((p for p in parts if _predicate(p) is not None), None)


def _skipped_by(fn: ast.AST, st: ast.stmt) -> list[ast.If]:
    """The `if`s of `fn` whose branch skips `st`: `st` is in their `else` (an `elif` after them
    included), or after them in the same block where their block ends with a `return`."""
    parents = parents_of(fn)
    out: list[ast.If] = []
    node: ast.AST = st
    while node is not fn and id(node) in parents:
        parent = parents[id(node)]
        if isinstance(parent, ast.If) and any(s is node for s in parent.orelse):
            out.append(parent)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and any(s is node for s in block):
                i = next(i for i, s in enumerate(block) if s is node)
                out += [s for s in block[:i] if isinstance(s, ast.If) and not s.orelse and s.body
                        and isinstance(s.body[-1], ast.Return)]
        node = parent
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def capture_branch_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """The header edits that send compiled code down the function's own capture branch."""
    found = statement_in_function(finding, source, tree)
    if found is None:
        return []
    lines, st, fn = found
    out: list[Candidate] = []
    for node in _skipped_by(fn, st):
        part = _capture_part(node.test)
        text = segment(lines, node.test)
        if part is None or _COMPILING.search(text) or any(isinstance(n, ast.NamedExpr) for n in ast.walk(node.test)):
            continue
        # the header alone, on lines of its own (an `elif`'s keyword stays as it is)
        end = node.test.end_lineno or node.lineno
        if node.body[0].lineno <= end or lines[node.lineno - 1][:node.col_offset].strip():
            continue
        what = f"{_predicate(part)}()" if isinstance(part, ast.Call) else _predicate(part)
        out.append(header_edit(code, finding, node, lines, f"torch.compiler.is_compiling() or {text}",
                               TITLE.format(what=what), (), rank=2))
    return out


__all__ = ["capture_branch_fixes"]
