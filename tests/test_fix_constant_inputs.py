"""The model's own inputs all alike (pt2bot/smoke/verify.py `constant_checks`): an edit can
equal head on every shape case and on every guard input of the function it edits, and still
take NaN gradients when the layers before that function compute something degenerate. Below,
`scale` divides by the square root of each column's range where it is not too small and
leaves 0 where it is. Selecting the division with `torch.where` equals head's outputs everywhere, and on
a guard input (the function's argument set to zeros) head's skipped block and the edit's
unselected rows both give zeros. But where the linear layer's input rows are all alike, its
output columns are constant, their range is 0, and the backward of `sqrt` at 0 is 0 times
inf: the edit links the weights to that NaN, where head's skipped block made none.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, one_model, prove, write_repo

SCALE = """\
import torch
from torch import nn


def scale(y):
    s = (y.amax(0) - y.amin(0)).sqrt()
    ok = s > 1e-6
    out = torch.zeros_like(s)
    if ok.any():
        out[ok] = 1 / s[ok]
    return out


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        y = self.lin(x)
        return y * scale(y)
"""
LINE = 9
CONFIG = one_model("scale", "pkg.scale:Scale", "[{name: x, shape: [batch, 4]}]", "{batch: [3, 5]}")
TARGET = {"kind": "break", "model": "scale", "path": "pkg/scale.py", "line": LINE, "gb": "GB0170",
          "gb_type": "Data-dependent branching"}


def _edit(cid: str, *lines: str) -> Candidate:
    return Candidate(code="PTC201", path="pkg/scale.py", start_line=LINE, end_line=LINE + 1, lines=lines,
                     title=cid, safe=False, guards=("empty",))


@pytest.mark.torch
def test_an_edit_that_takes_nan_gradients_on_inputs_all_alike_is_refused(tmp_path):
    assert SCALE.splitlines()[LINE - 1].strip() == "if ok.any():"
    root = write_repo(tmp_path / "repo", {"pkg/scale.py": SCALE}, CONFIG)
    where = _edit("where", "    out = torch.where(ok, 1 / torch.where(ok, s, 1), out)")
    verdicts = prove(root, "scale", [item("where", where, SCALE, TARGET)], tmp_path / "work")
    assert verdicts["where"]["accepted"] is False, verdicts["where"]
    assert verdicts["where"]["reason"] == (
        "on the model's inputs all 0 (rows all alike), the parameters' gradients differ from head's "
        "(NaN where head's are finite)"), verdicts["where"]


@pytest.mark.torch
def test_an_edit_equal_on_inputs_all_alike_says_so():
    from pt2bot.smoke.verify import _constant_evidence, _constant_refusal, constant_case

    import torch

    from pt2bot.smoke.inputs import CaseInputs

    case = CaseInputs({"batch": 2}, (torch.randn(2, 3), torch.tensor([True, False])),
                      {"ids": torch.tensor([4, 7])})
    ones = constant_case(case, 1.0)
    assert torch.equal(ones.args[0], torch.ones(2, 3)) and torch.equal(ones.kwargs["ids"], torch.tensor([1, 1]))
    assert torch.equal(ones.args[1], case.args[1])   # a mask is kept
    assert constant_case(CaseInputs({}, (torch.tensor([True]),), {}), 0.0) is None
    rows = [{"of": "inputs", "value": 0.0, "match": True, "gradients": True},
            {"of": "inputs", "value": 1.0, "match": True}, {"of": "weights", "value": 0.0, "match": True}]
    assert _constant_refusal({"constants": rows}) is None
    assert _constant_evidence({"constants": rows}) == "equal on inputs all 0 and all 1 and on weights all 0, gradients too"
    assert _constant_refusal({"constants": [{"of": "inputs", "value": 1.0, "match": False, "message": "x"}]}).startswith(
        "on the model's inputs all 1 (rows all alike), the outputs differ from head's")
    assert _constant_refusal({"constants": [{"of": "weights", "value": 0.0, "match": False, "gradients": True,
                                             "grads_of": "inputs", "message": "NaN where head's are finite"}]}) == (
        "on the model's weights all 0, the inputs' gradients differ from head's (NaN where head's are finite)")


# A vector field whose last layer starts at zero (as a neural ODE's often does) is 0 everywhere:
# `step_size` then takes its fixed step, and the division by the field's norm, which
# `torch.where` computes on the side it does not select, is inf, its gradient NaN. No input
# makes the field 0 while its weights are as built; the weights all 0 do.
STEP = """\
import torch
from torch import nn


def step_size(f):
    d = f.abs().amax()
    if d <= 1e-15:
        h = torch.ones(())
    else:
        h = 0.01 / d
    return h


class Field(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, y):
        return y + step_size(self.lin(y))
"""


@pytest.mark.torch
def test_an_edit_that_takes_nan_gradients_with_weights_all_zero_is_refused(tmp_path):
    line = 7
    assert STEP.splitlines()[line - 1].strip() == "if d <= 1e-15:"
    config = one_model("field", "pkg.field:Field", "[{name: y, shape: [batch, 4]}]", "{batch: [3, 5]}")
    root = write_repo(tmp_path / "repo", {"pkg/field.py": STEP}, config)
    target = {"kind": "break", "model": "field", "path": "pkg/field.py", "line": line, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    where = Candidate(code="PTC201", path="pkg/field.py", start_line=line, end_line=line + 3,
                      lines=("    h = torch.where(d <= 1e-15, torch.ones(()), 0.01 / d)",), title="where",
                      safe=False, guards=())
    verdicts = prove(root, "field", [item("where", where, STEP, target)], tmp_path / "work")
    assert verdicts["where"]["accepted"] is False, verdicts["where"]
    assert verdicts["where"]["reason"].startswith("on the model's weights all 0, the "), verdicts["where"]
    assert "NaN" in verdicts["where"]["reason"], verdicts["where"]
