"""What a verified edit costs the compile (pt2bot/smoke/verify.py `_grown_graphs`). A loop whose
early exit is taken in eager only runs to its last iteration in compiled code, and dynamo
traces every iteration into the graph: torchist's Sinkhorn loop, 200 iterations, each one in
the graph, whose first inductor compile then took 90 s where head's took 0.2 s (found by an
independent re-run of the held-out batch's one verified edit). The values are equal, the break
is gone, and the evidence now says how many more operations the graphs hold.
"""
from __future__ import annotations

import pytest

from pt2bot.smoke.verify import _grown_graphs
from proofs import break_target, item, offered, one_model, prove, write_repo

SETTLE = """\
import torch
from torch import nn


def settle(x, iters):
    for _ in range(iters):
        x = torch.maximum(x, x.roll(1, -1))
        if (x == x.amax(-1, keepdim=True)).all():
            break
    return x


class Settle(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return settle(self.proj(x), 60)
"""
LINE = 8
CONFIG = one_model("settle", "pkg.settle:Settle", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")
TARGET = break_target("settle", "pkg/settle.py", LINE, "GB0170", "Data-dependent branching")


@pytest.mark.torch
def test_an_exit_compiled_code_no_longer_takes_says_how_much_the_graphs_grew(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/settle.py": SETTLE}, CONFIG)
    [c] = [c for c in offered(TARGET, SETTLE) if "is_compiling" in "".join(c.lines)]
    assert c.lines[0].strip().startswith("if not torch.compiler.is_compiling() and")
    verdict = prove(root, "settle", [item("exit", c, SETTLE, TARGET)], tmp_path / "work")["exit"]
    assert verdict["accepted"] is True, verdict
    # sixty iterations of two operations each, where head compiled the linear layer alone
    assert "the graphs hold 121 operations where head's held 1: code head ran in eager now compiles, " \
        "and its first compile does that much more work" in verdict["evidence"], verdict


@pytest.mark.parametrize("head, cand, said", [
    (100, 199, False), (100, 200, True),    # twice as many
    (10, 100, False), (10, 110, True),      # and at least 100 more
    (None, 500, False),
])
def test_growth_is_said_from_twice_and_a_hundred_more(head, cand, said):
    assert (_grown_graphs(head, cand) is not None) is said
