"""summary.md's pointer to a model's compile report (its trace, and tlparse's HTML of it).

The smoke run leaves each model's report under `compile/<model>/<side>/` and the review and
the audit copy it into the report directory (pt2bot/smoke/compile_report.py); the summary
says where to find it: in which uploaded artifact, and the link to this run's artifacts when
the Actions environment names the run. The paths are rebuilt here from the
(config-validated) model name with pt2bot/results.py `report_dir`, never copied from the
worker-written results, so a forged `compile_report` cannot put markup into the summary.
"""
from __future__ import annotations

import os
import re
from typing import Any, Mapping

from pt2bot.report.markdown import code_inline, link
from pt2bot.reportdata import ModelDelta
from pt2bot.results import HTML_NAME, TRACE_NAME, report_dir

# The artifact the shipped workflows upload the report directory as (.github/workflows/).
ARTIFACTS = {"review": "pt2bot-report", "audit": "pt2bot-audit"}
RENDER_HINT = "pip install tlparse && tlparse trace.log -o report --no-browser"
# A PR's trace and HTML come from the job that ran its code, which can write anything in the
# artifact (index.html included): the summary says so where it invites a maintainer to open
# them. The nightly audit runs the repository's own code, so its line does not.
UNTRUSTED = "the PR's own content, written where its code ran: untrusted, like the rest of " \
            "the artifact"


def run_url(environ: Mapping[str, str] = os.environ) -> str | None:
    """This Actions run's page (its artifacts are listed there), when the env names it."""
    server = environ.get("GITHUB_SERVER_URL", "").rstrip("/")
    repo = environ.get("GITHUB_REPOSITORY", "")
    run_id = environ.get("GITHUB_RUN_ID", "")
    if not (re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d+)?", server)
            and re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo)
            and re.fullmatch(r"\d{1,20}", run_id)):
        return None
    return f"{server}/{repo}/actions/runs/{run_id}"


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def summary_line(model: ModelDelta, mode: str | None, *,
                 environ: Mapping[str, str] = os.environ) -> str | None:
    """summary.md's pointer to a model's compile report, for a model with a new graph break
    or recompile (the report's entry of the model; `mode` the report's: review or audit);
    None otherwise or without a trace."""
    if not (model.new_breaks or _positive(model.delta.recompiles)
            or _positive(model.delta.new_recompiles)):
        return None
    name = model.name
    head = model.head or {}     # the RUN as head's results file has it
    cr = head.get("compile_report") if isinstance(head.get("compile_report"), Mapping) else {}
    if not isinstance(name, str) or not cr.get("trace"):
        return None
    # Paths are rebuilt from the name, never copied from the (worker-written) results.
    side_dir = report_dir(name, "head")
    artifact = ARTIFACTS.get(str(mode or "review"), ARTIFACTS["review"])
    url = run_url(environ)
    # link() keeps only https links to allowed hosts (github.com): elsewhere, the text. Outside
    # an Actions run there is no artifact: the report directory is `--out`, whatever its name
    # (a new user's second review, `--out pt2bot-report2`, was pointed at "the `pt2bot-report`
    # artifact").
    where = (f"in the `{artifact}` artifact ({link('artifacts of this run', url + '#artifacts')})"
             if url else f"in the report directory (the `{artifact}` artifact in GitHub Actions)")
    note = f" ({UNTRUSTED})" if artifact == ARTIFACTS["review"] else ""
    if cr.get("html"):
        return (f"🔎 Compile report: {where}, "
                f"{code_inline(f'{side_dir}/{HTML_NAME}', limit=200)}{note}.")
    return (f"🔎 Compile trace: {where}, {code_inline(f'{side_dir}/{TRACE_NAME}', limit=200)}"
            f"{note}; render it with {code_inline(RENDER_HINT)}.")


__all__ = ["ARTIFACTS", "RENDER_HINT", "UNTRUSTED", "run_url", "summary_line"]
