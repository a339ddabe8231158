"""The typed report: what `compare.build_report` produces and the verdict and renderers read.

report.json (schema `pt2bot.report/1`, docs/formats.md) is `Report.to_dict()`. The top level
(`Report`), each entry of its `models` (`ModelDelta`) and that entry's `delta` counts
(`Delta`) are frozen dataclasses, so pt2bot/verdict.py and the renderers in pt2bot/report/
read fields instead of looking keys up in a dict. The findings are `Finding`s (report.json
holds their `to_dict()`), so SARIF gets them as they are. The deeper parts stay the JSON
objects docs/formats.md describes, as plain dicts: a reason, a skipped model, a break, a
problem, a recompile case, an accuracy or latency row, and a model's RUN on each side
(`base`, `head`) exactly as its results file has it.

Nothing reads report.json back into these types: the publisher reads the file as untrusted
data (pt2bot/publish/artifact.py), with its own checks.

`to_dict()` writes the keys in the order report.json has always had them, and shares the
nested dicts with the report rather than copying them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from pt2bot.findings import Finding
from pt2bot.jsonio import jsonable
from pt2bot.results import REPORT_SCHEMA

JSON = Mapping[str, Any]


def _items(values: tuple[JSON, ...]) -> tuple[JSON, ...]:
    return tuple(jsonable(list(values)))


def _mapping(value: JSON | None) -> JSON | None:
    return None if value is None else jsonable(dict(value))


# --------------------------------------------------------------------------- a model's delta

@dataclass(frozen=True)
class Delta:
    """A model's `delta`: head minus base, per measure (docs/formats.md)."""
    graph_breaks: int = 0
    graph_count: int = 0
    recompiles: int = 0           # not counting those that follow from a new break
    new_recompiles: int = 0       # the increases over the shape cases
    caused_recompiles: int = 0    # those that follow from a new break
    # automatic dynamic's one recompile of a frame that a break base has too splits off
    after_break_recompiles: int = 0
    recompile_cases: tuple[JSON, ...] = ()
    export: str = "n/a"           # same | broken | fixed | n/a
    accuracy: tuple[JSON, ...] = ()
    new_specialized: tuple[JSON, ...] = ()
    fixed_specialized: tuple[JSON, ...] = ()
    latency: tuple[JSON, ...] = ()
    eager_fallback: bool | None = None    # None: head was not compared (absent from the JSON)
    # graph coverage of both sides and its changes in words (absent: head has none)
    coverage: JSON | None = None
    # what newly keeps export from being dynamic or from succeeding (compare.new_export_causes);
    # absent from the JSON when empty
    new_export_causes: tuple[JSON, ...] = ()
    # the shape cases whose eager outputs have other shapes on head than on base
    # (compare.compare_output_shapes); absent from the JSON when none
    output_shapes: tuple[JSON, ...] = ()

    def new_recompile_reasons(self) -> list[tuple[JSON, JSON]]:
        """(shape case row, reason) of each failed guard of the recompiles head adds, those a
        break explains left out (`caused_by` a new break, says its line; `after_break`, an
        old break's frame recompiling once, as on any plain compile). torch's own size-1
        compiles (`kind` size_one) are in: a caller leaves them out where they are no one's."""
        return [(row, r) for row in self.recompile_cases
                if isinstance(row.get("delta"), int) and row["delta"] > 0
                for r in row.get("reasons") or ()
                if isinstance(r, dict) and not r.get("caused_by") and not r.get("after_break")]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "graph_breaks": self.graph_breaks, "graph_count": self.graph_count,
            "recompiles": self.recompiles, "new_recompiles": self.new_recompiles,
            "caused_recompiles": self.caused_recompiles,
            "after_break_recompiles": self.after_break_recompiles,
            "recompile_cases": list(self.recompile_cases), "export": self.export,
            "accuracy": list(self.accuracy), "new_specialized": list(self.new_specialized),
            "fixed_specialized": list(self.fixed_specialized), "latency": list(self.latency)}
        if self.eager_fallback is not None:
            out["eager_fallback"] = self.eager_fallback
        if self.coverage is not None:
            out["coverage"] = self.coverage
        if self.new_export_causes:
            out["new_export_causes"] = list(self.new_export_causes)
        if self.output_shapes:
            out["output_shapes"] = list(self.output_shapes)
        return out

    def as_written(self) -> "Delta":
        return replace(self, recompile_cases=_items(self.recompile_cases),
                       accuracy=_items(self.accuracy),
                       new_specialized=_items(self.new_specialized),
                       fixed_specialized=_items(self.fixed_specialized),
                       latency=_items(self.latency), coverage=_mapping(self.coverage),
                       new_export_causes=_items(self.new_export_causes),
                       output_shapes=_items(self.output_shapes))


