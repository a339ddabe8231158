from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import source_lines


class CompileDynamicFalse(Rule):
    """## What it does
    Flags `torch.compile(..., dynamic=False)`.

    ## Why is this bad?
    `dynamic=False` forbids dynamic shapes: every new input shape is a new compilation, and after
    `recompile_limit` (8) different shapes torch 2.13 silently runs the function **eagerly**.
    The default (`dynamic=None`) compiles static first and switches to a dynamic graph on the
    second shape. Keep `dynamic=False` only when the shapes never vary.

    ## Example
    ```python
    model = torch.compile(model, dynamic=False)
    ```

    ## Use instead
    ```python
    model = torch.compile(model)
    ```
    """

    code = "PTC305"
    name = "compile-dynamic-false"
    summary = "`torch.compile(..., dynamic=False)` (recompiles for every shape)"
    severity = "warning"
    claim = "recompile"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.Call,)
    call_keys = frozenset({"torch.compile"})

    @classmethod
    def fixes(cls, finding, source, tree):
        """Drop the keyword from its line (safe: eager code never reads it); a line that held
        only the keyword is deleted."""
        lines = source_lines(source)
        kw = next((k for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords
                   if k.arg == "dynamic" and (k.lineno, k.col_offset) == (finding.line, finding.col)), None)
        if kw is None or kw.end_lineno != kw.lineno:
            return []
        new = _without_keyword(lines[kw.lineno - 1], kw)
        if new is None:
            return []
        return [Candidate(code=cls.code, path=finding.path, start_line=kw.lineno, end_line=kw.lineno,
                          lines=(new,) if new else (), title="drop `dynamic=False`", safe=True)]

    def check(self, ctx, node):
        if ctx.call_target != "torch.compile":
            return
        for kw in node.keywords:
            if kw.arg == "dynamic" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                ctx.report(self.code, kw, "`dynamic=False` recompiles for every new shape and falls back to eager "
                           "after the recompile limit; drop it unless shapes never vary", scope="any",
                           suggestion=_without_keyword(ctx.line_text(kw), kw) or None)


def _without_keyword(line: str, kw: ast.keyword) -> str | None:
    """The line with `, dynamic=False` removed (a mechanical fix), if it is on one line. The
    line keeps its indentation (the text replaces the whole line, as a suggestion block does);
    "" when nothing but the keyword was on it."""
    if kw.end_lineno != kw.lineno:
        return None
    b = line.encode("utf-8", "surrogateescape")
    start, end = kw.col_offset, kw.end_col_offset
    indent = b[:len(b) - len(b.lstrip(b" \t"))]
    before = b[:start].rstrip()
    if before.endswith(b","):
        before = before[:-1]
        after = b[end:]
    else:
        after = b[end:].lstrip()
        after = after[1:].lstrip() if after.startswith(b",") else after
    out = (before + after).rstrip()
    if not out.strip():
        return ""
    if not before.strip():   # the keyword opened the line: the rest keeps the line's indentation
        out = indent + out.lstrip()
    return out.decode("utf-8", "surrogateescape")
