"""The audit's tracking issue: exactly one open issue, current, and quiet.

- found by label AND hidden marker (a human issue with the same label is never touched);
- body = the latest audit; a comment only when something regressed tonight;
- closed when the audit is clean again; a later regression opens a new one (the closed
  issue stays as the record of the episode it tracked);
- duplicates (two racing nightly jobs) are closed, keeping the oldest.

`plan_issue` is the pure decision; `upsert_tracking_issue` carries it out with PyGithub.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pt2bot.errors import UserError
from pt2bot.audit.report import AUDIT_MARKER, render_audit_markdown, render_regression_comment

LABEL = "pt2bot-audit"
TITLE = "pt2bot nightly audit: torch.compile / export regressions"


@dataclass(frozen=True)
class IssuePlan:
    action: str                 # "none" | "create" | "update" | "close"
    issue: int | None           # the tracking issue acted on (None: create / none)
    comment: bool = False       # post the regression comment
    duplicates: tuple[int, ...] = ()   # other open tracking issues to close


def plan_issue(open_issues: Sequence[int], *, clean: bool, regressed: bool) -> IssuePlan:
    """What to do with the tracking issue, given the open ones (numbers) and tonight."""
    keep = min(open_issues) if open_issues else None
    dups = tuple(sorted(n for n in open_issues if n != keep))
    if keep is None:
        # Nothing open: a clean night needs no issue; a problem opens one (the new issue
        # itself notifies, so no extra comment).
        return IssuePlan("none" if clean else "create", None, False, ())
    if clean:
        return IssuePlan("close", keep, False, dups)
    return IssuePlan("update", keep, regressed, dups)


def upsert_tracking_issue(repo_api: Any, report: dict[str, Any], *, label: str = LABEL,
                          marker: str = AUDIT_MARKER, title: str = TITLE) -> IssuePlan:
    """Carry out `plan_issue` on a PyGithub Repository; returns the plan (with the number)."""
    a = report["audit"]
    body = render_audit_markdown(report)
    if marker not in body:
        body = f"{marker}\n{body}"
    ours = [i for i in repo_api.get_issues(state="open", labels=[label])
            if marker in (i.body or "") and getattr(i, "pull_request", None) is None]
    by_number = {i.number: i for i in ours}
    plan = plan_issue(list(by_number), clean=bool(a["clean"]), regressed=bool(a["regressions"]))
    for n in plan.duplicates:
        by_number[n].edit(state="closed", state_reason="not_planned")
    if plan.action == "create":
        issue = repo_api.create_issue(title=title, body=body, labels=[label])
        return IssuePlan("create", issue.number)
    if plan.action in ("update", "close"):
        issue = by_number[plan.issue]
        if plan.action == "close":
            issue.edit(body=body, state="closed", state_reason="completed")
        else:
            issue.edit(body=body)
        if plan.comment:
            issue.create_comment(render_regression_comment(report))
    return plan


def publish_audit(report: dict[str, Any], *, env: Mapping[str, str] = os.environ,
                  tuning: Any = None) -> str | None:
    """Update the tracking issue of $GITHUB_REPOSITORY; returns the issue's URL (or None)."""
    from pt2bot.publish.github import ClientTuning, make_github
    from pt2bot.publish.target import resolve_target

    target = resolve_target(env)
    if not target.repo:
        raise UserError("--publish needs GITHUB_REPOSITORY (OWNER/NAME)")
    if not target.token:
        raise UserError("--publish needs GITHUB_TOKEN (with issues: write)")
    gh = make_github(target, tuning or ClientTuning())
    repo = gh.get_repo(target.repo)
    plan = upsert_tracking_issue(repo, report)
    if plan.issue is None:
        return None
    return repo.get_issue(plan.issue).html_url


__all__ = ["IssuePlan", "plan_issue", "upsert_tracking_issue", "publish_audit", "LABEL",
           "TITLE"]
