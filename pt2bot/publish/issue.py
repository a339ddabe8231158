"""The audit's tracking issue: exactly one open issue, current, and quiet.

- ours = open, with the label, its body starting with the hidden marker AND written by the
  account the token belongs to (`pt2bot.publish.github.resolve_login`): a human's issue, or
  another App's, with the same label and marker is never touched;
- body = the latest audit; a comment only when something regressed tonight;
- closed when the audit is clean again; a later regression opens a new one (the closed
  issue stays as the record of the episode it tracked);
- duplicates (two racing nightly jobs) are closed, keeping the oldest.

This module only posts: the audit renders the body and the comment
(pt2bot/audit/report.py) and hands them over. `plan_issue` is the pure decision;
`upsert_tracking_issue` carries it out with PyGithub. It is the project's one tracking-issue
upsert.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pt2bot.errors import UserError
from pt2bot.report.escape import cap
from pt2bot.report.markdown import marker as make_marker

LABEL = "pt2bot-audit"
TITLE = "pt2bot nightly audit: torch.compile / export regressions"
AUDIT_MARKER = make_marker("audit")   # the same marker pt2bot/audit/report.py writes
MAX_BODY = 65536


@dataclass(frozen=True)
class IssuePlan:
    action: str                 # "none" | "create" | "update" | "close"
    issue: int | None           # the tracking issue acted on (None: create / none)
    comment: bool = False       # post the regression comment
    duplicates: tuple[int, ...] = ()   # other open tracking issues to close


@dataclass(frozen=True)
class TrackingUpdate:
    """Tonight's issue content, rendered by the audit; the publisher adds nothing but the
    marker (when missing) and the size cap."""
    body: str
    comment: str | None = None  # posted when something regressed tonight
    clean: bool = False         # nothing outstanding: close the issue
    regressed: bool = False     # new problems tonight: post `comment`
    title: str = TITLE


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


def _is_ours(issue: Any, login: str, marker: str) -> bool:
    user = getattr(issue, "user", None)
    return ((issue.body or "").startswith(marker) and user is not None
            and user.login == login and getattr(issue, "pull_request", None) is None)


def upsert_tracking_issue(repo_api: Any, update: TrackingUpdate, *, login: str,
                          label: str = LABEL, marker: str = AUDIT_MARKER) -> IssuePlan:
    """Carry out `plan_issue` on a PyGithub Repository; returns the plan (with the number)."""
    body = update.body if update.body.startswith(marker) else f"{marker}\n{update.body}"
    body = cap(body, MAX_BODY)
    ours = [i for i in repo_api.get_issues(state="open", labels=[label])
            if _is_ours(i, login, marker)]
    by_number = {i.number: i for i in ours}
    plan = plan_issue(list(by_number), clean=update.clean, regressed=update.regressed)
    for n in plan.duplicates:
        by_number[n].edit(state="closed", state_reason="not_planned")
    if plan.action == "create":
        issue = repo_api.create_issue(title=update.title, body=body, labels=[label])
        return IssuePlan("create", issue.number)
    if plan.action in ("update", "close"):
        issue = by_number[plan.issue]
        fields: dict[str, Any] = {}
        if issue.body != body:
            fields["body"] = body
        if issue.title != update.title:
            fields["title"] = update.title
        if plan.action == "close":
            issue.edit(**fields, state="closed", state_reason="completed")
        elif fields:
            issue.edit(**fields)
        if plan.comment and update.comment:
            issue.create_comment(cap(update.comment, MAX_BODY))
    return plan


def publish_tracking_issue(update: TrackingUpdate, *, env: Mapping[str, str] = os.environ,
                           tuning: Any = None, repo: str | None = None) -> str | None:
    """Update the tracking issue of $GITHUB_REPOSITORY; returns the issue's URL (or None).
    GitHub errors propagate (`GithubException`): the caller decides how to report them."""
    from pt2bot.publish.github import ClientTuning, make_github, resolve_login
    from pt2bot.publish.target import resolve_target

    target = resolve_target(env, repo=repo)
    if not target.repo:
        raise UserError("--publish needs GITHUB_REPOSITORY (OWNER/NAME)")
    if not target.token:
        raise UserError("--publish needs GITHUB_TOKEN (with issues: write)")
    gh = make_github(target, tuning or ClientTuning())
    repo_api = gh.get_repo(target.repo)
    plan = upsert_tracking_issue(repo_api, update, login=resolve_login(gh, target))
    if plan.issue is None:
        return None
    return repo_api.get_issue(plan.issue).html_url


def publish_audit(report: dict[str, Any], *, body: str, comment: str | None,
                  env: Mapping[str, str] = os.environ, tuning: Any = None) -> str | None:
    """`pt2bot audit --publish`: the audit's verdict (`report["audit"]`) with the body and
    comment it rendered."""
    a = report["audit"]
    return publish_tracking_issue(
        TrackingUpdate(body=body, comment=comment, clean=bool(a["clean"]),
                       regressed=bool(a["regressions"])), env=env, tuning=tuning)


__all__ = ["IssuePlan", "TrackingUpdate", "plan_issue", "upsert_tracking_issue",
           "publish_tracking_issue", "publish_audit", "LABEL", "TITLE", "AUDIT_MARKER"]
