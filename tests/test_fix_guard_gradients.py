"""Gradients compared on guard inputs too (pt2bot/smoke/verify.py `guard_gradients`): an edit
can equal head's outputs where the guard holds and still differ in backward. `if (d == 0).any():
return torch.zeros_like(y)` / `return y / d` made one `torch.where` returns the same zeros where
`d` holds a zero, but the division it did not select still has a gradient there, 0 / 0: NaN
reaches the layer's weights, where head's early return made no gradient at all. No shape case
holds a zero, so only the injected one shows it.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, one_model, prove, write_repo

RATIO = """\
import torch
from torch import nn


def ratio(y, d):
    if (d == 0).any():
        return torch.zeros_like(y)
    return y / d


class Ratio(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return ratio(self.lin(x), x)
"""
LINE = 6
CONFIG = one_model("ratio", "pkg.ratio:Ratio", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")
TARGET = {"kind": "break", "model": "ratio", "path": "pkg/ratio.py", "line": LINE, "gb": "GB0170",
          "gb_type": "Data-dependent branching"}


def _edit(cid: str, *lines: str) -> Candidate:
    return Candidate(code="PTC201", path="pkg/ratio.py", start_line=LINE, end_line=LINE + 2, lines=lines,
                     title=cid, safe=False, guards=("zero",))


@pytest.mark.torch
def test_an_edit_equal_where_the_guard_holds_but_not_in_backward_is_refused(tmp_path):
    assert RATIO.splitlines()[LINE - 1].strip() == "if (d == 0).any():"
    root = write_repo(tmp_path / "repo", {"pkg/ratio.py": RATIO}, CONFIG)
    where = _edit("where", "    return torch.where((d == 0).any(), torch.zeros_like(y), y / d)")
    # the division made safe first: no NaN on the side `torch.where` does not select
    safe = _edit("safe", "    zero = (d == 0).any()",
                 "    return torch.where(zero, torch.zeros_like(y), y / torch.where(zero, torch.ones_like(d), d))")
    verdicts = prove(root, "ratio", [item("where", where, RATIO, TARGET), item("safe", safe, RATIO, TARGET)],
                     tmp_path / "work")
    assert verdicts["where"]["accepted"] is False
    assert verdicts["where"]["reason"] == ("on an input with zeros in `d`, the gradients differ from head's "
                                           "(the outputs carry NaN gradients where head's carry none)"), verdicts["where"]
    assert verdicts["safe"]["accepted"] is True, verdicts["safe"]


@pytest.mark.torch
def test_where_head_has_no_gradient_only_nonzero_ones_differ_and_a_failing_backward_compares_nothing():
    import torch

    from pt2bot.smoke.verify import _gradient_row

    zeros, nan = {"parameters": [torch.zeros(3)], "inputs": None}, {"parameters": [torch.tensor([0.0, float("nan")])]}
    assert _gradient_row(None, zeros, None) == {"match": True, "max_abs_err": 0.0, "message": None}
    assert _gradient_row(None, nan, None)["message"] == "the outputs carry NaN gradients where head's carry none"
    # head's own training step raised (pyg's `new_full` with a fill value that needs a gradient):
    # an edit under which it runs is compared on the rest, not refused for running
    assert _gradient_row("TypeError: new_full(): argument 'fill_value' must be Number", zeros, None) is None
