"""Where to publish: API endpoint, token, repository, PR and the trusted head SHA.

Everything comes from the GitHub Actions conventions (GITHUB_API_URL, GITHUB_TOKEN,
GITHUB_REPOSITORY, GITHUB_EVENT_NAME / GITHUB_EVENT_PATH, GITHUB_SHA) with `--repo`/`--pr`
overriding. The event payload is written by GitHub, so it is trusted; the report artifact
is not, which is why neither the PR number nor the commit comes from it. Under
`workflow_run` the PR is looked up later through the API from the run's head SHA, head
repository and head branch (`pt2bot.publish.github.find_pull`): the event's own
`pull_requests` list is empty for forks.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from pt2bot.errors import UserError

DEFAULT_API_URL = "https://api.github.com"
_REPO = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")
_SHA = re.compile(r"^[0-9a-f]{40,64}$")


@dataclass(frozen=True)
class Target:
    api_url: str
    token: str | None
    repo: str | None
    pr: int | None
    head_sha: str | None            # trusted: from the event or GITHUB_SHA
    event_name: str | None
    head_owner: str | None = None   # workflow_run: the head repository's owner (fork lookups)
    head_branch: str | None = None
    head_repo: str | None = None    # workflow_run: the head repository (OWNER/NAME); the PR
                                    # must come from it AND head_branch, not just the SHA
    run_url: str | None = None      # link to this workflow run (pointer to the full report)
    step_summary: Path | None = None
    commit_status: bool = False     # also post a commit status (PT2BOT_COMMIT_STATUS=true)
    bot_login: str | None = None    # PT2BOT_BOT_LOGIN: the token's account, when GET /user
                                    # cannot tell (a GitHub App's installation token)


def _event(env: Mapping[str, str]) -> dict[str, Any]:
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"GITHUB_EVENT_PATH={path}: cannot read the event payload: {e}") from None
    return data if isinstance(data, dict) else {}


def _sha(value: Any) -> str | None:
    return value if isinstance(value, str) and _SHA.match(value) else None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def resolve_target(env: Mapping[str, str], *, repo: str | None = None,
                   pr: int | None = None) -> Target:
    api_url = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    if not re.match(r"^https?://[^\s/]+", api_url):
        raise UserError(f"GITHUB_API_URL={api_url!r}: expected an http(s) URL")
    repo = repo or env.get("GITHUB_REPOSITORY") or None
    if repo is not None and not _REPO.match(repo):
        raise UserError(f"--repo {repo!r}: expected OWNER/NAME")
    if pr is not None and pr < 1:
        raise UserError(f"--pr {pr}: expected a positive pull request number")

    event_name = env.get("GITHUB_EVENT_NAME") or None
    event = _event(env)
    head_sha: str | None = None
    head_owner = head_branch = head_repo = None
    if event_name in ("pull_request", "pull_request_target") and isinstance(event.get("pull_request"), dict):
        pull = event["pull_request"]
        if pr is None and isinstance(pull.get("number"), int):
            pr = pull["number"]
        head_sha = _sha((pull.get("head") or {}).get("sha"))
    elif event_name == "workflow_run" and isinstance(event.get("workflow_run"), dict):
        run = event["workflow_run"]
        head_sha = _sha(run.get("head_sha"))
        head_branch = run.get("head_branch") if isinstance(run.get("head_branch"), str) else None
        head_repository = run.get("head_repository") if isinstance(run.get("head_repository"), dict) else {}
        owner = (head_repository.get("owner") or {}).get("login")
        head_owner = owner if isinstance(owner, str) else None
        full = head_repository.get("full_name")
        head_repo = full if isinstance(full, str) and _REPO.match(full) else None
    if head_sha is None and event_name not in ("pull_request", "pull_request_target", "workflow_run"):
        head_sha = _sha(env.get("GITHUB_SHA"))

    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    run_id = env.get("GITHUB_RUN_ID") or ""
    run_url = (f"{server}/{env.get('GITHUB_REPOSITORY')}/actions/runs/{run_id}"
               if run_id.isdigit() and _REPO.match(env.get("GITHUB_REPOSITORY") or "")
               and re.match(r"^https?://[^\s]+$", server) else None)
    summary = env.get("GITHUB_STEP_SUMMARY")
    return Target(api_url=api_url, token=env.get("GITHUB_TOKEN") or env.get("INPUT_TOKEN") or None,
                  repo=repo, pr=pr, head_sha=head_sha, event_name=event_name,
                  head_owner=head_owner, head_branch=head_branch, head_repo=head_repo,
                  run_url=run_url,
                  step_summary=Path(summary) if summary else None,
                  commit_status=_truthy(env.get("PT2BOT_COMMIT_STATUS")),
                  bot_login=env.get("PT2BOT_BOT_LOGIN") or None)
