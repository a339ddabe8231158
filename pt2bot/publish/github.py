"""Publish a report directory to GitHub with PyGithub.

One sticky summary comment per PR (found by a hidden marker, edited in place, duplicates
from racing runs removed), one review per run with at most 30 new inline comments (each with
a hidden fingerprint; already-posted fingerprints are skipped; comments whose finding is gone
are marked outdated, or deleted when nobody replied, as many per run as `MAX_WRITES` leaves,
the summary saying how many wait for later runs), a `pt2bot` check run on the head SHA with
annotations in batches of 50, and optionally a commit status. Every request counts against
the job token's hourly quota, which the repository's workflows share: one publish sends about
20 at most (plus one per 100 open PRs, and per 100 files or comments on the PR).

Which comments are "ours" is decided by author: the account the token belongs to
(`PT2BOT_BOT_LOGIN`, else `github-actions[bot]` for an installation token such as the Actions
token, which may not read /user, else `GET /user`), never by "some bot wrote it" (any App
could post our marker).

Each of those parts is attempted on its own. A 401/403 on a write (fork PR, read-only token)
switches to the fallback (workflow-command annotations + job summary) and exits 0: the
report is never lost. Retries with backoff on 5xx and secondary rate limits come from
PyGithub's `GithubRetry`; writes are paced by PyGithub's `seconds_between_writes`.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from github import Auth, Github, GithubException, GithubRetry

from pt2bot.errors import UserError
from pt2bot.publish.artifact import (SUMMARY_MARKER, InlineComment, ReportArtifact, cap_text,
                                     load_report_dir)
from pt2bot.publish.fallback import emit_fallback, notice
from pt2bot.publish.target import Target, resolve_target
from pt2bot.report.escape import code_inline, log_line
from pt2bot.report.markdown import marker

CHECK_NAME = "pt2bot"
ACTIONS_LOGIN = "github-actions[bot]"   # the author of what the Actions GITHUB_TOKEN posts
INSTALLATION_TOKEN_PREFIX = "ghs_"       # GitHub's prefix of App installation tokens
MAX_BODY = 65536               # issue/review comment bodies
MAX_CHECK_TEXT = 65535         # check-run output.summary / output.text
MAX_INLINE = 30                # inline comments per review
ANNOTATION_BATCH = 50          # annotations per check-run request
# Writes one publish makes, about: the job token's hourly quota is per repository and shared
# by every workflow, and each push to a PR starts one publish, so a push loop multiplies this.
# The summary (1), the review (1: all its inline comments in one request) and the check run
# (1 per 50 annotations, at most 10 with the renderer's 500) come first; outdated comments
# (1 request each) get what is left, at least 4, and later runs handle the rest.
MAX_WRITES = 16
OUTDATED_MARKER = marker("outdated")
_FP_RE = re.compile(r"<!-- pt2bot:fp=([A-Za-z0-9_.:-]{1,64}) -->")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class ClientTuning:
    """Retry and pacing knobs; tests make the sleeps tiny."""
    retries: int = 6
    backoff_factor: float = 1.0
    backoff_max: float = 60.0
    secondary_rate_wait: float = 60.0
    seconds_between_requests: float = 0.0
    seconds_between_writes: float = 1.0
    timeout: int = 30


@dataclass
class PublishResult:
    repo: str | None = None
    pr: int | None = None
    head_sha: str | None = None
    conclusion: str | None = None
    summary_comment_id: int | None = None
    duplicates_deleted: int = 0
    review_id: int | None = None
    inline_posted: int = 0
    inline_already_there: int = 0
    overflow: int = 0
    stale_marked: int = 0
    stale_deleted: int = 0
    stale_left: int = 0                 # outdated comments left for later runs (MAX_WRITES)
    check_run_id: int | None = None
    check_run_skipped: str | None = None  # why no check run / status was posted
    annotations_posted: int = 0
    status_posted: bool = False
    fallback: str | None = None         # why the fallback was used, or None
    fallback_annotations: int = 0
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)   # also printed as ::notice commands

    @property
    def exit_code(self) -> int:
        # Missing permissions are expected (fork PRs): the fallback showed everything.
        # Other API failures are reported as a failed step (after the fallback ran too).
        return 1 if self.errors else 0

    def lines(self) -> list[str]:
        out = [f"pt2bot publish: {self.repo or '?'} PR #{self.pr if self.pr else '-'} "
               f"head {(self.head_sha or '?')[:12]} conclusion {self.conclusion}"]
        if self.summary_comment_id:
            out.append(f"  summary comment {self.summary_comment_id}"
                       + (f" ({self.duplicates_deleted} duplicates deleted)" if self.duplicates_deleted else ""))
        out.append(f"  review: {self.inline_posted} inline comments posted, "
                   f"{self.inline_already_there} already there, {self.overflow} in the review body; "
                   f"outdated: {self.stale_marked} marked, {self.stale_deleted} deleted"
                   + (f", {self.stale_left} left for later runs" if self.stale_left else ""))
        if self.check_run_id:
            out.append(f"  check run {self.check_run_id} with {self.annotations_posted} annotations")
        if self.check_run_skipped:
            out.append(f"  no check run: {self.check_run_skipped}")
        if self.status_posted:
            out.append("  commit status posted")
        if self.fallback:
            out.append(f"  fallback: {self.fallback} ({self.fallback_annotations} annotations "
                       "as workflow commands, summary in the job summary)")
        out += [f"  warning: {w}" for w in self.warnings]
        out += [f"  error: {e}" for e in self.errors]
        # Warnings quote artifact values: every line is a safe log line.
        return [log_line(line) for line in out]


class _Forbidden(Exception):
    """The token may not do this (401/403 that is not a rate limit)."""


def make_github(target: Target, tuning: ClientTuning, *, lazy: bool = False) -> Github:
    """`lazy`: objects made from a URL (the repository, an issue, a commit) are not fetched
    until an attribute needs it; the publisher only needs their URLs."""
    retry = GithubRetry(total=tuning.retries, backoff_factor=tuning.backoff_factor,
                        backoff_max=tuning.backoff_max,
                        secondary_rate_wait=tuning.secondary_rate_wait,
                        # PATCH/DELETE are idempotent here; POSTs are de-duplicated by markers.
                        allowed_methods=frozenset({"GET", "POST", "PATCH", "DELETE", "PUT"}),
                        raise_on_status=False)
    return Github(base_url=target.api_url, auth=Auth.Token(target.token) if target.token else None,
                  retry=retry, timeout=tuning.timeout, per_page=100,
                  seconds_between_requests=tuning.seconds_between_requests,
                  seconds_between_writes=tuning.seconds_between_writes, lazy=lazy)


def _describe(e: GithubException) -> str:
    data = e.data if isinstance(e.data, dict) else {}
    return f"{e.status}: {data.get('message') or e.data}"


def _attempt(result: PublishResult, what: str, fn: Callable[[], None]) -> bool:
    """Run one part; permissions problems raise `_Forbidden`, anything else is recorded."""
    try:
        fn()
        return True
    except GithubException as e:
        if e.status in (401, 403):
            raise _Forbidden(f"{what}: {_describe(e)}") from e
        result.errors.append(f"{what}: {_describe(e)}")
    except _Forbidden:
        raise
    except Exception as e:  # noqa: BLE001 - network errors, exhausted retries: report, go on
        result.errors.append(f"{what}: {type(e).__name__}: {e}")
    return False


def resolve_login(gh: Github, target: Target) -> str:
    """The login of the account the token belongs to: what counts as our comments."""
    if target.bot_login:
        return target.bot_login
    if (target.token or "").startswith(INSTALLATION_TOKEN_PREFIX):
        # An installation token (the Actions GITHUB_TOKEN, or an App's): GitHub answers
        # GET /user with 403 for every one of them (below), so the request is not sent.
        return ACTIONS_LOGIN
    try:
        return gh.get_user().login
    except GithubException as e:
        # An installation token (the Actions GITHUB_TOKEN) may not read /user (403). Another
        # App's installation token answers the same: its comments then never count as ours
        # (runs add comments instead of editing them) until PT2BOT_BOT_LOGIN names it.
        if e.status == 403:
            return ACTIONS_LOGIN
        raise


def _is_ours(obj: Any, login: str) -> bool:
    user = getattr(obj, "user", None)
    return user is not None and user.login == login


def _pointer(target: Target) -> str:
    where = f"[this workflow run]({target.run_url})" if target.run_url else "the workflow run"
    return f"The full report is in the `pt2bot-report` artifact of {where}."


# --------------------------------------------------------------------------- the PR
@dataclass(frozen=True)
class PullMatch:
    """The PR a `workflow_run` belongs to, and the other open PRs at the same commit."""
    pull: Any | None
    shared: tuple[int, ...] = ()     # open PRs with the same head SHA from another head
    ambiguous: tuple[int, ...] = ()  # several PRs match head repository and branch


def _head_matches(p: Any, target: Target) -> bool:
    """The PR's head is the event's head repository AND head branch (not just its SHA:
    anyone can push the same commit to a fork and open a PR from it)."""
    head_repo = getattr(p.head, "repo", None)
    if head_repo is None or not target.head_branch or p.head.ref != target.head_branch:
        return False
    if target.head_repo:
        return (head_repo.full_name or "").lower() == target.head_repo.lower()
    return bool(target.head_owner) and \
        (head_repo.owner.login or "").lower() == target.head_owner.lower()


def find_pull(repo: Any, target: Target) -> PullMatch:
    """The PR for a `workflow_run`: the open PR whose head repository and branch are the
    event's, found in the list of open PRs (GitHub lists fork PRs from neither the commit
    nor the event). Several matches resolve to none. `shared`: every other open PR whose
    head is the same commit, on which a check run (a commit's, not a PR's) would show as
    well. One request per 100 open PRs: the list is needed for `shared` anyway, and holds
    every open PR that `pulls?head=owner:branch` or `commits/{sha}/pulls` would add, so
    those are not asked (each publish's requests count against the repository's quota)."""
    sha = target.head_sha
    if not sha:
        return PullMatch(None)
    candidates: dict[int, Any] = {}
    for p in repo.get_pulls(state="open"):
        if p.head.sha == sha or _head_matches(p, target):
            candidates.setdefault(p.number, p)
    matching = [p for p in candidates.values() if p.state == "open" and _head_matches(p, target)]
    at_sha = {n for n, p in candidates.items() if p.state == "open" and p.head.sha == sha}
    if len(matching) != 1:
        return PullMatch(None, tuple(sorted(at_sha)),
                         tuple(sorted(p.number for p in matching)) if matching else ())
    pull = matching[0]
    return PullMatch(pull, tuple(sorted(at_sha - {pull.number})))


def diff_lines(pull: Any) -> set[tuple[str, int, str]]:
    """(path, line, side) that may carry a review comment, from the PR's file patches."""
    out: set[tuple[str, int, str]] = set()
    for f in pull.get_files():
        patch = f.patch or ""   # absent for binary or very large diffs: nothing commentable
        old = new = 0
        for raw in patch.splitlines():
            m = _HUNK.match(raw)
            if m:
                old, new = int(m.group(1)), int(m.group(2))
            elif raw.startswith("+"):
                out.add((f.filename, new, "RIGHT"))
                new += 1
            elif raw.startswith("-"):
                out.add((f.filename, old, "LEFT"))
                old += 1
            elif not raw.startswith("\\"):
                out.add((f.filename, new, "RIGHT"))
                out.add((f.filename, old, "LEFT"))
                old += 1
                new += 1
    return out


