"""Confirmed or not observed, end to end: `pt2bot review` on a tiny PR with real torch workers
(eager backend), then `pt2bot check --results` on head's results.

The PR adds three static claims to `forward`. `torch._dynamo.graph_break()` (PTC109) is a
graph break the smoke run records there: confirmed. `x.sum().item()` (PTC101) is no break in
this project, which sets `capture_scalar_outputs` (dynamo captures the value as a symbol): the
smoke run traces the line and records nothing there, so the claim is not observed, demoted,
kept out of the inline comments and out of what fails the check. `time.time()` behind
`self.timed and` (PTC107) is a true claim the run cannot see: dynamo traces the line but, the
flag being false, never reaches the call; such a line is not taken as evidence either way.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gitrepo import GitRepo
from pt2bot.cli import main

pytestmark = pytest.mark.torch

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: scaler
    entry: pkg.scaler:Scaler
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
    export: false
run: {backend: eager, latency: false, timeout_s: 300}
"""

BASE = """\
import torch
from torch import nn

# This project reads scalars inside compiled code on purpose: dynamo captures them.
torch._dynamo.config.capture_scalar_outputs = True


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        x = self.lin(x)
        return x.relu()
"""

HEAD = """\
import time

import torch
from torch import nn

# This project reads scalars inside compiled code on purpose: dynamo captures them.
torch._dynamo.config.capture_scalar_outputs = True


class Clock(nn.Module):
    def __init__(self, on: bool = False):
        super().__init__()
        self.on = on


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.clock = Clock()
        self.timed = self.clock.on

    def forward(self, x):
        x = self.lin(x)
        if self.timed and time.time() > 0:  # expect: short-circuit
            x = x + 1
        s = x.sum().item()  # expect: captured
        torch._dynamo.graph_break()  # expect: break
        return x.relu() * s
"""


def line_of(mark: str) -> int:
    [n] = [i for i, t in enumerate(HEAD.splitlines(), 1) if t.endswith(f"# expect: {mark}")]
    return n


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    repo = GitRepo.init(tmp_path_factory.mktemp("verdict") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/scaler.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/scaler.py", HEAD)
    repo.commit("pr")
    out = str(tmp_path_factory.mktemp("out") / "report")
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(repo.path)
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        rc = main(["review", "--base", "main", "--out", out])
    finally:
        mp.undo()
    with open(os.path.join(out, "report.json"), encoding="utf-8") as fh:
        return repo, rc, out, json.load(fh)


def _finding(report: dict, rule: str) -> dict:
    [f] = [f for f in report["findings"] if f["rule"] == rule and f["path"] == "pkg/scaler.py"]
    return f


def test_the_break_the_run_recorded_confirms_its_finding(reviewed):
    _, _, out, report = reviewed
    f = _finding(report, "PTC109")
    assert f["line"] == line_of("break") and f["new"] and f["severity"] == "error"
    assert f["smoke"] == {"status": "confirmed", "models": ["scaler"],
                          "evidence": f"GB0025 at pkg/scaler.py:{line_of('break')}"}


def test_the_claim_dynamo_did_not_make_is_not_observed_and_never_fails(reviewed):
    _, rc, out, report = reviewed
    f = _finding(report, "PTC101")
    assert f["line"] == line_of("captured") and f["new"] and f["reached_by"] == ["scaler"]
    assert f["severity"] == "info"
    assert f["smoke"]["status"] == "not_observed" and f["smoke"]["severity"] == "error"
    assert f["smoke"]["models"] == ["scaler"]
    assert f["smoke"]["evidence"].startswith("dynamo traced the line on batch=2 and did not "
                                             "break the graph there")
    # what fails the review is the new break and the findings that stand, not the refuted one
    assert rc == 1 and report["conclusion"] == "failure"
    [static] = [r for r in report["reasons"] if r["code"] == "static_findings"]
    assert static["count"] == 2
    # not posted inline; the body counts it, the summary folds it with what the run saw
    with open(os.path.join(out, "review.json"), encoding="utf-8") as fh:
        review = json.load(fh)
    assert {c["line"] for c in review["comments"]} == {line_of("break"), line_of("short-circuit")}
    assert "1 new static finding not posted" in review["body"]
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        summary = fh.read()
    assert "1 confirmed by the smoke run, 1 not observed" in summary
    with open(os.path.join(out, "results.sarif"), encoding="utf-8") as fh:
        sarif = json.load(fh)["runs"][0]["results"]
    [res] = [r for r in sarif if r["ruleId"] == "PTC101"]
    assert res["level"] == "note" and res["properties"]["smoke"]["status"] == "not_observed"


def test_a_line_dynamo_traced_only_in_part_is_no_evidence(reviewed):
    """Dynamo traced the `if` line (it read `self.timed`) but never reached `time.time()`:
    the claim stays as the static check made it (`traced_lines` leaves such lines out)."""
    _, _, out, report = reviewed
    f = _finding(report, "PTC107")
    assert f["line"] == line_of("short-circuit") and f["reached_by"] == ["scaler"]
    assert "smoke" not in f and f["severity"] == "error"
    with open(os.path.join(out, "head.json"), encoding="utf-8") as fh:
        [run] = json.load(fh)["models"]
    from pt2bot.reach import parse_ranges
    traced = {n for lo, hi in parse_ranges(run["traced_lines"]["pkg/scaler.py"])
              for n in range(lo, hi + 1)}
    assert line_of("captured") in traced and line_of("short-circuit") not in traced


def test_check_with_the_results_says_the_same(reviewed):
    repo, _, out, _ = reviewed
    head = os.path.join(out, "head.json")
    proc = subprocess.run(
        [sys.executable, "-m", "pt2bot", "check", "--results", head, "--format", "json",
         "--select", "PTC101"], cwd=str(repo.path), capture_output=True, text=True, timeout=300)
    # the only error is a claim the run refuted: the check passes
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [f] = json.loads(proc.stdout)["findings"]
    assert f["smoke"]["status"] == "not_observed" and f["severity"] == "info"
    both = subprocess.run(
        [sys.executable, "-m", "pt2bot", "check", "--results", head, "--format", "json"],
        cwd=str(repo.path), capture_output=True, text=True, timeout=300)
    assert both.returncode == 1   # the confirmed PTC109 (and PTC107) still fail it
    status = {f["rule"]: (f.get("smoke") or {}).get("status")
              for f in json.loads(both.stdout)["findings"]}
    assert status == {"PTC101": "not_observed", "PTC107": None, "PTC109": "confirmed"}
