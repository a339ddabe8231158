"""`pt2bot review` end to end: real git repos, real torch workers, the real report directory.

One PR exercises several cases at once (each smoke worker costs seconds):
- `breaker`: the PR inserts lines above a pre-existing `print` break (moved, so unchanged)
  and adds a `.item()` branch (a new GB0124 break, a new PTC101 finding, export broken);
- `flaky`: forward raises on head only;
- `gone`: the PR deletes the model's module (absent on head: removed);
- `bystander`: untouched and outside every changed file's import closure (skipped).
"""
from __future__ import annotations

import json
import os

import pytest

from gitrepo import GitRepo
from pt2bot.cli import main

pytestmark = pytest.mark.torch

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: breaker
    entry: pkg.breaker:Breaker
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
  - name: flaky
    entry: pkg.flaky:Flaky
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
    export: false
  - name: gone
    entry: pkg.gone:Gone
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
    export: false
  - name: bystander
    entry: other.bystander:Bystander
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
run: {backend: eager, latency: false, jobs: 2, timeout_s: 120}
"""

BREAKER_BASE = """\
import torch
from torch import nn


class Breaker(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        x = self.lin(x)
        print("hidden", x.shape)
        return x.relu()
"""

BREAKER_HEAD = """\
import torch
from torch import nn


class Breaker(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        # two new lines above the old break
        x = x * 1.0
        x = self.lin(x)
        print("hidden", x.shape)
        if x.sum().item() > 0:
            x = x + 1
        return x.relu()
"""

SIMPLE = """\
import torch
from torch import nn


class {cls}(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        {body}
        return self.lin(x)
"""


def _simple(cls: str, body: str = "x = x + 0") -> str:
    return SIMPLE.format(cls=cls, body=body)


@pytest.fixture(scope="module")
def pr_repo(tmp_path_factory) -> GitRepo:
    repo = GitRepo.init(tmp_path_factory.mktemp("review") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/breaker.py", BREAKER_BASE)
    repo.write("pkg/flaky.py", _simple("Flaky"))
    repo.write("pkg/gone.py", _simple("Gone"))
    repo.write("other/__init__.py", "")
    repo.write("other/bystander.py", _simple("Bystander"))
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/breaker.py", BREAKER_HEAD)
    repo.write("pkg/flaky.py", _simple("Flaky", 'raise RuntimeError("@maintainer <!-- pt2bot:summary -->")'))
    repo.rm("pkg/gone.py")
    repo.commit("pr")
    return repo


def _review(repo: GitRepo, out: str, *extra: str, monkeypatch) -> int:
    monkeypatch.chdir(repo.path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return main(["review", "--base", "main", "--out", out, *extra])


@pytest.fixture(scope="module")
def reviewed(pr_repo, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("out") / "report")
    mp = pytest.MonkeyPatch()
    try:
        rc = _review(pr_repo, out, monkeypatch=mp)
    finally:
        mp.undo()
    with open(os.path.join(out, "report.json"), encoding="utf-8") as fh:
        return rc, out, json.load(fh)


def _model(report: dict, name: str) -> dict:
    return next(m for m in report["models"] if m["name"] == name)


def test_review_outputs_and_verdict(reviewed, pr_repo):
    rc, out, report = reviewed
    assert rc == 1 and report["conclusion"] == "failure"
    assert report["schema"] == "pt2bot.report/1"
    assert report["head"] == pr_repo.git("rev-parse", "pr").strip()
    assert report["base"] == pr_repo.git("rev-parse", "main").strip()
    for name in ("summary.md", "review.json", "check.json", "results.sarif", "base.json",
                 "head.json"):
        assert os.path.getsize(os.path.join(out, name)) > 0, name
    # The base worktree is removed afterwards.
    assert pr_repo.git("worktree", "list").count("\n") == 1


def test_new_break_is_new_and_moved_break_is_unchanged(reviewed):
    _, _, report = reviewed
    breaker = _model(report, "breaker")
    assert [(b["gb"], b["path"], b["line"]) for b in breaker["new_breaks"]] == [
        ("GB0124", "pkg/breaker.py", 15)]
    assert breaker["fixed_breaks"] == []
    assert breaker["delta"]["graph_breaks"] == 1
    # The print break moved from line 12 to 14 and is not reported as new or fixed.
    assert [b["line"] for b in breaker["head"]["graph_breaks"] if b["gb"] == "GB0059"] == [14]
    assert breaker["delta"]["export"] == "broken"


def test_static_finding_on_added_line_is_new(reviewed):
    _, _, report = reviewed
    new = [(f["rule"], f["path"], f["line"]) for f in report["findings"] if f["new"]]
    assert ("PTC101", "pkg/breaker.py", 15) in new
    # The pre-existing print is not new, whatever rule reports it.
    assert not [f for f in report["findings"] if f["new"] and f["line"] == 14]


def test_model_failing_only_on_head_and_removed_model(reviewed):
    _, _, report = reviewed
    flaky = _model(report, "flaky")
    assert flaky["status"] == "error" and flaky["base"]["status"] == "ok"
    gone = _model(report, "gone")
    assert gone["change"] == "removed"
    assert "bystander" in {s["name"] if isinstance(s, dict) else s for s in report["skipped"]}


def test_untrusted_text_cannot_forge_marker_or_mention(reviewed):
    _, out, _ = reviewed
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        summary = fh.read()
    assert summary.count("<!-- pt2bot:summary -->") == 1
    assert "@maintainer" not in summary


def test_review_comments_only_on_diff_lines(reviewed):
    _, out, _ = reviewed
    with open(os.path.join(out, "review.json"), encoding="utf-8") as fh:
        review = json.load(fh)
    where = {(c["path"], c["line"]) for c in review["comments"]}
    # Only added lines of the diff: the new break, whose comment spans the lines of its verified
    # suggestion (15-16: the `.item()` only tested, the tensor selected with `torch.where`), and
    # flaky's new raise (fails on head).
    assert where == {("pkg/breaker.py", 16), ("pkg/flaky.py", 11)}
    # One comment per problem: the static finding and the break it predicts are merged.
    assert len(review["comments"]) == 2
    merged = next(c for c in review["comments"] if c["path"] == "pkg/breaker.py")
    assert merged["start_line"] == 15 and merged["fix"]["verified"] is True
    assert "PTC101" in merged["body"] and "Confirmed by the smoke run" in merged["body"]
    assert "```suggestion\n        x = torch.where(x.sum() > 0, x + 1, x)\n```" in merged["body"], merged["body"]
    assert all(f"pt2bot:fp={c['fingerprint']}" in c["body"] for c in review["comments"])


def test_baseline_replaces_the_base_run(reviewed, pr_repo, tmp_path, monkeypatch, capsys):
    _, out, report = reviewed
    again = str(tmp_path / "again")
    rc = _review(pr_repo, again, "--baseline", os.path.join(out, "base.json"),
                 monkeypatch=monkeypatch)
    err = capsys.readouterr().err
    assert "smoke base" not in err  # base was not re-run
    with open(os.path.join(again, "report.json"), encoding="utf-8") as fh:
        second = json.load(fh)
    assert rc == 1
    assert [b["gb"] for b in _model(second, "breaker")["new_breaks"]] == ["GB0124"]


def test_pr_touching_no_model_runs_nothing(git_repo, tmp_path, monkeypatch):
    git_repo.write("pt2bot.yml", CONFIG)
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/breaker.py", BREAKER_BASE)
    git_repo.write("pkg/flaky.py", _simple("Flaky"))
    git_repo.write("pkg/gone.py", _simple("Gone"))
    git_repo.write("other/__init__.py", "")
    git_repo.write("other/bystander.py", _simple("Bystander"))
    git_repo.write("README.md", "hello\n")
    git_repo.commit("base")
    git_repo.branch("docs")
    git_repo.write("README.md", "hello, world\n")
    git_repo.commit("docs")
    out = str(tmp_path / "out")
    rc = _review(git_repo, out, monkeypatch=monkeypatch)
    with open(os.path.join(out, "report.json"), encoding="utf-8") as fh:
        report = json.load(fh)
    assert rc == 0 and report["conclusion"] == "success"
    assert not os.path.exists(os.path.join(out, "head.json"))
    assert len(report["skipped"]) == 4


def test_publish_posts_the_report_directory_it_wrote(git_repo, tmp_path, monkeypatch):
    # `--publish` hands the finished directory to the publisher, imported only then (PyGithub
    # is needed to publish alone); a later edit once dropped that import, leaving a NameError
    import pt2bot.publish.github as github

    posted: list[str] = []
    monkeypatch.setattr(github, "publish_dir", lambda out_dir: posted.append(out_dir))
    git_repo.write("pt2bot.yml", CONFIG)
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/breaker.py", BREAKER_BASE)
    git_repo.write("README.md", "hello\n")
    git_repo.commit("base")
    git_repo.branch("docs")
    git_repo.write("README.md", "hello, world\n")
    git_repo.commit("docs")
    out = str(tmp_path / "out")
    assert _review(git_repo, out, "--publish", monkeypatch=monkeypatch) == 0
    assert posted == [out] and os.path.exists(os.path.join(out, "report.json"))


def test_unknown_base_is_a_usage_error(git_repo, tmp_path, monkeypatch, capsys):
    git_repo.write("pt2bot.yml", CONFIG)
    git_repo.commit("base")
    monkeypatch.chdir(git_repo.path)
    rc = main(["review", "--base", "no-such-branch", "--out", str(tmp_path / "o")])
    assert rc == 2
    assert "no-such-branch" in capsys.readouterr().err
