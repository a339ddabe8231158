"""The Rule base class: code, defaults, the GB id it predicts, and its node handlers."""
from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pt2bot import gb as gb_registry

if TYPE_CHECKING:
    from pt2bot.analysis.infer import FunctionContext, ModuleContext
    from pt2bot.findings import Finding

SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead")

# The torch releases the rules' claims were checked on: tests/test_rules_torch.py runs on each
# (`make test-torch TORCH=...`). A rule states the releases its claim holds for with `since` /
# `until`; `pt2bot check` reads the user's torch (pt2bot/static/check.py `resolve_torch`) and drops
# what does not hold there. With no torch installed and none configured, the newest is assumed.
KNOWN_TORCH = ("2.13", "2.14")
NEWEST_TORCH = KNOWN_TORCH[-1]


def parse_version(v: str) -> tuple[int, ...]:
    """`"2.14.1+cu130"` -> (2, 14, 1); `"2.14"` -> (2, 14). Pre-release tags count as the release."""
    out = []
    for part in v.split("+", 1)[0].split("."):
        m = re.match(r"\d{1,6}", part)
        if not m:
            break
        out.append(int(m.group()))
        if m.end() < len(part):   # "0rc1": the release number, then a tag
            break
    return tuple(out)


def _before(version: tuple[int, ...], bound: str) -> bool:
    b = parse_version(bound)
    return version[:len(b)] < b


# The special values a candidate's replaced code guards against (`Candidate.guards`): whoever
# verifies the candidate must also compare it with the original on an input that reaches them.
# "invalid": values a check on a tensor's values refuses by raising (negative, zero, large, NaN);
# the original must raise on one of them, and the candidate must raise wherever it does.
# "large": finite values far beyond the usual range (1e6), where a clamp bites although a test
# for inf or NaN does not hold.
# "equal": two arguments a test compares for equality (`if t == t0: return y0`), one set to the
# other; the proof reads the pairs from the replaced code, so a recipe need not declare it.
GUARDS = ("nan", "inf", "empty", "zero", "invalid", "large", "equal")


@dataclass(frozen=True)
class Candidate:
    """One edit a rule proposes for one of its findings: lines start_line..end_line of `path`
    (1-based, inclusive) are replaced by `lines` (an empty `lines` deletes them)."""
    code: str                  # the rule's code, e.g. "PTC111"
    path: str                  # the finding's path, as in the Finding
    start_line: int            # first replaced line
    end_line: int              # last replaced line (== start_line for a one-line edit)
    lines: tuple[str, ...]     # the replacement lines, indentation included, no newline characters
    title: str                 # one line, what the edit does
    # Leaves eager behaviour identical by construction: `pt2bot check --diff/--fix` may apply it
    # without running it. Anything else must be run and compared before it is posted.
    safe: bool
    guards: tuple[str, ...] = ()   # special values (GUARDS) the replaced code guards against
    rank: int = 0              # try order: lower first (most likely first)
    # other forms of the same edit the proof tries after this one (their own ranks): a form
    # only the proof can choose between (the kept tensor, detached or not, tells only in the
    # gradients), which a reader of the recipe's candidates need not see
    variants: tuple["Candidate", ...] = ()
    # not an edit: the dynamo setting (`torch._dynamo.config.<setting> = True`) whose proof
    # this is, with `lines` the target's own line unchanged (pt2bot/fixes.py, SETTINGS)
    setting: str = ""


