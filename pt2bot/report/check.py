"""check.json: the check run's title, summary (<= 65,535 BYTES), annotations, conclusion.

Annotations are plain text on GitHub (no Markdown), but they are still user text: control
and bidi characters are stripped, mentions and markers defused, lengths capped. The
publisher sends them 50 per request; this module caps the total, and the publisher accepts
no more than this cap (pt2bot/publish/artifact.py imports it).
"""
from __future__ import annotations

from typing import Any, Mapping

from pt2bot.findings import Finding
from pt2bot.report.escape import cap, plain_text, utf8_len
from pt2bot.report.summary import confirming_breaks
from pt2bot.report.findings_text import unjudged
from pt2bot.report.summary import caused_recompiles, render_summary
from pt2bot.reportdata import Report

SCHEMA = "pt2bot.check/1"
MAX_SUMMARY_BYTES = 65_535
MAX_TITLE = 255
MAX_ANNOTATIONS = 500
MAX_MESSAGE = 2_000


def render_check(report: Report) -> dict:
    conclusion = report.conclusion or "neutral"
    title = cap(plain_text(report.summary_title or conclusion).replace("\n", " "), MAX_TITLE)
    annotations = collect_annotations(report)
    text = None
    if len(annotations) > MAX_ANNOTATIONS:
        text = (f"{len(annotations) - MAX_ANNOTATIONS} more annotations not shown; "
                "the full report is in `report.json` (workflow artifact).")
        annotations = annotations[:MAX_ANNOTATIONS]
    return {
        "schema": SCHEMA, "name": "pt2bot", "head_sha": report.head,
        "conclusion": conclusion, "title": title,
        "summary": render_summary(report, limit=MAX_SUMMARY_BYTES, measure=utf8_len,
                                  with_marker=False),
        "text": text, "annotations": annotations,
    }


def _plain(text: object, limit: int = MAX_MESSAGE) -> str:
    return cap(plain_text(text or ""), limit)


def collect_annotations(report: Report) -> list[dict]:
    """Failures first (what made the check red), then warnings, then notices."""
    fail_sev = {"error": ("error",), "warning": ("error", "warning")}.get(
        report.thresholds.get("fail_on", "error"), ())
    out: list[dict] = []
    # One annotation per problem, as in the review: a new break on the line of a new finding
    # that predicted it confirms the finding instead of being annotated again.
    new_breaks = [(str(m.name or "?"), b) for m in report.models
                  for b in m.new_breaks if _located(b)]
    confirmed = confirming_breaks(
        [f for f in report.findings if f.new and _located_at(f.path, f.line)], new_breaks)
    merged = {id(b) for pairs in confirmed.values() for _, b in pairs}
    over = {r.get("model") for r in report.reasons
            if r.get("code") == "new_graph_breaks" and r.get("level") == "failure"}
    for f in report.findings:
        if not _located_at(f.path, f.line):
            continue
        if not f.new or f.severity == "info":   # info never fails the check
            level = "notice"
        elif f.severity in fail_sev:
            level = "failure"
        else:
            level = "warning"
        msg = str(f.message or "")
        cond = f.condition
        if isinstance(cond, str) and cond.strip():
            msg += f" (on the path where {cap(' '.join(cond.split()), 200)})"
        if not f.new:
            msg += " (pre-existing)"
        said = _smoke(f) or _reached(f)
        if said:
            msg += f"\nSmoke run: {said}."
        pairs = confirmed.get(f.fingerprint(), [])
        if pairs:
            if any(model in over for model, _ in pairs):
                level = "failure"
            msg += "\nConfirmed by the smoke run: " + ", ".join(
                f"model {model} breaks here ({b.get('gb') or 'graph break'})" for model, b in pairs)
            msg += "".join(dict.fromkeys(_caused(b) for _, b in pairs))
        out.append(_annotation(f.path, f.line, level, str(f.rule or "pt2bot"), msg))
    for m in report.models:
        name = str(m.name or "?")
        for b in m.new_breaks:
            if not _located(b) or id(b) in merged:
                continue
            msg = f"New graph break in model {name}: {b.get('gb_type') or b.get('reason') or ''}"
            hints = b.get("hints") or []
            if hints:
                msg += f"\nHint: {hints[0]}"
            msg += _caused(b)
            out.append(_annotation(b["path"], b["line"], "failure" if name in over else "warning",
                                   f"{b.get('gb') or 'graph break'}", msg))
        for p in m.problems:
            if p.get("kind") in ("fails_only_on_head", "fails_on_head") and _located(p):
                out.append(_annotation(p["path"], p["line"], "failure", "model fails",
                                       f"Model {name} {p.get('message')}: {p.get('detail') or ''}"))
    order = {"failure": 0, "warning": 1, "notice": 2}
    out.sort(key=lambda a: order[a["annotation_level"]])
    return out


def _reached(f: Finding) -> str:
    """The summary's reachability words, in plain text (model names are not code here)."""
    names = f.reached_by
    if names is None:
        return ""
    names = [cap(n, 100) for n in names if isinstance(n, str) and n]
    if not names:
        return "not reached by any configured model"
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return "reached by " + ", ".join(names[:5]) + more + unjudged(f)


def _smoke(f: Finding) -> str:
    """What the smoke run made of the claim, in plain text ("" when nothing): a refuted
    claim is already a notice (pt2bot/reach.py demoted it to info)."""
    check = f.smoke
    if check is None:
        return ""
    names = [cap(n, 100) for n in check.models if isinstance(n, str) and n]
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    who = ", ".join(names[:5]) + more
    if check.status == "confirmed":
        return f"confirmed ({who}): {cap(check.evidence, 400)}"
    was = f" ({check.severity} demoted to info)" if check.severity else ""
    return f"not observed ({who}): {cap(check.evidence, 400)}{was}"


def _caused(b: dict) -> str:
    """"\n3 recompiles follow from the new break at path:line" (plain text), or ""."""
    n = caused_recompiles(b)
    if not n:
        return ""
    where = f"{b.get('path')}:{b['line']}" if isinstance(b.get("line"), int) else b.get("path")
    return (f"\n{n} recompile{'s follow' if n != 1 else ' follows'} from the new break at "
            f"{where} (the frames the break splits off are compiled again for new shapes, or new "
            "values passed across the break, and "
            "go away with the break)")


def _located(x: Mapping[str, Any]) -> bool:
    """Whether a break or a problem (report.json objects) has a file and a line."""
    return _located_at(x.get("path"), x.get("line"))


def _located_at(path: object, line: object) -> bool:
    return isinstance(path, str) and bool(path) and isinstance(line, int) and line > 0


def _annotation(path: str, line: int, level: str, title: str, message: str) -> dict:
    return {"path": cap(str(path), 500), "start_line": line, "end_line": line,
            "annotation_level": level, "title": _plain(title, 200),
            "message": _plain(message)}


__all__ = ["render_check", "collect_annotations", "MAX_SUMMARY_BYTES", "MAX_ANNOTATIONS"]
