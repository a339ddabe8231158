"""A stand-in for a divisor an early return guards against zero (pt2bot/rules/branch_fixes.py
`_chain`, and the one-`return` `torch.where` of `tensor_condition_fixes`): `torch.where`
computes the code after the return where head returned too. torchvision's equalize returns
the channel unchanged `if step == 0:` and then divides by `step`: in an integer division by
that zero, the edit raised ZeroDivisionError where head returned; `if n == 0: return x` /
`return x / n` selected head's value but put NaN into the gradient (0 / 0 of the division
not selected). 1 stands in for the divisor where it is zero, and the proof verifies both on
injected zeros, where head takes the early return.
"""
from __future__ import annotations

import pytest

from pt2bot.fixes import break_findings
from pt2bot.rules import fix_candidates
from proofs import item, one_model, prove, write_repo

LEVELS = """\
import torch
from torch import nn


def scale_channel(chan: torch.Tensor) -> torch.Tensor:
    step = torch.div(chan.sum(), 255, rounding_mode="floor")
    if step == 0:
        return chan
    lut = torch.div(torch.arange(256) + torch.div(step, 2, rounding_mode="floor"), step, rounding_mode="floor")
    return lut.clamp(0, 255)[chan.long()]


def unit(x: torch.Tensor) -> torch.Tensor:
    n = x.norm()
    if n == 0:
        return x
    return x / n


class Levels(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, img, x):
        return scale_channel(img), unit(self.lin(x))
"""
CHAIN, PLAIN = 7, 15
CONFIG = one_model("levels", "pkg.levels:Levels",
                   "[{name: img, shape: [batch, 6], dtype: int64, low: 0, high: 256}, {name: x, shape: [batch, 4]}]",
                   "{batch: [2, 3]}")
STANDS_IN = "; 1 stands in for `{}` where it is 0, so that the division computed there and not selected is defined"


def _target(line: int) -> dict:
    return {"kind": "break", "model": "levels", "path": "pkg/levels.py", "line": line, "gb": "GB0170",
            "gb_type": "Data-dependent branching"}


def _edit(line: int, title: str):
    return next(c for f in break_findings(_target(line), LEVELS, {}) for c in fix_candidates(f, LEVELS)
                if c.title.startswith(title))


def test_the_divisor_is_stood_in_for_where_the_return_was_taken():
    assert LEVELS.splitlines()[CHAIN - 1].strip() == "if step == 0:"
    assert LEVELS.splitlines()[PLAIN - 1].strip() == "if n == 0:"
    chain = _edit(CHAIN, "select the early returns")
    assert chain.title.endswith(STANDS_IN.format("step"))
    assert chain.lines == (
        "    safe_step = torch.where(step == 0, torch.ones_like(step), step)",
        "    lut = torch.div(torch.arange(256) + torch.div(safe_step, 2, rounding_mode=\"floor\"), safe_step, "
        "rounding_mode=\"floor\")",
        "    return torch.where(step == 0, chan, lut.clamp(0, 255)[chan.long()])")
    plain = _edit(PLAIN, "select with `torch.where`")
    assert plain.title == "select with `torch.where` instead of branching" + STANDS_IN.format("n")
    assert plain.lines == ("    safe_n = torch.where(n == 0, torch.ones_like(n), n)",
                           "    return torch.where(n == 0, x, x / safe_n)")
    # no division by the tested name after the return: no stand-in
    other = LEVELS.replace("    return x / n\n", "    return x * n\n")
    assert _edit(PLAIN, "select with `torch.where`").title != \
        next(c for f in break_findings(_target(PLAIN), other, {}) for c in fix_candidates(f, other)
             if c.title.startswith("select with `torch.where`")).title


@pytest.mark.torch
def test_the_loop_verifies_both_on_injected_zeros(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/levels.py": LEVELS}, CONFIG)
    items = [item("chain", _edit(CHAIN, "select the early returns"), LEVELS, _target(CHAIN)),
             item("plain", _edit(PLAIN, "select with `torch.where`"), LEVELS, _target(PLAIN))]
    verdicts = prove(root, "levels", items, tmp_path / "work")
    for cid, line in (("chain", CHAIN), ("plain", PLAIN)):
        assert verdicts[cid]["accepted"] is True, verdicts[cid]
        assert f"the early return at line {line + 1} taken by head on inputs with zeros" in verdicts[cid]["evidence"]
