"""A clamp under a test of the largest value: `if h.abs().max() > 1e4: h = h.clamp(-1e4,
1e4)`. Without its branch the clamp is not head's: where one value is NaN the largest value is
NaN, the test fails and head clamps nothing, while the clamp alone still clamps every other
value past the bound. DINO's attention was verified so, and an image with a NaN pixel changed
the outputs of the other images of its batch. The recipe no longer drops such a branch
(`torch.where` on the test instead), and the proof's large-value guard puts 1e6 beside one NaN
too, so the dropped form is refused if anything offers it.
"""
from __future__ import annotations

import pytest

from pt2bot.findings import Finding
from pt2bot.rules import Candidate, fix_candidates
from proofs import break_target, item, one_model, prove, write_repo

ATTN = """\
import torch
from torch import nn


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qk = nn.Linear(8, 8)
        self.pos = nn.Parameter(torch.randn(4, 8))

    def forward(self, x):
        q = self.qk(x + self.pos)
        attn = q @ q.transpose(-2, -1)
        if attn.abs().max() > 1e4:
            attn = attn.clamp(-1e4, 1e4)
        return attn.softmax(-1)
"""
IF = 14


def _finding() -> Finding:
    raw = ATTN.splitlines()[IF - 1]
    return Finding(rule="PTC201", path="pkg/model.py", line=IF, col=raw.index("attn"), severity="warning",
                   message="m", source=raw.strip(), gb="GB0170")


def test_the_recipe_selects_with_where_and_keeps_the_test():
    cands = fix_candidates(_finding(), ATTN)
    assert not any(c.title.startswith("drop the branch") for c in cands), [c.title for c in cands]
    assert "        attn = torch.where(attn.abs().max() > 1e4, attn.clamp(-1e4, 1e4), attn)" in [
        ln for c in cands for ln in c.lines]


@pytest.mark.torch
def test_the_proof_refuses_the_dropped_branch_with_a_nan_beside_large_values(tmp_path):
    import torch

    dropped = Candidate(code="PTC201", path="pkg/model.py", start_line=IF, end_line=IF + 1,
                        lines=("        attn = attn.clamp(-1e4, 1e4)",), title="drop the branch",
                        safe=False, guards=("large",))
    [where] = [c for c in fix_candidates(_finding(), ATTN) if "torch.where" in "".join(c.lines)]
    root = write_repo(tmp_path / "repo", {"pkg/model.py": ATTN},
                      one_model("attn", "pkg.model:Attn", "[{name: x, shape: [batch, 4, 8]}]",
                                "{batch: [2, 3]}"))
    target = break_target("attn", "pkg/model.py", IF, "GB0170", "Data-dependent branching")
    verdicts = prove(root, "attn", [item("dropped", dropped, ATTN, target), item("where", where, ATTN, target)],
                     tmp_path / "work")
    assert verdicts["dropped"]["accepted"] is False
    assert verdicts["dropped"]["reason"].startswith(
        "differs from head on an input with large finite values (1e6 beside one NaN) in `x`"), \
        verdicts["dropped"]
    assert verdicts["where"]["accepted"] is True, verdicts["where"]
    # the model's logits never come near the bound on any shape case: the selected clamp is
    # head's own by construction, and it is compared where the parameter the test reads through
    # `q` is set past it (SAM's mask decoder: "`masks` equal after line 148" read as the clamp
    # compared, where nothing entered it)
    assert (f"the block at line {IF + 1} entered by head with `pos` set to 1e6 and to -1e6"
            in verdicts["where"]["evidence"]), verdicts["where"]
    # what the refusal rests on, in plain torch: one NaN in the first example, and the second
    # example's logits past the bound are clamped by the dropped form only
    attn = torch.tensor([[float("nan"), 0.0], [3e4, 2e4]])
    assert not bool(attn.abs().max() > 1e4)
    assert not torch.equal(attn.clamp(-1e4, 1e4)[1].softmax(-1), attn[1].softmax(-1))


@pytest.mark.torch
def test_the_evidence_says_which_shape_cases_entered_the_selected_block(tmp_path):
    hot = ATTN.replace("q = self.qk(x + self.pos)", "q = self.qk(x + self.pos) * 1e3")
    [where] = [c for c in fix_candidates(_finding(), hot) if "torch.where" in "".join(c.lines)]
    root = write_repo(tmp_path / "repo", {"pkg/model.py": hot},
                      one_model("attn", "pkg.model:Attn", "[{name: x, shape: [batch, 4, 8]}]",
                                "{batch: [2, 3]}"))
    target = break_target("attn", "pkg/model.py", IF, "GB0170", "Data-dependent branching")
    verdict = prove(root, "attn", [item("where", where, hot, target)], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict
    assert f"the block at line {IF + 1} entered by head on all 2 shape cases" in verdict["evidence"], verdict
