"""Reached or not: which configured models executed each static finding's line.

A smoke run records, per model, the repo lines its calls executed or dynamo traced (the
RUN's `coverage`: path -> "1-3,7,9-12", written by pt2bot/smoke/coverage.py). Joined with
the static findings, each finding gets `reached_by` (pt2bot/findings.py): the names of the
models whose coverage holds one of its lines (`line`..`end_line`), `()` when none did. When
no model's results carry coverage (no smoke run, every model failed, results written
before coverage was recorded), nothing can be said and `reached_by` stays None.

Used by the review (head's results), the audit, and `pt2bot check --results FILE` (the file
read by pt2bot.results.load_results_file, the one reader of results files).
Torch-free and cheap: one sorted list of ranges per (model, file), bisected per finding.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from pt2bot.findings import Finding
from pt2bot.results import ModelRun, ResultsFile

_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def parse_ranges(text: object) -> list[tuple[int, int]]:
    """"1-3,7" -> [(1, 3), (7, 7)], sorted and merged; junk parts are skipped."""
    if not isinstance(text, str):
        return []
    spans = []
    for part in text.split(","):
        m = _RANGE.fullmatch(part)
        if not m:
            continue
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if 0 < lo <= hi:
            spans.append((lo, hi))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


@dataclass(frozen=True)
class FileLines:
    """One file's executed lines as merged ranges (starts kept apart for bisect)."""
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def parse(cls, text: object) -> "FileLines":
        spans = parse_ranges(text)
        return cls(tuple(s for s, _ in spans), tuple(e for _, e in spans))

    def hits(self, first: int, last: int) -> bool:
        """Whether any line in first..last executed."""
        i = bisect.bisect_right(self.starts, last) - 1   # the last range starting <= last
        return i >= 0 and self.ends[i] >= first


@dataclass(frozen=True)
class Coverage:
    """Per model with coverage: repo path -> its executed lines."""
    models: Mapping[str, Mapping[str, FileLines]]

    @classmethod
    def from_results(cls, results: ResultsFile | Mapping[str, Any] | None) -> "Coverage":
        if results is None:
            return cls({})
        runs: Sequence[ModelRun] = ResultsFile.coerce(results).models
        models: dict[str, dict[str, FileLines]] = {}
        for run in runs:
            if not isinstance(run.name, str) or not isinstance(run.coverage, Mapping):
                continue   # a failed model, or results from before coverage: unknown
            models[run.name] = {path: FileLines.parse(text) for path, text in run.coverage.items()}
        return cls(models)

    @property
    def known(self) -> bool:
        return bool(self.models)

    def reached_by(self, path: str, line: int, end_line: int | None = None) -> tuple[str, ...]:
        last = end_line if isinstance(end_line, int) and end_line >= line else line
        return tuple(sorted(name for name, files in self.models.items()
                            if path in files and files[path].hits(line, last)))


def mark_reached(findings: Iterable[Finding],
                 results: ResultsFile | Mapping[str, Any] | Coverage | None) -> list[Finding]:
    """The findings with `reached_by` set from the results (unchanged when nothing is known)."""
    cov = results if isinstance(results, Coverage) else Coverage.from_results(results)
    findings = list(findings)
    if not cov.known:
        return findings
    return [f.with_(reached_by=cov.reached_by(f.path, f.line, f.end_line)) for f in findings]


def mark_reached_dicts(findings: Iterable[dict[str, Any]],
                       results: ResultsFile | Mapping[str, Any] | Coverage | None
                       ) -> list[dict[str, Any]]:
    """`mark_reached` on findings already in their JSON form (report.json's `findings`)."""
    cov = results if isinstance(results, Coverage) else Coverage.from_results(results)
    findings = list(findings)
    if not cov.known:
        return findings
    out = []
    for f in findings:
        path, line = f.get("path"), f.get("line")
        if isinstance(path, str) and isinstance(line, int):
            f = {**f, "reached_by": list(cov.reached_by(path, line, f.get("end_line")))}
        out.append(f)
    return out


__all__ = ["Coverage", "FileLines", "mark_reached", "mark_reached_dicts", "parse_ranges"]
