"""An `if` on a learned scalar that no input changes: openai/CLIP's temperature, `logit_scale =
self.logit_scale.exp()`, clamped at 100 where a fine-tuned checkpoint exceeds it. As built the
scale is 14.3, so no shape case enters the clamp, and an edit that selects head's own expression
was "the same by construction, which no input of the proof compared". The proof now sets the
parameters the test reads (`verify.tested_parameters`) to 1e6 and -1e6 (`parameter_guards`) and
compares where head then enters the block: the selection is shown, a clamp of another bound is
refused, and a rewrite in words of its own is verified where before nothing entered it.
"""
from __future__ import annotations

import pytest

from pt2bot.rules import Candidate
from pt2bot.smoke.verify import tested_parameters as parameters_read
from proofs import break_target, item, one_model, prove, write_repo

TEMP = """\
import torch
from torch import nn


class Temp(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        scale = self.logit_scale.exp()
        if scale.item() > 100:
            scale = torch.clamp(scale, max=100)
        return self.proj(x) * scale
"""
LINE = 13
assert TEMP.splitlines()[LINE - 1].strip().startswith("if scale.item() > 100")
CONFIG = one_model("temp", "pkg.temp:Temp", "[{name: x, shape: [batch, 4]}]", "{batch: [1, 3]}")
TARGET = break_target("temp", "pkg/temp.py", LINE, "GB0124", "Unsupported Tensor.item() call with capture_scalar_outputs=False")


def _cand(*lines: str) -> Candidate:
    return Candidate(code="PTC101", path="pkg/temp.py", start_line=LINE, end_line=LINE + 1,
                     lines=lines, title="select with `torch.where`", safe=False)


def test_the_parameters_a_test_reads_through_the_names_bound_before_it():
    assert parameters_read(TEMP, LINE) == ("logit_scale",)
    direct = TEMP.replace("if scale.item() > 100:", "if self.logit_scale.item() > 4.6:")
    assert parameters_read(direct, LINE) == ("logit_scale",)
    # an input's value read: no parameter to set
    from_input = TEMP.replace("if scale.item() > 100:", "if x.max().item() > 100:")
    assert parameters_read(from_input, LINE) == ()


@pytest.mark.torch
@pytest.mark.parametrize("line, accepted, said", [
    # head's own expression selected: shown where head clamps, not argued
    ("        scale = torch.where(scale > 100, torch.clamp(scale, max=100), scale)", True,
     "the block at line 14 entered by head with `logit_scale` set to 1e6"),
    # the block's work in words of its own: verified, where no input entered it before
    ("        scale = scale.clamp(max=100)", True,
     "the block at line 14 entered by head on `logit_scale` set to 1e6"),
    # a wrong bound: equal on every shape case, refused where head clamps
    ("        scale = scale.clamp(max=10)", False, "differs from head on an input with 1e6 in `logit_scale`"),
])
def test_the_block_a_parameter_reaches_is_compared(tmp_path, line, accepted, said):
    root = write_repo(tmp_path / "repo", {"pkg/temp.py": TEMP}, CONFIG)
    verdict = prove(root, "temp", [item("c0", _cand(line), TEMP, TARGET)], tmp_path / "work")["c0"]
    assert verdict["accepted"] is accepted, verdict
    assert said in (verdict["evidence"] if accepted else verdict["reason"]), verdict
    assert "by construction" not in verdict["evidence"]
