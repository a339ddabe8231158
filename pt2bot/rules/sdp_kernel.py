from __future__ import annotations

import ast

from pt2bot.analysis.model import dotted
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import node_span, replace_spans, segment, source_lines

# `torch.backends.cuda.sdp_kernel`'s flags, in its order of positional parameters, and the
# backend of `torch.nn.attention.sdpa_kernel` each one enables (every flag defaults to True)
_FLAGS = (("enable_flash", "FLASH_ATTENTION"), ("enable_math", "MATH"),
          ("enable_mem_efficient", "EFFICIENT_ATTENTION"), ("enable_cudnn", "CUDNN_ATTENTION"))
_BACKEND = "torch.nn.attention.SDPBackend"


class SdpKernel(Rule):
    """## What it does
    Flags `torch.backends.cuda.sdp_kernel(...)`, the deprecated context manager that picks the
    scaled-dot-product-attention backends, in compiled code.

    ## Why is this bad?
    dynamo does not trace it: torch 2.13 breaks the graph at the call (GB0208, its result is a
    plain generator context manager) and again at the `with` (GB0142), on every call. Its
    replacement, `torch.nn.attention.sdpa_kernel(backends)`, which torch's deprecation warning
    names, traces without a break. The pattern `with torch.backends.cuda.sdp_kernel(**config._asdict()):`
    is copied across many attention modules (x-transformers, vit-pytorch's flash ViT,
    colt5-attention, mixture-of-attention).

    ## Example
    ```python
    def forward(self, q, k, v):
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=False):
            return F.scaled_dot_product_attention(q, k, v)
    ```

    ## Use instead
    ```python
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def forward(self, q, k, v):
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
            return F.scaled_dot_product_attention(q, k, v)
    ```
    Fix offered (not safe: run and compared before it is posted): the call as
    `torch.nn.attention.sdpa_kernel([...])` with the backends its flags enable, where the flags
    are literal `True`/`False` (by keyword or position; one left out is on, as in
    `sdp_kernel`), or where the call passes one mapping of them, `**config._asdict()`: the list is
    then built from that mapping where the call runs. Flags that enable no backend get no edit
    (`sdpa_kernel([])` is refused, where `sdp_kernel` fails later, at the attention).
    """

    code = "PTC117"
    name = "sdp-kernel"
    summary = "`torch.backends.cuda.sdp_kernel(...)` in compiled code (graph break)"
    gb = "GB0208"
    gb_also = ("GB0142",)
    node_types = (ast.Call,)
    call_keys = frozenset({"torch.backends.cuda.sdp_kernel"})

    @classmethod
    def fixes(cls, finding, source, tree):
        # (the call itself: a stand-in finding on dynamo's break may sit on another call of the
        # line, `config._asdict()`, at its own column)
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and (n.lineno, n.col_offset) == (finding.line, finding.col)
                     and dotted(n.func) == "torch.backends.cuda.sdp_kernel"), None)
        if node is None:
            return []
        lines = source_lines(source)
        backends = _backends(node, lines)
        if backends is None:
            return []
        first, last = node.lineno, node.end_lineno or node.lineno
        new = replace_spans(lines, first, last, [(*node_span(node), f"torch.nn.attention.sdpa_kernel({backends})")])
        return [Candidate(code=cls.code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                          title="use `torch.nn.attention.sdpa_kernel`, which dynamo traces, with the backends "
                                "the call enables", safe=False)]

    def check(self, ctx, node):
        if ctx.call_target == "torch.backends.cuda.sdp_kernel":
            ctx.report(self.code, node, "`torch.backends.cuda.sdp_kernel()` is not traced by dynamo and breaks the "
                       "graph (at the call and at its `with`); use `torch.nn.attention.sdpa_kernel([...])` "
                       "with the `SDPBackend`s to allow, which traces")


def _backends(call: ast.Call, lines: list[str]) -> str | None:
    """The `sdpa_kernel` argument for `call`'s flags: a list of backends, or a list built from
    the one mapping the call passes (`**config._asdict()`); None where neither fits."""
    if len(call.keywords) == 1 and call.keywords[0].arg is None and not call.args:
        mapping = segment(lines, call.keywords[0].value)
        if "\n" in mapping:
            return None
        pairs = ", ".join(f'("{flag}", {_BACKEND}.{b})' for flag, b in _FLAGS)
        return f"[b for k, b in ({pairs}) if {{**{mapping}}}.get(k, True)]"
    if any(k.arg is None for k in call.keywords) or len(call.args) > len(_FLAGS):
        return None
    given: dict[str, bool] = {}
    for (flag, _), a in zip(_FLAGS, call.args):
        given[flag] = a     # type: ignore[assignment]
    for k in call.keywords:
        given[k.arg] = k.value  # type: ignore[index]
    if set(given) - {f for f, _ in _FLAGS}:
        return None
    on = []
    for flag, backend in _FLAGS:
        v = given.get(flag)
        if v is None:
            on.append(backend)
        elif isinstance(v, ast.Constant) and isinstance(v.value, bool):
            if v.value:
                on.append(backend)
        else:
            return None
    return "[" + ", ".join(f"{_BACKEND}.{b}" for b in on) + "]" if on else None
