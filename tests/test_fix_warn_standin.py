"""A `warnings.warn` the checker did not reach (tensorly-torch's lasso: the warning is in a
property, `loss`, that `forward` reads), found by dynamo only: GB0007, "Attempted to call
function marked as skipped", names the line. GB0007 names any skipped function, so the stand-in
finding for the line (pt2bot/fixes.py `break_findings`) gets PTC106's guard only where the call
warns (pt2bot/rules/logging_call.py `_warns`), and the proof runs it.
"""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

MODEL = """\
import time
import warnings
from warnings import warn as say

import torch
from torch import nn


class Lasso(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.n_element = 0

    @property
    def loss(self):
        if self.n_element == 0:
            warnings.warn("The L1Regularization was not applied to any weights.")
            return 0
        return 1

    def forward(self, x):
        start = time.time()
        say("checked")
        time.sleep(0)
        return self.proj(x) + self.loss
"""
LINES = {"warn": 18, "time": 23, "warn_as": 24, "sleep": 25}
CONFIG = one_model("lasso", "pkg.lasso:Lasso", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 5]}")


def _target(line: int) -> dict:
    return break_target("lasso", "pkg/lasso.py", line, "GB0007", "Attempted to call function marked as skipped")


@pytest.mark.parametrize("where, want", [
    ("warn", ["            if not torch.compiler.is_compiling():",
              '                warnings.warn("The L1Regularization was not applied to any weights.")']),
    ("warn_as", ["        if not torch.compiler.is_compiling():", '            say("checked")']),
    ("time", None),     # a skipped function that is no warning
    ("sleep", None),
])
def test_a_warning_dynamo_found_gets_the_guard(where, want):
    got = offered(_target(LINES[where]), MODEL, "in eager only")
    if want is None:
        assert got == []
    else:
        (c,) = got
        assert list(c.lines) == want and c.safe


@pytest.mark.torch
def test_the_loop_verifies_the_guard(tmp_path):
    text = MODEL.replace('        start = time.time()\n        say("checked")\n        time.sleep(0)\n', "")
    line = LINES["warn"]
    assert "warnings.warn" in text.splitlines()[line - 1]
    root = write_repo(tmp_path / "repo", {"pkg/lasso.py": text}, CONFIG)
    (c,) = offered(_target(line), text, "in eager only")
    verdict = prove(root, "lasso", [item("lasso", c, text, _target(line))], tmp_path / "work")["lasso"]
    assert verdict["accepted"], verdict
    assert verdict["evidence"].startswith("GB0007 gone"), verdict


def test_a_warning_filter_keeps_its_guard():
    # the filters break with GB0007 too; the checker's own finding carries that code, so the
    # test of the call's name must let them through as it did before stand-ins came
    text = "import warnings\n\nimport torch\n\n\ndef f(x):\n    warnings.simplefilter(\"ignore\")\n    return x + 1\n"
    target = {"kind": "break", "model": "m", "path": "pkg/f.py", "line": 7, "gb": "GB0007", "gb_type": "skipped"}
    (c,) = offered(target, text, "in eager only")
    assert c.lines == ("    if not torch.compiler.is_compiling():", '        warnings.simplefilter("ignore")')
