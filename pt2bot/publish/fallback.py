"""Without write access (fork PR, read-only token): workflow commands and the job summary.

The findings still reach the PR's "Files changed" tab as annotations (`::warning file=..`),
and the whole summary lands in the job summary (GITHUB_STEP_SUMMARY). Every value is escaped
as the runner expects (https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts),
so artifact text can never start a command of its own (`::stop-commands::`, `::add-mask::`).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from pt2bot.publish.artifact import Annotation, ReportArtifact, cap_text

MAX_COMMAND_ANNOTATIONS = 200
MAX_STEP_SUMMARY = 1_000_000      # the runner rejects step summaries over 1 MiB
_LEVEL = {"failure": "error", "warning": "warning", "notice": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(a: Annotation) -> str:
    props = [f"file={escape_property(a.path)}", f"line={a.start_line}",
             f"endLine={a.end_line}"]
    if a.title:
        props.append(f"title={escape_property(a.title)}")
    return f"::{_LEVEL[a.level]} {','.join(props)}::{escape_data(a.message)}"


def notice(message: str, *, out: TextIO | None = None) -> None:
    print(f"::notice title=pt2bot::{escape_data(message)}", file=out or sys.stdout)


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
        try:
            with open(step_summary, "a", encoding="utf-8") as fh:
                fh.write(cap_text(artifact.summary, MAX_STEP_SUMMARY, pointer) + "\n")
            wrote = True
        except OSError as e:
            notice(f"could not write the job summary {step_summary}: {e.strerror}", out=out)
    else:
        # Not on Actions: the summary goes to the log, so it is never lost.
        print(artifact.summary, file=out)
    return len(anns), wrote
