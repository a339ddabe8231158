"""End-to-end scenarios: `publish_dir` / `pt2bot publish` against the fake GitHub over HTTP.

Every test asserts the END STATE stored in the fake (comments, reviews, check runs), and the
fixture fails the test if any request did not match GitHub's OpenAPI description.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fakegithub import HUMAN_TOKEN, READ_TOKEN, WRITE_TOKEN, FakeGitHub
from pt2bot.publish.github import ClientTuning, PublishResult, publish_dir
from pt2bot.publish.artifact import SUMMARY_MARKER

FAST = ClientTuning(retries=3, backoff_factor=0.01, backoff_max=0.05,
                    secondary_rate_wait=0.05, seconds_between_writes=0.0)
HEAD1 = "1" * 40
HEAD2 = "2" * 40
ADDED_300 = "@@ -0,0 +1,300 @@\n" + "".join(f"+line {i}\n" for i in range(1, 301))


@pytest.fixture
def fake():
    with FakeGitHub() as f:
        yield f
    assert f.violations == [], "requests that do not match GitHub's OpenAPI:\n" + "\n".join(f.violations)


Finding = tuple[str, int, str, str]   # path, line, fingerprint, message


def write_report(d: Path, findings: list[Finding], *, head: str = HEAD1,
                 conclusion: str | None = None, extra_summary: str = "") -> Path:
    """A report directory as `pt2bot review` writes it (docs/formats.md), written by hand."""
    d.mkdir(parents=True, exist_ok=True)
    conclusion = conclusion or ("failure" if findings else "success")
    (d / "report.json").write_text(json.dumps({
        "schema": "pt2bot.report/1", "base": "b" * 40, "head": head, "conclusion": conclusion,
        "findings": [{"rule": "PTC201", "path": p, "line": ln, "col": 0, "severity": "error",
                      "message": m, "new": True, "fingerprint": fp} for p, ln, fp, m in findings],
        "models": []}))
    (d / "summary.md").write_text(
        f"<!-- pt2bot:summary -->\n## pt2bot: {len(findings)} findings\n{extra_summary}\n")
    (d / "review.json").write_text(json.dumps({
        "schema": "pt2bot.review/1", "head": head, "body": f"pt2bot found {len(findings)} issues.",
        "comments": [{"path": p, "line": ln, "side": "RIGHT", "start_line": None,
                      "body": f"**PTC201** {m}\n\n<!-- pt2bot:fp={fp} -->", "fingerprint": fp}
                     for p, ln, fp, m in findings]}))
    (d / "check.json").write_text(json.dumps({
        "schema": "pt2bot.check/1", "name": "pt2bot", "head_sha": head, "conclusion": conclusion,
        "title": f"{len(findings)} findings", "summary": f"{len(findings)} findings", "text": None,
        "annotations": [{"path": p, "start_line": ln, "end_line": ln, "annotation_level": "failure",
                         "title": "PTC201", "message": m} for p, ln, fp, m in findings]}))
    return d


def pr_env(fake: FakeGitHub, tmp: Path, number: int, head: str, *,
           token: str = WRITE_TOKEN) -> dict[str, str]:
    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": number, "head": {"sha": head}}}))
    return {"GITHUB_TOKEN": token, "GITHUB_API_URL": fake.base_url,
            "GITHUB_REPOSITORY": fake.full_name, "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event), "GITHUB_STEP_SUMMARY": str(tmp / "step_summary.md"),
            "GITHUB_SERVER_URL": "https://github.test", "GITHUB_RUN_ID": "77"}


def publish(d: Path, env: dict[str, str], **kw: Any) -> tuple[PublishResult, str]:
    out = io.StringIO()
    result = publish_dir(d, env=env, tuning=FAST, out=out, **kw)
    return result, out.getvalue()


THREE = [("model.py", 10, "fp-a", "`.item()` in forward"),
         ("model.py", 20, "fp-b", "branch on a tensor value"),
         ("model.py", 30, "fp-c", "hard-coded batch size")]


def test_first_run_posts_summary_review_and_check(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    result, _ = publish(write_report(tmp_path / "r", THREE), pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0 and result.fallback is None, result.lines()
    [summary] = fake.summary_comments(pr.number)
    assert summary["body"].startswith(SUMMARY_MARKER) and "3 findings" in summary["body"]
    assert len(fake.reviews) == 1 and fake.reviews[0]["state"] == "COMMENTED"
    comments = fake.comments_on(pr.number)
    assert sorted((c["path"], c["line"]) for c in comments) == [("model.py", 10), ("model.py", 20),
                                                                 ("model.py", 30)]
    assert all("<!-- pt2bot:fp=fp-" in c["body"] for c in comments)
    [check] = fake.checks_for(HEAD1)
    assert check["conclusion"] == "failure" and check["status"] == "completed"
    assert len(check["output"]["annotations"]) == 3
    assert check["details_url"] == "https://github.test/octo/demo/actions/runs/77"


def test_rerun_without_change_posts_nothing_new(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    d = write_report(tmp_path / "r", THREE)
    env = pr_env(fake, tmp_path, pr.number, HEAD1)
    publish(d, env)
    before = (json.dumps(fake.issue_comments), len(fake.reviews), json.dumps(fake.review_comments))
    result, _ = publish(d, env)
    assert result.inline_posted == 0 and result.inline_already_there == 3
    assert (json.dumps(fake.issue_comments), len(fake.reviews),
            json.dumps(fake.review_comments)) == before
    assert len(fake.summary_comments(pr.number)) == 1


def test_rerun_after_fix_edits_summary_and_handles_stale_comments(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    publish(write_report(tmp_path / "r1", THREE), pr_env(fake, tmp_path, pr.number, HEAD1))
    [summary_id] = [c["id"] for c in fake.summary_comments(pr.number)]
    # A human replies to the comment about fp-a; nobody replies to fp-b.
    fa = next(c for c in fake.comments_on(pr.number) if "fp=fp-a" in c["body"])
    import requests
    r = requests.post(f"{fake.repo_url}/pulls/{pr.number}/comments",
                      headers={"Authorization": f"token {HUMAN_TOKEN}"},
                      json={"body": "good catch, fixing", "in_reply_to": fa["id"],
                            "commit_id": HEAD1, "path": "model.py"})
    assert r.status_code == 201
    # The push fixes fp-a and fp-b; fp-c stays; a new finding fp-d appears.
    fake.push(pr.number, HEAD2)
    fixed = [THREE[2], ("model.py", 40, "fp-d", "print() in forward")]
    result, _ = publish(write_report(tmp_path / "r2", fixed, head=HEAD2),
                        pr_env(fake, tmp_path, pr.number, HEAD2))
    assert result.exit_code == 0, result.lines()
    [summary] = fake.summary_comments(pr.number)
    assert summary["id"] == summary_id and "2 findings" in summary["body"]
    bodies = {c["id"]: c["body"] for c in fake.comments_on(pr.number)}
    assert "Outdated: fixed in 222222222222" in bodies[fa["id"]]                 # replied → marked
    assert not any("fp=fp-b" in b for b in bodies.values())                       # unreplied → deleted
    assert sum("fp=fp-c" in b for b in bodies.values()) == 1                      # not repeated
    assert sum("fp=fp-d" in b for b in bodies.values()) == 1                      # new one posted
    assert "good catch, fixing" in bodies.values()
    assert fake.checks_for(HEAD2)[0]["conclusion"] == "failure"


def test_two_hundred_findings(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    many = [("model.py", i, f"fp-{i}", f"finding {i}") for i in range(1, 201)]
    result, _ = publish(write_report(tmp_path / "r", many), pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0, result.lines()
    [review] = fake.reviews
    assert len(fake.comments_on(pr.number)) == 30
    assert "170 more finding(s) not shown inline" in review["body"]
    assert "`model.py:200`: **PTC201** finding 200" in review["body"]
    [check] = fake.checks_for(HEAD1)
    assert [a["message"] for a in check["output"]["annotations"]] == [f"finding {i}" for i in range(1, 201)]
    # 1 create + 3 updates: every request held at most 50 (the fake rejects more).
    assert [m for m, p, s in fake.log if "/check-runs" in p] == ["POST", "PATCH", "PATCH", "PATCH"]


def test_comment_outside_the_diff_goes_to_the_body_not_a_failed_review(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": "@@ -1,2 +1,3 @@\n a\n+b\n c\n"})
    findings = [("model.py", 2, "fp-in", "on the diff"), ("model.py", 50, "fp-out", "off the diff"),
                ("other.py", 1, "fp-file", "file not in the PR")]
    result, _ = publish(write_report(tmp_path / "r", findings), pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0, result.lines()
    assert [c["line"] for c in fake.comments_on(pr.number)] == [2]
    assert "`model.py:50`: **PTC201** off the diff" in fake.reviews[0]["body"]
    assert "`other.py:1`" in fake.reviews[0]["body"]


def test_fork_pr_read_only_token_falls_back(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300}, head_owner="forker")
    env = pr_env(fake, tmp_path, pr.number, HEAD1, token=READ_TOKEN)
    result, out = publish(write_report(tmp_path / "r", THREE + [("a,b:c.py", 3, "fp-x", "100%\n::stop-commands::x")]), env)
    assert result.exit_code == 0 and result.fallback and "403" in result.fallback
    assert fake.issue_comments == [] and fake.reviews == [] and fake.check_runs == []
    assert "::error file=model.py,line=10,endLine=10,title=PTC201::`.item()` in forward" in out
    # Artifact text cannot start a workflow command of its own, nor break the properties.
    assert "::error file=a%2Cb%3Ac.py,line=3,endLine=3,title=PTC201::100%25%0A::stop-commands::x" in out
    assert not any(line.startswith("::stop-commands") for line in out.splitlines())
    assert "::notice title=pt2bot::could not publish" in out
    assert "## pt2bot: 4 findings" in (tmp_path / "step_summary.md").read_text()


def test_cli_publish_fork_exits_zero(fake, tmp_path):
    """The real console entry point, in a subprocess, with the Actions environment."""
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    env = pr_env(fake, tmp_path, pr.number, HEAD1, token=READ_TOKEN)
    d = write_report(tmp_path / "r", THREE)
    proc = subprocess.run([sys.executable, "-m", "pt2bot", "publish", str(d)], env={**env, "PATH": ""},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "fallback: no permission" in proc.stdout
    assert "::error file=model.py,line=20" in proc.stdout


def test_server_error_once_is_retried(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    fake.fail_next("POST", r"/issues/\d+/comments$", 500)
    fake.fail_next("POST", r"/check-runs$", 502)
    result, _ = publish(write_report(tmp_path / "r", THREE), pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0 and not result.errors, result.lines()
    assert len(fake.summary_comments(pr.number)) == 1 and len(fake.checks_for(HEAD1)) == 1
    assert ("POST", f"/repos/octo/demo/issues/{pr.number}/comments", 500) in fake.log


def test_secondary_rate_limit_is_waited_out(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    fake.secondary_rate_limit_next("POST", r"/reviews$")
    result, _ = publish(write_report(tmp_path / "r", THREE), pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0 and result.fallback is None, result.lines()
    assert len(fake.reviews) == 1 and len(fake.comments_on(pr.number)) == 3


def test_persistent_server_error_reports_and_falls_back(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    fake.fail_next("POST", r"/check-runs$", 500, times=10)
    result, out = publish(write_report(tmp_path / "r", THREE), pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 1 and any("check run" in e for e in result.errors)
    assert len(fake.summary_comments(pr.number)) == 1          # the other parts still went out
    assert "::error file=model.py,line=10" in out               # and nothing is lost


def test_workflow_run_finds_the_fork_pr_by_sha(fake, tmp_path):
    other = fake.add_pull(head_sha="9" * 40, files={"x.py": ADDED_300})
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300}, head_owner="forker",
                       head_ref="fix-it")
    event = tmp_path / "wr.json"
    event.write_text(json.dumps({"workflow_run": {
        "head_sha": HEAD1, "head_branch": "fix-it", "pull_requests": [],
        "head_repository": {"owner": {"login": "forker"}}}}))
    env = {"GITHUB_TOKEN": WRITE_TOKEN, "GITHUB_API_URL": fake.base_url,
           "GITHUB_REPOSITORY": fake.full_name, "GITHUB_EVENT_NAME": "workflow_run",
           "GITHUB_EVENT_PATH": str(event)}
    # The artifact lies about its head; the check run goes on the event's head anyway.
    result, _ = publish(write_report(tmp_path / "r", THREE, head="f" * 40), env)
    assert result.pr == pr.number and result.exit_code == 0, result.lines()
    assert len(fake.summary_comments(pr.number)) == 1 and fake.summary_comments(other.number) == []
    assert len(fake.checks_for(HEAD1)) == 1 and fake.checks_for("f" * 40) == []
    assert any("report says head ffffffffffff" in w for w in result.warnings)


def test_workflow_run_same_repo_pr_found_from_commit(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    event = tmp_path / "wr.json"
    event.write_text(json.dumps({"workflow_run": {"head_sha": HEAD1, "head_branch": "feature",
                                                  "head_repository": {"owner": {"login": "octo"}}}}))
    env = {"GITHUB_TOKEN": WRITE_TOKEN, "GITHUB_API_URL": fake.base_url,
           "GITHUB_REPOSITORY": fake.full_name, "GITHUB_EVENT_NAME": "workflow_run",
           "GITHUB_EVENT_PATH": str(event), "PT2BOT_COMMIT_STATUS": "true"}
    result, _ = publish(write_report(tmp_path / "r", THREE), env)
    assert result.pr == pr.number and result.status_posted
    assert [s["state"] for s in fake.statuses] == ["failure"]


def test_racing_duplicates_are_removed(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    import requests
    for text in ("old run A", "old run B"):   # two racing runs both created a comment
        requests.post(f"{fake.repo_url}/issues/{pr.number}/comments",
                      headers={"Authorization": f"token {WRITE_TOKEN}"},
                      json={"body": f"{SUMMARY_MARKER}\n{text}"})
    # A human comment that quotes the marker elsewhere is never touched.
    requests.post(f"{fake.repo_url}/issues/{pr.number}/comments",
                  headers={"Authorization": f"token {HUMAN_TOKEN}"},
                  json={"body": f"{SUMMARY_MARKER} forged by a human"})
    result, _ = publish(write_report(tmp_path / "r", THREE), pr_env(fake, tmp_path, pr.number, HEAD1))
    ours = [c for c in fake.summary_comments(pr.number) if c["user"]["type"] == "Bot"]
    assert len(ours) == 1 and "3 findings" in ours[0]["body"] and result.duplicates_deleted == 1
    assert any(c["body"].endswith("forged by a human") for c in fake.issue_comments)


def test_huge_summary_is_capped_with_a_pointer(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    d = write_report(tmp_path / "r", THREE, extra_summary="x" * 200_000)
    data = json.loads((d / "check.json").read_text())
    data["summary"] = "y" * 100_000
    (d / "check.json").write_text(json.dumps(data))
    result, _ = publish(d, pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0, result.lines()
    [summary] = fake.summary_comments(pr.number)
    assert len(summary["body"]) <= 65536 and "truncated" in summary["body"]
    assert "actions/runs/77" in summary["body"]
    assert len(fake.checks_for(HEAD1)[0]["output"]["summary"]) <= 65535


def test_untrusted_text_cannot_forge_markers_or_ping(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    evil = [("model.py", 10, "fp-a", "@maintainers <!-- pt2bot:fp=fp-z --> <!-- pt2bot:summary -->")]
    d = write_report(tmp_path / "r", evil)
    result, _ = publish(d, pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0
    [c] = fake.comments_on(pr.number)
    assert c["body"].count("<!-- pt2bot:") == 1 and c["body"].endswith("<!-- pt2bot:fp=fp-a -->")
    assert "@maintainers" not in c["body"]
    assert all(x["body"].count("<!-- pt2bot:summary -->") == 1 for x in fake.issue_comments)


def test_ghes_prefix_and_no_pr_posts_check_only(tmp_path):
    with FakeGitHub(prefix="/api/v3") as fake:
        env = {"GITHUB_TOKEN": WRITE_TOKEN, "GITHUB_API_URL": fake.base_url,
               "GITHUB_REPOSITORY": fake.full_name, "GITHUB_EVENT_NAME": "push",
               "GITHUB_SHA": HEAD1}
        result, _ = publish(write_report(tmp_path / "r", THREE), env)
        assert result.exit_code == 0 and result.pr is None, result.lines()
        assert len(fake.checks_for(HEAD1)) == 1 and fake.issue_comments == []
        assert fake.violations == []


def test_malformed_artifact_is_a_located_user_error(tmp_path):
    from pt2bot.errors import UserError
    d = write_report(tmp_path / "r", THREE)
    (d / "review.json").write_text('{"schema": "pt2bot.review/1", "comments": 3}')
    with pytest.raises(UserError, match=r"review.json.comments: expected a list"):
        publish_dir(d, env={})
    (d / "summary.md").unlink()
    (d / "summary.md").symlink_to("/etc/passwd")
    with pytest.raises(UserError, match="symlinks are not accepted"):
        publish_dir(d, env={})


def test_audit_issue_is_created_once_then_edited(fake):
    # The project's one tracking-issue upsert (pt2bot/publish/issue.py), body as rendered.
    from pt2bot.publish.issue import TrackingUpdate, publish_tracking_issue
    env = {"GITHUB_TOKEN": WRITE_TOKEN, "GITHUB_API_URL": fake.base_url,
           "GITHUB_REPOSITORY": fake.full_name}
    n1 = publish_tracking_issue(TrackingUpdate("night 1: 2 breaks", title="pt2bot audit"),
                                env=env, tuning=FAST)
    n2 = publish_tracking_issue(TrackingUpdate("night 2: 1 break", title="pt2bot audit (1 break)",
                                               regressed=True, comment="worse"),
                                env=env, tuning=FAST)
    assert n1 == n2
    [issue] = [i for i in fake.issues.values() if not i["_is_pr"]]
    assert issue["title"] == "pt2bot audit (1 break)" and "night 2" in issue["body"]
    assert issue["labels"] == ["pt2bot-audit"] and "pt2bot-audit" in fake.labels


# ------------------------------------------------- suggestion blocks survive re-defusing
from pt2bot.report.escape import sanitize_markdown, suggestion_fences  # noqa: E402
from pt2bot.report.markdown import ZWSP, suggestion_block  # noqa: E402

CODE = "@torch.compile(fullgraph=True)\ny = x @ w  # see #123, <!-- not ours -->\n\tz = `y`"


def test_well_formed_suggestion_is_kept_byte_for_byte_and_the_rest_defused():
    block = suggestion_block(CODE)
    text = f"❌ **PTC201** ask @org/team about #12\n\n{block}\n\nthen @octocat"
    out = sanitize_markdown(text)
    assert block in out and f"```suggestion\n{CODE}\n```" in out
    assert out.startswith(f"❌ **PTC201** ask @{ZWSP}org/team about #{ZWSP}12\n\n")
    assert out.endswith(f"\n\nthen @{ZWSP}octocat")
    assert sanitize_markdown(out) == out                     # idempotent: publish twice
    # A longer fence (the code has a ``` run) is kept too, with the run inside.
    long = suggestion_block("s = '```'\n@dec")
    assert long.startswith("````suggestion\n") and long in sanitize_markdown("x\n\n" + long)
    # A longer fence whose code has a line that could close some fence (``` or ~~~ alone) is
    # not kept: if an earlier fence were still open, that line would close it and the rest
    # would be prose (test_a_suggestion_inside_an_open_fence_cannot_unfence_its_code).
    nested = "a\n\n````suggestion\n```\n@dec\n```\n````"
    assert suggestion_fences(nested) == [] and "@dec" not in sanitize_markdown(nested)


@pytest.mark.parametrize("text", [
    "a\n\n```suggestion\n@org/team <!-- pt2bot:summary -->\n",              # unterminated
    "a\n\n```suggestion\n@org/team\n``` \nmore",                             # never closed exactly
    "a\n\n```suggestion\n```suggestion\n@org/team\n```\n```\n",              # nested fences
    "a\n\n```suggestion\n@org/team\n````\n@org/team\n```",                   # early CommonMark close
    "a\n\n```suggestion\n<!-- pt2bot:summary --> @org/team\n```",             # marker inside
    "a\n\n```suggestion\n@org/team\u202e\n```",                              # bidi inside
    "a\n```suggestion\n@org/team\n```",                                      # inside a paragraph
    "a\n\n  ```suggestion\n@org/team\n  ```",                                # indented
    "a\n\n```suggestion x\n@org/team\n```",                                  # other info string
    "<pre>\n\n```suggestion\n@org/team\n```\n</pre>",                         # raw HTML block
    "<?\n\n```suggestion\n@org/team\n```",
    "<!DOCTYPE x\n\n```suggestion\n@org/team\n```",
    "<!--\n\n```suggestion\n@org/team\n```",
    # an earlier fence still open: the opener is code, the inner ``` closes the earlier
    # fence, and the "code" after it is prose
    "```\n\n````suggestion\n```\n@org/team\n````",
    "```\nx\n\n````suggestion\n```\n@org/team\n````\n",
    "~~~\n\n```suggestion\n~~~\n@org/team\n```",
    "````\n\n`````suggestion\n  ```` \t\n@org/team\n`````",
])
def test_hostile_suggestion_fences_are_defused(text):
    out = sanitize_markdown(text)
    assert suggestion_fences(text) == []
    assert "@org/team" not in out and "<!-- pt2bot:" not in out and "\u202e" not in out


def test_a_suggestion_inside_an_open_fence_cannot_unfence_its_code():
    # As found: the inner ``` closed the fence opened at the top, so @org/team was a ping in
    # prose, posted verbatim because the scan took ````suggestion for an opener.
    from test_security_publish import assert_inert
    text = "```\nx\n\n````suggestion\n```\n@org/team\n````\n"
    assert_inert(sanitize_markdown(text))
    # A line that cannot close a fence (an info string, more than three spaces) stays code.
    ok = "```\n\n````suggestion\n```py\n    ```\n@dec\n````"
    assert suggestion_fences(ok) == [(5, len(ok))] and sanitize_markdown(ok).endswith(ok[5:])


def test_only_the_well_formed_block_is_kept():
    good = suggestion_block("@torch.compile")
    text = f"@a\n\n```suggestion\n@b\n\n{good}\n\n```suggestion\n@c"
    out = sanitize_markdown(text)
    # The first opener is closed by the good block's closing fence (as in CommonMark), so it
    # is rejected (a fence run inside) and defused; the good block's code is code either way.
    assert "@a" not in out and "@b" not in out and "@c" not in out
    assert len(suggestion_fences(text)) == 1 and good in out
    text = f"@a\n\n{good}\n\n```suggestion\n@c"
    out = sanitize_markdown(text)
    assert good in out and "@a" not in out and "@c" not in out


def test_published_suggestion_commits_the_code_unchanged(fake, tmp_path):
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    d = write_report(tmp_path / "r", [("model.py", 10, "fp-a", "use @torch.compile")])
    review = json.loads((d / "review.json").read_text())
    review["comments"][0]["body"] = ("**PTC999** decorate it, ask @org/team\n\n"
                                     + suggestion_block(CODE) + "\n\n<!-- pt2bot:fp=fp-a -->")
    (d / "review.json").write_text(json.dumps(review))
    result, _ = publish(d, pr_env(fake, tmp_path, pr.number, HEAD1))
    assert result.exit_code == 0, result.lines()
    [c] = fake.comments_on(pr.number)
    assert f"\n\n```suggestion\n{CODE}\n```\n\n" in c["body"]
    assert "@org/team" not in c["body"] and c["body"].count("<!-- pt2bot:") == 1


def test_a_comment_on_a_claim_the_smoke_run_refuted_is_retired(fake, tmp_path):
    # A later run that executed the line and saw none of what the finding claims keeps the
    # finding in report.json (demoted, `smoke.status: not_observed`) but posts no comment for
    # it: the comment an earlier run posted must go the way a fixed finding's does.
    pr = fake.add_pull(head_sha=HEAD1, files={"model.py": ADDED_300})
    publish(write_report(tmp_path / "r1", THREE), pr_env(fake, tmp_path, pr.number, HEAD1))
    assert sum("fp=fp-b" in c["body"] for c in fake.comments_on(pr.number)) == 1
    fake.push(pr.number, HEAD2)
    d = write_report(tmp_path / "r2", [THREE[0], THREE[2]], head=HEAD2)
    report = json.loads((d / "report.json").read_text())
    path, line, fp, message = THREE[1]
    report["findings"].append({"rule": "PTC201", "path": path, "line": line, "col": 0,
                               "severity": "info", "message": message, "new": True,
                               "fingerprint": fp, "smoke": {
                                   "status": "not_observed", "models": ["tiny"],
                                   "evidence": "traced, no break", "severity": "error"}})
    (d / "report.json").write_text(json.dumps(report))
    result, _ = publish(d, pr_env(fake, tmp_path, pr.number, HEAD2))
    assert result.exit_code == 0, result.lines()
    assert not any("fp=fp-b" in c["body"] for c in fake.comments_on(pr.number))
    assert sum("fp=fp-a" in c["body"] for c in fake.comments_on(pr.number)) == 1
