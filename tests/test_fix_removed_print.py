"""A print removed to fix its graph break: the outputs are equal by construction, and what
the user loses is the print, in eager too. torch-nl's held-out "remove the print" was verified
with "GB0059 gone, outputs equal on 2 shape cases, ..." and no word that eager stopped
printing on every call; the evidence now says on which shape cases head printed."""
from __future__ import annotations

import pytest

from pt2bot.rules import Candidate
from proofs import break_target, item, one_model, prove, write_repo

pytestmark = pytest.mark.torch

NET = """\
import torch
from torch import nn


class Loud(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        print("hidden norm", h.norm())
        return h.relu()
"""
PRINT = 12


def test_the_evidence_of_a_removed_print_says_eager_no_longer_prints(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/net.py": NET},
                      one_model("loud", "pkg.net:Loud", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}"))
    gone = Candidate(code="PTC105", path="pkg/net.py", start_line=PRINT, end_line=PRINT, lines=(),
                     title="remove the print", safe=False)
    target = break_target("loud", "pkg/net.py", PRINT, "GB0059", "Attempted to call a function")
    verdict = prove(root, "loud", [item("gone", gone, NET, target)], tmp_path / "work")["gone"]
    assert verdict["accepted"] is True, verdict
    assert (f"but the edit removes the `print` at line {PRINT}, which head's eager run reaches on "
            "all 2 shape cases: eager code no longer gives it either") in verdict["evidence"], verdict
