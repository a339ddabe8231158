"""One reading NaN (pt2bot/smoke/verify.py `CONSTANTS`, "reading"): the first element of the
model's first floating-point input set to NaN, the rest as its first shape case. A held-out
trial's user rescaled a batch of raw sensor readings by its `amax` only past a threshold; the
proof verified `torch.where(scale > 50, features / safe_scale, features)`, equal on every
output, and an independent re-run found one NaN reading made every row's input gradient NaN
where head's was NaN in that row only: the edit differentiates through the `amax` head never
took (with a NaN maximum, its backward turns the zero it is fed into NaN everywhere). The proof
now runs that input: outputs that differ there refuse the edit; gradients that differ, or head
failing where the edit returns, are said in the evidence.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, one_model, prove, write_repo

RESCALE = """\
import torch
from torch import nn


class Rescale(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, features):
        scale = features.abs().amax()
        if scale > 50:
            features = features / scale
        return self.lin(features)
"""
LINE = 12
CONFIG = one_model("rescale", "pkg.rescale:Rescale", "[{name: features, shape: [batch, 6]}]",
                   "{batch: [3, 5]}")
TARGET = {"kind": "break", "model": "rescale", "path": "pkg/rescale.py", "line": LINE,
          "gb": "GB0170", "gb_type": "Data-dependent branching"}


def _edit(cid: str, *lines: str, guards: tuple[str, ...] = ("large",)) -> Candidate:
    return Candidate(code="PTC201", path="pkg/rescale.py", start_line=LINE, end_line=LINE + 1,
                     lines=lines, title=cid, safe=False, guards=guards)


@pytest.mark.torch
def test_gradients_a_nan_reading_spreads_are_said_and_outputs_it_changes_refuse(tmp_path):
    assert RESCALE.splitlines()[LINE - 1].strip() == "if scale > 50:"
    root = write_repo(tmp_path / "repo", {"pkg/rescale.py": RESCALE}, CONFIG)
    where = _edit("where", "        safe = torch.where(scale > 50, scale, torch.ones_like(scale))",
                  "        features = torch.where(scale > 50, features / safe, features)")
    # wrong on a NaN only: `nan_to_num` makes the NaN maximum a large number, so a batch with a
    # NaN reading is divided by it (every row NaN) where head's test (NaN > 50) left it alone
    wrong = _edit("wrong", "        big = torch.nan_to_num(scale, nan=1e9) > 50",
                  "        features = torch.where(big, features / torch.where(big, scale, 1.0), features)",
                  guards=())   # (the guard input of large values beside a NaN shows it too)
    # (apart: a candidate whose target an accepted one fixed is not tried)
    verdicts = {**prove(root, "rescale", [item("where", where, RESCALE, TARGET)], tmp_path / "w1"),
                **prove(root, "rescale", [item("wrong", wrong, RESCALE, TARGET)], tmp_path / "w2")}
    got = verdicts["where"]
    assert got["accepted"] is True, got
    assert ("equal on inputs all 0, all 1 and with one NaN and on weights all 0, gradients too "
            "(but with one NaN in an input, the inputs' gradients differ from head's") in got["evidence"], got
    assert verdicts["wrong"]["accepted"] is False, verdicts["wrong"]
    assert verdicts["wrong"]["reason"].startswith(
        "on one NaN in the model's first floating-point input, the outputs differ from head's"), verdicts["wrong"]
