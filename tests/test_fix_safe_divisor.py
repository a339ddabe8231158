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

import dataclasses

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


# torchdiffeq's first step: `if d0 < 1e-5 or d1 < 1e-5:` a fixed step, `else:` one divided by
# `d1`. On an ODE that starts at 0 both norms are 0: head takes the fixed step and its output
# has no gradient there; `torch.where` computes `0.01 * d0 / d1` too, 0 / 0, whose backward
# puts NaN into the layers. No shape case is all 0; the model's inputs all alike are.
FIRST_STEP = """\
import torch
from torch import nn


def first_step(y0, f0):
    d0 = y0.norm()
    d1 = f0.norm()
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = torch.tensor(1e-6)
    else:
        h0 = 0.01 * d0 / d1
    return h0


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4, bias=False)

    def forward(self, y0):
        return y0 + first_step(y0, self.lin(y0))
"""
BOUND = 8
BOUND_TARGET = {"kind": "break", "model": "step", "path": "pkg/step.py", "line": BOUND, "gb": "GB0170",
                "gb_type": "Data-dependent branching"}


def _bound_edit(title: str):
    return next(c for f in break_findings(BOUND_TARGET, FIRST_STEP, {}) for c in fix_candidates(f, FIRST_STEP)
                if c.title.startswith(title))


def test_a_divisor_a_test_bounds_below_gets_a_stand_in_where_the_test_holds():
    assert FIRST_STEP.splitlines()[BOUND - 1].strip() == "if d0 < 1e-5 or d1 < 1e-5:"
    where = _bound_edit("select with `torch.where`")
    assert where.title == ("select with `torch.where` instead of branching; 1 stands in for `d1` where the test "
                           "holds, so that the division computed there and not selected is defined")
    assert where.lines == (
        "    safe_d1 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.ones_like(d1), d1)",
        "    h0 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.tensor(1e-6), 0.01 * d0 / safe_d1)")


@pytest.mark.torch
def test_the_stand_in_is_verified_and_the_bare_division_is_refused_on_inputs_all_zero(tmp_path):
    config = one_model("step", "pkg.step:Step", "[{name: y0, shape: [batch, 4]}]", "{batch: [2, 3]}")
    root = write_repo(tmp_path / "repo", {"pkg/step.py": FIRST_STEP}, config)
    where = _bound_edit("select with `torch.where`")
    bare = dataclasses.replace(where, lines=(
        "    h0 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.tensor(1e-6), 0.01 * d0 / d1)",))
    verdicts = prove(root, "step", [item("bare", bare, FIRST_STEP, BOUND_TARGET),
                                    item("where", where, FIRST_STEP, BOUND_TARGET)], tmp_path / "work")
    assert verdicts["bare"]["accepted"] is False
    assert verdicts["bare"]["reason"].startswith("on the model's inputs all 0 (rows all alike), the "), verdicts["bare"]
    assert "NaN" in verdicts["bare"]["reason"], verdicts["bare"]
    assert verdicts["where"]["accepted"] is True, verdicts["where"]
    assert "equal on inputs all 0, all 1 and with one NaN and on weights all 0, gradients too" in verdicts["where"]["evidence"]
