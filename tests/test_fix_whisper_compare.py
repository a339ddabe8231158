"""What the proof compares, from whisper's first hour. Whisper keeps `alignment_heads` as a
sparse bool tensor (`register_buffer(..., all_heads.to_sparse())`); the proof compares what the
model keeps after each call, buffers included, and `torch.equal` has no sparse kernel: every
candidate on such a model was refused with "the patched model fails: NotImplementedError:
Could not run 'aten::equal' with arguments from the 'SparseCPU' backend", a right `torch.where`
included. And its text decoder's logits can hold no finite value as built (a positional
embedding left `torch.empty`), where "outputs equal" compared NaN with NaN.
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


# whisper's TextDecoder keeps its positional embedding `torch.empty` until weights are loaded:
# built from the source, its logits can be NaN or inf on every shape case, and an edit's
# "outputs equal" there compared NaN with NaN
BLANK = """\
import torch
from torch import nn


class Blank(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("pos", torch.full((4,), float("nan")))

    def forward(self, x):
        h = self.proj(x)
        if h.sum() > 0:
            h = h * 2
        return h + self.pos
"""
BLANK_CONFIG = one_model("blank", "pkg.net:Blank", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_outputs_with_no_finite_value_verify_nothing(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/net.py": BLANK}, BLANK_CONFIG)
    target = break_target("blank", "pkg/net.py", 13, "GB0170", "Data-dependent branching")
    [c] = [c for c in offered(target, BLANK) if "torch.where" in c.lines[-1]]
    verdict = prove(root, "blank", [item("where", c, BLANK, target)], tmp_path / "work")["where"]
    assert verdict["accepted"] is False
    assert verdict["reason"] == ("head's outputs are NaN throughout on every shape case, so equal outputs "
                                 "show nothing of the edit"), verdict


def test_a_case_with_no_finite_output_is_said_in_the_evidence():
    from pt2bot.smoke.patch import Edit
    from pt2bot.smoke.verify import judge

    head = {"graph_count": 2, "phase_errors": {}, "outputs": [],
            "breaks": [{"gb": "GB0170", "gb_type": "Data-dependent branching", "path": "m.py", "line": 3}]}
    rows = [{"shape": {"batch": 2}, "match": True}, {"shape": {"batch": 3}, "match": True, "blank": "nan"}]
    cand = {"graph_count": 1, "phase_errors": {}, "outputs": rows, "breaks": []}
    target = {"kind": "break", "model": "m", "path": "m.py", "line": 3, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    v = judge(head, cand, [target], Edit(path="m.py", start_line=3, end_line=4, new_lines=1))
    assert v["accepted"] is True
    assert ("outputs equal on 2 shape cases (1 of them with no finite value on head: only where its NaN "
            "and inf fall compared there)") in v["evidence"], v
    # NaN throughout on every case: nothing is shown
    cand["outputs"] = [dict(r, blank="nan") for r in rows]
    assert judge(head, cand, [target], Edit(path="m.py", start_line=3, end_line=4, new_lines=1))["accepted"] is False
