"""A block run always in compiled code whose own first statement breaks the graph (an MoE's
`if mask.any(): out[mask] += expert(x[mask])`, from a replayed fix of APT-Transformer's MoE
layer): `if torch.compiler.is_compiling() or mask.any():` removes the break on the test, and
dynamo breaks on the boolean-mask gather in the block instead. That code head never compiled
(the break in the loop made dynamo skip `forward`), and a break the edit uncovers in such code
is accepted, said in the evidence, where it is other code: a base without the PR's break has
it too. Here it is the block of the statement the edit changes, the code the edit is for: the
proof refuses it.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.branch_fixes import COMPILED_BLOCK
from proofs import break_target, item, offered, one_model, prove, write_repo

MOE = """\
import torch
from torch import nn


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(4, 2)
        self.experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        choice = self.router(x).argmax(-1) + (2 if x.shape[0] < 3 else 0)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            mask = choice == e
            if mask.any():
                out[mask] += expert(x[mask])
        return out
"""
LINE = 16
assert MOE.splitlines()[LINE - 1].strip() == "if mask.any():"
CONFIG = one_model("moe", "pkg.moe:MoE", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 5]}")


@pytest.mark.torch
def test_a_break_moved_into_the_block_is_a_new_one(tmp_path):
    # on a batch of 2 no expert is chosen: that case skips the block, the other enters it
    root = write_repo(tmp_path / "repo", {"pkg/moe.py": MOE}, CONFIG)
    target = break_target("moe", "pkg/moe.py", LINE, "GB0170", "Data-dependent branching")
    (c,) = offered(target, MOE, COMPILED_BLOCK)
    assert c.lines == ("            if torch.compiler.is_compiling() or mask.any():",)
    verdict = prove(root, "moe", [item("moe", c, MOE, target)], tmp_path / "work")["moe"]
    assert not verdict["accepted"], verdict
    assert verdict["reason"] == ("the break moves to GB0036 at pkg/moe.py:17, inside the statement the edit "
                                 "changes (lines 16 to 17)"), verdict
