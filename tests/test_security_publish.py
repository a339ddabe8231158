"""The privileged half under attack: `pt2bot publish` with a write token on a report
directory a fork's pull request may have written, against the fake GitHub over real HTTP.

Each test is the attack as it was tried on commit a9ce469 (where it got through), asserting
the end state stored in the fake. Every posted body is rendered by a real GFM renderer
(cmarkgfm, raw HTML kept as GitHub keeps its allowed tags) and checked on the result: no
mention, issue or cross-repository reference in rendered text outside code, no link we did
not build, no HTML element that came from artifact text.
"""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
import requests
from cmarkgfm.cmark import Options

from fakegithub import (APP_TOKEN, HUMAN_TOKEN, OTHER_BOT_TOKEN, READ_TOKEN, WRITE_TOKEN,
                        FakeGitHub)
from pt2bot.publish.github import ClientTuning, PublishResult, publish_dir

FAST = ClientTuning(retries=3, backoff_factor=0.01, backoff_max=0.05,
                    secondary_rate_wait=0.05, seconds_between_writes=0.0)
SHA = "1" * 40
ADDED = "@@ -0,0 +1,50 @@\n" + "".join(f"+line {i}\n" for i in range(1, 51))
GB_LINK = re.compile(r"^https://meta-pytorch\.github\.io/compile-graph-break-site/gb/gb\d{4}\.html$")
# What GitHub turns into a ping, a cross-reference or a link in rendered text. GitHub looks
# for these in each text node of the rendered HTML (outside code), and a text node starts
# wherever an element ends: in `_GH-12_` the text node of <em> is `GH-12`, at a word
# boundary whatever came before it in the Markdown. So "survives" means: the token occurs
# in one text node, anywhere in it, not broken by a zero-width space (`GH\u200b-12`,
# `#\u200b1`, `@\u200buser`, `www\u200b.`, `:/\u200b/` are broken). Deliberately broader
# than GitHub, which also wants a word boundary before `GH-`/`@`: every sink breaks these
# tokens wherever they are, so nothing honest matches.
LIVE = re.compile(r"@[A-Za-z0-9_-]|#\d|GH-\d|www\.|://", re.I)
# A `$` outside code could open or close a math span (`$..$`, `$$..$$`, `` $`..`$ ``):
# GitHub renders math, cmarkgfm does not, so the oracle is that no `$` reaches a text node.
MATH_DELIMITER = "$"
# Fenced blocks GitHub renders as something other than code (math, diagrams, maps, models).
RENDERED_LANGS = {"math", "mermaid", "geojson", "topojson", "stl"}
# Elements Markdown syntax makes, plus the tags our own renderer writes.
OUR_ELEMENTS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "strong", "em",
                "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "hr", "br",
                "blockquote", "del", "details", "summary", "sub", "a"}


