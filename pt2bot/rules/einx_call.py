from __future__ import annotations

import ast

from pt2bot.rules.base import Rule

# einx 0.4.3's tensor operations (`einx._src.frontend.ops.ops` plus the einx-notation entry
# points): each is registered with `torch.compiler.allow_in_graph`, and builds its graph from
# `tuple(int(x) for x in tensor.shape)` (einx/_src/frontend/impl/torch.py, get_shape). Under
# torch.compile that `int()` runs on the symbolic sizes and specialises them. Not listed: the
# shape solvers and checks (`einx.solve*`, `einx.matches`, `einx.check`) and `einx.arange`, which
# take no tensor operand.
_OPS = frozenset({
    "add", "add_at", "all", "any", "argmax", "argmin", "argsort", "count_nonzero", "divide", "dot",
    "equal", "flip", "floor_divide", "get_at", "greater", "greater_equal", "id", "less", "less_equal",
    "log_softmax", "logaddexp", "logical_and", "logical_or", "logsumexp", "max", "maximum", "mean",
    "min", "minimum", "multiply", "not_equal", "prod", "roll", "set_at", "softmax", "sort", "std",
    "subtract", "subtract_at", "sum", "true_divide", "var", "where",
    "rearrange", "reduce", "elementwise", "vmap", "vmap_with_axis",
})
_TARGETS = frozenset(f"einx.{op}" for op in _OPS)


class EinxCall(Rule):
    """## What it does
    Flags calls of einx's tensor operations (`einx.where`, `einx.multiply`, `einx.sum`,
    `einx.rearrange`, `einx.get_at`, ...) in compiled code.

    ## Why is this bad?
    einx solves its notation in Python from the operands' shapes read as Python ints (einx
    0.4.3: `int(d)` of every dim, inside an op it registers with `allow_in_graph`). Under
    torch.compile that specialises every dim of every tensor passed to the call: a varying batch
    or sequence length compiles again for each new size (automatic dynamic, `mark_dynamic` and
    `dynamic=True` do not help), until the recompile limit (8), after which the frame runs
    eagerly. The static sizes then spread: a tensor the call returns has fixed dims, and adding
    it to one with a symbolic dim specialises that one too (x-transformers' residual
    `x + residual` after `einx.where` on the attention output). Measured on torch 2.13 (CPU):
    `einx.where('b n, b n d, -> b n d', mask, out, 0.)` compiles once per input shape, and
    replacing it by `torch.where` in x-transformers' encoder leaves no specialisation in the
    model. einops' `rearrange`, `reduce`, `repeat`, `einsum`, `pack` and `unpack` are not
    flagged: einops registers them for dynamo and they keep dims symbolic (one compile over
    three shapes).

    ## Example
    ```python
    def forward(self, x, mask):
        out = self.proj(x)
        return einx.where("b n, b n d, -> b n d", mask, out, 0.0)
    ```

    ## Use instead
    The torch operation with explicit broadcasting, or einops:
    ```python
    def forward(self, x, mask):
        out = self.proj(x)
        return torch.where(mask[..., None], out, 0.0)
    ```
    """

    code = "PTC306"
    name = "einx-specialises-shapes"
    summary = "an einx operation in compiled code (specialises every dim of its operands)"
    severity = "warning"
    claim = "recompile"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.Call,)
    call_keys = _TARGETS

    def check(self, ctx, node):
        target = ctx.call_target
        if target not in _TARGETS:
            return
        ctx.report(self.code, node, f"`{target}` reads its operands' shapes as Python ints (einx builds its "
                   "graph from `int(d)` of every dim): under torch.compile every dim of the tensors it is "
                   "given is specialised, so each new batch or sequence length compiles again, even with "
                   "dynamic=True, until the recompile limit; use the torch op with explicit broadcasting "
                   "(`torch.where(mask[..., None], out, 0.)`) or einops (`rearrange`/`reduce`/`einsum` keep "
                   "dims symbolic)")
