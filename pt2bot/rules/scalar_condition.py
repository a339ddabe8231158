from __future__ import annotations

import ast

from pt2bot.analysis.infer import SCALAR
from pt2bot.rules.base import Rule
from pt2bot.analysis.queries import condition_part, is_tensorish


def _reads_directly(e: ast.AST) -> bool:
    """`x.item() > 0`, `bool(t.any())`: the read is in the condition itself, where PTC101 /
    PTC104 already report it on the same line (one problem, one finding)."""
    for n in ast.walk(e):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in ("item", "tolist") or \
                    isinstance(f, ast.Name) and f.id in ("int", "float", "bool"):
                return True
    return False


def _scalar(ctx, test: ast.AST) -> ast.AST | None:
    """A condition part that is (or compares) a number read from a tensor earlier."""
    if isinstance(test, ast.Compare):
        if any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in test.ops):
            return None
        operands = [test.left, *test.comparators]
        return test if any(ctx.kind(o) == SCALAR for o in operands) and not _reads_directly(test) else None
    return test if ctx.kind(test) == SCALAR and not _reads_directly(test) else None


def _read(ctx, e: ast.AST) -> tuple[int, str] | None:
    """(line, what) of a read of a tensor's data in `e` that PTC101 / PTC102 / PTC104 report:
    `.item()`, `.tolist()`, `int(t)` / `float(t)` / `bool(t)`."""
    for n in ast.walk(e):
        if type(n) is ast.Call:
            f = n.func
            if type(f) is ast.Attribute and f.attr in ("item", "tolist") and not n.args and not n.keywords:
                return n.lineno, f.attr
            if type(f) is ast.Name and f.id in ("int", "float", "bool") and len(n.args) == 1 and \
                    not n.keywords and f.id not in ctx.mod.imports and is_tensorish(ctx, n.args[0]):
                return n.lineno, f.id
    return None


def _bindings(ctx) -> dict[str, list[tuple[int, ast.AST]]]:
    """name -> [(line, value)] of the function's assignments to it (a `for` loop's: its iterable),
    in one walk of the function, made when a branch is first reported in it."""
    memo = ctx.__dict__.get("_ptc203_bindings")
    if memo is None:
        memo = ctx.__dict__["_ptc203_bindings"] = {}
        for st in ast.walk(ctx.node):
            t = type(st)
            if t is ast.Assign:
                targets, value = st.targets, st.value
            elif t in (ast.AnnAssign, ast.AugAssign) and st.value is not None:
                targets, value = [st.target], st.value
            elif t is ast.For:
                targets, value = [st.target], st.iter
            else:
                continue
            for tg in targets:
                for n in ast.walk(tg):
                    if type(n) is ast.Name:
                        memo.setdefault(n.id, []).append((st.lineno, value))
    return memo


def _sources(ctx, e: ast.AST, line: int) -> list[ast.AST]:
    """`e` and what the number in it is computed from, followed back through the assignments
    above `line` in this function (`n = x.sum().item()`, `m = n * 2 + 1`, `if m > 3:`), nearest
    first; a few steps deep."""
    bound = _bindings(ctx)
    out, todo = [], [(e, line, 0)]
    while todo:
        e, line, depth = todo.pop(0)
        out.append(e)
        if depth > 4:
            continue
        for n in ast.walk(e):
            if type(n) is ast.Name and n.id in bound:
                before = [b for b in bound[n.id] if b[0] < line]
                if before:
                    at, value = max(before, key=lambda b: b[0])
                    todo.append((value, at, depth + 1))
    return out


def _conversion(ctx, e: ast.AST) -> tuple[int, str] | None:
    """(line, name) of an `int(...)` / `float(...)` / `bool(...)` in `e`, of a tensor or of a
    number read from one: non-strict `torch.export` fails there already (torch 2.13)."""
    for n in ast.walk(e):
        if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in ("int", "float", "bool") and \
                len(n.args) == 1 and not n.keywords and n.func.id not in ctx.mod.imports:
            return n.lineno, n.func.id
    return None


