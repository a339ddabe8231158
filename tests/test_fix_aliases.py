"""What equal outputs still differ in: whether the edited function returns its argument itself
(pt2bot/smoke/verify.py `returned_arguments`, `_alias_caveat`). `if (h < -10).any(): h =
h.clamp(min=-10)` returns the caller's own `h` on ordinary values; the branchless
`h = h.clamp(min=-10)` always returns a new tensor. The values are equal and the edit is
verified, but a caller that writes into the result no longer writes into its argument, so the
evidence says so (torchcde's NaN fill, found by an independent re-run of a verified edit).
"""
from __future__ import annotations

import pytest

from pt2bot.smoke.patch import Edit
from pt2bot.smoke.verify import judge
from proofs import break_target, item, offered, one_model, prove, write_repo

CLEAN = """\
import torch
from torch import nn


def clean(h):
    if (h < -10).any():
        h = h.clamp(min=-10)
    return h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return clean(self.proj(x)).relu()
"""
LINE = 6
CONFIG = one_model("net", "pkg.net:Net", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")
TARGET = break_target("net", "pkg/net.py", LINE, "GB0170", "Data-dependent branching")


@pytest.mark.torch
def test_a_new_tensor_where_head_returned_its_argument_is_said(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/net.py": CLEAN}, CONFIG)
    [c] = [c for c in offered(TARGET, CLEAN) if c.lines == ("    h = h.clamp(min=-10)",)]
    verdict = prove(root, "net", [item("branchless", c, CLEAN, TARGET)], tmp_path / "work")["branchless"]
    assert verdict["accepted"] is True, verdict
    assert ("but `clean` returns a new tensor where head returns `h` itself (a caller that writes into "
            "the result no longer writes into it)") in verdict["evidence"], verdict


def test_the_reverse_and_the_same_are_told_apart():
    head = {"graph_count": 2, "graph_breaks": [{"gb": "GB0170", "path": "m.py", "line": 6}]}
    edit = Edit.in_text("m.py", 6, 7, 1, CLEAN)
    base = {"graph_count": 1, "graph_breaks": [], "outputs": [{"shape": {"batch": 2}, "match": True}]}
    target = [dict(TARGET, path="m.py")]

    def evidence(head_returns, patched_returns):
        cand = {**base, "aliases": {"function": "clean", "head": head_returns, "patched": patched_returns}}
        verdict = judge(head, cand, target, edit)
        assert verdict["accepted"] is True, verdict
        return verdict["evidence"]

    assert "returns" not in evidence(["h"], ["h"])
    assert ("but `clean` returns `h` itself, or a view of it, where head returns a new tensor (a caller that "
            "writes into the result now writes into it)") in evidence([], ["h"])