# --------------------------------------------------------------------------- summary
def upsert_summary(issue: Any, body: str, login: str, result: PublishResult) -> None:
    """Edit the one marker comment in place, or create it; then delete newer duplicates
    (two racing runs may both have created one) and make the survivor carry our body."""
    def ours() -> list[Any]:
        return sorted((c for c in issue.get_comments()
                       if (c.body or "").startswith(SUMMARY_MARKER) and _is_ours(c, login)),
                      key=lambda c: c.id)

    existing = ours()
    created = None
    if existing:
        if existing[0].body != body:
            existing[0].edit(body)
        # Duplicates come from runs that raced to create the first one; each of them
        # re-lists after its create and removes the newer ones: no second listing here.
        after = existing
    else:
        created = issue.create_comment(body)
        after = ours() or [created]
    keep = after[0]
    for dup in after[1:]:
        try:
            dup.delete()
            result.duplicates_deleted += 1
        except GithubException as e:
            if e.status != 404:   # 404: the other run deleted it first
                raise
    if created is not None and keep.id != created.id and keep.body != body:
        keep.edit(body)
    result.summary_comment_id = keep.id


def summary_body(artifact: ReportArtifact, target: Target, note: str = "") -> str:
    """The artifact's summary under our marker; `note` (ours, not the artifact's) at the end."""
    room = MAX_BODY - len(SUMMARY_MARKER) - 1 - len(note)
    return SUMMARY_MARKER + "\n" + cap_text(artifact.summary, room, _pointer(target)) + note