# How an entry was made decides where `change` sits among its keys: an entry with no head run
# to compare (not run, removed, or its comparison failed), a run the smoke run skipped, or a
# compared run. report.json has always written them so; the layouts keep it byte for byte.
PLACEHOLDER, RUN_SKIPPED, COMPARED = "placeholder", "run_skipped", "compared"
_KEYS = ("name", "status", "reason", "base", "head", "error", "delta", "new_breaks",
         "fixed_breaks", "unchanged_breaks", "problems")
KEY_ORDER = {
    PLACEHOLDER: ("name", "status", "reason", "change", *_KEYS[3:]),
    RUN_SKIPPED: (*_KEYS[:5], "change", *_KEYS[5:]),
    COMPARED: (*_KEYS, "change", "compile"),
}


@dataclass(frozen=True)
class ModelDelta:
    """One entry of report.json's `models`: a configured model, base vs head."""
    name: str
    status: str = "ok"            # head's RUN status; "skipped" when there is nothing to compare
    reason: str | None = None     # why skipped (or the RUN's own reason)
    change: str = "unknown"       # new | removed | changed | unchanged | unknown
    base: JSON | None = None      # the RUN in base's results file (None: not there)
    head: JSON | None = None      # the RUN in head's results file
    error: JSON | None = None     # head's RUN error ({} when it has none), only when head failed
    delta: Delta = field(default_factory=Delta)
    new_breaks: tuple[JSON, ...] = ()
    fixed_breaks: tuple[JSON, ...] = ()
    unchanged_breaks: int = 0
    problems: tuple[JSON, ...] = ()
    # the first compile's cost on each side and the verdict on it (absent: neither has one)
    compile: JSON | None = None
    # {"head": advice, "base": advice | None, "changed": bool} (compare.compare_shape_advice);
    # absent when head has no shape advice
    shape_advice: JSON | None = None
    layout: str = field(default=COMPARED, repr=False, compare=False)   # see KEY_ORDER
    # The latency gate (pt2bot/latency_gate.py): "unchanged" (no latency verdict: same
    # graphs, same code), "not_measured" (head's run timed nothing: latency off, or the model
    # did not run) or "measured"; the note says why it was measured.
    latency_gate: str = "measured"
    latency_gate_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        values = {
            "name": self.name, "status": self.status, "reason": self.reason,
            "change": self.change, "base": self.base, "head": self.head, "error": self.error,
            "delta": self.delta.to_dict(), "new_breaks": list(self.new_breaks),
            "fixed_breaks": list(self.fixed_breaks), "unchanged_breaks": self.unchanged_breaks,
            "problems": list(self.problems), "compile": self.compile}
        out = {k: values[k] for k in KEY_ORDER[self.layout]
               if (k != "error" or self.error is not None)
               and (k != "compile" or self.compile is not None)}
        if self.shape_advice is not None:
            out["shape_advice"] = self.shape_advice
        out["latency_gate"] = self.latency_gate
        if self.latency_gate_note is not None:
            out["latency_gate_note"] = self.latency_gate_note
        return out

    def with_(self, **changes: Any) -> "ModelDelta":
        return replace(self, **changes)

    def as_written(self) -> "ModelDelta":
        return replace(self, base=_mapping(self.base), head=_mapping(self.head),
                       error=_mapping(self.error), delta=self.delta.as_written(),
                       new_breaks=_items(self.new_breaks),
                       fixed_breaks=_items(self.fixed_breaks), problems=_items(self.problems),
                       compile=_mapping(self.compile), shape_advice=_mapping(self.shape_advice))


