"""A tensor's number read with `.item()` only to test it (pt2bot/rules/branch_fixes.py
`item_test_fixes`, offered for PTC101): X-MoE's `if hasattr(self, "b2_stack") and
self._has_bias_2.item(): h2 = h2 + ...` broke the graph at `.item()`, and its maintainers kept a
Python copy of the flag. The tensor answers the same test, so the tensor-test recipes apply to the
test rewritten (`t.item()` as a part of it is `t.bool()`, compared it is `t`): `torch.where` under
the Python part, verified on the model by the proof loop.
"""
from __future__ import annotations

import pytest

from pt2bot.fixes import break_findings
from pt2bot.rules import fix_candidates
from proofs import item, one_model, prove, write_repo

BLOCK = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.b2 = nn.Parameter(torch.randn(4))
        self.register_buffer("_has_bias_2", torch.tensor(True))

    def forward(self, x):
        h2 = self.lin(x)
        if hasattr(self, "b2") and self._has_bias_2.item():
            h2 = h2 + self.b2
        return h2
"""
LINE = 14
SUFFIX = "; the test reads the tensor, not `.item()`"


def _target(line: int = LINE, path: str = "pkg/block.py") -> dict:
    return {"kind": "break", "model": "block", "path": path, "line": line, "gb": "GB0124",
            "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}


def _edits(text: str, line: int = LINE, path: str = "pkg/block.py"):
    return {c.title: c for f in break_findings(_target(line, path), text, {}) for c in fix_candidates(f, text)
            if c.title.endswith(SUFFIX)}


def test_the_tensor_is_tested_where_the_number_was():
    edits = _edits(BLOCK)
    where = edits["select with `torch.where` instead of branching; the Python part of the test stays an `if`"
                  + SUFFIX]
    assert (where.start_line, where.end_line) == (LINE, LINE + 1)
    assert where.lines == ('        if hasattr(self, "b2"):',
                           "            h2 = torch.where(self._has_bias_2.bool(), h2 + self.b2, h2)")
    compared = BLOCK.replace("self._has_bias_2.item():", "self.b2.abs().max().item() > 0.5:")
    (where,) = [c for t, c in _edits(compared).items() if "torch.where" in t]
    assert where.lines[1] == "            h2 = torch.where(self.b2.abs().max() > 0.5, h2 + self.b2, h2)"


@pytest.mark.parametrize("test", [
    "self._has_bias_2.item() * 2 > 1",        # the number is computed with, not only tested
    "abs(self._has_bias_2.item())",           # an argument
])
def test_no_edit_where_the_number_is_read_otherwise(test):
    assert _edits(BLOCK.replace("hasattr(self, \"b2\") and self._has_bias_2.item()", test)) == {}


CONFIG = one_model("block", "pkg.block:Block", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_the_loop_verifies_the_selection_under_the_python_part(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/block.py": BLOCK}, CONFIG)
    (where,) = [c for t, c in _edits(BLOCK).items() if "torch.where" in t]
    verdict = prove(root, "block", [item("where", where, BLOCK, _target())], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict
    assert verdict["evidence"].startswith("GB0124 gone"), verdict