def stale_note(left: int) -> str:
    """What this run left out of the outdated-comment clean-up (MAX_WRITES), or ""."""
    if left <= 0:
        return ""
    many = left != 1
    return (f"\n\n---\n_{left} inline comment{'s' if many else ''} about findings that are "
            f"gone {'are' if many else 'is'} left as {'they are' if many else 'it is'} for now "
            "(each run edits or deletes a limited number: every workflow of this repository "
            "shares the token's hourly API quota); the next runs take care of "
            f"{'them' if many else 'it'}._\n")


# --------------------------------------------------------------------------- review
def _fingerprint_of(body: str | None) -> str | None:
    m = _FP_RE.search(body or "")
    return m.group(1) if m else None


def inline_body(c: InlineComment, target: Target) -> str:
    tail = "\n\n" + marker(f"fp={c.fingerprint}")
    return cap_text(c.body, MAX_BODY - len(tail), _pointer(target)) + tail


def _overflow_line(c: InlineComment) -> str:
    # The body is already inert (escape.clean_text); the path is artifact text too
    # and goes through the same escape as every other code span (no raw backticks here).
    first = next((ln.strip() for ln in c.body.splitlines() if ln.strip()), "")
    first = first.lstrip("#> ").strip()[:200]
    return f"- {code_inline(f'{c.path}:{c.line}', limit=520)}: {first}"


