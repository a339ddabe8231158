"""Findings as text, GitHub workflow commands, JSON or SARIF (the `pt2bot check` output).

Everything in a finding that came from user code (source lines, messages that quote it) is
untrusted: the text format strips terminal control characters, and the github format escapes
per the Actions toolkit so a finding can never start a second workflow command.
"""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Mapping, Sequence

from pt2bot.findings import Finding
from pt2bot.report.escape import command_data, command_property, terminal_text
from pt2bot.rules import BY_CODE

if TYPE_CHECKING:
    from pt2bot.rules.base import Candidate

FINDINGS_SCHEMA = "pt2bot.findings/1"


def render_findings(findings: Sequence[Finding], fmt: str, *, root: str | None = None,
                    tool_version: str | None = None, torch: dict[str, str] | None = None,
                    fixes: Mapping[Finding, Sequence[Candidate]] | None = None) -> str:
    """`torch`: the release the claims were checked for and where it came from
    (`{"version": "2.14", "source": "config|installed|assumed"}`), stated in the JSON output.
    `fixes`: the fix candidates per finding that SARIF carries."""
    if fmt == "text":
        return render_text(findings, root=root)
    if fmt == "github":
        return render_github(findings)
    if fmt == "json":
        return render_json(findings, torch=torch)
    if fmt == "sarif":
        from pt2bot import __version__
        from pt2bot.report.sarif import findings_to_sarif

        return json.dumps(findings_to_sarif(findings, tool_version=tool_version or __version__, fixes=fixes),
                          indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r}")


def safe_text(s: str) -> str:
    """Untrusted text for the terminal (pt2bot/report/escape.py `terminal_text`)."""
    return terminal_text(s)


def _raw_line(root: str | None, f: Finding, cache: dict[str, list[str] | None]) -> str | None:
    if root is None:
        return None
    if f.path not in cache:
        try:
            with open(os.path.join(root, f.path), "rb") as fh:
                cache[f.path] = fh.read().decode("utf-8", "replace").splitlines()
        except OSError:
            cache[f.path] = None
    lines = cache[f.path]
    if lines is None or not 0 < f.line <= len(lines):
        return None
    return lines[f.line - 1]


def when(f: Finding) -> str:
    """The condition in words: " (on the path where `self.training`)", or "" on the default path."""
    return f" (on the path where `{f.condition}`)" if f.condition else ""


def reached(f: Finding, quote: str = "`") -> str | None:
    """"reached by `tiny_gpt`" / "not reached by any configured model"; None: no smoke results."""
    if f.reached_by is None:
        return None
    if not f.reached_by:
        return "not reached by any configured model"
    return "reached by " + ", ".join(f"{quote}{m}{quote}" for m in f.reached_by) + unjudged(f)


def unjudged(f: Finding) -> str:
    """What a reached line's run leaves open, for a claim it neither confirmed nor refuted
    (pt2bot/reach.py never refutes a recompile or an export claim): "reached by" alone read as
    the run having a say on openai/CLIP's mask kept across calls, a recompile that shows only
    when a call brings another dtype, which no float32 run does. Plain words, no user text."""
    rule = BY_CODE.get(f.rule)
    if f.smoke is not None or f.confirmed or rule is None:
        return ""
    if rule.claim == "recompile":
        return ("; the run saw no recompile there, which shows only where what the finding "
                "names changes between calls")
    if rule.claim == "export":
        # (not "saw no failure there": export stops at its first failure, which may be before
        # this line; flux's size cap was said so under a guidance test that stopped export)
        return ("; the run's export recorded no failure on this line (export stops at its first "
                "failure, and what fails depends on the dims declared dynamic)")
    return ""


def smoke_said(f: Finding, quote: str = "`") -> str | None:
    """"confirmed by the smoke run (`m`): GB0124 at p.py:12" / "not observed by the smoke run
    (`m`): ... (error demoted to info)"; None: no verdict (pt2bot/reach.py)."""
    check = f.smoke
    if check is None:
        return None
    who = ", ".join(f"{quote}{m}{quote}" for m in check.models)
    if check.status == "confirmed":
        return f"confirmed by the smoke run ({who}): {check.evidence}"
    was = f" ({check.severity} demoted to info)" if check.severity else ""
    return f"not observed by the smoke run ({who}): {check.evidence}{was}"


