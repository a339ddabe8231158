"""The early-returns chain with the first nonzero index between its returns
(pt2bot/rules/branch_fixes.py `_first_index_form`): torchmetrics' reciprocal rank reads
`position = torch.nonzero(target).view(-1)` only as `position[0]`, after an early return where
`target` is all zero. Selected with `torch.where`, the code after the return always runs, and
`nonzero`'s data-dependent size breaks the graph again (GB0036);
`(target != 0).int().argmax().reshape(1)` holds the same first index in a one-element tensor.
The chain's text with it and where it stays as written, then the proof loop on real torch:
verified, both breaks gone; refused where the early return does not cover the all-zero target
(head raises IndexError, the edit gives a value).
"""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

RANK = """\
import torch
from torch import nn


def reciprocal_rank(preds: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    target = target[preds.argsort(descending=True)]
    if not target.sum():
        return preds.new_zeros(())
    position = torch.nonzero(target).view(-1)
    return 1.0 / (position[0] + 1.0)


class Rank(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x).sum(0)
        return reciprocal_rank(h, h > 0.1)
"""
IF = 7
assert RANK.splitlines()[IF + 1].strip() == "position = torch.nonzero(target).view(-1)"
FIRST = "    position = (target != 0).int().argmax().reshape(1)"
RETURN = "    return torch.where(target.sum() == 0, preds.new_zeros(()), 1.0 / (position[0] + 1.0))"
CONFIG = one_model("rank", "pkg.rank:Rank", "[{name: x, shape: [batch, 8]}]", "{batch: [3, 5]}")


def _if() -> dict:
    return break_target("rank", "pkg/rank.py", IF, "GB0170", "Data-dependent branching")


def _chain(text: str) -> list:
    return offered(_if(), text, "nested `torch.where`")


def test_the_chain_writes_the_first_index_between_its_returns():
    (c,) = _chain(RANK)
    assert (c.start_line, c.end_line, c.lines) == (IF, IF + 3, (FIRST, RETURN))
    for old in ("target.nonzero().flatten()", "torch.where(target)[0]", "target.nonzero(as_tuple=True)[0]",
                "torch.nonzero(target).squeeze(1)", "torch.nonzero(target, as_tuple=False).reshape(-1)"):
        (c,) = _chain(RANK.replace("torch.nonzero(target).view(-1)", old))
        assert c.lines == (FIRST, RETURN), old


@pytest.mark.parametrize("old, new", [
    # another element, or the count, is read: one element does not hold them
    ("1.0 / (position[0] + 1.0)", "1.0 / (position[1] + 1.0)"),
    ("1.0 / (position[0] + 1.0)", "1.0 / (position[0] + len(position))"),
    # the first row of coordinates, not the flat indexes; a reshape to two dims
    ("torch.nonzero(target).view(-1)", "torch.nonzero(target)[0]"),
    ("torch.nonzero(target).view(-1)", "torch.nonzero(target).view(2, -1)"),
])
def test_the_indexes_stay_as_written_where_they_are_read_otherwise(old, new):
    text = RANK.replace(old, new)
    (c,) = _chain(text)
    assert c.lines[0] == "    position = " + text.splitlines()[IF + 1].split(" = ", 1)[1]


@pytest.mark.torch
def test_the_loop_verifies_it_with_both_breaks_gone(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/rank.py": RANK}, CONFIG)
    (chain,) = _chain(RANK)
    verdict = prove(root, "rank", [item("chain", chain, RANK, _if())], tmp_path / "work")["chain"]
    assert verdict["accepted"] is True, verdict
    assert verdict["evidence"].startswith("GB0170 gone"), verdict
    assert "also gone: GB0036 at pkg/rank.py:9" in verdict["evidence"], verdict


@pytest.mark.torch
def test_the_loop_refuses_it_where_the_return_does_not_cover_an_all_zero_target(tmp_path):
    # the early return is taken where one entry is on: on a target all off, head raises
    # IndexError at `position[0]` and the edit selects 1 / (0 + 1). The shape cases alone
    # accepted it; the empty mask the first index adds to the guards refuses it
    text = RANK.replace("if not target.sum():", "if target.sum() == 1:")
    root = write_repo(tmp_path / "repo", {"pkg/rank.py": text}, CONFIG)
    (chain,) = _chain(text)
    assert chain.lines[0] == FIRST
    verdict = prove(root, "rank", [item("chain", chain, text, _if())], tmp_path / "work")["chain"]
    assert verdict["accepted"] is False, verdict
    assert "IndexError" in verdict["reason"], verdict
