"""A block of assignments under a tensor test (pt2bot/rules/branch_fixes.py `_assignments_fixes`):
held-out batch 38's new user rescaled a raw pair of scans, `if moving.max() > 1 or static.max()
> 1:` then each scan divided by its own maximum. The recipes offered only "run the block always
in compiled code", which the proof refused (its gradients differ); the `torch.where` the
review's own hint describes, each assignment selected on the test computed once before the
block, was never tried. The recipe's text, the code it leaves alone, then the proof on real
torch: verified where the rescaled pair equals head's, refused where a statement is not one."""
from __future__ import annotations

import dataclasses

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

PAIR = """\
import torch
from torch import nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, moving, static):
        moving = moving * 3.0
        if moving.max() > 1 or static.max() > 1:
            moving = moving / moving.amax(dim=1, keepdim=True).clamp_min(1e-6)
            static = static / static.amax(dim=1, keepdim=True).clamp_min(1e-6)
        return self.proj(moving) + static
"""
IF = 12
assert PAIR.splitlines()[IF - 1].strip() == "if moving.max() > 1 or static.max() > 1:"
TITLE = "select each assignment of the block"


def _target(path: str = "pkg/pair.py") -> dict:
    return break_target("pair", path, IF, "GB0170", "Data-dependent branching")


def test_each_assignment_is_selected_on_the_test_computed_first():
    (c,) = offered(_target("m.py"), PAIR, TITLE)
    assert (c.start_line, c.end_line, c.safe, c.guards) == (IF, IF + 2, False, ("large",))
    assert c.lines == (
        "        taken = (moving.max() > 1) | (static.max() > 1)",
        "        moving = torch.where(taken, moving / moving.amax(dim=1, keepdim=True).clamp_min(1e-6), moving)",
        "        static = torch.where(taken, static / static.amax(dim=1, keepdim=True).clamp_min(1e-6), static)")
    compile(apply_candidate(PAIR, c), "m.py", "exec")


@pytest.mark.parametrize("block", [
    # a name the function did not bind before the block: no value to keep where the test fails
    "            scale = moving.amax(dim=1, keepdim=True)\n            static = static / scale.clamp_min(1e-6)",
    # a statement that is not an assignment of one name
    "            moving = moving / 2\n            moving[0] = 0.0",
    # one statement: `_branch_fixes`' own `torch.where`
    "            moving = moving / 2",
    # a Python number read out of a tensor, then a slice to it (torchrl's truncated series)
    "            static = torch.where(static < 1e-7)[0][0].item()\n            moving = moving[:, :static]",
    "            moving = moving / 2\n            static = static * int(moving.sum())",
])
def test_a_block_that_is_not_assignments_of_bound_names_gets_no_such_edit(block):
    text = PAIR.replace("            moving = moving / moving.amax(dim=1, keepdim=True).clamp_min(1e-6)\n"
                        "            static = static / static.amax(dim=1, keepdim=True).clamp_min(1e-6)", block)
    assert offered(_target("m.py"), text, TITLE) == []


CONFIG = one_model("pair", "pkg.pair:Pair", "[{name: moving, shape: [batch, 8]}, {name: static, shape: [batch, 8]}]",
                   "{batch: [2, 3]}")


@pytest.mark.torch
def test_the_loop_verifies_it_and_refuses_a_selection_that_differs(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/pair.py": PAIR}, CONFIG)
    (good,) = [dataclasses.replace(c, path="pkg/pair.py") for c in offered(_target("m.py"), PAIR, TITLE)]
    # the same with the second scan divided by the first one's maximum: not head's
    wrong = dataclasses.replace(good, lines=(good.lines[0], good.lines[1],
                                             good.lines[2].replace("static / static.amax", "static / moving.amax")))
    verdicts = prove(root, "pair", [item("wrong", wrong, PAIR, _target()), item("good", good, PAIR, _target())],
                     tmp_path / "work")
    assert verdicts["good"]["accepted"] is True, verdicts["good"]
    assert verdicts["good"]["evidence"].startswith("GB0170 gone, 1 graph instead of 2"), verdicts["good"]
    assert verdicts["wrong"]["accepted"] is False and "differ" in verdicts["wrong"]["reason"], verdicts["wrong"]
