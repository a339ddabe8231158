"""A tensor test dropped where the block it guards selects on the tested mask
(pt2bot/rules/branch_fixes.py `_selected_block_fixes`): a new user's DINOv2 PR added `if masks is
not None and masks.any():` around the mask-token `torch.where`, to skip it when nothing is
masked. The test breaks the graph; the `torch.where` already keeps `x` where the mask is empty, so
the fix is the block with no tensor test (the revert), not a second `torch.where` on
`masks.any()` around the first, which the recipes offered before. The recipe's text, the code it
leaves alone, then the proof on real torch: verified where an empty mask (injected) skips the
block, and a wrong block refused there."""
from __future__ import annotations

import dataclasses

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

VIT = """\
import torch
from torch import nn


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.mask_token = nn.Parameter(torch.ones(1, 4))

    def forward(self, x, masks=None):
        x = self.proj(x)
        if masks is not None and masks.any():
            x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x)
        return x.sum(-1)
"""
IF = 13
assert VIT.splitlines()[IF - 1].strip() == "if masks is not None and masks.any():"
KEPT = ("        if masks is not None:",
        "            x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x)")
TITLE = "drop the test `masks.any()`"


def _target(path: str = "pkg/vit.py") -> dict:
    return break_target("vit", path, IF, "GB0170", "Data-dependent branching")


def test_the_tensor_test_is_dropped_and_the_python_part_stays():
    (c,) = offered(_target("m.py"), VIT, TITLE)
    assert (c.start_line, c.end_line, c.lines, c.safe, c.rank) == (IF, IF + 1, KEPT, False, 0)
    assert "empty" in c.guards
    # the nested selection the recipes offered before still comes, after it
    assert offered(_target("m.py"), VIT, "select with `torch.where`")
    # with no Python part, the block goes one level up
    alone = VIT.replace("if masks is not None and masks.any():", "if masks.any():")
    (c,) = offered(_target("m.py"), alone, "drop the `if`")
    assert c.lines == ("        x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x)",)
    compile(apply_candidate(alone, c), "m.py", "exec")


@pytest.mark.parametrize("block", [
    # the selection is on another tensor than the tested mask
    "x = torch.where(x > 0, self.mask_token.to(x.dtype).unsqueeze(0), x)",
    # it does not fall back to its own target where the mask is empty
    "x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x * 2)",
    # the block does more than select
    "x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x) + 1",
])
def test_a_block_that_does_not_keep_its_values_on_an_empty_mask_gets_no_such_edit(block):
    text = VIT.replace("x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x)", block)
    assert offered(_target("m.py"), text, TITLE) == []


CONFIG = one_model("vit", "pkg.vit:Tokens",
                   "[{name: x, shape: [batch, seq, 4]}, {name: masks, shape: [batch, seq], dtype: bool}]",
                   "{batch: [2, 3], seq: [5]}")


@pytest.mark.torch
def test_the_loop_verifies_it_on_an_empty_mask_and_refuses_a_block_that_differs_there(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/vit.py": VIT}, CONFIG)
    (kept,) = [dataclasses.replace(c, path="pkg/vit.py") for c in offered(_target("m.py"), VIT, TITLE)]
    # the same edit with a block that adds 1 where head skipped it: equal wherever a token is
    # masked, not where none is
    wrong = dataclasses.replace(kept, lines=(KEPT[0], KEPT[1].replace(", x)", ", x) + 1.0 * (~masks.any())")))
    verdicts = prove(root, "vit", [item("wrong", wrong, VIT, _target()), item("kept", kept, VIT, _target())],
                     tmp_path / "work")
    assert verdicts["kept"]["accepted"] is True, verdicts["kept"]
    assert "GB0170 gone" in verdicts["kept"]["evidence"]
    assert f"the block at line {IF + 1} skipped by head on inputs with an empty mask" in verdicts["kept"]["evidence"]
    # what base did too, said first: the mask token's gradient is a zero tensor where head's is None
    assert verdicts["kept"]["caveats"] == ["`mask_token` gets zero gradients where head's get none: an optimizer "
                                           "with momentum or weight decay updates a parameter with a zero gradient "
                                           "and skips one with none"]
    assert verdicts["wrong"]["accepted"] is False
    assert "empty mask" in verdicts["wrong"]["reason"], verdicts["wrong"]


OUTER = VIT + """

class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = Tokens()

    def forward(self, x, masks):
        # the batch of 3 runs with no mask at all, as a model's unmasked path does
        return self.tokens(x, masks if x.shape[0] == 2 else None)


class NoMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = Tokens()

    def forward(self, x, masks):
        return self.tokens(x, None)
"""


@pytest.mark.torch
def test_a_case_that_skips_the_block_on_the_kept_part_of_the_test_is_not_evidence(tmp_path):
    # The batch of 3 passes `masks=None`: head skips the block there, and so does the edit, on
    # the `masks is not None` it keeps. That case says nothing of the `.any()` the edit drops;
    # the evidence was "skipped by head on 1 of the 2 shape cases" of it.
    root = write_repo(tmp_path / "repo", {"pkg/vit.py": OUTER},
                      CONFIG.replace("pkg.vit:Tokens", "pkg.vit:Outer"))
    (kept,) = [dataclasses.replace(c, path="pkg/vit.py") for c in offered(_target("m.py"), OUTER, TITLE)]
    verdicts = prove(root, "vit", [item("kept", kept, OUTER, _target())], tmp_path / "work")
    assert verdicts["kept"]["accepted"] is True, verdicts["kept"]
    assert f"the block at line {IF + 1} skipped by head on inputs with an empty mask" in verdicts["kept"]["evidence"]
    assert "shape case" not in verdicts["kept"]["evidence"].split(f"line {IF + 1}")[1].split(";")[0]
    # a model that never passes a mask shows nothing of the dropped test: not a refusal of the
    # edit, but no evidence either (a review verifies it where another model skips the block
    # on an empty mask)
    root = write_repo(tmp_path / "repo2", {"pkg/vit.py": OUTER},
                      CONFIG.replace("pkg.vit:Tokens", "pkg.vit:NoMask"))
    # (as a review tries it on a model that runs the function but has no break there)
    verdicts = prove(root, "vit", [(item("kept", kept, OUTER, _target())[0], [])], tmp_path / "work2")
    assert (verdicts["kept"]["accepted"], verdicts["kept"].get("unexercised")) == (False, True), verdicts["kept"]
    assert verdicts["kept"]["reason"].startswith(f"no shape case or guard input skips the block at line {IF + 1}")
    # said beside a verified fix without how to add an input that skips it (another model gave
    # one), and with no claim of where head skipped it
    assert verdicts["kept"]["said"] == (f"no shape case or guard input skips the block at line {IF + 1}, so "
                                        "dropping the `if`'s test was never compared with head where the test fails")
    assert "skipped by head" not in verdicts["kept"]["evidence"]
