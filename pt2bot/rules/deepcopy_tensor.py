from __future__ import annotations

import ast

from pt2bot.analysis.queries import is_tensorish
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import node_span, replace_spans, source_lines


def _deepcopy_call(node: ast.AST) -> bool:
    """`deepcopy(<expr>)` / `<module>.deepcopy(<expr>)`: one positional argument, no memo
    (whether the name is `copy.deepcopy` is the import table's to say)."""
    f = node.func if isinstance(node, ast.Call) else None
    return (isinstance(f, ast.Name) and f.id == "deepcopy" or isinstance(f, ast.Attribute) and f.attr == "deepcopy") \
        and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred)


class DeepcopyTensor(Rule):
    """## What it does
    Flags `copy.deepcopy(t)` of a tensor in compiled code (segment-anything's
    `ResizeLongestSide.apply_coords_torch` copies its coordinates so with
    `deepcopy(coords).to(torch.float)` before scaling them in place).

    ## Why is this bad?
    Dynamo does not trace `copy.deepcopy` of a tensor: torch 2.13 breaks the graph at the call
    (GB4198, "Attempted to copy.deepcopy a tensor"; so does a deep copy of a dict or list that
    holds one, which this rule does not flag), and `torch.export` fails there ("Cannot access
    data pointer of Tensor").

    ## Example
    ```python
    def apply_coords_torch(self, coords: torch.Tensor, original_size):
        coords = deepcopy(coords).to(torch.float)
        coords[..., 0] = coords[..., 0] * scale
        return coords
    ```

    ## Use instead
    A copy dynamo traces, cut from autograd as a deep copy is (a deep copy never carries the
    original's graph: gradients do not flow back through it):
    ```python
        coords = coords.detach().clone().to(torch.float)
    ```
    The deep copy of a leaf that requires grad (a parameter) also requires grad, where the
    clone does not; a deep copy of a non-leaf that requires grad raises in eager, and the clone
    does not. Fix offered: the copy above in place of the call, tried by the proof.
    """

    code = "PTC116"
    name = "deepcopy-tensor"
    summary = "`copy.deepcopy()` of a tensor in compiled code (graph break)"
    gb = "GB4198"
    node_types = (ast.Call,)
    call_keys = frozenset({".deepcopy", "deepcopy"})

    def check(self, ctx, node):
        if _deepcopy_call(node) and ctx.mod.resolve(node.func) == "copy.deepcopy" \
                and is_tensorish(ctx, node.args[0]):
            ctx.report(self.code, node, "dynamo cannot `copy.deepcopy` a tensor: the call breaks the "
                       "graph (GB4198); `t.detach().clone()` is the same copy, cut from autograd as a deep "
                       "copy is, and traces")

    @classmethod
    def fixes(cls, finding, source, tree):
        node = next((n for n in ast.walk(tree) if _deepcopy_call(n)
                     and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
        if node is None:
            return []
        arg = node.args[0]
        lines = source_lines(source)
        first, last = node.lineno, node.end_lineno or node.lineno
        text = ast.get_source_segment(source, arg)
        if text is None or "\n" in text:
            return []
        # an operand that binds looser than a method call is parenthesised: `(a + b).detach()`
        simple = isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
        copy = f"{text if simple else f'({text})'}.detach().clone()"
        new = replace_spans(lines, first, last, [node_span(node) + (copy,)])
        return [Candidate(code=cls.code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                          title="copy with `.detach().clone()`, which traces", safe=False)]
