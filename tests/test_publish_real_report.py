"""The real renderer's report directory, published to the fake GitHub.

test_github.py writes its report directories by hand; here the directory comes from
`compare.build_report` on the recorded results (tests/data/results) and a real PR in git,
rendered by `report.render_all` exactly as `pt2bot review` does, and the fake PR's diff is
that same git diff. So the renderer and the publisher must agree on every format detail:
markers, fingerprints, commentable lines, suggestion blocks, annotation fields.
"""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from compare_fixtures import Selection, make_config, make_pr, results_pair
from fakegithub import WRITE_TOKEN, FakeGitHub
from gitrepo import GitRepo

from pt2bot import changes
from pt2bot.compare import build_report
from pt2bot.findings import Finding
from pt2bot.publish.github import ClientTuning, PublishResult, publish_dir
from pt2bot.publish.artifact import SUMMARY_MARKER
from pt2bot.report import render_all
from pt2bot.results import ResultsFile

FAST = ClientTuning(retries=3, backoff_factor=0.01, backoff_max=0.05,
                    secondary_rate_wait=0.05, seconds_between_writes=0.0)
# Committed with one click: `@` must not get a zero-width space on the way to GitHub.
SUGGESTION = "        n = x.sum()  # a tensor: no sync, no break under @torch.compile"


def patches(repo: GitRepo, base: str, head: str) -> dict[str, str]:
    """{new path: the hunks} of `git diff base head`, as GitHub's PR files API gives them."""
    out: dict[str, str] = {}
    for section in re.split(r"^diff --git ", repo.git("diff", "-M", base, head), flags=re.M)[1:]:
        new_path = re.search(r"^\+\+\+ b/(.+)$|^rename to (.+)$", section, re.M)
        if new_path is None:
            continue
        hunks = section[section.find("\n@@") + 1:] if "\n@@" in section else ""
        out[new_path.group(1) or new_path.group(2)] = hunks
    return out


@pytest.fixture(scope="module")
def pr_and_report(tmp_path_factory):
    """(fake PR files, report dir, report dict): the real PR, rendered by the real renderer."""
    repo = GitRepo.init(tmp_path_factory.mktemp("pr") / "repo")
    base, head, cs = make_pr(repo)
    head_findings = changes.annotate_findings([
        Finding(rule="PTC101", path="pkg/models.py", line=40, col=8, severity="error",
                message="`.item()` copies the tensor to a Python number and breaks the graph.",
                source="n = x.sum().item()", function="TinyGPT.forward", gb="GB0124",
                hints=("Rule documentation: `pt2bot rules PTC101`",), suggestion=SUGGESTION),
        Finding(rule="PTC105", path="pkg/models.py", line=18, col=8, severity="warning",
                message="Branch on a tensor shape: one graph per branch taken.",
                source="if x.shape[0] > 4:", function="TinyGPT.forward"),
    ], cs)
    base_results, head_results = results_pair()
    report = build_report(base_results=ResultsFile.from_json(base_results),
                          head_results=ResultsFile.from_json(head_results),
                          base_findings=[], head_findings=head_findings, changeset=cs,
                          config=make_config(), selection=Selection(), base_sha=base,
                          head_sha=head)
    out = tmp_path_factory.mktemp("out") / "report"
    render_all(report, str(out), env={},
               commentable=lambda path, line: changes.is_commentable(cs, path, line))
    return patches(repo, base, head), out, json.loads((out / "report.json").read_text())


@pytest.fixture
def fake():
    with FakeGitHub() as f:
        yield f
    assert f.violations == [], "requests that do not match GitHub's OpenAPI:\n" + "\n".join(f.violations)


def env_for(fake: FakeGitHub, tmp: Path, number: int, head: str) -> dict[str, str]:
    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": number, "head": {"sha": head}}}))
    return {"GITHUB_TOKEN": WRITE_TOKEN, "GITHUB_API_URL": fake.base_url,
            "GITHUB_REPOSITORY": fake.full_name, "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event), "GITHUB_SERVER_URL": "https://github.test",
            "GITHUB_RUN_ID": "77"}


def publish(d: Path, env: dict[str, str]) -> PublishResult:
    return publish_dir(d, env=env, tuning=FAST, out=io.StringIO())


