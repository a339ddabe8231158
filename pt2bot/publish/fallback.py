"""Without write access (fork PR, read-only token): workflow commands and the job summary.

The findings still reach the PR's "Files changed" tab as annotations (`::warning file=..`),
and the whole summary lands in the job summary (GITHUB_STEP_SUMMARY). Every value goes
through pt2bot/report/escape.py's workflow-command and log-line escapes, so artifact text
can never start a command of its own (`::stop-commands::`, `::add-mask::`, `##[...]`).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from pt2bot.publish.artifact import Annotation, ReportArtifact
from pt2bot.report.escape import cap_utf8, command_data, command_property, log_block

MAX_COMMAND_ANNOTATIONS = 200
# The runner drops a step summary over 1 MiB (in bytes: 1.3 M "€" are 3.9 MB); leave room
# for what `render_all` may already have appended in the same step.
MAX_STEP_SUMMARY_BYTES = 1_000_000
_LEVEL = {"failure": "error", "warning": "warning", "notice": "notice"}


def workflow_command(a: Annotation) -> str:
    props = [f"file={command_property(a.path)}", f"line={a.start_line}",
             f"endLine={a.end_line}"]
    if a.title:
        props.append(f"title={command_property(a.title)}")
    return f"::{_LEVEL[a.level]} {','.join(props)}::{command_data(a.message)}"


def notice(message: str, *, out: TextIO | None = None) -> None:
    print(f"::notice title=pt2bot::{command_data(message)}", file=out or sys.stdout)


def emit_fallback(artifact: ReportArtifact, reason: str, *, step_summary: Path | None,
                  pointer: str, out: TextIO | None = None) -> tuple[int, bool]:
    """Print annotations as workflow commands and append the summary to the job summary.

    Returns (annotations printed, whether the job summary was written).
    """
    out = out or sys.stdout
    notice(f"could not publish to GitHub ({reason}); the findings are shown as annotations "
           "and in the job summary instead", out=out)
    anns = artifact.check.annotations[:MAX_COMMAND_ANNOTATIONS]
    for a in anns:
        print(workflow_command(a), file=out)
    rest = len(artifact.check.annotations) - len(anns)
    if rest > 0:
        notice(f"{rest} more annotations are in the job summary and the report artifact", out=out)
    wrote = False
    if step_summary is not None:
        note = f"\n\n… truncated (over the job summary's size limit). {pointer}"
        try:
            with open(step_summary, "a", encoding="utf-8") as fh:
                fh.write(cap_utf8(artifact.summary, MAX_STEP_SUMMARY_BYTES, note) + "\n")
            wrote = True
        except OSError as e:
            notice(f"could not write the job summary {step_summary}: {e.strerror}", out=out)
    else:
        # Not on Actions: the summary goes to the log, so it is never lost; each line is a
        # log line (no `::command::` at a line start, no `##[`).
        print(log_block(artifact.summary), file=out)
    return len(anns), wrote