def review_body(artifact: ReportArtifact, overflow: list[InlineComment], target: Target) -> str:
    parts = [artifact.review_body] if artifact.review_body else []
    if overflow:
        parts.append(f"**{len(overflow)} more finding(s) not shown inline** (not on a line of "
                     f"this diff, or over the {MAX_INLINE}-comment limit):\n\n"
                     + "\n".join(_overflow_line(c) for c in overflow))
    return cap_text("\n\n".join(parts) or "pt2bot review", MAX_BODY, _pointer(target))


def _review_payload(c: InlineComment, target: Target) -> dict[str, Any]:
    d: dict[str, Any] = {"path": c.path, "line": c.line, "side": c.side,
                         "body": inline_body(c, target)}
    if c.start_line is not None:
        d["start_line"] = c.start_line
        d["start_side"] = c.side
    return d


def _posted(existing: list[Any], login: str) -> set[str]:
    """Fingerprints of our live inline comments (not replies, not marked outdated)."""
    return {_fingerprint_of(c.body) for c in existing
            if _is_ours(c, login) and c.in_reply_to_id is None
            and OUTDATED_MARKER not in (c.body or "")} - {None}


def post_review(gh: Github, pull: Any, artifact: ReportArtifact, sha: str, target: Target,
                result: PublishResult, existing: list[Any], login: str) -> None:
    posted = _posted(existing, login)
    new: list[InlineComment] = []
    seen: set[str] = set()
    for c in artifact.comments:
        if c.fingerprint in posted or c.fingerprint in seen:
            result.inline_already_there += c.fingerprint in posted
            continue
        seen.add(c.fingerprint)
        new.append(c)
    if not new:
        return      # nothing new: not even the PR's files are listed
    commentable = diff_lines(pull)
    inline: list[InlineComment] = []
    overflow: list[InlineComment] = []
    for c in new:
        on_diff = (c.path, c.line, c.side) in commentable and (
            c.start_line is None or (c.path, c.start_line, c.side) in commentable)
        (inline if on_diff and len(inline) < MAX_INLINE else overflow).append(c)
    if not inline:
        # Nothing new to anchor: the summary comment lists everything; no empty reviews.
        return

    def create(comments: list[InlineComment], extra: list[InlineComment]) -> dict[str, Any]:
        _, data = gh.requester.requestJsonAndCheck(
            "POST", f"{pull.url}/reviews",
            input={"commit_id": sha, "event": "COMMENT",
                   "body": review_body(artifact, extra, target),
                   "comments": [_review_payload(c, target) for c in comments]})
        return data

    try:
        data = create(inline, overflow)
    except GithubException as e:
        if e.status != 422:
            raise
        # The diff moved under us (a push since the analysis): one review, all in the body.
        result.warnings.append(f"inline comments rejected ({_describe(e)}); listed in the review body")
        overflow, inline = inline + overflow, []
        data = create([], overflow)
    result.review_id = data.get("id")
    result.inline_posted = len(inline)
    result.overflow = len(overflow)