@dataclass
class Rendered:
    elements: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)       # text nodes outside code/pre
    links: list[str] = field(default_factory=list)


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out = Rendered()
        self.code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.elements.append((tag, dict(attrs)))
        if tag in ("code", "pre"):
            self.code += 1
        if tag == "a":
            self.out.links.append(dict(attrs).get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self.code -= 1

    def handle_data(self, data: str) -> None:
        if not self.code:
            self.out.text.append(data)


def render(markdown: str) -> Rendered:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    p = _Collect()
    p.feed(html)
    p.close()
    return p.out


def live_tokens(r: Rendered) -> list[str]:
    """The tokens GitHub would link or ping, text node by text node, plus every `$`."""
    found = [m.group(0) for node in r.text for m in LIVE.finditer(node)]
    found += [node for node in r.text if MATH_DELIMITER in node]
    found += [str(a) for t, a in r.elements if t in ("pre", "code")
              and ((a.get("lang") or "").lower() in RENDERED_LANGS
                   or (a.get("class") or "").lower().removeprefix("language-") in RENDERED_LANGS)]
    return found


def assert_inert(markdown: str) -> Rendered:
    r = render(markdown)
    assert live_tokens(r) == [], live_tokens(r)
    assert all(GB_LINK.match(h) for h in r.links), r.links
    assert {t for t, _ in r.elements} <= OUR_ELEMENTS, {t for t, _ in r.elements} - OUR_ELEMENTS
    allowed = {"a": {"href"}, "details": {"open"}, "th": {"align"}, "td": {"align"},
               "pre": {"lang"}, "code": {"class"}}
    for tag, attrs in r.elements:
        assert set(attrs) <= allowed.get(tag, set()), (tag, attrs)
    return r


# ------------------------------------------------------------------ the report directory
def write_report(d: Path, comments: list[dict[str, Any]], *, summary: str = "## pt2bot\n",
                 head: str = SHA, conclusion: str = "success", review_body: str = "",
                 annotations: list[dict[str, Any]] | None = None,
                 check_summary: str = "summary") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "report.json").write_text(json.dumps({
        "schema": "pt2bot.report/1", "base": "b" * 40, "head": head, "conclusion": conclusion,
        "findings": [{"fingerprint": c["fingerprint"]} for c in comments], "models": []}))
    (d / "summary.md").write_text("<!-- pt2bot:summary -->\n" + summary, encoding="utf-8")
    (d / "review.json").write_text(json.dumps({
        "schema": "pt2bot.review/1", "head": head, "body": review_body,
        "comments": [dict({"side": "RIGHT", "start_line": None}, **c) for c in comments]}))
    (d / "check.json").write_text(json.dumps({
        "schema": "pt2bot.check/1", "name": "pt2bot", "head_sha": head, "conclusion": conclusion,
        "title": "t", "summary": check_summary, "text": None,
        "annotations": annotations if annotations is not None else [
            {"path": c["path"], "start_line": c["line"], "end_line": c["line"],
             "annotation_level": "warning", "title": "PTC201", "message": c["body"]}
            for c in comments]}))
    return d


def comment(path: str = "model.py", line: int = 10, fp: str = "fp-a",
            body: str = "**PTC201** a finding") -> dict[str, Any]:
    return {"path": path, "line": line, "fingerprint": fp, "body": body}


def base_env(fake: FakeGitHub, token: str = WRITE_TOKEN) -> dict[str, str]:
    return {"GITHUB_TOKEN": token, "GITHUB_API_URL": fake.base_url,
            "GITHUB_REPOSITORY": fake.full_name, "GITHUB_SERVER_URL": "https://github.test",
            "GITHUB_RUN_ID": "77"}


