from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.analysis.queries import method_call


class TensorNumpy(Rule):
    """## What it does
    Flags `Tensor.numpy()` in compiled code. Off by default: enable it (`--select PTC103`) in
    projects that use `torch.export`.

    ## Why is this bad?
    Folklore says `.numpy()` breaks the graph; **torch 2.13 does not**: with the default
    `torch._dynamo.config.trace_numpy = True`, dynamo traces `.numpy()` and NumPy calls on the
    result (and `np.exp(tensor)`-style calls on tensors) as torch ops, so `torch.compile`
    keeps one graph. `torch.export`, however, fails on it (`RuntimeError: .numpy() is not
    supported for tensor subclasses`), and with `trace_numpy=False` it is GB0105. So this rule
    is about exportability, hence off by default and a warning.

    ## Example
    ```python
    def forward(self, x):
        return torch.from_numpy(x.numpy() * 2)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return x * 2
    ```
    """

    code = "PTC103"
    name = "tensor-numpy"
    summary = "`Tensor.numpy()` in compiled code (fails torch.export; compile traces it)"
    severity = "warning"
    default = False
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/export.html"
    node_types = (ast.Call,)
    call_keys = frozenset({".numpy"})

    def check(self, ctx, node):
        if method_call(node, ("numpy",)) is not None:
            ctx.report(self.code, node, "`.numpy()` cannot be exported with torch.export; use torch ops on the tensor")
