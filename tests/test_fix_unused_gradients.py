"""A parameter that gets a zero gradient where head's gets none (pt2bot/smoke/verify.py
`compare_gradients`' `zeroed`): `if (x > 100).any(): h = h + self.shift` made one
`torch.where` adds `self.shift` on the side it does not select, so backward reaches it with
zeros on inputs where head never used it. The numbers are equal, and the proof compares them
as such, but a training step differs: an optimizer skips a parameter whose gradient is None
and moves one with a zero gradient by its momentum and weight decay. The evidence says so.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, one_model, prove, write_repo

GATE = """\
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.shift = nn.Parameter(torch.ones(4))

    def forward(self, x):
        h = self.lin(x)
        if (x > 100).any():
            h = h + self.shift
        return h
"""
LINE = 13
CONFIG = one_model("gate", "pkg.gate:Gate", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")
TARGET = {"kind": "break", "model": "gate", "path": "pkg/gate.py", "line": LINE, "gb": "GB0170",
          "gb_type": "Data-dependent branching"}
CAVEAT = ("gradients equal on 2 shape cases (`shift` gets zero gradients where head's get none: an "
          "optimizer with momentum or weight decay updates a parameter with a zero gradient and skips "
          "one with none)")


@pytest.mark.torch
def test_zero_gradients_where_head_has_none_are_said_in_the_evidence(tmp_path):
    assert GATE.splitlines()[LINE - 1].strip() == "if (x > 100).any():"
    root = write_repo(tmp_path / "repo", {"pkg/gate.py": GATE}, CONFIG)
    where = Candidate(code="PTC201", path="pkg/gate.py", start_line=LINE, end_line=LINE + 1,
                      lines=("        h = torch.where((x > 100).any(), h + self.shift, h)",),
                      title="where", safe=False, guards=("large",))
    verdict = prove(root, "gate", [item("where", where, GATE, TARGET)], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict
    assert CAVEAT in verdict["evidence"], verdict["evidence"]


@pytest.mark.torch
def test_the_caveat_names_both_directions_and_digests_keep_the_names():
    import torch

    from pt2bot.smoke.verify import _digest, _unused_caveat

    assert _unused_caveat({"match": True}) == ""
    said = _unused_caveat({"zeroed": ["a", "b", "c", "d"], "unlinked": ["e"]})
    assert said.startswith(" (`a`, `b`, `c` and 1 more get zero gradients where head's get none; "
                           "`e` gets no gradients where head's get zeros: "), said
    digest = _digest({"parameters": [torch.ones(2)], "inputs": None, "none": ["shift"]})
    assert digest["none"] == ["shift"] and digest["inputs"] is None
    assert digest["parameters"][0].tolist() == [2.0, 2.0, 2.0]


MASKED = """\
import torch
from torch import nn


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.token = nn.Parameter(torch.zeros(4))

    def forward(self, x, mask):
        h = self.lin(x)
        if mask.any():
            h = torch.where(mask.unsqueeze(-1), self.token, h)
        return h
"""
MLINE = 13


@pytest.mark.torch
def test_zero_gradients_on_a_guard_input_alone_are_said_too(tmp_path):
    """dinov2's mask token (a new user's PR skipped the `torch.where` when no patch is masked):
    every shape case masks some patch, so the token has a gradient there on head too; only the
    empty mask the proof injects leaves head's with none, where the edit's `torch.where` gives it
    zeros, and AdamW's weight decay then moved it. The evidence said "equal with an empty mask
    injected" and nothing of it."""
    assert MASKED.splitlines()[MLINE - 1].strip() == "if mask.any():"
    root = write_repo(tmp_path / "repo", {"pkg/masked.py": MASKED}, one_model(
        "masked", "pkg.masked:Masked",
        "[{name: x, shape: [batch, 6, 4]}, {name: mask, shape: [batch, 6], dtype: bool}]", "{batch: [2, 3]}"))
    target = dict(TARGET, model="masked", path="pkg/masked.py", line=MLINE)
    where = Candidate(code="PTC201", path="pkg/masked.py", start_line=MLINE, end_line=MLINE + 1,
                      lines=("        h = torch.where(mask.any(), torch.where(mask.unsqueeze(-1), self.token, h), h)",),
                      title="where", safe=False, guards=("empty",))
    verdict = prove(root, "masked", [item("where", where, MASKED, target)], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict
    assert "an empty mask injected into `mask`, `x` (one at a time) (`token` gets zero gradients where head's get none" in verdict["evidence"], \
        verdict["evidence"]
