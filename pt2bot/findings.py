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


# What the smoke run made of a finding's claim (`Finding.smoke`, set by pt2bot/reach.py).
CONFIRMED = "confirmed"        # it recorded the break / recompile / export failure at the line
# dynamo traced the line and did none of it (a break claim), or every model that ran it exported
# with its dynamic dims (an export claim): demoted to info
NOT_OBSERVED = "not_observed"
SMOKE_STATUSES = (CONFIRMED, NOT_OBSERVED)


@dataclass(frozen=True)
class SmokeCheck:
    """The smoke run's verdict on a finding's claim (docs/formats.md, `smoke`)."""
    status: str                       # CONFIRMED | NOT_OBSERVED
    models: tuple[str, ...] = ()      # the models whose run confirmed it / could have shown it
    evidence: str = ""                # "GB0124 at pkg/m.py:12", or what the run did there
    # NOT_OBSERVED only: the finding's severity before the demotion to "info"
    severity: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"status": self.status, "models": list(self.models),
                             "evidence": self.evidence}
        if self.severity is not None:
            d["severity"] = self.severity
        return d

    @classmethod
    def from_dict(cls, d: Any) -> "SmokeCheck | None":
        """The JSON form back (None for anything that is not one: a verdict is data we wrote,
        but a partial report's findings are read back from disk)."""
        if not isinstance(d, dict) or d.get("status") not in SMOKE_STATUSES:
            return None
        models = d.get("models")
        sev = d.get("severity")
        return cls(status=d["status"],
                   models=tuple(m for m in models if isinstance(m, str))
                   if isinstance(models, list) else (),
                   evidence=d["evidence"] if isinstance(d.get("evidence"), str) else "",
                   severity=sev if sev in SEVERITIES else None)


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
    # What the smoke run made of the claim on that line: confirmed, or not observed (then the
    # severity is "info" and `smoke.severity` the one before); None = it could not tell
    # (set with `reached_by`; not part of the fingerprint).
    smoke: SmokeCheck | None = None

    @property
    def refuted(self) -> bool:
        """Whether the smoke run traced the line and did not do what the finding claims."""
        return self.smoke is not None and self.smoke.status == NOT_OBSERVED

    @property
    def confirmed(self) -> bool:
        return self.smoke is not None and self.smoke.status == CONFIRMED

    def fingerprint(self) -> str:
        """Stable key without line numbers: rule + path + function + normalised source."""
        return fingerprint(self.rule, self.path, self.function, self.source)

    def to_dict(self) -> dict[str, Any]:
        # (every field but `smoke` is a scalar or a tuple of strings: no deep copy as `asdict`
        # makes, which was half the cost of printing transformers' 2,019 findings as JSON)
        d = {name: getattr(self, name) for name in _FIELDS}
        d["hints"] = list(self.hints)
        for optional in ("condition", "reached_by", "smoke"):   # absent = not known (formats.md)
            if d[optional] is None:
                del d[optional]
        if self.reached_by is not None:
            d["reached_by"] = list(self.reached_by)
        if self.smoke is not None:
            d["smoke"] = self.smoke.to_dict()
        d["fingerprint"] = self.fingerprint()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        known = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in known}
        kw["hints"] = tuple(kw.get("hints") or ())
        if kw.get("reached_by") is not None:
            kw["reached_by"] = tuple(kw["reached_by"])
        if "smoke" in kw:
            kw["smoke"] = SmokeCheck.from_dict(kw["smoke"])
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


__all__ = ["CONFIRMED", "NOT_OBSERVED", "SMOKE_STATUSES", "Finding", "SmokeCheck", "fingerprint",
           "normalise_source", "sort_key", "SEVERITIES", "field"]
