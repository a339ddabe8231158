"""A least-squares solve of a square system (pt2bot/rules/dynamic_output_shape.py
`_square_solve_fixes`, offered for PTC304): `torch.linalg.lstsq` has outputs whose size is read
from the data (its rank and residuals), so dynamo breaks the graph (GB0036); torchvision's
perspective coefficients solve eight equations in eight unknowns with it. `torch.linalg.solve`
gives the same solution where the matrix is square and invertible. The recipe's text and the
code it leaves alone, then the proof loop on real torch: verified on a square system, refused
on an over-determined one (`solve` raises there).
"""
from __future__ import annotations

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

FIT = """\
import torch
from torch import nn


class Fit(nn.Module):
    def __init__(self, rows=4):
        super().__init__()
        self.proj = nn.Linear(4, 4 * rows)
        self.rhs = nn.Linear(4, rows)
        self.rows = rows

    def forward(self, x):
        a = self.proj(x).reshape(-1, self.rows, 4) + 3 * torch.eye(self.rows, 4)
        res = torch.linalg.lstsq(a, self.rhs(x).unsqueeze(-1), driver="gels").solution
        return res.squeeze(-1)
"""
LINE = 14
assert FIT.splitlines()[LINE - 1].strip().startswith("res = ")
CONFIG = one_model("fit", "pkg.fit:Fit", "[{name: x, shape: [batch, 4]}]", "{batch: [3, 5]}",
                   extra="    kwargs: {rows: ROWS}\n")


def _target(path: str = "pkg/fit.py") -> dict:
    return break_target("fit", path, LINE, "GB0036", "Dynamic shape operator")


def _edits(text: str, path: str = "m.py") -> list:
    return offered(_target(path), text, "`torch.linalg.solve`")


def test_the_solution_is_solved_for():
    (c,) = _edits(FIT)
    assert (c.start_line, c.end_line, c.safe) == (LINE, LINE, False)
    assert c.lines == ("        res = torch.linalg.solve(a, self.rhs(x).unsqueeze(-1))",)
    assert "where `a` is square and invertible" in c.title
    compile(apply_candidate(FIT, c), "m.py", "exec")
    (c,) = _edits(FIT.replace('driver="gels").solution', "driver=None)[0]"))
    assert c.lines == ("        res = torch.linalg.solve(a, self.rhs(x).unsqueeze(-1))",)


@pytest.mark.parametrize("old, new", [
    ('driver="gels").solution', 'driver="gels").residuals'),   # another output
    ('driver="gels").solution', 'driver="gels")'),             # the named tuple kept
    ('torch.linalg.lstsq(a, self', 'torch.linalg.lstsq(a, B=self'),  # an argument by name
])
def test_no_edit_where_the_solution_alone_is_not_read(old, new):
    text = FIT.replace(old, new)
    assert text != FIT
    assert _edits(text) == []


@pytest.mark.torch
@pytest.mark.parametrize("rows, accepted", [(4, True), (6, False)])
def test_the_loop_verifies_it_only_on_a_square_system(tmp_path, rows, accepted):
    root = write_repo(tmp_path / "repo", {"pkg/fit.py": FIT}, CONFIG.replace("ROWS", str(rows)))
    (c,) = _edits(FIT, path="pkg/fit.py")
    verdict = prove(root, "fit", [item("solve", c, FIT, _target())], tmp_path / "work")["solve"]
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        assert verdict["evidence"].startswith("GB0036 gone, 1 graph instead of 2, outputs equal on 2 shape cases"), \
            verdict
        # head's `gels` refuses a NaN in the system, `solve` returns NaN: said, not refused
        assert "(but with one NaN in an input, head raises RuntimeError (" in verdict["evidence"], verdict
        assert "where the edit returns)" in verdict["evidence"]
    else:
        assert verdict["reason"].startswith("the patched model raises: forward(batch=3) raised RuntimeError"), verdict
