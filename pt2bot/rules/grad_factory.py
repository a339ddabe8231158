from __future__ import annotations

import ast

from pt2bot.rules.base import Rule

# The factories measured to break with GB0225 when given `requires_grad=True` inside a compiled
# function (torch 2.13 and 2.14.1, tests/fixtures/rules/ptc113_grad_factory.py); `x.new_zeros(...,
# requires_grad=True)` traced without a break there, so the `Tensor.new_*` methods are not flagged.
_FACTORIES = frozenset(f"torch.{n}" for n in (
    "tensor", "zeros", "ones", "empty", "full", "rand", "randn", "arange", "linspace", "eye",
    "zeros_like", "ones_like"))


class GradFactory(Rule):
    """## What it does
    Flags a tensor made with `requires_grad=True` in compiled code (`torch.tensor(0.,
    requires_grad=True)`, `torch.zeros(n, requires_grad=True)`, and the other factories
    listed in this rule's module).

    ## Why is this bad?
    Dynamo does not create a tensor that requires grad inside a graph: torch 2.13 and 2.14.1
    break the graph at the call (GB0225, "Attempted to use tensor creation function with
    requires_grad=True"). The pattern is common as the start of an auxiliary loss that later
    terms are added to (routing-transformer's `total_loss = torch.tensor(0., requires_grad=True)`,
    torch-geometric's equilibrium aggregation).

    ## Example
    ```python
    def forward(self, x):
        aux_loss = torch.tensor(0., requires_grad=True)
        for layer in self.layers:
            x, loss = layer(x)
            aux_loss = aux_loss + loss
        return x, aux_loss
    ```

    ## Use instead
    Where later terms that require grad are always added, the start needs no grad of its own:
    ```python
        aux_loss = torch.zeros((), device=x.device)
    ```
    Where it may stay alone (no layer adds a term) and callers still call `.backward()` on it,
    make it outside the compiled region: a buffer set in `__init__`
    (`self.register_buffer("zero", torch.zeros(()), persistent=False)`), then
    `self.zero.clone().requires_grad_()` outside `forward`, or keep the loss optional. Which one
    holds depends on the callers, so no edit is offered.
    """

    code = "PTC113"
    name = "grad-factory"
    summary = "tensor made with `requires_grad=True` in compiled code (graph break)"
    gb = "GB0225"
    node_types = (ast.Call,)
    call_keys = _FACTORIES

    def check(self, ctx, node):
        if ctx.call_target not in _FACTORIES:
            return
        for k in node.keywords:
            if k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True:
                ctx.report(self.code, node, f"`{ctx.call_target}(..., requires_grad=True)` breaks the graph "
                           "(dynamo does not make a tensor that requires grad); start it without "
                           "`requires_grad` where later terms carry the gradient, or make it outside "
                           "the compiled code")
                return
