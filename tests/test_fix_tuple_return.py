"""An early exit that returns a tuple: `if (iou_pred < 0.05).all(): return torch.full_like(masks,
-1e4), iou_pred` before `return masks, iou_pred` (a new user's SAM mask decoder). Only
`torch.cond` was offered, and it failed inside torch; the selection of each value apart,
`return torch.where(c, torch.full_like(masks, -1e4), masks), iou_pred`, was never tried."""
from __future__ import annotations

import pytest

from pt2bot.findings import Finding
from pt2bot.rules import fix_candidates
from proofs import break_target, item, one_model, prove, write_repo

DEC = """\
import torch
from torch import nn


class Dec(nn.Module):
    def __init__(self):
        super().__init__()
        self.masks = nn.Linear(8, 16)
        self.iou = nn.Linear(8, 1)

    def forward(self, x):
        masks = self.masks(x)
        iou_pred = self.iou(x).squeeze(-1) * 0.0 - 1.0
        if (iou_pred < 0.05).all():
            return torch.full_like(masks, -1e4), iou_pred

        # Prepare output
        return masks, iou_pred
"""
IF = 14


def _where():
    raw = DEC.splitlines()[IF - 1]
    f = Finding(rule="PTC201", path="pkg/dec.py", line=IF, col=raw.index("(iou"), severity="error",
                message="m", source=raw.strip(), gb="GB0170")
    return [c for c in fix_candidates(f, DEC) if c.title.startswith("select each returned value")]


def test_each_returned_value_is_selected_and_a_shared_one_kept():
    [c] = _where()
    assert (c.start_line, c.end_line) == (IF, IF + 4)
    assert c.lines[-1] == ("        return torch.where((iou_pred < 0.05).all(), torch.full_like(masks, -1e4), "
                           "masks), iou_pred")


@pytest.mark.torch
def test_the_selection_is_verified_where_head_takes_the_exit(tmp_path):
    [c] = _where()
    root = write_repo(tmp_path / "repo", {"pkg/dec.py": DEC},
                      one_model("dec", "pkg.dec:Dec", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}"))
    target = break_target("dec", "pkg/dec.py", IF, "GB0170", "Data-dependent branching")
    verdict = prove(root, "dec", [item("where", c, DEC, target)], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict
    assert f"the early return at line {IF + 1} taken by head on 2 of the 2 shape cases" in verdict["evidence"]
