"""A verified fix end to end: `pt2bot review` of a real PR in git with real torch workers,
the proof loop, the suggestion in review.json, the fake GitHub's review API, SARIF, and an
independent re-run of the suggestion applied to the file.

The PR adds a `print` that spans two lines to `forward` (a new GB0059 there). PTC105's
recipe offers the guard `if not torch.compiler.is_compiling():` around it; the proof
re-runs it and posts it as a two-line suggestion (start_line..line = the print's lines).
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil

import cmarkgfm
import pytest
from fakegithub import WRITE_TOKEN, FakeGitHub
from gitrepo import GitRepo
from test_publish_real_report import FAST, patches

from pt2bot.cli import main
from pt2bot.configfile import load_config
from pt2bot.publish.github import publish_dir
from pt2bot.smoke.runner import run_models

pytestmark = pytest.mark.torch

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: scaler
    entry: pkg.scaler:Scaler
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
run: {backend: eager, latency: false, timeout_s: 300}
fixes: {budget_s: 200}
"""

BASE = """\
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return h.relu()
"""

HEAD = """\
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        print("activations",
              h.shape)
        return h.relu()
"""
FIRST, LAST = 12, 13      # the print's lines
# what a compiled run no longer prints, and where head printed
QUIETED = (f", but compiled code skips the `print` at line {FIRST}, which head's eager run "
           "reaches on all 2 shape cases: a compiled run there no longer gives it")
GUARDED = ["        if not torch.compiler.is_compiling():",
           '            print("activations",',
           "                  h.shape)"]


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    repo = GitRepo.init(tmp_path_factory.mktemp("fixe2e") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/scaler.py", BASE)
    base = repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/scaler.py", HEAD)
    head = repo.commit("pr")
    out = tmp_path_factory.mktemp("out") / "report"
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(repo.path)
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        main(["review", "--base", "main", "--out", str(out)])
    finally:
        mp.undo()

    def load(name: str) -> dict:
        return json.loads((out / name).read_text(encoding="utf-8"))
    return repo, base, head, out, load("report.json"), load("review.json"), load("results.sarif")


def test_the_verified_fix_is_in_report_json(reviewed):
    *_, report, _review, _sarif = reviewed
    fixes = report["fixes"]
    [target] = fixes["targets"]
    assert (target["kind"], target["model"], target["path"], target["line"], target["gb"]) == \
        ("break", "scaler", "pkg/scaler.py", FIRST, "GB0059")
    verified = [c for c in fixes["candidates"] if c["verified"]]
    [fix] = verified
    assert target["fixed_by"] == fix["id"] and target["reason"] is None
    assert (fix["rule"], fix["start_line"], fix["end_line"], fix["lines"]) == \
        ("PTC105", FIRST, LAST, GUARDED)
    assert fix["models"] == ["scaler"]
    assert fix["evidence"] == ("verified on `scaler`: GB0059 gone, 1 graph instead of 2, "
                               "outputs equal on 2 shape cases" + QUIETED)
    # the second candidate (remove the print) was not needed: the first fixed the target
    others = [c for c in fixes["candidates"] if not c["verified"]]
    assert [c["reason"] for c in others] == [
        "an earlier candidate already fixed its target (on `scaler`)"]
    assert report["counts"]["fixes_verified"] == 1
    assert report["timings"]["fixes"] > 0


def test_the_suggestion_replaces_exactly_the_lines_and_is_the_only_block(reviewed):
    *_, report, review, _sarif = reviewed
    [finding] = [f for f in report["findings"] if f["rule"] == "PTC105"]
    [comment] = [c for c in review["comments"] if c["fingerprint"] == finding["fingerprint"]]
    assert (comment["path"], comment["start_line"], comment["line"], comment["side"]) == \
        ("pkg/scaler.py", FIRST, LAST, "RIGHT")
    assert comment["fix"] == {"verified": True, "models": ["scaler"], "evidence": (
        "verified on `scaler`: GB0059 gone, 1 graph instead of 2, outputs equal on 2 shape "
        "cases" + QUIETED)}
    body = comment["body"]
    assert body.count("```suggestion") == 1
    block = re.search(r"\n```suggestion\n(.*?)\n```\n", body, re.S).group(1)
    assert block.split("\n") == GUARDED
    # the one line that says what was proven, rendered as GitHub would
    html = cmarkgfm.github_flavored_markdown_to_html(body)
    assert "Verified fix" in html and "GB0059 gone, 1 graph instead of 2" in html
    # applied to head's file, the suggestion gives exactly the candidate's text
    lines = HEAD.splitlines()
    applied = "\n".join(lines[:FIRST - 1] + block.split("\n") + lines[LAST:]) + "\n"
    assert "if not torch.compiler.is_compiling():" in applied
    compile(applied, "scaler.py", "exec")


def test_sarif_carries_the_fix(reviewed):
    *_, report, _review, sarif = reviewed
    [res] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "PTC105"]
    [fix] = res["fixes"]
    [change] = fix["artifactChanges"]
    assert change["replacements"] == [{
        "deletedRegion": {"startLine": FIRST, "startColumn": 1, "endLine": LAST + 1,
                          "endColumn": 1},
        "insertedContent": {"text": "".join(line + "\n" for line in GUARDED)}}]
    assert fix["properties"] == {"verified": True}
    assert fix["description"]["text"].endswith(
        "(verified on `scaler`: GB0059 gone, 1 graph instead of 2, outputs equal on 2 shape "
        "cases" + QUIETED + ")")