class Rule:
    """Subclasses set the class attributes; the class docstring is the rule's documentation."""

    code: ClassVar[str]
    name: ClassVar[str]                     # kebab-case, e.g. "tensor-item"
    summary: ClassVar[str]                  # one line for tables
    severity: ClassVar[str] = "error"
    default: ClassVar[bool] = True          # enabled without --select
    gb: ClassVar[str | None] = None         # the graph break the rule predicts
    # Other GB ids dynamo gives for the rule's kind of code (PTC102's `.tolist()` of an integer
    # tensor is GB0033): a break with one of them that no finding flags gets the rule's recipes
    # too (pt2bot/fixes.py `break_findings`), as one with `gb` does.
    gb_also: ClassVar[tuple[str, ...]] = ()
    # The kinds of torch.export failure (report.json's `export_kind`: "constraint_violation")
    # the rule's kind of code makes: an export target of that kind that no finding flags gets the
    # rule's recipes too, anchored on its line, as a break target with `gb` does.
    export_kinds: ClassVar[tuple[str, ...]] = ()
    claim: ClassVar[str] = "break"          # break | recompile | export | graphs (what tests assert)
    node_types: ClassVar[tuple[type, ...]] = ()
    # For rules with `ast.Call` in `node_types`: the calls `check` can report at, as keys
    # (pt2bot/analysis/infer.py `call_key`): ".name" for a method name `x.name(...)`, a bare name
    # for `name(...)`, a resolved dotted target ("torch.compile"), "()" for `f(...)(...)`.
    # The walk calls `check` on a Call only when one of its keys is here (None: on every call),
    # so this must cover every call `check` does not return early on. Why: ~110k calls in
    # transformers times a dozen rules was a Python call per rule per call, most returning at once.
    call_keys: ClassVar[frozenset[str] | None] = None
    # The torch releases the claim holds for: since <= torch < until (None: no bound). Both are
    # set from the torch-backed tests (tests/test_rules_torch.py) on every release in KNOWN_TORCH.
    since: ClassVar[str | None] = None
    until: ClassVar[str | None] = None
    # Narrower bounds for some callees (the resolved name of the call a finding is at), for rules
    # whose claim differs per function: PTC107's `random.random` is traced from torch 2.14 on.
    callee_until: ClassVar[dict[str, str]] = {}
    # The break is a data-dependent scalar or shape that `fullgraph=True` captures as an
    # unbacked symbol instead of breaking (`.item()`, `int(t)`, `x[mask]`, `unique`: measured on
    # 2.13 and 2.14); the message says so (pt2bot/static/check.py). True: every finding of the rule;
    # a set: findings at calls of those callees only (`bool(t)` still fails to guard).
    fullgraph_captures: ClassVar[bool | frozenset[str]] = False

    @classmethod
    def captured_by_fullgraph(cls, callee: str | None) -> bool:
        fc = cls.fullgraph_captures
        return fc is True or (bool(fc) and callee in fc)   # type: ignore[operator]

    @classmethod
    def holds_on(cls, torch: str | None, callee: str | None = None) -> bool:
        """Whether the claim holds on torch `torch` (None: any release; every claim is kept)."""
        if torch is None:
            return True
        v = parse_version(torch)
        if not v:
            return True
        if cls.since is not None and _before(v, cls.since):
            return False
        if cls.until is not None and not _before(v, cls.until):
            return False
        bound = cls.callee_until.get(callee or "")
        return bound is None or _before(v, bound)

    def check(self, ctx: "FunctionContext", node: ast.AST) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self, mod: "ModuleContext") -> None:
        """Called once per file after every function was walked (for per-scope rules)."""

    @classmethod
    def fixes(cls, finding: "Finding", source: str, tree: ast.Module) -> "list[Candidate]":
        """Candidate edits for one of this rule's findings in `source` (parsed as `tree`).

        A recipe edits only the lines of the finding's own statement (one contiguous range,
        indentation kept); a fix that needs an edit elsewhere stays text in the docstring's
        "Use instead" section. May raise on odd input: `fix_candidates` turns that into no candidate.
        """
        return []

    @classmethod
    def no_fix_reason(cls, finding: "Finding", source: str, tree: ast.Module) -> str | None:
        """Why `fixes` gave no edit for `finding`, where more can be said than that it had none
        (the form that would keep the code's behaviour, and why no recipe writes it)."""
        return None

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
