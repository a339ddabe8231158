"""The data model shared by every stage: a static finding.

A finding is data (code, message, location, severity, stable key, hints). The diff filter
*annotates* it (`diff`), renderers turn it into review comments, annotations, SARIF, JSON.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any

# "info" is what a warning becomes under a condition (static.conditional: demote): shown,
# never failing a check (pt2bot/static/check.py `exit_code`, pt2bot/verdict.py count error/warning).
SEVERITIES = ("error", "warning", "info")

# Where a finding lies relative to the PR diff (set by changes.annotate_findings).
DIFF_ADDED = "added"          # on an added/modified line of the head
DIFF_CONTEXT = "diff_context"  # inside a hunk (context line)
DIFF_FILE = "file"            # in a changed file, outside every hunk
DIFF_OUTSIDE = "outside"      # in a file the PR did not change
DIFF_UNKNOWN = None           # not compared with a diff (plain `pt2bot check`)

# Which findings to report relative to the diff (`--filter`, `static.filter`; reviewdog's
# modes): each filter keeps the findings whose `diff` is one of these. `nofilter` keeps all.
FILTER_KEEPS: dict[str, tuple[str, ...] | None] = {
    "added": (DIFF_ADDED,),
    "diff_context": (DIFF_ADDED, DIFF_CONTEXT),
    "file": (DIFF_ADDED, DIFF_CONTEXT, DIFF_FILE),
    "nofilter": None,
}
FILTERS = tuple(FILTER_KEEPS)


@dataclass(frozen=True)
class Finding:
    rule: str                 # "PTC101"
    path: str                 # repo-relative, forward slashes
    line: int                 # 1-based
    col: int                  # 0-based, as ast gives it
    severity: str             # "error" | "warning" | "info"
    message: str              # one sentence, says what to write instead
    end_line: int | None = None
    end_col: int | None = None
    source: str = ""          # the offending source line, stripped (for excerpts/fingerprints)
    function: str = ""        # qualified name of the enclosing function ("Net.forward")
    gb: str | None = None     # predicted graph-break id ("GB0124"), when one applies
    gb_type: str | None = None
    url: str | None = None    # documentation link (the GB page)
    hints: tuple[str, ...] = ()
    suggestion: str | None = None   # replacement for the whole line, when the fix is mechanical
    diff: str | None = DIFF_UNKNOWN  # see DIFF_* above
    new: bool = True          # not present on base (set by compare)
    # The source of the guard under which the finding holds ("self.training and self.p > 0"),
    # when the line sits on a path the default call does not take (set by the static analysis).
    condition: str | None = None
    # Names of configured models that executed the line in a smoke run; () = none did;
    # None = no smoke results at hand (set from a results file: review, audit, check --results).
    reached_by: tuple[str, ...] | None = None

    def fingerprint(self) -> str:
        """Stable key without line numbers: rule + path + function + normalised source."""
        return fingerprint(self.rule, self.path, self.function, self.source)

    def to_dict(self) -> dict[str, Any]:
        # (every field is a scalar or a tuple of strings: no deep copy as `asdict` makes, which
        # was half the cost of printing transformers' 2,019 findings as JSON)
        d = {name: getattr(self, name) for name in _FIELDS}
        d["hints"] = list(self.hints)
        for optional in ("condition", "reached_by"):   # absent = not known (docs/formats.md)
            if d[optional] is None:
                del d[optional]
        if self.reached_by is not None:
            d["reached_by"] = list(self.reached_by)
        d["fingerprint"] = self.fingerprint()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        known = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in known}
        kw["hints"] = tuple(kw.get("hints") or ())
        if kw.get("reached_by") is not None:
            kw["reached_by"] = tuple(kw["reached_by"])
        return cls(**kw)

    def with_(self, **changes: Any) -> "Finding":
        return replace(self, **changes)


_FIELDS = tuple(f.name for f in fields(Finding))
_WS = re.compile(r"\s+")


def normalise_source(src: str) -> str:
    """Whitespace- and comment-insensitive form of a source line."""
    src = src.split("#", 1)[0] if "#" in src and "'" not in src and '"' not in src else src
    return _WS.sub(" ", src).strip()


def fingerprint(*parts: str | None) -> str:
    text = "\x1f".join(normalise_source(p) if i == len(parts) - 1 else (p or "")
                       for i, p in enumerate(parts))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def sort_key(f: Finding) -> tuple:
    return (f.path, f.line, f.col, f.rule)


__all__ = ["Finding", "fingerprint", "normalise_source", "sort_key", "SEVERITIES", "field"]
