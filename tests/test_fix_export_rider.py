"""A data-dependent `if` breaks the graph and fails export on the same line. The review proved
the break's fix and then said "no verified fix" for the export failure beside it (a new user's
review: "no static finding on the line offers a fix"), though the patched model exported. The
proof now notes head's export failure on the replaced lines as also gone where the patched
model exports, and the report gives that target the same fix. (Here the static rules cannot
tell that `h` is a tensor, a function the module holds made it, so no finding is on the line:
the break's candidates come from dynamo's GB code, as in that review.)"""
from __future__ import annotations

import json

import pytest

from gitrepo import GitRepo
from pt2bot.cli import main

CONFIG = """version: 1
models:
  - name: m
    entry: pkg.m:M
    inputs: [{shape: [batch, 4]}]
    shapes: {batch: [2, 3]}
    export: true
run: {backend: eager, latency: false, timeout_s: 120}
"""
BASE = """import torch
from torch import nn


class M(nn.Module):
    def __init__(self, score=None):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.score = score or (lambda t: t * 10)

    def forward(self, x):
        h = self.score(self.lin(x))
        return h.tanh()
"""
HEAD = BASE.replace("        return h.tanh()", "        m = h.abs().max()\n        if m > 1.0:\n"
                    "            h = h * (1.0 / m)\n        return h.tanh()")
IF_LINE = 14


def reviewed(tmp_path, monkeypatch, base: str, head: str) -> dict:
    """report.json's `fixes` of a real review of the PR that turns `base` into `head`."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/m.py", base)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/m.py", head)
    repo.commit("pr: rescale when saturated")
    monkeypatch.chdir(repo.path)
    out = tmp_path / "out"
    main(["review", "--base", "main", "--out", str(out), "--device", "cpu"])
    return json.loads((out / "report.json").read_text())["fixes"]


@pytest.mark.torch
def test_the_fix_of_a_break_also_fixes_the_export_failure_on_its_line(tmp_path, monkeypatch):
    fixes = reviewed(tmp_path, monkeypatch, BASE, HEAD)
    targets = {(t["kind"], t["line"]): t for t in fixes["targets"]}
    assert set(targets) == {("break", IF_LINE), ("export", IF_LINE)}, fixes["targets"]
    fix = targets[("break", IF_LINE)]["fixed_by"]
    assert fix is not None, fixes
    assert targets[("export", IF_LINE)]["fixed_by"] == fix, fixes
    [c] = [c for c in fixes["candidates"] if c["id"] == fix]
    assert f"also gone: the export failure (data_dependent) at pkg/m.py:{IF_LINE}" in c["evidence"]
    assert "entered by head on 2 of the 2 shape cases" in c["evidence"]


LATER = BASE.replace("        return h.tanh()", "        if h.sum() > 1e9:   # base's own export failure\n"
                     "            h = h * 0\n        return h.tanh()")
LATER_HEAD = LATER.replace("        h = self.score(self.lin(x))\n",
                           "        h = self.score(self.lin(x))\n        m = h.abs().max()\n        if m > 1.0:\n"
                           "            h = h * (1.0 / m)\n")


@pytest.mark.torch
def test_an_export_that_fails_further_on_after_the_fix_is_said_to_stop_there(tmp_path, monkeypatch):
    # Base's export fails at a later `if` of its own; the PR's `if` above it fails first on
    # head. The fix gets export past the PR's line, not to success: "also gone" read as export
    # restored (a new user's torch-nl review).
    fixes = reviewed(tmp_path, monkeypatch, LATER, LATER_HEAD)
    fix = next(t["fixed_by"] for t in fixes["targets"] if (t["kind"], t["line"]) == ("break", IF_LINE))
    [c] = [c for c in fixes["candidates"] if c["id"] == fix]
    assert "also gone: the export failure" not in c["evidence"], c["evidence"]
    assert (f"export gets past pkg/m.py:{IF_LINE} (data_dependent) and now stops at pkg/m.py:{IF_LINE + 2}"
            in c["evidence"]), c["evidence"]
