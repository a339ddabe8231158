"""A number read with `.item()` and passed on to the project's own function (tntorch's rounding:
`delta = delta.item()` then `tn.truncated_svd(M, delta=delta)`) kept as a tensor, detached as
`.item()` left it and 0-d as the number was (pt2bot/rules/scalar_fixes.py `_passed_on`). The static tests of its text are
in tests/test_fixes.py; here the proof loop decides: verified where the callee only compares
and scales by it, refused where the callee makes a condition of it (the break moves there).
"""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

MODEL = """\
import torch
from torch import nn

from pkg import ops


class Round(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        bound = 0.5 * h.norm() / h.shape[0]
        bound = bound.item()
        return ops.truncate(h, bound) * 2
"""
LINE = 15
assert MODEL.splitlines()[LINE - 1].strip() == "bound = bound.item()"
# the callee keeps the entries at least `bound` away from 0: tensor arithmetic with a tensor
# bound too; or decides on it in Python, a new break where head's number was no break
OPS = {
    "compares": "import torch\n\n\ndef truncate(h, bound):\n    return torch.where(h.abs() >= bound, h, h * 0)\n",
    "branches": "def truncate(h, bound):\n    if bound > 0.1:\n        return h * 0.5\n    return h\n",
}
CONFIG = one_model("round", "pkg.model:Round", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 5]}")


@pytest.mark.torch
@pytest.mark.parametrize("ops, accepted", [("compares", True), ("branches", False)])
def test_the_loop_verifies_it_where_the_callee_takes_a_tensor(tmp_path, ops, accepted):
    root = write_repo(tmp_path / "repo", {"pkg/model.py": MODEL, "pkg/ops.py": OPS[ops]}, CONFIG)
    target = break_target("round", "pkg/model.py", LINE, "GB0124", "Unsupported Tensor.item() call")
    (c,) = offered(target, MODEL, "keep the tensor")
    assert c.lines == ("        bound = bound.detach().reshape(())",)
    verdict = prove(root, "round", [item("round", c, MODEL, target)], tmp_path / "work")["round"]
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        assert verdict["evidence"].startswith("GB0124 gone"), verdict
    else:
        assert verdict["reason"].startswith("a new graph break: GB0170 at pkg/ops.py:2"), verdict
