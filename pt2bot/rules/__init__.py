"""The rule registry: one module per rule, selection by code prefix, and `pt2bot rules`.

Each rule module holds one `Rule` subclass whose docstring is its documentation (sections
What it does / Why is this bad? / Example / Use instead). Codes: PTC0xx diagnostics,
PTC1xx purity and host syncs, PTC2xx value-dependent control flow, PTC3xx dynamic shapes,
PTC4xx graph fragmentation.
"""
from __future__ import annotations

import argparse
import ast
import json
from typing import Iterable

from pt2bot.errors import UserError
from pt2bot.findings import Finding
from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.compile_dynamic_false import CompileDynamicFalse
from pt2bot.rules.compile_in_loop import CompileInLoop
from pt2bot.rules.compile_submodules import CompileSubmodules
from pt2bot.rules.compiler_disable import CompilerDisable
from pt2bot.rules.dynamic_output_shape import DynamicOutputShape
from pt2bot.rules.edits import (apply_candidate, binds_torch, comment_lines, function_binds, keep_comments,
                                statement_at, torch_alias, with_torch_as)
from pt2bot.rules.einx_call import EinxCall
from pt2bot.rules.explicit_graph_break import ExplicitGraphBreak
from pt2bot.rules.grad_factory import GradFactory
from pt2bot.rules.file_io import FileIO
from pt2bot.rules.hardcoded_size import HardcodedSize
from pt2bot.rules.host_nondeterminism import HostNondeterminism
from pt2bot.rules.isinstance_nested import IsinstanceNested
from pt2bot.rules.logging_call import LoggingCall
from pt2bot.rules.min_max_key import MinMaxKey
from pt2bot.rules.module_state_mutation import ModuleStateMutation
from pt2bot.rules.operator_object import OperatorOnObject
from pt2bot.rules.print_call import PrintCall
from pt2bot.rules.range_over_size import RangeOverSize
from pt2bot.rules.scalar_condition import ScalarCondition
from pt2bot.rules.scalar_conversion import ScalarConversion
from pt2bot.rules.sdp_kernel import SdpKernel
from pt2bot.rules.shape_branch import ShapeBranch
from pt2bot.rules.size_specialised import SizeSpecialised
from pt2bot.rules.syntax_error import SyntaxErrorRule
from pt2bot.rules.tensor_condition import TensorCondition
from pt2bot.rules.tensor_item import TensorItem
from pt2bot.rules.tensor_iteration import TensorIteration
from pt2bot.rules.tensor_numpy import TensorNumpy
from pt2bot.rules.tensor_tolist import TensorTolist
from pt2bot.rules.torch_jit_call import TorchJitCall
from pt2bot.rules.type_tensor_class import TypeTensorClass
from pt2bot.rules.deepcopy_tensor import DeepcopyTensor

RULES: tuple[type[Rule], ...] = (
    SyntaxErrorRule,
    TensorItem, TensorTolist, TensorNumpy, ScalarConversion, PrintCall, LoggingCall,
    HostNondeterminism, FileIO, ExplicitGraphBreak, ModuleStateMutation, TorchJitCall, MinMaxKey,
    GradFactory, IsinstanceNested, TypeTensorClass, DeepcopyTensor, SdpKernel, OperatorOnObject,
    TensorCondition, TensorIteration, ScalarCondition,
    ShapeBranch, HardcodedSize, RangeOverSize, DynamicOutputShape, CompileDynamicFalse, EinxCall,
    SizeSpecialised,
    CompileSubmodules, CompileInLoop, CompilerDisable,
)
BY_CODE: dict[str, type[Rule]] = {r.code: r for r in RULES}


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(code.startswith(p.strip().upper()) for p in patterns if p.strip())


def validate_codes(patterns: Iterable[str], what: str) -> None:
    """Every pattern must be a code or a prefix of one (`PTC1`, `PTC301`, `ALL`)."""
    for p in patterns:
        p = p.strip().upper()
        if p and p != "ALL" and not any(code.startswith(p) for code in BY_CODE):
            raise UserError(f"{what}: unknown rule code or prefix {p!r} (see `pt2bot rules`)")


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[type[Rule]]:
    """Enabled rules: `select` (codes or prefixes; empty = the defaults) minus `ignore`.

    An explicit full code in `select` turns on a rule that is off by default; a prefix
    (`PTC1`) selects the default-enabled rules under it, like TorchFix.
    """
    select = [s.strip().upper() for s in select if s.strip()]
    ignore = [s.strip().upper() for s in ignore if s.strip()]
    validate_codes(select, "select")
    validate_codes(ignore, "ignore")
    out = []
    for r in RULES:
        if select:
            on = r.code in select or "ALL" in select or (r.default and _matches(r.code, select))
        else:
            on = r.default
        if on and not _matches(r.code, ignore):
            out.append(r)
    return out


def has_recipe(rule: type[Rule]) -> bool:
    """Whether the rule's `fixes` is its own (else it only documents what to write)."""
    return rule.fixes.__func__ is not Rule.fixes.__func__   # type: ignore[attr-defined]


