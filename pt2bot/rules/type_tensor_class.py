from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import binds_torch, node_span, replace_spans, source_lines

# What `t.type(torch.Tensor)` gives, as a call dynamo traces (measured on torch 2.13: equal values
# and dtype, also with the default dtype set to float64).
_INSTEAD = 'to(device="cpu", dtype=torch.get_default_dtype())'


def _type_call(node: ast.AST) -> bool:
    """`<expr>.type(X)`: one positional argument, no keyword."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "type"
            and len(node.args) == 1 and not node.keywords)


class TypeTensorClass(Rule):
    """## What it does
    Flags `t.type(torch.Tensor)` in compiled code: a conversion to the default tensor type
    through the class `torch.Tensor`, an idiom of older code (nflows' elementwise transforms make
    a float mask with `(inputs < 0).type(torch.Tensor)`).

    ## Why is this bad?
    Dynamo cannot pass the class `torch.Tensor` as an argument of a tensor method: torch 2.13 and
    2.14.1 break the graph at the call (GB7489, "Unsupported argument type in tensor method
    call"). A type named by its string or its legacy class (`"torch.FloatTensor"`,
    `torch.FloatTensor`) traces.

    ## Example
    ```python
    def forward(self, inputs):
        mask = (inputs < 0).type(torch.Tensor)
        return self.log_slope * mask
    ```

    ## Use instead
    The same conversion, which dynamo traces: the default dtype, on the CPU (where
    `.type(torch.Tensor)` puts it, whatever the tensor's device):
    ```python
        mask = (inputs < 0).to(device="cpu", dtype=torch.get_default_dtype())
    ```
    Where the tensor may live on another device, that move was probably never meant:
    `.to(inputs.dtype)` or `.float()` keeps it there, a change the author should make knowingly.
    Fix offered: the exact conversion above, tried by the proof (where the file binds `torch`).
    """

    code = "PTC115"
    name = "type-tensor-class"
    summary = "`.type(torch.Tensor)` in compiled code (graph break)"
    gb = "GB7489"
    node_types = (ast.Call,)
    call_keys = frozenset({".type"})

    def check(self, ctx, node):
        if _type_call(node) and ctx.mod.resolve(node.args[0]) == "torch.Tensor":
            ctx.report(self.code, node, "dynamo cannot pass the class `torch.Tensor` to a tensor method: "
                       "`.type(torch.Tensor)` breaks the graph (GB7489); `.to(device=\"cpu\", "
                       "dtype=torch.get_default_dtype())` is the same conversion and traces")

    @classmethod
    def fixes(cls, finding, source, tree):
        node = next((n for n in ast.walk(tree) if _type_call(n)
                     and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
        # written `torch.Tensor`, in a file that binds `torch` (an alias of it: no edit)
        arg = node.args[0] if node is not None else None
        if not (isinstance(arg, ast.Attribute) and arg.attr == "Tensor" and isinstance(arg.value, ast.Name)
                and arg.value.id == "torch" and binds_torch(tree)):
            return []
        lines = source_lines(source)
        # `.type(torch.Tensor)` -> `.to(...)`: from the method's name to the call's end
        start = (node.func.end_lineno or node.lineno, (node.func.end_col_offset or 0) - len("type"))
        _, end = node_span(node)
        first, last = node.lineno, node.end_lineno or node.lineno
        new = replace_spans(lines, first, last, [(start, end, _INSTEAD)])
        return [Candidate(code=cls.code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                          title="convert with `.to(device=\"cpu\", dtype=torch.get_default_dtype())`, "
                                "which traces", safe=False)]
