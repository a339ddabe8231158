"""The fake GitHub enforces the rules pt2bot relies on; a fake that accepts anything would
make every publishing test vacuous. Plain `requests` here, so nothing is hidden by PyGithub."""
from __future__ import annotations

import pytest
import requests

from fakegithub import HUMAN_TOKEN, READ_TOKEN, WRITE_TOKEN, FakeGitHub, commentable_lines

SHA = "a" * 40
PATCH = "@@ -1,3 +1,4 @@\n ctx1\n-old2\n+new2\n+new3\n ctx4\n"
W = {"Authorization": f"token {WRITE_TOKEN}"}


@pytest.fixture
def fake():
    with FakeGitHub() as f:
        f.add_pull(head_sha=SHA, files={"m.py": PATCH})
        yield f


def test_commentable_lines_follow_the_hunk():
    got = commentable_lines("m.py", PATCH)
    assert {ln for p, ln, s in got if s == "RIGHT"} == {1, 2, 3, 4}
    assert {ln for p, ln, s in got if s == "LEFT"} == {1, 2, 3}


def test_review_with_one_bad_line_fails_whole(fake):
    url = f"{fake.repo_url}/pulls/1/reviews"
    good = {"path": "m.py", "line": 2, "side": "RIGHT", "body": "ok"}
    bad = {"path": "m.py", "line": 40, "side": "RIGHT", "body": "off the diff"}
    r = requests.post(url, headers=W, json={"commit_id": SHA, "event": "COMMENT", "body": "b",
                                            "comments": [good, bad]})
    assert r.status_code == 422 and fake.reviews == [] and fake.review_comments == []
    r = requests.post(url, headers=W, json={"commit_id": SHA, "event": "COMMENT", "body": "b",
                                            "comments": [good]})
    assert r.status_code == 200 and len(fake.review_comments) == 1


def test_limits_auth_and_faults(fake):
    url = f"{fake.repo_url}/issues/1/comments"
    assert requests.post(url, json={"body": "x"}).status_code == 401
    assert requests.post(url, headers={"Authorization": "token nope"}, json={"body": "x"}).status_code == 401
    r = requests.post(url, headers={"Authorization": f"token {READ_TOKEN}"}, json={"body": "x"})
    assert r.status_code == 403 and "not accessible" in r.json()["message"]
    assert requests.get(url, headers={"Authorization": f"token {READ_TOKEN}"}).status_code == 200
    assert requests.post(url, headers=W, json={"body": "x" * 65537}).status_code == 422
    assert requests.post(url, headers=W, json={"body": "x" * 65536}).status_code == 201
    fake.secondary_rate_limit_next("POST", r"/comments$")
    r = requests.post(url, headers=W, json={"body": "y"})
    assert r.status_code == 403 and r.headers["Retry-After"] == "1"
    fake.fail_next("GET", r"/issues/1/comments$", 500)
    assert requests.get(url, headers=W).status_code == 500
    assert requests.get(url, headers=W).status_code == 200
    assert [c["body"][:1] for c in fake.issue_comments] == ["x"]
    assert fake.violations == []


def test_annotations_over_fifty_per_request_are_rejected(fake):
    ann = {"path": "m.py", "start_line": 1, "end_line": 1, "annotation_level": "warning", "message": "m"}
    url = f"{fake.repo_url}/check-runs"
    body = {"name": "pt2bot", "head_sha": SHA, "conclusion": "success",
            "output": {"title": "t", "summary": "s", "annotations": [ann] * 51}}
    assert requests.post(url, headers=W, json=body).status_code == 422
    body["output"]["annotations"] = [ann] * 50
    r = requests.post(url, headers=W, json=body)
    assert r.status_code == 201
    patch = {"output": {"title": "t", "summary": "s", "annotations": [ann] * 50}}
    assert requests.patch(r.json()["url"], headers=W, json=patch).status_code == 200
    assert len(fake.check_runs[0]["output"]["annotations"]) == 100


def test_requests_off_the_openapi_description_are_recorded(fake):
    r = requests.post(f"{fake.repo_url}/check-runs", headers=W, json={"name": "no head_sha"})
    assert r.status_code == 422
    requests.get(f"{fake.repo_url}/not-an-endpoint", headers=W)
    requests.post(f"{fake.repo_url}/statuses/{SHA}", headers=W, json={"state": "bogus"})
    assert len(fake.violations) == 3
    assert "head_sha" in fake.violations[0] and "not-an-endpoint" in fake.violations[1]
    fake.violations.clear()


def test_issues_labels_and_pagination(fake):
    url = f"{fake.repo_url}/issues"
    for i in range(3):
        assert requests.post(url, headers=W, json={"title": f"t{i}", "labels": ["pt2bot-audit"]}).status_code == 201
    assert requests.post(url, headers={"Authorization": f"token {HUMAN_TOKEN}"},
                         json={"title": "other"}).status_code == 201
    r = requests.get(url, headers=W, params={"labels": "pt2bot-audit", "per_page": 2})
    assert len(r.json()) == 2 and 'rel="next"' in r.headers["Link"]
    nxt = r.headers["Link"].split(";")[0].strip("<>")
    assert len(requests.get(nxt, headers=W).json()) == 1
    n = r.json()[0]["number"]
    assert requests.patch(f"{url}/{n}", headers=W, json={"state": "closed"}).status_code == 200
    assert len(requests.get(url, headers=W, params={"labels": "pt2bot-audit"}).json()) == 2
    assert [lab["name"] for lab in requests.get(f"{fake.repo_url}/labels", headers=W).json()] == ["pt2bot-audit"]
    assert fake.violations == []