def pre_existing(f: Finding) -> str:
    """" (pre-existing)" for a finding compared with a diff whose problem the base already
    had (`new` False: changes.mark_new), else "". A plain check compares nothing."""
    return " (pre-existing)" if f.diff is not None and not f.new else ""


def render_text(findings: Sequence[Finding], *, root: str | None = None) -> str:
    """`path:line:col: CODE message (when `guard`)`, then the source line and a caret (col is
    1-based here), and whether configured models reached the line."""
    out: list[str] = []
    cache: dict[str, list[str] | None] = {}
    for f in findings:
        out.append(f"{safe_text(f.path)}:{f.line}:{f.col + 1}: {f.rule} [{f.severity}] "
                   f"{safe_text(f.message + when(f))}{pre_existing(f)}")
        raw = _raw_line(root, f, cache)
        if raw is not None and raw.strip() == f.source:
            text = raw.expandtabs(1)
            prefix = raw.encode("utf-8", "replace")[:f.col].decode("utf-8", "replace").expandtabs(1)
            out.append(f"    {safe_text(text)}")
            out.append("    " + " " * len(prefix) + "^")
        elif f.source:
            out.append(f"    {safe_text(f.source)}")
        if f.url:
            out.append(f"    predicts {f.gb}: {f.url}")
        if f.suggestion:
            out.append(f"    suggestion: {safe_text(f.suggestion)}")
        r = smoke_said(f) or reached(f)
        if r:
            out.append(f"    {safe_text(r)}")
    if findings:
        n_err = sum(1 for f in findings if f.severity == "error")
        n_info = sum(1 for f in findings if f.severity == "info")
        n_refuted = sum(1 for f in findings if f.refuted)
        why = "under a condition" if not n_refuted else \
            "under a condition, or not observed by the smoke run"
        info = f", {n_info} info ({why}; never failing)" if n_info else ""
        n_old = sum(1 for f in findings if pre_existing(f))
        old = f"; {n_old} pre-existing (on the base already; never failing)" if n_old else ""
        out.append(f"Found {len(findings)} finding(s): {n_err} error(s), "
                   f"{len(findings) - n_err - n_info} warning(s){info}{old}.")
    return "\n".join(out) + ("\n" if out else "")


def clean_line(files: int, *, hidden: int = 0, filter_: str = "") -> str:
    """The text format's one line for a check without findings: "No findings in 123 files.",
    and how many findings the diff filter left out (`check --base`)."""
    more = f" ({hidden} more outside the diff filter `{filter_}`)" if hidden else ""
    return f"No findings in {files} file{'s' if files != 1 else ''}{more}.\n"


# The workflow-command escapes are pt2bot/report/escape.py's (one definition for the
# `check --format github` output and the publisher's fallback alike).
escape_data = command_data
escape_property = command_property


def render_github(findings: Sequence[Finding]) -> str:
    """Workflow commands (`::error file=..,line=..::msg`), one per finding; info is a notice."""
    out = []
    for f in findings:
        level = {"error": "error", "info": "notice"}.get(f.severity, "warning")
        if pre_existing(f):   # as the review's check run annotates it
            level = "notice"
        props = [f"file={escape_property(f.path)}", f"line={f.line}", f"col={f.col + 1}"]
        if f.end_line:
            props.append(f"endLine={f.end_line}")
            if f.end_col is not None and f.end_line == f.line:
                props.append(f"endColumn={f.end_col + 1}")
        props.append(f"title={escape_property(f'{f.rule} ' + (f.gb or ''))}".rstrip())
        r = smoke_said(f) or reached(f)
        msg = (f.message + when(f) + pre_existing(f) + (f" ({f.url})" if f.url else "")
               + (f"; {r}" if r else ""))
        out.append(f"::{level} {','.join(props)}::{escape_data(msg)}")
    return "\n".join(out) + ("\n" if out else "")


def render_json(findings: Sequence[Finding], *, torch: dict[str, str] | None = None) -> str:
    doc: dict = {"schema": FINDINGS_SCHEMA}
    if torch:
        doc["torch"] = dict(torch)
    doc["findings"] = [f.to_dict() for f in findings]
    return json.dumps(doc, indent=2) + "\n"
