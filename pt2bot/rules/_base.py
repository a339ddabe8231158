"""The Rule base class: code, defaults, the GB id it predicts, and its node handlers."""
from __future__ import annotations

import ast
import inspect
import re
from typing import TYPE_CHECKING, ClassVar

from pt2bot import gb as gb_registry

if TYPE_CHECKING:
    from pt2bot.rules._infer import FunctionContext, ModuleContext

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
        return gb_registry.gb_type(cls.gb)

    @classmethod
    def url(cls) -> str | None:
        return gb_registry.url(cls.gb)

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
