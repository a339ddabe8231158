"""A src layout (`src/mypkg/`, no `src/__init__.py`): each side of a review imports its own
tree. The workers put only the checkout's root on the path, so `mypkg` was found only where
the project was installed; the workflow installs it editable, which points at the head
checkout's `src/`, and the base worktree's code never ran: base's results were head's (a
review of a PR adding a break saw the break on base too, in a file outside base's tree).
Here nothing is installed: without `src/` on the workers' path no model imports at all."""
from __future__ import annotations

import json

import pytest

from gitrepo import GitRepo
from pt2bot.cli import main
from pt2bot.smoke.env import import_roots, scrub_env

CONFIG = """version: 1
models:
  - name: m
    entry: srclayout_pkg.m:M
    inputs: [{shape: [batch, 4]}]
    shapes: {batch: [2, 3]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
"""
BASE = """import torch


class M(torch.nn.Module):
    def forward(self, x):
        return x * 2
"""
HEAD = BASE.replace("        return x * 2", "        if x.sum() > 0:\n            x = x + 1\n        return x * 2")


def test_the_import_roots_are_the_root_and_a_src_layouts_src(tmp_path):
    assert import_roots(str(tmp_path)) == [str(tmp_path)]
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    assert import_roots(str(tmp_path)) == [str(tmp_path), str(tmp_path / "src")]
    assert scrub_env({}, repo_root=str(tmp_path))["PYTHONPATH"].split(":") == \
        [str(tmp_path), str(tmp_path / "src")]
    (tmp_path / "src" / "__init__.py").write_text("")     # `src` is a package: imported as one
    assert import_roots(str(tmp_path)) == [str(tmp_path)]


@pytest.mark.torch
def test_each_side_of_a_review_imports_its_own_src_tree(tmp_path, monkeypatch):
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("src/srclayout_pkg/__init__.py", "")
    repo.write("src/srclayout_pkg/m.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("src/srclayout_pkg/m.py", HEAD)
    repo.commit("pr: a data-dependent branch")
    monkeypatch.chdir(repo.path)
    out = tmp_path / "out"
    assert main(["review", "--base", "main", "--out", str(out), "--device", "cpu"]) == 1
    base, head = ({m["name"]: m for m in json.loads((out / f"{side}.json").read_text())["models"]}["m"]
                  for side in ("base", "head"))
    assert (base["status"], head["status"]) == ("ok", "ok"), (base.get("error"), head.get("error"))
    assert base["files"] == head["files"] == ["src/srclayout_pkg/m.py"]
    assert base["graph_breaks"] == []
    [brk] = head["graph_breaks"]
    assert (brk["path"], brk["line"]) == ("src/srclayout_pkg/m.py", 6)
    report = json.loads((out / "report.json").read_text())
    [m] = report["models"]
    assert [(b["path"], b["line"]) for b in m["new_breaks"]] == [("src/srclayout_pkg/m.py", 6)]
