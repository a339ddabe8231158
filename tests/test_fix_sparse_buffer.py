"""A model holding a sparse buffer: whisper keeps `alignment_heads` as a sparse bool tensor
(`register_buffer(..., all_heads.to_sparse())`). The proof compares what the model keeps after
each call, buffers included, and `torch.equal` has no sparse kernel: every candidate on such a
model was refused with "the patched model fails: NotImplementedError: Could not run
'aten::equal' with arguments from the 'SparseCPU' backend", a right `torch.where` included.
"""
from __future__ import annotations

import pytest
import torch

from pt2bot.smoke.inputs import compare_outputs
from proofs import break_target, item, offered, one_model, prove, write_repo

NET = """\
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        heads = torch.zeros(2, 3, dtype=torch.bool)
        heads[1, 1:] = True
        self.register_buffer("alignment_heads", heads.to_sparse(), persistent=False)

    def forward(self, x):
        if torch.isinf(x).any():
            x = x.clamp(min=-1.5)
        return self.proj(x)
"""
LINE = 14
CONFIG = one_model("enc", "pkg.net:Encoder", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")
TARGET = break_target("enc", "pkg/net.py", LINE, "GB0170", "Data-dependent branching")


def test_sparse_tensors_compare_as_the_dense_ones_they_stand_for():
    a = torch.eye(3).to_sparse()
    assert compare_outputs(a, torch.eye(3).to_sparse(), types=True)["match"] is True
    assert compare_outputs(a, (2 * torch.eye(3)).to_sparse(), types=True)["match"] is False
    other = compare_outputs(a, torch.eye(3), types=True)
    assert other["match"] is False and "layout" in other["message"]


@pytest.mark.torch
def test_a_model_with_a_sparse_buffer_gets_its_fix_verified(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/net.py": NET}, CONFIG)
    [c] = [c for c in offered(TARGET, NET) if "torch.where" in c.lines[-1]]
    verdict = prove(root, "enc", [item("where", c, NET, TARGET)], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict
