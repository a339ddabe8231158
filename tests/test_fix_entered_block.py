"""An `if` rewritten whole into branchless code that does the block's work and selects it
(`s = s * torch.where(m > 5.0, 5.0 / ..., 1.0)` for `if m > 5.0: s = s * (5.0 / m)`). Where head
skips the block, equal outputs show only that the selection keeps the values: a new user's
knowledge-graph scorer never had a score above 5, and the rewrite was posted as verified though
it had never run where the test holds. The proof now watches the block's first line and needs
an input on which head enters it: a shape case, or a guard input."""
from __future__ import annotations

from proofs import break_target, item, offered, one_model, prove, write_repo

SCORER = '''\
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self, gain):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.gain = gain

    def forward(self, x):
        s = self.lin(x) * self.gain
        m = s.abs().max()
        if m > 5.0:
            s = s * (5.0 / m)
        return s
'''
IF_LINE = 14


def _verdicts(tmp_path, gain: float) -> dict:
    config = one_model("scorer", "pkg.scorer:Scorer", "[{shape: [batch, 4]}]", "{batch: [2, 3]}",
                       f"    kwargs: {{gain: {gain}}}\n")
    root = write_repo(tmp_path / "repo", {"pkg/scorer.py": SCORER}, config)
    target = break_target("scorer", "pkg/scorer.py", IF_LINE, "GB0170", "Data-dependent branching")
    cands = [c for c in offered(target, SCORER) if "torch.where" in "\n".join(c.lines)
             and not any(ln.strip().startswith("if ") for ln in c.lines)]
    assert cands, [c.lines for c in offered(target, SCORER)]
    return prove(root, "scorer", [item(f"c{i}", c, SCORER, target) for i, c in enumerate(cands)],
                 tmp_path / "work")


def test_a_rewrite_of_a_block_no_input_enters_is_not_verified(tmp_path):
    verdicts = _verdicts(tmp_path, 0.01)     # scores far below 5: the block never runs
    assert verdicts and not any(v.get("accepted") for v in verdicts.values()), verdicts
    # the safe-divisor form is right where the block runs, and was posted: now refused for this
    # (the plain `torch.where` form is refused on its own, a NaN gradient through `5.0 / m`)
    assert verdicts["c0"]["reason"].startswith(
        f"no shape case or guard input enters the block at line {IF_LINE + 1}, so the rewrite of it "
        "was never compared with head where the `if`'s test holds"), verdicts["c0"]


def test_where_head_enters_the_block_the_rewrite_is_verified_and_says_where(tmp_path):
    verdicts = _verdicts(tmp_path, 100.0)    # every score above 5: every case enters it
    accepted = [v for v in verdicts.values() if v.get("accepted")]
    assert accepted, verdicts
    assert all(f"the block at line {IF_LINE + 1} entered by head on 2 of the 2 shape cases" in v["evidence"]
               for v in accepted), accepted
