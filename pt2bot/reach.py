"""Reached or not, and what dynamo did there: static findings joined with a smoke run.

A smoke run records, per model, the repo lines its calls executed or dynamo traced (the
RUN's `coverage`: path -> "1-3,7,9-12", written by pt2bot/smoke/coverage.py). Joined with
the static findings, each finding gets `reached_by` (pt2bot/findings.py): the names of the
models whose coverage holds one of its lines (`line`..`end_line`), `()` when none did. When
no model's results carry coverage (no smoke run, every model failed, results written
before coverage was recorded), nothing can be said and `reached_by` stays None.

Then the claim itself (each rule's `claim`, pt2bot/rules/base.py) is held against what
dynamo did on those lines, and the finding gets `smoke` (a `SmokeCheck`):

- **confirmed** when a model's run recorded there what the rule claims: for a break claim a
  graph break whose innermost frame in the repo is on the finding's lines, with the GB code
  the rule predicts (a break with another code on the line says the line broke for another
  reason first: neither confirmed nor refuted); for a recompile claim a recompile whose failed
  guard was made on those lines (torch's own size-1 guards left out) or a dynamic dim
  specialised there; for an export claim the same, or `torch.export` failing at the line.
- **not observed** only for break claims, when every model that reached the line traced it
  in its graph-break pass (the RUN's `traced_lines`: the lines dynamo symbolically executed
  in that compiled call, whose breaks `graph_breaks` holds) and none of them recorded a break
  of any kind with a frame on the line, and the finding states no condition. Dynamo goes past
  a line only after tracing it without a break, so such a claim is false for these models.
  The finding is demoted to "info" (never failing a check: pt2bot/verdict.py,
  pt2bot/static/check.py `exit_code`) and keeps its severity in `smoke.severity`.

- **not observed** for export claims too, when every model that reached the line ran
  `torch.export` with its configured dynamic dims and it succeeded, kept each of those dims
  dynamic and matched eager on every case, and the finding states no condition: what the
  claim needs, a dynamic dim the line depends on, is in no configured model (Swin's padding
  `if H < self.img_size[0]:`, where only `batch` is dynamic and the `assert` after it pins H
  and W). Demoted the same way; the evidence says the claim holds for a model that makes such
  a dim dynamic.

Recompile claims are never refuted, nor export claims without such an export: whether a size
guard recompiles, or export fails, depends on which dims vary and are declared dynamic, and a
line that compares a dim the matrix holds constant (a feature size) shows nothing although
the claim holds for a model where it varies. Nothing is judged without results; a line no
model ran keeps its finding as it was.

Used by the review (head's results), the audit, and `pt2bot check --results FILE` (the file
read by pt2bot.results.load_results_file, the one reader of results files).
Torch-free and cheap: one sorted list of ranges per (model, file), bisected per finding;
the recorded events indexed by file.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from pt2bot.findings import CONFIRMED, NOT_OBSERVED, Finding, SmokeCheck
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


# --------------------------------------------------------------------------- the claims

# Which recorded events bear on each kind of claim (a rule's `claim`, pt2bot/rules/base.py).
BREAK, RECOMPILE, SPECIALISED, EXPORT = "break", "recompile", "specialised", "export"
EVIDENCE_FOR: dict[str, tuple[str, ...]] = {
    "break": (BREAK,),
    "recompile": (RECOMPILE, SPECIALISED),
    "export": (EXPORT, SPECIALISED, RECOMPILE),
}
# The claims a run can refute (see the module doc for why only these).
REFUTABLE = ("break", "export")


def rule_claims() -> dict[str, str]:
    """rule code -> its claim (imported when needed: the registry loads the rules)."""
    from pt2bot.rules import BY_CODE

    return {code: rule.claim for code, rule in BY_CODE.items()}


@dataclass(frozen=True)
class Event:
    """One thing dynamo did at a line of the repo, as the join needs it."""
    kind: str                     # BREAK | RECOMPILE | SPECIALISED | EXPORT
    line: int
    text: str                     # the evidence, in words: "GB0124 at pkg/m.py:12"
    gb: str | None = None         # a break's GB code
    gb_type: str | None = None


@dataclass(frozen=True)
class RunEvents:
    """A model's recorded events by file, and where its graph-break pass traced."""
    name: str
    events: Mapping[str, tuple[Event, ...]]
    # lines some break has a frame on (innermost or further out): never "not observed" there
    break_frames: Mapping[str, frozenset[int]]
    traced: Mapping[str, FileLines] | None      # None: not known (older results, failed pass)
    case: str = ""                              # the pass's shape case: "batch=2, seq=16"
    # torch.export with the configured dynamic dims succeeded, kept every one of them dynamic
    # and matched eager on every case (False: failed, pinned a dim, or was not run)
    exported: bool = False

    @classmethod
    def of(cls, run: ModelRun) -> "RunEvents":
        events: dict[str, list[Event]] = {}
        frames: dict[str, set[int]] = {}

        def add(path: object, line: object, ev: Event) -> None:
            if isinstance(path, str) and isinstance(line, int) and line > 0:
                events.setdefault(path, []).append(ev)

        for b in run.breaks():
            for f in b.user_stack:
                if isinstance(f.path, str) and isinstance(f.line, int):
                    frames.setdefault(f.path, set()).add(f.line)
            if isinstance(b.path, str) and isinstance(b.line, int):
                frames.setdefault(b.path, set()).add(b.line)
                code = b.gb or "graph break"
                loop = " (in a loop: the frame ran eagerly)" if b.in_loop else ""
                add(b.path, b.line, Event(BREAK, b.line, f"{code} at {b.path}:{b.line}{loop}",
                                          gb=b.gb, gb_type=b.gb_type))
        rec = run.recompiles
        for case in (rec.cases if rec is not None else ()):
            for r in case.reasons:
                if r.kind == "size_one":
                    continue   # torch's own 0/1 specialisation, never the user's line
                shape = _shape(case.shape)
                add(r.path, r.line, Event(
                    RECOMPILE, r.line or 0,
                    f"recompile on guard {_cut(r.guard or '?')} at {r.path}:{r.line}"
                    + (f" ({shape})" if shape else "")))
        for sp in run.specialized or ():
            add(sp.path, sp.line, Event(
                SPECIALISED, sp.line or 0,
                f"dim {sp.dim or '?'} specialised to {sp.value} at {sp.path}:{sp.line}"))
        ex = run.export
        if ex is not None and ex.ok is False:
            add(ex.path, ex.line, Event(
                EXPORT, ex.line or 0,
                f"torch.export failed ({ex.kind or 'error'}) at {ex.path}:{ex.line}"))
        traced = None
        if isinstance(run.traced_lines, Mapping) and run.graph_breaks is not None:
            traced = {p: FileLines.parse(t) for p, t in run.traced_lines.items()}
        first = rec.cases[0].shape if rec is not None and rec.cases else None
        exported = ex is not None and ex.ok is True and not ex.static_dims and bool(ex.cases) and \
            all(c.match is True for c in ex.cases)
        return cls(name=run.name or "?",
                   events={p: tuple(evs) for p, evs in events.items()},
                   break_frames={p: frozenset(ls) for p, ls in frames.items()},
                   traced=traced, case=_shape(first), exported=exported)

    def confirming(self, f: Finding, kinds: tuple[str, ...], last: int) -> list[str]:
        """The evidence of this run for the claim on f's lines (empty: none)."""
        out = []
        for ev in self.events.get(f.path, ()):
            if ev.kind not in kinds or not f.line <= ev.line <= last:
                continue
            if ev.kind == BREAK and not _same_break(f, ev):
                continue
            out.append(ev.text)
        return out

    def traced_clean(self, f: Finding, last: int) -> bool:
        """Whether the graph-break pass traced f's lines and no break touched them."""
        if self.traced is None:
            return False
        lines = self.traced.get(f.path)
        if lines is None or not lines.hits(f.line, last):
            return False
        touched = self.break_frames.get(f.path, frozenset())
        return not any(f.line <= n <= last for n in touched)


