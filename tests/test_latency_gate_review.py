"""The latency gate and the sequential latency rounds in `pt2bot review`, end to end: real git
repositories, real torch workers (eager backend), the real report directory.

One repository, four reviews (each smoke worker costs seconds):
- `pr`: `quiet` gets docstrings, comments and annotations only; `busy`'s forward does forty
  times the work. quiet is "unchanged" (gated after the first pass: no latency rounds),
  busy is measured, and its slowdown is concluded at the last look (3 rounds of 3).
- `docs`: quiet's documentation alone: nothing that runs changed, so not even the first pass
  times it.
- `pins`: `docs` plus a requirements file: the gate is off, quiet's latency is measured.
- `pr` again with `--baseline` (the first review's base results, latency forged): base's
  latency is measured in this review's rounds, never taken from the stored run.
"""
from __future__ import annotations

import json
import os

import pytest

from gitrepo import GitRepo
from pt2bot.pipeline import ReviewOptions, review
from pt2bot.report.jsonreport import validation_errors

pytestmark = pytest.mark.torch

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: quiet
    entry: pkg.quiet:Quiet
    inputs: [{name: x, shape: [batch, 16]}]
    shapes: {batch: [4]}
    export: false
  - name: busy
    entry: pkg.busy:Busy
    inputs: [{name: x, shape: [batch, 16]}]
    shapes: {batch: [4]}
    export: false
run: {backend: eager, jobs: 2, timeout_s: 300, warmup: 2, repeats: 10, rounds: 3, threads: 1}
"""

MODEL = """\
import torch
from torch import nn


