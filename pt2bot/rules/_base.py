"""The Rule base class: code, defaults, the GB id it predicts, and its node handlers."""
from __future__ import annotations

import ast
import inspect
import re
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from pt2bot.rules._analysis import FunctionContext, ModuleContext

GB_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"

# gb_type strings from torch 2.13's torch/_dynamo/graph_break_registry.json (first entry of each
# id), copied at development time so that `pt2bot check` never imports torch.
GB_TYPES = {
    "GB0007": "Attempted to call function marked as skipped",
    "GB0025": "Call to `torch._dynamo.graph_break()`",
    "GB0033": "Data dependent operator",
    "GB0036": "Dynamic shape operator",
    "GB0059": "Failed to trace builtin operator",
    "GB0098": "Skip calling `torch.compiler.disable()`d function",
    "GB0109": "Tensor.tolist() with non-integer tensor",
    "GB0124": "Unsupported Tensor.item() call with capture_scalar_outputs=False",
    "GB0170": "Data-dependent branching",
    "GB0291": "logging.Logger method not supported for non-export cases",
    "GB4841": "Unsupported python_type() call",
}

SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead")


class Rule:
    """Subclasses set the class attributes; the class docstring is the rule's documentation."""

    code: ClassVar[str]
    name: ClassVar[str]                     # kebab-case, e.g. "tensor-item"
    summary: ClassVar[str]                  # one line for tables
    severity: ClassVar[str] = "error"
    default: ClassVar[bool] = True          # enabled without --select
    gb: ClassVar[str | None] = None         # the graph break the rule predicts
    claim: ClassVar[str] = "break"          # break | recompile | export | graphs (what tests assert)
    node_types: ClassVar[tuple[type, ...]] = ()

    def check(self, ctx: "FunctionContext", node: ast.AST) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self, mod: "ModuleContext") -> None:
        """Called once per file after every function was walked (for per-scope rules)."""

    @classmethod
    def gb_type(cls) -> str | None:
        return GB_TYPES.get(cls.gb) if cls.gb else None

    @classmethod
    def url(cls) -> str | None:
        return GB_URL.format(cls.gb.lower()) if cls.gb else None

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """`## Heading` sections of the docstring, ruff style."""
        out: dict[str, str] = {}
        current = None
        for line in cls.doc().splitlines():
            m = re.match(r"^##\s+(.*?)\s*$", line)
            if m:
                current = m.group(1)
                out[current] = ""
            elif current is not None:
                out[current] += line + "\n"
        return {k: v.strip() for k, v in out.items()}

    doc_url: ClassVar[str] = "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html"

    @classmethod
    def help_uri(cls) -> str:
        """Where a user reads more: the GB page of the predicted break, else the torch docs."""
        return cls.url() or cls.doc_url
