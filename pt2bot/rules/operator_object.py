from __future__ import annotations

import ast

from pt2bot.analysis.infer import TENSORISH
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import finding_statement, segment, with_replaced

# operator -> (its symbol, the method it calls, the reflected method)
_OPS: dict[type, tuple[str, str, str]] = {
    ast.Add: ("+", "__add__", "__radd__"), ast.Sub: ("-", "__sub__", "__rsub__"),
    ast.Mult: ("*", "__mul__", "__rmul__"), ast.Div: ("/", "__truediv__", "__rtruediv__"),
    ast.FloorDiv: ("//", "__floordiv__", "__rfloordiv__"), ast.Mod: ("%", "__mod__", "__rmod__"),
    ast.Pow: ("**", "__pow__", "__rpow__"), ast.MatMult: ("@", "__matmul__", "__rmatmul__"),
}
# an operand written as the receiver of a method call without parentheses
_ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call)


def _instances(ctx) -> dict[str, str]:
    """The function's names bound once, to an instance of a plain class of this file (no base
    class): name -> the class's name."""
    memo = ctx.__dict__.get("_plain_instances")
    if memo is not None:
        return memo
    classes = ctx.mod.summary.classes
    bound: dict[str, list[ast.AST]] = {}
    for n in ast.walk(ctx.node):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                for x in ast.walk(t):
                    if isinstance(x, ast.Name):
                        bound.setdefault(x.id, []).append(n.value if isinstance(n, ast.Assign)
                                                          and t is x else n)
        elif isinstance(n, (ast.For, ast.With, ast.NamedExpr)):
            for x in ast.walk(getattr(n, "target", None) or n):
                if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                    bound.setdefault(x.id, []).append(n)
    memo = {}
    for name, values in bound.items():
        v = values[0] if len(values) == 1 else None
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in classes \
                and v.func.id not in ctx.mod.imports and not classes[v.func.id].bases:
            memo[name] = v.func.id
    ctx.__dict__["_plain_instances"] = memo
    return memo


def _class_of(ctx, e: ast.AST) -> str | None:
    return _instances(ctx).get(e.id) if isinstance(e, ast.Name) else None


def _defines(ctx, cls: str, method: str) -> bool:
    """Whether the file's top-level class `cls` defines `method`, by a `def` or by naming
    another one (`__rmul__ = __mul__`)."""
    names = ctx.mod.__dict__.setdefault("_class_names", {})
    if cls not in names:
        node = next((n for n in ctx.mod.tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        names[cls] = {t.id for st in (node.body if node is not None else ()) if isinstance(st, ast.Assign)
                      for t in st.targets if isinstance(t, ast.Name)} | \
            {st.name for st in (node.body if node is not None else ())
             if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return method in names[cls]


class OperatorOnObject(Rule):
    """## What it does
    Flags an arithmetic operator between an instance of a plain Python class that defines it
    (a complex-number or a pair-of-tensors wrapper: `__mul__`, `__matmul__`) and a tensor, or
    `@` between two such instances, in compiled code.

    ## Why is this bad?
    Dynamo dispatches `obj * t` as torch's own operator and cannot turn the object into a graph
    value: torch 2.13 breaks the graph there (GB0055, "Failed to convert args/kwargs to proxy";
    `t * obj` too), and `a @ b` of two such objects breaks with GB0059 ("Dynamo does not know
    how to trace builtin operator `matmul`"). The method the operator calls, called by name,
    traces: dynamo inlines it like any method. `obj * obj` for the other operators, and an
    object with a Python number, compile.

    ## Example
    ```python
    def forward(self, re, im, mask):
        y = ComplexTensor(re, im)
        return y * mask
    ```

    ## Use instead
    The method Python calls for the operator:
    ```python
        return y.__mul__(mask)
    ```
    (`t * obj`, where the tensor comes first: `obj.__rmul__(t)`, the method Python falls back
    to.) Fixes offered: that call, then the reflected one, each tried by the proof: where the
    method returns `NotImplemented` for these operands, Python would have tried the other
    operand's method and the call is not the same; the proof sees the outputs differ. Where a
    graph break has no finding (the class defined in another module), dynamo's GB0055 or
    GB0059 on the line brings these recipes there.
    """

    code = "PTC118"
    name = "operator-on-object"
    summary = "arithmetic operator between a plain Python object and a tensor (graph break)"
    gb = "GB0055"
    gb_also = ("GB0059",)
    node_types = (ast.BinOp,)

    def check(self, ctx, node):
        op = _OPS.get(type(node.op))
        if op is None or not (isinstance(node.left, ast.Name) or isinstance(node.right, ast.Name)):
            return
        left, right = _class_of(ctx, node.left), _class_of(ctx, node.right)
        if left is None and right is None:
            return
        symbol, meth, rmeth = op
        if left is not None and right is not None:
            if symbol == "@" and _defines(ctx, left, meth):
                ctx.report(self.code, node, f"dynamo cannot trace `@` between two `{left}` objects: the "
                           f"graph breaks (GB0059); call the method it calls, `{node.left.id}.{meth}(...)`",
                           gb="GB0059")
            return
        if left is not None and _defines(ctx, left, meth) and ctx.kind(node.right) in TENSORISH:
            ctx.report(self.code, node, f"dynamo cannot apply `{symbol}` to a `{left}` object and a tensor: "
                       f"the graph breaks (GB0055); call the method it calls, `{node.left.id}.{meth}(...)`")
        elif right is not None and _defines(ctx, right, rmeth) and ctx.kind(node.left) in TENSORISH:
            ctx.report(self.code, node, f"dynamo cannot apply `{symbol}` to a tensor and a `{right}` object: "
                       f"the graph breaks (GB0055); call the method Python falls back to, "
                       f"`{node.right.id}.{rmeth}(...)`")

    @classmethod
    def fixes(cls, finding, source, tree):
        st, _body, lines = finding_statement(finding, source, tree)
        if st is None:
            return []
        # the operators starting where the finding is, innermost first (`a * b + c` starts
        # two): a stand-in finding of dynamo's break is anchored on each expression of the line
        ops = sorted((n for n in ast.walk(st) if isinstance(n, ast.BinOp) and type(n.op) in _OPS
                      and (n.lineno, n.col_offset) == (finding.line, finding.col)),
                     key=lambda n: (n.end_lineno or n.lineno, n.end_col_offset or 0))
        out: list[Candidate] = []
        for rank, n in enumerate(ops):
            symbol, meth, rmeth = _OPS[type(n.op)]
            left, right = segment(lines, n.left), segment(lines, n.right)
            # (an argument needs no parentheses: a tuple written without them would)
            left, right = (f"({s})" if isinstance(e, ast.Tuple) and not s.startswith("(") else s
                           for s, e in ((left, n.left), (right, n.right)))
            for receiver, arg, name, reflected in ((n.left, right, meth, False), (n.right, left, rmeth, True)):
                if isinstance(receiver, ast.Constant):
                    continue     # a number is not the object
                text = segment(lines, receiver)
                call = (text if isinstance(receiver, _ATOMS) else f"({text})") + f".{name}({arg})"
                out.append(Candidate(
                    code=cls.code, path=finding.path, start_line=st.lineno, end_line=st.end_lineno or st.lineno,
                    lines=tuple(with_replaced(lines, st, n, call)), safe=False, rank=2 * rank + reflected,
                    title=f"call `{call}`, the method {'Python falls back to for' if reflected else 'Python calls for'} "
                          f"`{symbol}`, which dynamo traces"))
        return out