def test_an_independent_rerun_of_the_applied_suggestion_has_no_break(reviewed, tmp_path):
    """The suggestion applied to a copy of head on disk, run by the ordinary smoke runner
    (a new worker, the file imported from disk): the break is gone, nothing new appears."""
    repo, *_ = reviewed
    copy = tmp_path / "copy"
    shutil.copytree(repo.path, copy, ignore=shutil.ignore_patterns(".git"))
    lines = HEAD.splitlines()
    (copy / "pkg" / "scaler.py").write_text(
        "\n".join(lines[:FIRST - 1] + GUARDED + lines[LAST:]) + "\n")
    config = load_config(str(copy / "pt2bot.yml"), required=True)
    [run] = run_models(config, repo_root=str(copy), out_dir=str(tmp_path / "out"),
                       phases=["breaks"], device="cpu", tlparse=False).models
    assert run.status == "ok" and run.graph_breaks == () and run.graph_count == 1


def test_the_fake_github_takes_the_multi_line_suggestion(reviewed, tmp_path):
    repo, base, head, out, report, review, _ = reviewed
    with FakeGitHub() as fake:
        pr = fake.add_pull(head_sha=head, base_sha=base, files=patches(repo, base, head))
        event = tmp_path / "event.json"
        event.write_text(json.dumps({"pull_request": {"number": pr.number,
                                                      "head": {"sha": head}}}))
        env = {"GITHUB_TOKEN": WRITE_TOKEN, "GITHUB_API_URL": fake.base_url,
               "GITHUB_REPOSITORY": fake.full_name, "GITHUB_EVENT_NAME": "pull_request",
               "GITHUB_EVENT_PATH": str(event), "GITHUB_SERVER_URL": "https://github.test",
               "GITHUB_RUN_ID": "7"}
        result = publish_dir(out, env=env, tuning=FAST, out=io.StringIO())
        assert result.exit_code == 0 and not result.errors, result.lines()
        assert fake.violations == []
        [posted] = [c for c in fake.comments_on(pr.number) if "```suggestion" in c["body"]]
    assert (posted["start_line"], posted["line"]) == (FIRST, LAST)
    block = re.search(r"\n```suggestion\n(.*?)\n```\n", posted["body"], re.S).group(1)
    assert block.split("\n") == GUARDED      # byte for byte through the publisher
    assert os.path.exists(out / "summary.md")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "1 verified fix suggested inline for 1 of 1 new problem" in summary


def test_report_json_with_fixes_validates_against_its_schema(reviewed):
    import jsonschema

    *_, report, _review, _sarif = reviewed
    path = os.path.join(os.path.dirname(__file__), "..", "pt2bot", "schemas", "report.schema.json")
    with open(path, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator(schema).validate(report)
    bad = {**report, "fixes": {**report["fixes"], "targets": [{"kind": "typo"}]}}
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)