def pr_env(fake: FakeGitHub, tmp: Path, number: int, *, token: str = WRITE_TOKEN,
           **extra: str) -> dict[str, str]:
    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": number, "head": {"sha": SHA}}}))
    return {**base_env(fake, token), "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event), **extra}


def workflow_run_env(fake: FakeGitHub, tmp: Path, *, owner: str, repo: str, branch: str,
                     sha: str = SHA) -> dict[str, str]:
    """The event GitHub writes for a run of pt2bot-pr on a PR from owner/repo:branch."""
    event = tmp / "workflow_run.json"
    event.write_text(json.dumps({"workflow_run": {
        "head_sha": sha, "head_branch": branch, "pull_requests": [], "event": "pull_request",
        "head_repository": {"full_name": f"{owner}/{repo}", "owner": {"login": owner}}}}))
    return {**base_env(fake), "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(event)}


def publish(d: Path, env: dict[str, str]) -> tuple[PublishResult, str]:
    out = io.StringIO()
    result = publish_dir(d, env=env, tuning=FAST, out=out)
    return result, out.getvalue()


def cli(d: Path, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real `pt2bot publish` in a subprocess (real stdout encoding, real exit code)."""
    return subprocess.run([sys.executable, "-m", "pt2bot", "publish", str(d)],
                          env={**env, "PATH": os.environ.get("PATH", ""),
                               "PYTHONIOENCODING": "utf-8"},
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def fake():
    with FakeGitHub() as f:
        yield f
    assert f.violations == [], "requests that do not match GitHub's OpenAPI:\n" + "\n".join(f.violations)


def post_as(fake: FakeGitHub, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = requests.post(f"{fake.repo_url}/{path}", headers={"Authorization": f"token {token}"},
                      json=body, timeout=10)
    assert r.status_code in (200, 201), r.text
    return r.json()


# ------------------------------------------------- 1. a forged report on someone else's PR
def test_fork_pr_at_the_victims_commit_does_not_publish_on_the_victim(fake, tmp_path):
    victim = fake.add_pull(head_sha=SHA, files={"model.py": ADDED}, head_ref="feature")
    attacker = fake.add_pull(head_sha=SHA, files={"model.py": ADDED}, head_owner="mallory",
                             head_ref="innocent")
    # The victim's PR already has our summary and an inline comment from its own run.
    honest = write_report(tmp_path / "honest", [comment(fp="fp-victim")], conclusion="failure")
    publish(honest, pr_env(fake, tmp_path, victim.number))
    before = json.dumps([fake.summary_comments(victim.number), fake.comments_on(victim.number)])
    checks_before = len(fake.checks_for(SHA))

    forged = write_report(tmp_path / "forged", [comment(fp="fp-evil", body="LGTM @maintainers")],
                          summary="## ✅ all good, merge it\n", conclusion="success")
    env = workflow_run_env(fake, tmp_path, owner="mallory", repo="demo", branch="innocent")
    result, out = publish(forged, env)

    assert result.exit_code == 0 and result.pr == attacker.number, result.lines()
    # Nothing on the victim: summary kept, inline comment not deleted as "outdated", and no
    # `success` check run on its commit (it would satisfy the victim's required check).
    assert json.dumps([fake.summary_comments(victim.number),
                       fake.comments_on(victim.number)]) == before
    assert len(fake.checks_for(SHA)) == checks_before == 1
    assert fake.checks_for(SHA)[0]["conclusion"] == "failure"
    # The attacker's own PR gets its report, and the log says why there is no check run.
    assert len(fake.summary_comments(attacker.number)) == 1
    assert result.check_run_skipped and f"#{victim.number}" in result.check_run_skipped
    assert "::notice title=pt2bot::pt2bot posted no check run" in out


def test_honest_success_from_another_base_does_not_land_on_the_victim(fake, tmp_path):
    """A fork PR from the same commit against a base that already has the change: an honest
    `success` for it is not a verdict on the victim's PR."""
    victim = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    other = fake.add_pull(head_sha=SHA, files={}, base_sha="c" * 40, head_owner="someone",
                          head_repo="demo-fork", head_ref="feature")
    d = write_report(tmp_path / "r", [], conclusion="success")
    result, _ = publish(d, workflow_run_env(fake, tmp_path, owner="someone", repo="demo-fork",
                                            branch="feature"))
    assert result.pr == other.number and fake.summary_comments(victim.number) == []
    assert fake.checks_for(SHA) == []


def test_several_prs_from_one_head_are_resolved_not_at_all(fake, tmp_path):
    a = fake.add_pull(head_sha=SHA, files={"model.py": ADDED}, head_ref="topic")
    b = fake.add_pull(head_sha=SHA, files={"model.py": ADDED}, head_ref="topic", base_sha="c" * 40)
    result, _ = publish(write_report(tmp_path / "r", [comment()]),
                        workflow_run_env(fake, tmp_path, owner="octo", repo="demo", branch="topic"))
    assert result.pr is None and any("all come from" in w for w in result.warnings)
    assert fake.issue_comments == [] and fake.review_comments == [] and fake.check_runs == []
    assert {a.number, b.number} <= set(fake.pulls)


def test_the_matching_pr_alone_gets_everything(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED}, head_owner="forker",
                       head_repo="demo-fork", head_ref="fix")
    fake.add_pull(head_sha="9" * 40, files={"model.py": ADDED}, head_owner="forker",
                  head_repo="demo-fork", head_ref="other")
    result, _ = publish(write_report(tmp_path / "r", [comment()]),
                        workflow_run_env(fake, tmp_path, owner="forker", repo="demo-fork",
                                         branch="fix"))
    assert result.pr == pr.number and result.check_run_skipped is None, result.lines()
    assert len(fake.checks_for(SHA)) == 1 and len(fake.comments_on(pr.number)) == 1



@pytest.mark.parametrize("closed", [True, False])
def test_a_closed_pr_leaves_no_check_run_for_the_next_pr_from_its_commit(fake, tmp_path, closed):
    """A check run belongs to the commit: posted on a SHA whose PR is closed (or was never
    opened), it stays there, and a later PR from the same commit shows it as its own `pt2bot`
    check. With no open PR from the run's head, publish posts nothing at all."""
    if closed:
        gone = fake.add_pull(head_sha=SHA, files={"model.py": ADDED}, head_owner="mallory",
                             head_repo="demo-fork", head_ref="innocent")
        gone.state = "closed"
    else:   # pushed to a fork, never opened as a PR (GitHub knows the commit all the same)
        fake.commits.setdefault(SHA, {"sha": SHA})
    d = write_report(tmp_path / "r", [comment()], conclusion="success")
    result, out = publish(d, workflow_run_env(fake, tmp_path, owner="mallory", repo="demo-fork",
                                              branch="innocent"))
    assert result.exit_code == 0 and result.pr is None, result.lines()
    assert not any(p.startswith("/repos/octo/demo/check-runs") or "/statuses/" in p
                   for _, p, _ in fake.log), fake.log
    assert fake.check_runs == [] and fake.issue_comments == [] and fake.review_comments == []
    # The job's output says why, in the log and as a notice.
    assert result.check_run_skipped and "no open pull request" in result.check_run_skipped
    assert any("no check run: no open pull request" in line for line in result.lines())
    assert "::notice title=pt2bot::pt2bot posted no check run: no open pull request" in out
    # The later PR from the same commit has no `pt2bot` check it did not earn.
    later = fake.add_pull(head_sha=SHA, files={"model.py": ADDED}, head_owner="mallory",
                          head_repo="demo-fork", head_ref="second-try")
    assert fake.checks_for(SHA) == [] and later.state == "open"


# -------------------------------------------- 8. only the token's own account is "ours"
def test_another_bots_marker_comments_are_not_ours(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    theirs = post_as(fake, OTHER_BOT_TOKEN, f"issues/{pr.number}/comments",
                     {"body": "<!-- pt2bot:summary -->\nsomething else entirely"})
    stale = post_as(fake, OTHER_BOT_TOKEN, f"pulls/{pr.number}/comments",
                    {"body": "their note <!-- pt2bot:fp=fp-gone -->", "commit_id": SHA,
                     "path": "model.py", "line": 3, "side": "RIGHT"})
    claimed = post_as(fake, OTHER_BOT_TOKEN, f"pulls/{pr.number}/comments",
                      {"body": "not ours <!-- pt2bot:fp=fp-a -->", "commit_id": SHA,
                       "path": "model.py", "line": 10, "side": "RIGHT"})
    result, _ = publish(write_report(tmp_path / "r", [comment(fp="fp-a")]),
                        pr_env(fake, tmp_path, pr.number))
    assert result.exit_code == 0, result.lines()
    bodies = {c["id"]: c for c in fake.issue_comments}
    assert bodies[theirs["id"]]["body"].endswith("something else entirely")   # not edited
    ours = [c for c in fake.summary_comments(pr.number) if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1 and result.duplicates_deleted == 0
    review = {c["id"]: c for c in fake.comments_on(pr.number)}
    assert stale["id"] in review and claimed["id"] in review          # not deleted / edited
    assert result.inline_posted == 1 and result.inline_already_there == 0


@pytest.mark.parametrize("token,login_env,author", [
    (APP_TOKEN, "pt2bot-app[bot]", "pt2bot-app[bot]"),   # an App token: PT2BOT_BOT_LOGIN
    (HUMAN_TOKEN, None, "alice"),                        # a personal token: GET /user
])
def test_our_account_from_bot_login_or_get_user(fake, tmp_path, token, login_env, author):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    extra = {"PT2BOT_BOT_LOGIN": login_env} if login_env else {}
    d = write_report(tmp_path / "r", [comment()])
    for _ in range(2):
        result, _ = publish(d, pr_env(fake, tmp_path, pr.number, token=token, **extra))
        assert result.exit_code == 0, result.lines()
    [summary] = fake.summary_comments(pr.number)
    assert summary["user"]["login"] == author
    assert len(fake.comments_on(pr.number)) == 1 and result.inline_already_there == 1


def test_tracking_issue_of_another_account_is_not_touched(fake):
    from pt2bot.publish.issue import AUDIT_MARKER, LABEL, TrackingUpdate, publish_tracking_issue
    post_as(fake, OTHER_BOT_TOKEN, "issues", {"title": "not ours", "labels": [LABEL],
                                              "body": AUDIT_MARKER + "\nsomeone else's"})
    env = base_env(fake)
    url = publish_tracking_issue(TrackingUpdate("night 1: 1 break", regressed=True), env=env,
                                 tuning=FAST)
    issues = sorted(fake.issues.values(), key=lambda i: i["number"])
    assert [i["body"].endswith("someone else's") for i in issues] == [True, False]
    assert url and url.endswith(f"/issues/{issues[1]['number']}")
    assert issues[1]["user"]["login"] == "github-actions[bot]"


# -------------------------------------------------- 2./3. text from the artifact is inert
HOSTILE_PATHS = ["a` @org/team #123 `b.py", "<details><img src=https:attacker.example/p.png>.py",
                 "x`](https:/phish.example)`.py"]
HOSTILE_MD = (
    "<img src=https://attacker/x.png> [click](https://phish.example/login) "
    "pytorch/pytorch#456 GH-789 &#64;user &#x40;user2 <https://evil.example> www.evil.example "
    "https://evil.example/x ![i](https://attacker/i.png) <a href=https://x>x</a> "
    "[GB0124](https://attacker/gb0124.html) [GB0001](https://meta-pytorch.github.io/"
    "compile-graph-break-site/gb/gb0002.html) <details open onclick=x> <sub title=x>\n\n"
    "[ref]: https://evil.example/ref\n\nsee [ref] and [^1]\n\n[^1]: https://evil.example/fn\n\n"
    "`code @ok` <!-- pt2bot:fp=forged -->\n\n"
    # references inside emphasis, math, and fences GitHub renders as math or diagrams
    "_GH-12_ __GH-34__ ~~#5~~ _@octocat_ $\\color{red}{\\text{Approved}}$ "
    "$$\\href{https://phish.example}{merge}$$ $`\\color{green}{x}`$\n\n"
    "```math\n\\color{red}{x}\n```\n\n~~~mermaid\ngraph TD; A-->B\n~~~\n")
OUR_MARKUP = ("| a | b |\n|---|---|\n| 1 | 2 |\n\n<details><summary>more</summary>\n\n- item\n\n"
              "</details>\n\n- **[GB0124](https://meta-pytorch.github.io/compile-graph-break-site/"
              "gb/gb0124.html)** a break\n\n---\n<sub>torch 2.x</sub>\n")


def test_hostile_paths_in_the_overflow_list_are_inert(fake, tmp_path):
    """Comments that cannot go inline are listed in the review body with their path."""
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    comments = [comment(line=1)] + [comment(path=p, line=5, fp=f"fp-{i}")
                                    for i, p in enumerate(HOSTILE_PATHS)]
    result, _ = publish(write_report(tmp_path / "r", comments), pr_env(fake, tmp_path, pr.number))
    assert result.exit_code == 0 and result.overflow == 3, result.lines()
    [review] = fake.reviews
    r = assert_inert(review["body"])
    assert not any(t in ("img", "details", "a") for t, _ in r.elements)
    # The paths are still readable, as code.
    assert sum(p.replace("@", "@\u200b").replace("#1", "#\u200b1") in review["body"]
               for p in HOSTILE_PATHS[1:]) == 2


def test_hostile_markdown_in_every_posted_body_is_inert_and_ours_stays(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    d = write_report(tmp_path / "r", [comment(body=HOSTILE_MD + OUR_MARKUP)],
                     summary=HOSTILE_MD + OUR_MARKUP, review_body=HOSTILE_MD,
                     check_summary=HOSTILE_MD + OUR_MARKUP)
    result, _ = publish(d, pr_env(fake, tmp_path, pr.number))
    assert result.exit_code == 0, result.lines()
    [summary] = fake.summary_comments(pr.number)
    [inline] = fake.comments_on(pr.number)
    [review] = fake.reviews
    [check] = fake.checks_for(SHA)
    for body in (summary["body"], inline["body"], review["body"], check["output"]["summary"]):
        assert_inert(body)
        assert "<!-- pt2bot:fp=forged" not in body
    for body in (summary["body"], inline["body"], check["output"]["summary"]):
        r = render(body)
        tags = [t for t, _ in r.elements]
        # Our own markup survived: the table, the collapsible section, the footer, the GB link.
        assert {"table", "details", "summary", "sub"} <= set(tags)
        assert r.links == ["https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"]
        assert [a for t, a in r.elements if t == "details"] == [{}]
    assert summary["body"].count("<!-- pt2bot:") == 1
    assert inline["body"].count("<!-- pt2bot:") == 1


def test_annotations_and_titles_are_plain_text_without_pings(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    d = write_report(tmp_path / "r", [comment(body="x")], annotations=[
        {"path": "model.py", "start_line": 3, "end_line": 3, "annotation_level": "failure",
         "title": "@org/team pytorch/pytorch#1", "message": "ping @octocat GH-12 <!-- pt2bot:x -->"}])
    publish(d, pr_env(fake, tmp_path, pr.number))
    [a] = fake.checks_for(SHA)[0]["output"]["annotations"]
    assert not LIVE.search(a["title"] + a["message"]) and "<!-- pt2bot:" not in a["message"]


# --------------------------------------------- 4. workflow commands in the privileged log
EVIL_CMD = "##[add-mask]hunter2 ##[stop-commands]x ##[error file=x]forged"


def _our_command(line: str) -> bool:
    return line.startswith(("::error file=", "::warning file=", "::notice file=",
                            "::notice title=pt2bot::"))


def assert_log_inert(text: str) -> None:
    assert "##[" not in text
    for line in text.splitlines():
        assert not line.lstrip().startswith("::") or _our_command(line), line


def test_rejected_artifact_values_in_warnings_start_no_command(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    d = write_report(tmp_path / "r", [comment()], annotations=[
        {"path": "/" + EVIL_CMD, "start_line": 1, "annotation_level": "warning", "message": "m"},
        {"path": "ok.py", "start_line": EVIL_CMD, "annotation_level": "warning", "message": "m"},
        {"path": "ok.py", "start_line": 1, "annotation_level": "warning", "message": "fine"}])
    check = json.loads((d / "check.json").read_text())
    check["conclusion"] = "failure"
    (d / "check.json").write_text(json.dumps(check))
    proc = cli(d, {**pr_env(fake, tmp_path, pr.number, token=READ_TOKEN),
                   "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")})
    assert proc.returncode == 0, proc.stderr
    assert "skipped" in proc.stdout and "hunter2" in proc.stdout   # reported, but inert
    assert_log_inert(proc.stdout + proc.stderr)


def test_a_rejected_schema_value_in_the_error_starts_no_command(tmp_path):
    d = write_report(tmp_path / "r", [])
    (d / "report.json").write_text(json.dumps({"schema": EVIL_CMD + "\n::add-mask::x"}))
    proc = cli(d, {})
    assert proc.returncode == 2 and "schema: expected" in proc.stderr
    assert_log_inert(proc.stdout + proc.stderr)


def test_summary_printed_without_a_job_summary_starts_no_command(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    d = write_report(tmp_path / "r", [], summary="fine\n::add-mask::hunter2\n  ::stop-commands::tok\n"
                                                 + EVIL_CMD + "\n")
    proc = cli(d, pr_env(fake, tmp_path, pr.number, token=READ_TOKEN))   # no GITHUB_STEP_SUMMARY
    assert proc.returncode == 0, proc.stderr
    assert "hunter2" in proc.stdout and "fine" in proc.stdout
    assert_log_inert(proc.stdout + proc.stderr)


# ------------------------------------------------------ 5. crashes and hangs on hostile input
def test_deeply_nested_json_is_a_located_error(tmp_path):
    d = write_report(tmp_path / "r", [comment()])
    (d / "review.json").write_text('{"schema": "pt2bot.review/1", "comments": '
                                   + "[" * 100_000 + "]" * 100_000 + "}")
    proc = cli(d, {})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert re.search(r"review\.json:1:\d+: invalid JSON: nested deeper", proc.stderr), proc.stderr


def test_a_5000_digit_integer_drops_one_item_and_the_rest_goes_out(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    d = write_report(tmp_path / "r", [comment(fp="fp-a", line=10), comment(fp="fp-b", line=20)])
    text = (d / "review.json").read_text().replace('"line": 10', '"line": ' + "9" * 5000, 1)
    (d / "review.json").write_text(text)
    result, _ = publish(d, pr_env(fake, tmp_path, pr.number))
    assert result.exit_code == 0, result.lines()
    assert [c["line"] for c in fake.comments_on(pr.number)] == [20]
    assert any("review.json.comments[0].line" in w and "5,000 digits" in w
               for w in result.warnings), result.warnings
    assert len(fake.summary_comments(pr.number)) == 1 and len(fake.checks_for(SHA)) == 1


def test_a_lone_surrogate_does_not_kill_the_fallback(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    d = write_report(tmp_path / "r", [], summary="the job summary\n", annotations=[
        {"path": "a.py", "start_line": i, "annotation_level": "warning",
         "message": f"message {i} \ud800 end"} for i in range(1, 4)])
    summary = tmp_path / "step.md"
    proc = cli(d, {**pr_env(fake, tmp_path, pr.number, token=READ_TOKEN),
                   "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert [ln for ln in proc.stdout.splitlines() if ln.startswith("::warning")] == [
        f"::warning file=a.py,line={i},endLine={i}::message {i}  end" for i in range(1, 4)]
    assert "the job summary" in summary.read_text(encoding="utf-8")


def test_a_fifo_named_summary_md_is_refused_not_waited_on(tmp_path):
    d = write_report(tmp_path / "r", [])
    (d / "summary.md").unlink()
    os.mkfifo(d / "summary.md")
    proc = cli(d, {}, timeout=30)
    assert proc.returncode == 2 and "summary.md: not a regular file" in proc.stderr, proc.stderr


# ---------------------------------------------------- 9. the job summary is capped in bytes
def test_job_summary_cap_counts_bytes(fake, tmp_path):
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED})
    d = write_report(tmp_path / "r", [], summary="€" * 1_300_000)
    summary = tmp_path / "step.md"
    result, _ = publish(d, {**pr_env(fake, tmp_path, pr.number, token=READ_TOKEN),
                            "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.fallback
    size = summary.stat().st_size
    assert 900_000 < size <= 1024 * 1024, size
    assert "truncated" in summary.read_text(encoding="utf-8")


# ------------------------------------- 10. one publish, a bounded number of API requests
SHA2 = "2" * 40
ADDED_300 = "@@ -0,0 +1,300 @@\n" + "".join(f"+line {i}\n" for i in range(1, 301))
MAX_REQUESTS = 20


def _breakdown(log: list[tuple[str, str, int]]) -> str:
    from collections import Counter
    kinds = Counter((m, re.sub(r"/\d+", "/N", p.split("?")[0])) for m, p, _ in log)
    return "\n".join(f"{n:3} {m} {p}" for (m, p), n in sorted(kinds.items()))


def test_a_push_loop_cannot_spend_the_repositorys_api_quota(fake, tmp_path):
    """The job token's hourly quota is per repository, shared by every workflow: each push of
    a fork starts one publish, so what one publish may send is what a push loop multiplies.
    The artifact: 1,000 annotations and 30 new fingerprints, after a run whose 30 comments
    are all outdated now. Before: 62 requests (51 writes: 20 for the 1,000 annotations, 30
    deletions, the review). Now 20 (16 writes: 10 for the renderer's 500 annotations, the
    review, the summary's note, 4 deletions; the other 26 in the next runs)."""
    from pt2bot.report.check import MAX_ANNOTATIONS
    pr = fake.add_pull(head_sha=SHA, files={"model.py": ADDED_300}, head_owner="mallory",
                       head_repo="demo-fork", head_ref="loop")
    env = workflow_run_env(fake, tmp_path, owner="mallory", repo="demo-fork", branch="loop")
    first, _ = publish(write_report(tmp_path / "r1", [comment(line=i, fp=f"fp-old-{i}")
                                                      for i in range(1, 31)]), env)
    assert first.inline_posted == 30, first.lines()
    fake.push(pr.number, SHA2)
    env = workflow_run_env(fake, tmp_path, owner="mallory", repo="demo-fork", branch="loop",
                           sha=SHA2)
    d = write_report(tmp_path / "r2", [comment(line=100 + i, fp=f"fp-new-{i}") for i in range(30)],
                     head=SHA2, annotations=[
                         {"path": "model.py", "start_line": i % 300 + 1,
                          "annotation_level": "warning", "message": f"finding {i}"}
                         for i in range(1000)])
    left = 30
    for run in range(12):
        before = len(fake.log)
        result, _ = publish(d, env)
        sent = fake.log[before:]
        assert result.exit_code == 0 and fake.violations == [], result.lines()
        assert len(sent) <= MAX_REQUESTS, f"run {run}: {len(sent)} requests\n" + _breakdown(sent)
        handled = result.stale_deleted + result.stale_marked
        assert handled <= left and (handled > 0 or left == 0)
        left -= handled
        [summary] = fake.summary_comments(pr.number)
        # What is left out is said where the PR's readers look: the sticky summary.
        note = f"{left} inline comment{'s' if left != 1 else ''} about findings that are gone"
        assert (note in summary["body"]) == (left > 0), summary["body"][-400:]
        assert_inert(summary["body"])
        if run == 0:
            # Everything else went out: the renderer's cap of annotations (50 a request)...
            [check] = fake.checks_for(SHA2)
            assert len(check["output"]["annotations"]) == MAX_ANNOTATIONS == 500
            assert any(f"{1000 - MAX_ANNOTATIONS} annotations over" in w
                       for w in result.warnings), result.warnings
            # ... and the 30 new comments in one review.
            assert result.inline_posted == 30 and len(fake.reviews) == 2
            assert len(sent) == 20 and sum(m != "GET" for m, _, _ in sent) == 16, _breakdown(sent)
    assert left == 0
    bodies = [c["body"] for c in fake.comments_on(pr.number)]
    assert len(bodies) == 30 and all("fp=fp-new-" in b for b in bodies)


def test_publish_accepts_no_more_annotations_than_the_renderer_writes(tmp_path):
    from pt2bot.publish.artifact import load_report_dir
    from pt2bot.report.check import MAX_ANNOTATIONS
    d = write_report(tmp_path / "r", [], annotations=[
        {"path": "a.py", "start_line": 1, "annotation_level": "notice", "message": "m"}
        for _ in range(MAX_ANNOTATIONS + 1)])
    artifact = load_report_dir(d)
    assert len(artifact.check.annotations) == MAX_ANNOTATIONS
    assert artifact.check.dropped_annotations == 1