def outdated_comments(existing: list[Any], artifact: ReportArtifact, login: str) -> list[Any]:
    """Our inline comments whose finding is gone, not yet marked outdated; oldest first."""
    current = {c.fingerprint for c in artifact.comments} | artifact.finding_fingerprints
    out = []
    for c in existing:
        fp = _fingerprint_of(c.body)
        if (fp is None or fp in current or c.in_reply_to_id or not _is_ours(c, login)
                or OUTDATED_MARKER in (c.body or "")):
            continue
        out.append(c)
    return sorted(out, key=lambda c: c.id)


def stale_budget(artifact: ReportArtifact, existing: list[Any], login: str) -> int:
    """How many outdated comments this run handles: what MAX_WRITES leaves after the summary,
    the review (when something is new) and the check run's requests."""
    posted = _posted(existing, login)
    review = 1 if any(c.fingerprint not in posted for c in artifact.comments) else 0
    check = max(1, -(-len(artifact.check.annotations) // ANNOTATION_BATCH))
    return max(1, MAX_WRITES - 1 - review - check)


def handle_stale(existing: list[Any], artifact: ReportArtifact, sha: str, login: str,
                 result: PublishResult, limit: int | None = None) -> None:
    """Our comments whose finding is gone: delete when nobody replied, else mark outdated.
    At most `limit` of them (oldest first); `result.stale_left` counts the rest."""
    stale = outdated_comments(existing, artifact, login)
    todo = stale if limit is None else stale[:limit]
    result.stale_left = len(stale) - len(todo)
    replied = {c.in_reply_to_id for c in existing if c.in_reply_to_id}
    for c in todo:
        if c.id in replied:
            note = f"**Outdated: fixed in {sha[:12]}.**\n\n"
            c.edit(cap_text(note + c.body + "\n" + OUTDATED_MARKER, MAX_BODY, ""))
            result.stale_marked += 1
        else:
            c.delete()
            result.stale_deleted += 1


# --------------------------------------------------------------------------- check run
def _batches(items: list[Any], n: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def publish_check(repo: Any, artifact: ReportArtifact, sha: str, target: Target,
                  result: PublishResult) -> None:
    chk = artifact.check
    summary = cap_text(chk.summary or chk.title, MAX_CHECK_TEXT, _pointer(target))
    anns = [{"path": a.path, "start_line": a.start_line, "end_line": a.end_line,
             "annotation_level": a.level, "message": a.message,
             **({"title": a.title} if a.title else {})} for a in chk.annotations]
    batches = list(_batches(anns, ANNOTATION_BATCH)) or [[]]
    output: dict[str, Any] = {"title": chk.title, "summary": summary, "annotations": batches[0]}
    if chk.text:
        output["text"] = cap_text(chk.text, MAX_CHECK_TEXT, _pointer(target))
    kwargs: dict[str, Any] = {}
    if target.run_url:
        kwargs["details_url"] = target.run_url
    # Created completed at once: if a later batch fails, the required check still resolves.
    run = repo.create_check_run(name=CHECK_NAME, head_sha=sha, status="completed",
                                conclusion=chk.conclusion, output=output, **kwargs)
    result.check_run_id = run.id
    result.annotations_posted = len(batches[0])
    for batch in batches[1:]:
        run.edit(output={"title": chk.title, "summary": summary, "annotations": batch})
        result.annotations_posted += len(batch)
    if chk.dropped_annotations:
        result.warnings.append(f"{chk.dropped_annotations} annotations over the cap not posted")
    if target.commit_status:
        state = "failure" if chk.conclusion == "failure" else "success"
        repo.get_commit(sha).create_status(state=state, context=CHECK_NAME,
                                           description=chk.title[:140],
                                           target_url=run.html_url or target.run_url or "")
        result.status_posted = True


# --------------------------------------------------------------------------- the whole
def publish_dir(out_dir: str | os.PathLike[str], *, repo: str | None = None, pr: int | None = None,
                env: Mapping[str, str] = os.environ, tuning: ClientTuning | None = None,
                out: Any = None) -> PublishResult:
    """Post a finished report directory. Never raises for GitHub-side problems: those end in
    the fallback (no permission) or in `result.errors` (after the fallback ran too).
    Raises `UserError` for a malformed report directory or environment."""
    artifact = load_report_dir(out_dir)
    if artifact.partial is not None:   # one shard's view would post a wrong verdict
        raise UserError(f"{out_dir}: a partial report (shard {artifact.partial}): merge the "
                        "shards first (`pt2bot merge DIR... --out DIR`) and publish that")
    target = resolve_target(env, repo=repo, pr=pr)
    tuning = tuning or ClientTuning()
    out = out or sys.stdout
    result = PublishResult(repo=target.repo, pr=target.pr, conclusion=artifact.check.conclusion,
                           warnings=list(artifact.warnings))

    def fall_back(reason: str) -> PublishResult:
        result.fallback = reason
        result.fallback_annotations, _ = emit_fallback(
            artifact, reason, step_summary=target.step_summary, pointer=_pointer(target), out=out)
        return result

    if not target.repo:
        return fall_back("no repository (set GITHUB_REPOSITORY or --repo)")
    if not target.token:
        return fall_back("no token (set GITHUB_TOKEN)")
    gh = make_github(target, tuning, lazy=True)
    try:
        _publish(gh, artifact, target, result)
    except _Forbidden as e:
        return fall_back(f"no permission: {e}")
    finally:
        for text in result.notices:
            notice(text, out=out)
    if result.errors:
        fall_back("some API calls failed: " + "; ".join(result.errors)[:500])
    return result


def _publish(gh: Github, artifact: ReportArtifact, target: Target, result: PublishResult) -> None:
    state: dict[str, Any] = {}

    def locate() -> None:
        state["repo"] = gh.get_repo(target.repo)
        state["login"] = resolve_login(gh, target)
        state["shared"] = ()
        if target.pr is not None:
            # Fetched now (the client is lazy), so that a wrong number fails in this part.
            state["pull"] = state["repo"].get_pull(target.pr).complete()
        elif target.event_name == "workflow_run":
            match = find_pull(state["repo"], target)
            state["pull"], state["shared"] = match.pull, match.shared
            head = f"{target.head_repo or target.head_owner or '?'}:{target.head_branch or '?'}"
            state["head"], state["ambiguous"] = head, bool(match.ambiguous)
            if match.ambiguous:
                result.warnings.append(
                    f"pull requests {', '.join(f'#{n}' for n in match.ambiguous)} all come from "
                    f"{head}; not posting comments on any of them")
            elif match.pull is None:
                result.warnings.append(f"no open pull request comes from {head} at "
                                       f"{target.head_sha}")
        else:
            state["pull"] = None

    if not _attempt(result, "find the pull request", locate):
        return
    login: str = state["login"]
    pull = state.get("pull")
    result.pr = pull.number if pull is not None else None
    sha = target.head_sha or (pull.head.sha if pull is not None else None) or artifact.head
    if sha is None:
        result.errors.append("no head commit: run on a GitHub event or pass a PR with --pr")
        return
    if artifact.head and artifact.head != sha and not sha.startswith(artifact.head):
        result.warnings.append(f"the report says head {artifact.head[:12]} but the event's head "
                               f"is {sha[:12]}; posting on the event's head")
    result.head_sha = sha

    if pull is not None:
        # Our earlier inline comments first: the summary says how many outdated ones this
        # run leaves for later (MAX_WRITES).
        listed: dict[str, list[Any]] = {}
        _attempt(result, "review", lambda: listed.setdefault(
            "existing", list(pull.get_review_comments())))
        existing = listed.get("existing")
        limit = stale_budget(artifact, existing or [], login)
        left = 0 if existing is None else \
            max(0, len(outdated_comments(existing, artifact, login)) - limit)
        _attempt(result, "summary comment", lambda: upsert_summary(
            pull.as_issue(), summary_body(artifact, target, stale_note(left)), login, result))

        def review(existing: list[Any]) -> None:
            post_review(gh, pull, artifact, sha, target, result, existing, login)
            handle_stale(existing, artifact, sha, login, result, limit=limit)
        if existing is not None:    # else the listing's error is recorded already
            _attempt(result, "review", lambda: review(existing))
    if state["shared"]:
        # A check run belongs to the commit, so it would show on every PR at this commit
        # (and could satisfy another PR's required check) whatever PR this run was for.
        others = ", ".join(f"#{n}" for n in state["shared"])
        result.check_run_skipped = (f"other open pull requests ({others}) have the same head "
                                    f"commit {sha[:12]} from another repository or branch")
        result.notices.append(f"pt2bot posted no check run: {result.check_run_skipped}; "
                              "its verdict is in the summary comment"
                              + (f" of #{pull.number}" if pull is not None else ""))
        return
    if pull is None and target.event_name == "workflow_run":
        # The run was for a PR that is closed now (or several PRs, or none): a check run on
        # its commit would outlive it, and a later PR from the same commit would show it as
        # its own `pt2bot` check. The verdict is for a PR, so with no PR it is not posted.
        who = ("several open pull requests come" if state.get("ambiguous")
               else "no open pull request comes")
        result.check_run_skipped = f"{who} from {state.get('head', '?')} at {sha[:12]}"
        result.notices.append(f"pt2bot posted no check run: {result.check_run_skipped}; "
                              "nothing was posted, the report is in the `pt2bot-report` "
                              "artifact of the pull request's run")
        return
    _attempt(result, "check run", lambda: publish_check(state["repo"], artifact, sha, target, result))


def cli_publish(args: argparse.Namespace) -> int:
    result = publish_dir(args.dir, repo=args.repo, pr=args.pr)
    for line in result.lines():
        print(line)   # already log-safe (PublishResult.lines)
    return result.exit_code


__all__ = ["publish_dir", "cli_publish", "PublishResult", "ClientTuning", "find_pull", "PullMatch",
           "resolve_login", "upsert_summary", "post_review", "handle_stale", "publish_check",
           "diff_lines", "outdated_comments", "stale_budget", "MAX_WRITES", "UserError"]
