"""Renderers: one report (pt2bot/reportdata.py) → the files of a report directory.

`render_all(report, out_dir)` writes report.json (`report.to_dict()`), summary.md,
review.json, check.json and results.sarif, and appends summary.md to `$GITHUB_STEP_SUMMARY`
when that is set. Every renderer is a pure function of the report (see summary.py,
review.py, check.py).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Mapping

from pt2bot import __version__
from pt2bot.jsonio import write_json, write_text

if TYPE_CHECKING:   # `pt2bot check` loads this package to print findings: no report there
    from pt2bot.reportdata import Report


def render_all(report: Report, out_dir: str, *,
               commentable: Callable[[str, int], bool] | None = None,
               env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Write the report directory; returns {file name: path}."""
    from pt2bot.report.check import render_check
    from pt2bot.report.review import render_review
    from pt2bot.report.summary import render_summary

    env = os.environ if env is None else env
    os.makedirs(out_dir, exist_ok=True)
    paths = {name: os.path.join(out_dir, name) for name in
             ("report.json", "summary.md", "review.json", "check.json", "results.sarif")}
    write_json(paths["report.json"], report.to_dict())
    report = report.as_written()    # the renderers show what report.json says (no NaN)
    summary = render_summary(report)
    write_text(paths["summary.md"], summary)
    write_json(paths["review.json"], render_review(report, commentable))
    write_json(paths["check.json"], render_check(report))
    step_summary = env.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as fh:
            fh.write(summary + "\n")
    write_json(paths["results.sarif"], render_sarif(report))
    return paths


def render_sarif(report: Report) -> dict:
    """SARIF 2.1.0 of the reported static findings (pt2bot.report.sarif does the format)."""
    try:
        from pt2bot.report.sarif import findings_to_sarif
    except ImportError as e:    # the one place that depends on the SARIF module landing
        raise RuntimeError("pt2bot.report.sarif.findings_to_sarif is missing: cannot write "
                           "results.sarif") from e
    from pt2bot.rules import Candidate

    fixes: dict = {}
    evidence: dict[str, str] = {}
    for c in (report.fixes or {}).get("candidates") or ():
        # (an edit past one hunk of the diff that passed its proof is no GitHub suggestion, but
        # a SARIF fix may replace any lines)
        if not (c.get("verified") or (c.get("outside_diff") and c.get("passed"))):
            continue
        cand = Candidate(code=c["rule"], path=c["path"], start_line=c["start_line"],
                         end_line=c["end_line"], lines=tuple(c["lines"]), title=c["title"],
                         safe=bool(c.get("safe")), guards=tuple(c.get("guards") or ()))
        for f in report.findings:
            if f.fingerprint() in (c.get("findings") or ()) and f not in fixes:
                fixes[f] = [cand]
                evidence[f.fingerprint()] = str(c.get("evidence") or "")
    return findings_to_sarif(report.findings, tool_version=__version__, fixes=fixes,
                             evidence=evidence)


__all__ = ["render_all", "render_sarif"]
