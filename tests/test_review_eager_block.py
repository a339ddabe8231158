"""A finding inside the block that a verified edit leaves to eager code is fixed by that edit
(real review, real torch). A new user's PR on ESM-2 warned when too many tokens were masked,
`if mask_ratio_observed.max().item() > 0.5: logger.warning(...)`; the verified suggestion for
the `.item()` put the whole `if` under `not torch.compiler.is_compiling()`, and a second
comment on the `logger.warning` line still asked the user to guard it with
`torch.compiler.is_compiling()`: the same fix, asked for twice.
"""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.torch

BASE = '''\
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return h * 2
'''
HEAD = BASE.replace('''        h = self.lin(x)
''', '''        h = self.lin(x)
        if h.abs().max().item() > 100:
            logger.warning("large activations")
''')
IF, WARN = 16, 17
CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: net
    entry: pkg.net:Net
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
"""


def test_the_warning_in_the_block_points_at_the_verified_suggestion(tmp_path):
    from gitrepo import GitRepo

    assert HEAD.splitlines()[IF - 1].strip().startswith("if h.abs().max().item()")
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/net.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/net.py", HEAD)
    repo.commit("pr: warn on large activations")
    out = tmp_path / "report"
    repo.review(out)
    review = json.loads((out / "review.json").read_text(encoding="utf-8"))
    by_line = {c["line"]: c for c in review["comments"]}
    assert "```suggestion" in by_line[IF]["body"]
    assert "is_compiling() and h.abs().max().item() > 100:" in by_line[IF]["body"]
    warn = by_line[WARN]["body"]
    assert "PTC106" in warn
    assert (f"✅ **Verified fix** (give the warning in eager only: compiled code skips the test and "
            f"the block): the suggestion on line {IF} fixes this too.") in warn, warn
    assert "```suggestion" not in warn
