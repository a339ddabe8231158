"""Shared builders for the compare/render tests: a real PR in a temp git repo whose files
match the recorded results in tests/data/results/{base,head}.json."""
from __future__ import annotations

import copy
import json
import os

from gitrepo import GitRepo

from pt2bot.changes import diff_changes
from pt2bot.config import Config, ModelConfig, StaticConfig, Thresholds
from pt2bot.select import Selection  # noqa: F401 - the real type compare.build_report takes

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "results")


def load_results(side: str) -> dict:
    with open(os.path.join(DATA, f"{side}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _layers(prefix: str = "") -> str:
    # Block.forward: line 12 (base) is the data-dependent branch, line 20 a logger call.
    lines = [
        "import logging", "import torch", "", "log = logging.getLogger(__name__)", "", "",
        "class Block(torch.nn.Module):", "    def __init__(self):", "        super().__init__()",
        "", "    def forward(self, x):",
        "        if x.sum() > 0:",                          # 12
        "            x = x * 2", "        y = x + 1", "        y = y * 3", "        y = y - 1",
        "        z = y.relu()", "        z = z + y", "        z = z * 0.5",
        "        log.info('block')",                       # 20
        "        return z",
    ]
    return prefix + "\n".join(lines) + "\n"


def _models(head: bool) -> str:
    lines = [f"# line {i}" for i in range(1, 51)]
    lines[29] = '        print("logits", x.shape)' if not head else "        pass"
    if head:
        lines[17] = "        if x.shape[0] > 4:"
        lines[39] = "        n = x.sum().item()"
    return "\n".join(lines) + "\n"


MLP = "\n".join(["import time", "import torch", "", "", "class MLP(torch.nn.Module):",
                 "    def forward(self, x):", "        # timing", "        # more",
                 "        t0 = time.time()", "        return x"]) + "\n"


def make_pr(repo: GitRepo):
    """(base sha, head sha, ChangeSet): 3 lines inserted atop layers.py, mlp.py renamed,
    models.py edited (print removed, .item() added)."""
    repo.write("pkg/layers.py", _layers())
    repo.write("pkg/models.py", _models(False))
    repo.write("pkg/mlp.py", MLP)
    base = repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/layers.py", _layers("# inserted 1\n# inserted 2\n# inserted 3\n"))
    repo.write("pkg/models.py", _models(True))
    repo.mv("pkg/mlp.py", "pkg/nets/mlp.py")
    head = repo.commit("pr")
    return base, head, diff_changes(str(repo.path), base, head)


def make_config(**thresholds) -> Config:
    models = tuple(ModelConfig(name=n, entry=f"pkg.{n}:build")
                   for n in ("tiny_gpt", "renamed_mlp", "new_model", "old_model", "flaky",
                             "skipped_one"))
    return Config(static=StaticConfig(filter="added"), models=models,
                  thresholds=Thresholds(**thresholds), raw={"version": 1})


def results_pair() -> tuple[dict, dict]:
    return copy.deepcopy(load_results("base")), copy.deepcopy(load_results("head"))


def resume_pair() -> tuple[dict, dict]:
    """Recorded by `pt2bot review` of tests/test_verdict_caused_by.py's PR (torch 2.13, eager):
    model `gated`, whose head adds one `.item()` break at pkg/gated.py:19 inside `gate`
    (called from `forward` at line 25); head recompiles 3 times at batch=3, each in a frame
    that break split off (`gate`, and the resume functions after lines 19 and 25)."""
    return copy.deepcopy(load_results("resume_base")), copy.deepcopy(load_results("resume_head"))
