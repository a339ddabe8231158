"""An edit that keeps the Python part of a test as an `if` over a selection of head's own
expression (pt2bot/rules/branch_fixes.py `_python_part_fixes`): recurrentgemma's soft cap, `if c
and logits.abs().max().item() > 0.5 * c: logits = tanh(logits / c) * c`, as `if c:` over
`torch.cond(..., lambda: tanh(logits / c) * c, lambda: logits.clone(), ())`. No shape case's
logits came near the cap, and the verified evidence did not say that the capped branch never
ran (pt2bot/smoke/verify.py `_python_part_kept`, `_selected_evidence`)."""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

CAP = """\
import torch
from torch import nn


class Capped(nn.Module):
    def __init__(self, cap=30.0):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.cap = cap

    def forward(self, x):
        logits = self.lin(x)
        c = self.cap
        if c and logits.abs().max().item() > 0.5 * c:
            logits = nn.functional.tanh(logits / c) * c
        return logits
"""
LINE = 14
assert CAP.splitlines()[LINE - 1].strip().startswith("if c and")


@pytest.mark.torch
def test_a_selection_under_the_kept_python_test_says_no_case_entered_the_block(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/cap.py": CAP},
                      one_model("capped", "pkg.cap:Capped", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}"))
    target = break_target("capped", "pkg/cap.py", LINE, "GB0124", "Unsupported Tensor.item() call")
    (c,) = offered(target, CAP, "torch.cond")
    assert c.lines[0] == "        if c:"
    verdict = prove(root, "capped", [item("cond", c, CAP, target)], tmp_path / "work")["cond"]
    assert verdict["accepted"] is True, verdict
    assert (f"the block at line {LINE + 1} entered by no shape case: there the edit selects head's own "
            "expression, the same by construction, which no input of the proof compared") in verdict["evidence"], \
        verdict["evidence"]