def fix_candidates_explained(finding: Finding, source: str,
                             tree: ast.Module | None = None) -> tuple[list[Candidate], str | None]:
    """The candidate edits for `finding` in `source` (its file's text), most likely first, and
    when there are none, why. Never raises: a source that does not parse, a rule without a
    recipe or a recipe that fails on this code is no candidate with its reason."""
    rule = BY_CODE.get(finding.rule)
    if rule is None:
        return [], f"unknown rule {finding.rule}"
    if not has_recipe(rule):
        return [], f"{finding.rule} has no fix recipe (its documentation says what to write instead)"
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            return [], f"the file does not parse: {type(e).__name__}: {e}"
    try:
        cands = rule.fixes(finding, source, tree)
    except Exception as e:   # a recipe's fault on odd code is "no candidate", never a failed run
        return [], f"the {finding.rule} recipe failed on this code: {type(e).__name__}: {e}"
    n = len(source.splitlines())
    cands = [c for c in cands if 1 <= c.start_line <= c.end_line <= n]
    if not cands:
        try:
            why = rule.no_fix_reason(finding, source, tree)
        except Exception:   # (a reason is a courtesy: its fault on odd code is the plain one)
            why = None
        return [], f"{why or f'the {finding.rule} recipe has no edit for this code'}{without_torch(tree)}"
    alias = torch_alias(tree)
    if alias not in (None, "torch"):
        # the recipes write `torch.`; the file knows torch as `th` (`import torch as th`),
        # unless the function rebinds that name
        st, _ = statement_at(tree, finding.line, finding.col)
        shadowed = st is not None and function_binds(tree, st, alias)
        cands = [] if shadowed else [c for c in (with_torch_as(c, alias) for c in cands) if c is not None]
        if not cands:
            return [], f"the {finding.rule} recipe's edit could not be written with `{alias}` for torch"
    comments = comment_lines(source)
    return sorted((keep_comments(source, c, comments) for c in cands), key=lambda c: c.rank), None


def without_torch(tree: ast.Module) -> str:
    """What a reason adds where the file does not bind `torch` (torchdiffeq's interp.py):
    the recipes write `torch.` and add no import, which is an edit outside the hunk."""
    if binds_torch(tree):
        return ""
    # `from torch import equal` imports from torch without binding the name the edits write
    some = any(isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "torch" for n in ast.walk(tree))
    what = "imports from torch but does not bind the name `torch`" if some else "does not import torch"
    return f" (the file {what}, and an edit that needs it would add the import outside the hunk)"


def fix_candidates(finding: Finding, source: str, tree: ast.Module | None = None) -> list[Candidate]:
    """`fix_candidates_explained` without the reason."""
    return fix_candidates_explained(finding, source, tree)[0]


def rules_table_markdown() -> str:
    """The README table (generated; a test keeps README in sync)."""
    rows = ["| Code | Name | What it flags | Severity | Default | Predicts |",
            "|---|---|---|---|---|---|"]
    for r in RULES:
        predicts = f"[{r.gb}]({r.url()})" if r.gb else r.claim
        rows.append(f"| {r.code} | {r.name} | {r.summary.replace('|', chr(92) + '|')} | {r.severity} | "
                    f"{'on' if r.default else 'off'} | {predicts} |")
    return "\n".join(rows) + "\n"


def rule_to_dict(r: type[Rule]) -> dict:
    return {"code": r.code, "name": r.name, "summary": r.summary, "severity": r.severity,
            "default": r.default, "gb": r.gb, "gb_type": r.gb_type(), "url": r.url(),
            "help_uri": r.help_uri(), "claim": r.claim, "doc": r.doc()}


def cli_rules(args: argparse.Namespace) -> int:
    fmt = getattr(args, "format", "text") or "text"
    code = (getattr(args, "code", None) or "").upper()
    chosen = list(RULES)
    if code:
        chosen = [r for r in RULES if r.code.startswith(code) or r.name == code.lower()]
        if not chosen:
            raise UserError(f"unknown rule {code!r}; `pt2bot rules` lists them")
    if fmt == "json":
        print(json.dumps([rule_to_dict(r) for r in chosen], indent=2))
    elif fmt == "markdown-table":
        print(rules_table_markdown(), end="")
    elif code and len(chosen) == 1:
        r = chosen[0]
        print(f"# {r.name} ({r.code})\n")
        extra = f"Severity: {r.severity}. Enabled by default: {'yes' if r.default else 'no'}."
        if r.gb:
            extra += f" Predicts {r.gb} ({r.gb_type()}): {r.url()}"
        print(extra + "\n")
        print(r.doc())
    else:
        for r in chosen:
            flag = "" if r.default else "  (off by default)"
            print(f"{r.code}  {r.name:24s} {r.summary}{flag}")
    return 0


__all__ = ["RULES", "BY_CODE", "Rule", "Candidate", "fix_candidates", "fix_candidates_explained", "without_torch",
           "has_recipe", "apply_candidate", "select_rules", "cli_rules", "rules_table_markdown", "validate_codes"]
