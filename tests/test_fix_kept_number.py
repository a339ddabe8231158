"""A number kept a tensor is said to be one (pt2bot/smoke/values.py `compare`): a new user's
`n_tokens = mask.sum().item()`, the loss divided by it, got `n_tokens = mask.sum()`, verified
with "`n_tokens` equal after line 32"; a caller that logs `n_tokens` then reads `tensor(87)`
where head gave 87. The evidence now says so, beside the values (only the function reads the
name, which the recipe makes sure of, so it is not a caveat said first)."""
from __future__ import annotations

import dataclasses

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

LOSS = """\
import torch
from torch import nn


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x, mask):
        per_token = self.lin(x).squeeze(-1) * mask
        n_tokens = mask.sum().item()
        return per_token.sum() / n_tokens
"""
LINE = 12


@pytest.mark.torch
def test_a_number_kept_a_tensor_is_a_caveat(tmp_path):
    config = one_model("loss", "pkg.loss:Loss", "[{name: x, shape: [batch, 5, 4]}, {name: mask, shape: [batch, 5], "
                                                "dtype: int64, low: 1, high: 2}]", "{batch: [2, 3]}")
    root = write_repo(tmp_path / "repo", {"pkg/loss.py": LOSS}, config)
    target = break_target("loss", "m.py", LINE, "GB0124", "Unsupported Tensor.item() call")
    cands = offered(target, LOSS, "")
    kept = [c for c in cands if c.lines and "mask.sum()" in c.lines[0] and ".item()" not in c.lines[0]]
    assert kept, cands
    c = dataclasses.replace(kept[0], path="pkg/loss.py")
    verdict = prove(root, "loss", [item("c", c, LOSS, dict(target, path="pkg/loss.py"))], tmp_path / "work")["c"]
    assert "`n_tokens` equal after line 12 (`n_tokens` a 0-d tensor where head's is a Python int)" in (
        verdict.get("evidence") or ""), verdict
    # only the function reads it (the recipe's condition): not a caveat said first
    assert not verdict.get("caveats"), verdict