class {cls}(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        h = self.lin(x)
        return torch.relu(h)
"""

QUIET_DOCUMENTED = '''\
"""Quiet: a model the pull request only documents."""
import torch
from torch import nn


class Quiet(nn.Module):
    """A linear layer and a ReLU."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        # the only layer
        self.lin = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the layer."""
        h: torch.Tensor = self.lin(x)
        return torch.relu(h)
'''

BUSY_SLOW = MODEL.format(cls="Busy").replace(
    "        return torch.relu(h)\n",
    "        for _ in range(40):\n            h = torch.tanh(self.lin(h))\n"
    "        return torch.relu(h)\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> GitRepo:
    repo = GitRepo.init(tmp_path_factory.mktemp("gate") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/quiet.py", MODEL.format(cls="Quiet"))
    repo.write("pkg/busy.py", MODEL.format(cls="Busy"))
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/quiet.py", QUIET_DOCUMENTED)
    repo.write("pkg/busy.py", BUSY_SLOW)
    repo.commit("pr")
    repo.branch("docs", "main")
    repo.write("pkg/quiet.py", QUIET_DOCUMENTED)
    repo.commit("docs only")
    repo.branch("pins")
    repo.write("requirements.txt", "torch==2.13.0\n")
    repo.commit("pin torch")
    repo.checkout("main")
    return repo


def _review(repo: GitRepo, out: str, head: str, baseline: str | None = None
            ) -> tuple[dict, list[str]]:
    logs: list[str] = []
    report = review(ReviewOptions(base="main", head=head, out_dir=out, baseline=baseline,
                                  repo_dir=str(repo.path)), logs.append)
    return report, logs


def _model(report: dict, name: str) -> dict:
    return next(m for m in report["models"] if m["name"] == name)


@pytest.fixture(scope="module")
def pr_review(repo, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("out") / "pr")
    report, logs = _review(repo, out, "pr")
    return out, report, logs


def test_annotation_only_change_is_gated_after_the_first_pass(pr_review):
    _, report, logs = pr_review
    quiet = _model(report, "quiet")
    assert quiet["latency_gate"] == "unchanged"
    assert quiet["latency_gate_note"] == "unchanged: same graphs, same code"
    [row] = quiet["delta"]["latency"]
    assert row["shape"] == {"batch": 4}
    assert (row["significant"], row["direction"]) == (False, "same")
    assert row["ratio"] is row["ci_low"] is row["ci_high"] is None
    assert row["note"] == "unchanged: same graphs, same code"
    assert validation_errors(report) == []          # the report schema knows the new keys
    # no latency round beyond the first pass (the pull request does change running code,
    # busy's, so the first pass timed every model before the gate could see the graphs)
    assert not [line for line in logs if "(quiet" in line and "latency round" in line]
    assert not [line for line in logs if "quiet," in line and "latency round" in line]


def test_changed_running_line_is_measured_and_decided_sequentially(pr_review):
    _, report, logs = pr_review
    busy = _model(report, "busy")
    assert busy["latency_gate"] == "measured"
    assert busy["latency_gate_note"] == "changed code ran on head (pkg/busy.py:12)"
    [row] = busy["delta"]["latency"]
    assert row["significant"] and row["direction"] == "slower"
    # a change is concluded at the last look only: all 3 rounds, at the full alpha
    assert row["rounds"] == 3
    assert row["alpha"] == 0.05
    assert any("smoke head (busy) latency round 2" in line for line in logs)
    assert report["conclusion"] == "failure"
    codes = {r["code"] for r in report["reasons"] if r["model"] == "busy"}
    assert "latency_regression" in codes


def test_summary_says_unchanged(pr_review):
    out, _, _ = pr_review
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        md = fh.read()
    assert "unchanged: same graphs, same code" in md


def test_docs_only_pr_times_nothing(repo, tmp_path):
    report, logs = _review(repo, str(tmp_path / "docs"), "docs")
    assert [m["name"] for m in report["models"] if m["status"] == "ok"] == ["quiet"]
    quiet = _model(report, "quiet")
    assert quiet["latency_gate"] == "unchanged"
    assert quiet["head"].get("latency") is None and quiet["base"].get("latency") is None
    assert "latency" not in quiet["head"]["phases"]
    assert quiet["delta"]["latency"][0]["ratio"] is None
    assert not any("latency round" in line for line in logs)


def test_a_pin_change_turns_the_gate_off(repo, tmp_path):
    report, logs = _review(repo, str(tmp_path / "pins"), "pins")
    quiet = _model(report, "quiet")
    assert quiet["latency_gate"] == "measured"
    assert quiet["latency_gate_note"] == "requirements.txt changed (not Python code)"
    [row] = quiet["delta"]["latency"]
    assert row["ratio"] is not None and row["ci_low"] is not None
    assert row["rounds"] >= 2


def test_baseline_latency_is_measured_in_this_review(repo, pr_review, tmp_path):
    out, first, _ = pr_review
    with open(os.path.join(out, "base.json"), encoding="utf-8") as fh:
        stored = json.load(fh)
    for m in stored["models"]:      # a stored run from another time: 100x slower base
        for case in m.get("latency") or ():
            for key in ("compiled_ms", "eager_ms", "reference_ms"):
                t = case.get(key)
                if t:
                    t["samples"] = [x * 100 for x in t["samples"]]
                    t["rounds"] = [[x * 100 for x in r] for r in t.get("rounds") or []] or None
                    t["median"] = t["median"] * 100
    forged = str(tmp_path / "stored.json")
    with open(forged, "w", encoding="utf-8") as fh:
        json.dump(stored, fh)
    report, logs = _review(repo, str(tmp_path / "again"), "pr", baseline=forged)
    assert any("smoke base (busy) latency round 1" in line for line in logs)
    busy = _model(report, "busy")
    [row] = busy["delta"]["latency"]
    # the stored 100x figures would make head 40x *faster*; measured here, it is slower
    assert row["significant"] and row["direction"] == "slower"
    first_base = _model(first, "busy")["delta"]["latency"][0]["base_ms"]
    assert row["base_ms"] < 10 * first_base
    # the stored base still carries its coverage and compile signature: quiet stays gated
    assert _model(report, "quiet")["latency_gate"] == "unchanged"