def state(fake: FakeGitHub) -> str:
    return json.dumps([fake.issue_comments, fake.reviews, fake.review_comments], sort_keys=True)


def test_publish_a_rendered_report_then_rerun_posts_nothing_new(fake, tmp_path, pr_and_report):
    files, out, report = pr_and_report
    review_json = json.loads((out / "review.json").read_text())
    check_json = json.loads((out / "check.json").read_text())
    assert report["conclusion"] == "failure" and check_json["conclusion"] == "failure"
    # The fake PR has the real diff: layers.py (3 lines added on top), models.py (3 edits),
    # mlp.py renamed without a patch.
    assert set(files) == {"pkg/layers.py", "pkg/models.py", "pkg/nets/mlp.py"}
    pr = fake.add_pull(head_sha=report["head"], base_sha=report["base"], files=files)
    env = env_for(fake, tmp_path, pr.number, report["head"])

    result = publish(out, env)
    assert result.exit_code == 0 and result.fallback is None and not result.errors, result.lines()

    # One summary comment: the marker, then the rendered summary's verdict.
    [summary] = fake.summary_comments(pr.number)
    assert summary["body"].startswith(SUMMARY_MARKER + "\n### ❌ pt2bot: ")
    assert summary["body"].count("<!-- pt2bot:") == 1 and summary["user"]["type"] == "Bot"

    # One review; its inline comments on the lines the renderer chose, all in the diff.
    [review] = fake.reviews
    assert review["state"] == "COMMENTED" and review["commit_id"] == report["head"]
    comments = fake.comments_on(pr.number)
    by_fp = {re.search(r"<!-- pt2bot:fp=(\w+) -->$", c["body"]).group(1): c for c in comments}
    assert len(by_fp) == len(comments) == 2 == result.inline_posted
    item, shape = (next(f for f in report["findings"] if f["rule"] == r)
                   for r in ("PTC101", "PTC105"))
    assert {fp: (c["path"], c["line"], c["side"]) for fp, c in by_fp.items()} == {
        item["fingerprint"]: ("pkg/models.py", 40, "RIGHT"),
        shape["fingerprint"]: ("pkg/models.py", 18, "RIGHT")}
    assert sorted((c["path"], c["line"]) for c in review_json["comments"]) == \
        [("pkg/models.py", 18), ("pkg/models.py", 40)]
    # The .item() finding and tiny_gpt's new GB0124 on line 40 are ONE comment, and its
    # suggestion reached GitHub byte for byte.
    merged = by_fp[item["fingerprint"]]["body"]
    assert "Confirmed by the smoke run: model `tiny_gpt` breaks here — [GB0124](" in merged
    assert f"\n\n```suggestion\n{SUGGESTION}\n```\n\n" in merged
    tiny = next(m for m in report["models"] if m["name"] == "tiny_gpt")
    assert tiny["new_breaks"][0]["fingerprint"] not in state(fake)
    # What has no diff line (flaky's failure in an unchanged file) is in the review body.
    assert "pkg/flaky.py:7" in review["body"] and "1 item(s) outside the diff" in review["body"]

    # The check run: completed, the report's conclusion, every rendered annotation.
    [check] = fake.checks_for(report["head"])
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert check["output"]["title"] == check_json["title"] == report["summary_title"]
    key = ("path", "start_line", "end_line", "annotation_level", "title")
    assert [tuple(a.get(k) for k in key) for a in check["output"]["annotations"]] == \
        [tuple(a.get(k) for k in key) for a in check_json["annotations"]]
    assert ("pkg/models.py", 40, 40, "failure", "PTC101") in \
        {tuple(a.get(k) for k in key) for a in check["output"]["annotations"]}

    # Publish the same directory again (a re-run of the workflow): no comment, review or
    # inline comment is added or edited; only a fresh check run for the re-run.
    before = state(fake)
    again = publish(out, env)
    assert again.exit_code == 0 and again.fallback is None, again.lines()
    assert again.inline_posted == 0 and again.inline_already_there == 2
    assert again.stale_deleted == again.stale_marked == again.duplicates_deleted == 0
    assert state(fake) == before
    assert [c["conclusion"] for c in fake.checks_for(report["head"])] == ["failure", "failure"]