def _same_break(f: Finding, ev: Event) -> bool:
    """A break that is the one the finding predicts: the same GB code (the type's text when
    the run has no code), or any break when the rule predicts no particular one."""
    if not f.gb:
        return True
    if ev.gb:
        return ev.gb == f.gb
    return bool(ev.gb_type) and ev.gb_type == f.gb_type


def _shape(shape: object) -> str:
    if not isinstance(shape, Mapping) or not shape:
        return ""
    return ", ".join(f"{k}={v}" for k, v in shape.items())


def _cut(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


class Judge:
    """The join of one results file with findings: coverage, and each model's events."""

    def __init__(self, results: ResultsFile | Mapping[str, Any] | Coverage | None,
                 claims: Mapping[str, str] | None = None) -> None:
        if isinstance(results, Coverage):
            self.coverage, runs, self.torch = results, (), None
        else:
            self.coverage = Coverage.from_results(results)
            rf = ResultsFile.coerce(results) if results is not None else None
            runs = [r for r in (rf.models if rf is not None else ())
                    if isinstance(r.name, str) and r.ok]
            self.torch = rf.torch if rf is not None else None
        self.runs = {r.name: RunEvents.of(r) for r in runs}
        self._claims = claims

    @property
    def claims(self) -> Mapping[str, str]:
        if self._claims is None:
            self._claims = rule_claims() if self.runs else {}
        return self._claims

    def judge(self, f: Finding) -> Finding:
        """f with `reached_by` and `smoke` as these results say (a previous verdict undone)."""
        f = unjudged(f)
        if self.coverage.known:
            f = f.with_(reached_by=self.coverage.reached_by(f.path, f.line, f.end_line))
        check = self.check(f)
        if check is None:
            return f
        if check.status == NOT_OBSERVED:
            return f.with_(smoke=check, severity="info")
        return f.with_(smoke=check)

    def check(self, f: Finding) -> SmokeCheck | None:
        claim = self.claims.get(f.rule) if self.runs else None
        kinds = EVIDENCE_FOR.get(claim or "")
        if not kinds or not isinstance(f.line, int):
            return None
        last = f.end_line if isinstance(f.end_line, int) and f.end_line >= f.line else f.line
        confirmed: dict[str, list[str]] = {}
        for name, run in self.runs.items():
            ev = run.confirming(f, kinds, last)
            if ev:
                confirmed[name] = ev
        if confirmed:
            seen = list(dict.fromkeys(e for evs in confirmed.values() for e in evs))
            return SmokeCheck(status=CONFIRMED, models=tuple(sorted(confirmed)),
                              evidence="; ".join(seen[:3]))
        reached = f.reached_by or ()
        if claim not in REFUTABLE or not reached or f.condition:
            return None
        runs = [self.runs.get(name) for name in reached]
        if claim == "export":
            if not all(r is not None and r.exported for r in runs):
                return None
            who = ", ".join(f"`{name}`" for name in reached)
            return SmokeCheck(
                status=NOT_OBSERVED, models=tuple(reached), severity=f.severity,
                evidence=f"torch.export with the configured dynamic dims succeeded on {who}, which "
                         "ran the line, keeping every one of them dynamic and matching eager on every "
                         "case: no dim it depends on is dynamic in the configured models (it matters "
                         "for one that makes such a dim dynamic)")
        if not all(r is not None and r.traced_clean(f, last) for r in runs):
            return None
        shown = [r for r in runs if r is not None and r.case]
        cases = (shown[0].case if len(runs) == 1 and shown else
                 "; ".join(f"{r.name}: {r.case}" for r in shown))
        where = f" on {cases}" if cases else ""   # the shape case the pass compiled
        torch = f", torch {self.torch}" if self.torch else ""
        return SmokeCheck(
            status=NOT_OBSERVED, models=tuple(reached), severity=f.severity,
            evidence=f"dynamo traced the line{where} and did not break the graph there"
                     f" (graph-break pass{torch})")


def unjudged(f: Finding) -> Finding:
    """f without a smoke verdict: the severity a "not observed" demotion took back."""
    if f.smoke is None:
        return f
    if f.smoke.status == NOT_OBSERVED and f.smoke.severity:
        return f.with_(smoke=None, severity=f.smoke.severity)
    return f.with_(smoke=None)


def mark_reached(findings: Iterable[Finding],
                 results: ResultsFile | Mapping[str, Any] | Coverage | None) -> list[Finding]:
    """The findings with `reached_by` set from the results (unchanged when no coverage is
    known) and `smoke` from what the models' runs recorded on their lines (a verdict from
    earlier results is replaced: a sharded review's merge judges again with every model)."""
    judge = Judge(results)
    return [judge.judge(f) for f in findings]


def mark_reached_dicts(findings: Iterable[dict[str, Any]],
                       results: ResultsFile | Mapping[str, Any] | Coverage | None
                       ) -> list[dict[str, Any]]:
    """`mark_reached` on findings already in their JSON form (report.json's `findings`)."""
    judge = Judge(results)
    out = []
    for d in findings:
        path, line = d.get("path"), d.get("line")
        if isinstance(path, str) and isinstance(line, int):
            try:
                f = Finding.from_dict(d)
            except TypeError:     # not a whole finding: only where it is
                f = None
            if f is not None:
                got = judge.judge(f).to_dict()
                d = {**d, **{k: got[k] for k in ("severity", "reached_by", "smoke") if k in got}}
                if "smoke" not in got:
                    d.pop("smoke", None)
            elif judge.coverage.known:
                d = {**d, "reached_by": list(judge.coverage.reached_by(path, line,
                                                                       d.get("end_line")))}
        out.append(d)
    return out


__all__ = ["Coverage", "FileLines", "Judge", "REFUTABLE", "EVIDENCE_FOR", "mark_reached",
           "mark_reached_dicts", "parse_ranges", "unjudged"]