# --------------------------------------------------------------------------- the report

@dataclass(frozen=True)
class Report:
    """report.json: the verdict, the findings new vs pre-existing, the per-model deltas."""
    schema: str = REPORT_SCHEMA
    pt2bot: str = ""              # the version that wrote it
    mode: str = "review"          # review (against a diff) | audit
    base: str | None = None       # commits
    head: str | None = None
    conclusion: str = "neutral"   # success | failure | neutral
    summary_title: str = ""
    reasons: tuple[JSON, ...] = ()          # {code, level, model, message, count}
    torch: str | None = None                # head's run environment
    device: str | None = None
    device_name: str | None = None
    backend: str | None = None
    config_digest: str | None = None
    thresholds: JSON = field(default_factory=dict)   # what the verdict applied
    findings: tuple[Finding, ...] = ()      # the ones the diff filter keeps
    findings_hidden: int = 0                # the ones it hides
    models: tuple[ModelDelta, ...] = ()
    skipped: tuple[JSON, ...] = ()          # {name, reason}
    counts: JSON = field(default_factory=dict)
    timings: JSON | None = None             # seconds per stage (absent: not measured)
    partial: JSON | None = None             # a shard's report: what it covers (pt2bot/partial.py)
    # changed code no configured model ran on head: [{path, lines, branches?, unevaluated?}]
    # (compare.not_run_lines);
    # None (absent): not known (no smoke run, no coverage, no diff)
    not_run: tuple[JSON, ...] | None = None
    # changed code a model ran only eagerly, in a frame dynamo gave up on: [{path, lines, model,
    # function, line, reason}] (compare.not_traced_lines); None (absent): not known
    not_traced: tuple[JSON, ...] | None = None
    # the proof of fixes (pt2bot/fixes.py): {budget_s, spent_s, targets, candidates};
    # None (absent): not run (turned off, nothing targeted, or a shard's partial report)
    fixes: JSON | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": self.schema, "pt2bot": self.pt2bot, "mode": self.mode,
            "base": self.base, "head": self.head, "conclusion": self.conclusion,
            "summary_title": self.summary_title, "reasons": list(self.reasons),
            "torch": self.torch, "device": self.device, "device_name": self.device_name,
            "backend": self.backend, "config_digest": self.config_digest,
            "thresholds": dict(self.thresholds),
            "findings": [f.to_dict() for f in self.findings],
            "findings_hidden": self.findings_hidden,
            "models": [m.to_dict() for m in self.models],
            "skipped": list(self.skipped), "counts": dict(self.counts)}
        if self.not_run is not None:
            out["not_run"] = [{"path": x.get("path"), "lines": list(x.get("lines") or ()),
                               **({"branches": [dict(b) for b in x["branches"]]}
                                  if x.get("branches") else {}),
                               **({"unevaluated": [dict(o) for o in x["unevaluated"]]}
                                  if x.get("unevaluated") else {})}
                              for x in self.not_run]
        if self.not_traced is not None:
            out["not_traced"] = [dict(x) for x in self.not_traced]
        for optional in ("timings", "partial", "fixes"):
            value = getattr(self, optional)
            if value is not None:
                out[optional] = dict(value)
        return out

    def with_(self, **changes: Any) -> "Report":
        return replace(self, **changes)

    def as_written(self) -> "Report":
        """This report as report.json holds it: NaN and infinities in the nested data become
        None (strict JSON has no such numbers), so the renderers show what the file says.
        (A `Finding` holds no float.)"""
        return replace(self, reasons=_items(self.reasons), thresholds=_mapping(self.thresholds),
                       models=tuple(m.as_written() for m in self.models),
                       skipped=_items(self.skipped), counts=_mapping(self.counts),
                       timings=_mapping(self.timings), partial=_mapping(self.partial),
                       fixes=_mapping(self.fixes),
                       not_run=None if self.not_run is None else _items(self.not_run),
                       not_traced=None if self.not_traced is None else _items(self.not_traced))


__all__ = ["COMPARED", "KEY_ORDER", "PLACEHOLDER", "RUN_SKIPPED", "Delta", "ModelDelta",
           "Report"]