class ScalarCondition(Rule):
    """## What it does
    Flags `if` / `while` / conditional expressions on a Python number read from a tensor's
    data earlier in the function: the result of `.item()`, `int(t)` / `float(t)`, an element of
    `.tolist()`, and what is computed from them (`n = x.sum().item(); if n * 2 > 3:`). A read
    inside the condition itself (`if x.item() > 0:`) is left to PTC101/PTC104 on that line.

    ## Why is this bad?
    The read itself is the problem under the default settings: it breaks the graph
    (PTC101/PTC102/PTC104), and the branch adds no break of its own. Where the read is in the
    same function, the finding says it follows from that line. The branch is what fails once
    the read is captured: with `torch._dynamo.config.capture_scalar_outputs = True` (the fix
    PTC101 offers) torch 2.13 traces `.item()` / `int(t)` as an unbacked symbol and breaks the
    graph at the branch instead (GB0170, "Data-dependent branching"); `fullgraph=True` and strict
    `torch.export` raise there ("Could not guard on data-dependent expression"). Non-strict
    `torch.export` (the default) fails at the branch after `.item()` / `.tolist()`, which alone
    export, and already at `int(t)` / `float(t)` / `bool(t)` (or `int(n)` of the number read):
    the finding names that line.

    ## Example
    ```python
    def forward(self, x):
        n = x.sum().item()
        if n > 0:
            return x * 2
        return x
    ```

    ## Use instead
    Keep the value a tensor and select with it:
    ```python
    def forward(self, x):
        return torch.where(x.sum() > 0, x * 2, x)
    ```
    """

    code = "PTC203"
    name = "scalar-condition"
    summary = "branch on a number read from a tensor (`.item()`, `int(t)`; fails export/fullgraph)"
    severity = "warning"
    claim = "export"
    node_types = (ast.If, ast.While, ast.IfExp)

    def check(self, ctx, node):
        hit = condition_part(ctx, node.test, _scalar)
        if hit is None:
            return
        sources = _sources(ctx, hit, node.lineno)
        root = next((r for r in map(lambda e: _read(ctx, e), sources) if r is not None), None)
        fix = "; keep the value a tensor and use `torch.where`"
        if root is None:
            ctx.report(self.code, hit, "a branch on a number read from a tensor elsewhere: that read breaks the "
                       "graph under torch.compile's default settings; once it is captured (capture_scalar_outputs=True, "
                       "fullgraph=True, torch.export) this branch is data-dependent: a graph break here (GB0170, "
                       "data-dependent branching) or an error" + fix)
            return
        line, what = root
        conv = next((c for c in map(lambda e: _conversion(ctx, e), sources) if c is not None), None)
        # One problem, one finding: under the default settings the read is the break, reported on
        # its own line; this branch claims only what it adds once the read is captured. Measured
        # on torch 2.13 (tests/test_ptc203_follows.py): capture_scalar_outputs=True breaks the
        # graph here (GB0170) and fullgraph=True / strict export raise here; non-strict export
        # fails at an int()/float()/bool() of the captured value, else here.
        first = f"non-strict torch.export already fails at the `{conv[1]}()` on line {conv[0]}" if conv else None
        if what == "tolist":
            then = (f"{first or 'non-strict torch.export raises here (the `.tolist()` alone exports)'}; for an "
                    "integer tensor, whose `.tolist()` capture_scalar_outputs=True and fullgraph=True capture, "
                    "this branch breaks the graph (GB0170, data-dependent branching) or raises")
        else:
            then = "with capture_scalar_outputs=True it breaks the graph here (GB0170, data-dependent branching), " + (
                f"fullgraph=True and strict torch.export raise here, and {first}" if first else
                "and fullgraph=True and torch.export raise here")
        read = f"`.{what}()`" if what in ("item", "tolist") else f"`{what}()`"
        ctx.report(self.code, hit, f"follows from the {read} at line {line}, reported there: under torch.compile's "
                   "default settings that read breaks the graph and this branch adds no break of its own; it is what "
                   f"fails once the read is captured: {then}" + fix)
