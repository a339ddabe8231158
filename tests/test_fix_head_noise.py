"""A model whose head is not reproducible in part: tntorch's Tucker compression runs CP-ALS from
numpy's unseeded generator, so head's own two runs differ on those results, and the same edit
was refused in one session and verified in the next. Here the model returns, beside what the
fix changes, a draw from numpy's own generator, which the proof's seeding does not fix. The
proof runs head twice, leaves out what head's runs disagree on, says so, and still refuses an
edit that changes what head reproduces."""
from __future__ import annotations

from proofs import break_target, item, offered, one_model, prove, write_repo

NOISY = '''\
import numpy as np
import torch
from torch import nn


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        scale = h.detach().abs().max().item()
        y = h / (scale + 1.0)
        return y, torch.tensor(np.random.default_rng().standard_normal())
'''
SCALE_LINE = 13


def _verdicts(tmp_path, source: str, title: str = "") -> dict:
    config = one_model("noisy", "pkg.noisy:Noisy", "[{shape: [batch, 4]}]", "{batch: [2, 3]}")
    root = write_repo(tmp_path / "repo", {"pkg/noisy.py": source}, config)
    target = break_target("noisy", "pkg/noisy.py", SCALE_LINE, "GB0124", "Unsupported Tensor.item() call")
    cands = offered(target, source, title)
    assert cands, "no candidate for the .item() line"
    items = [item(f"c{i}", c, source, target) for i, c in enumerate(cands)]
    return prove(root, "noisy", items, tmp_path / "work")


def test_what_heads_own_runs_disagree_on_is_left_out_and_said(tmp_path):
    verdicts = _verdicts(tmp_path, NOISY)
    accepted = [v for v in verdicts.values() if v.get("accepted")]
    assert accepted, verdicts
    assert all("outputs equal on 2 shape cases (2 results left out: head's own two runs differ on them)" in v["evidence"]
               for v in accepted), accepted


def test_an_edit_that_changes_what_head_reproduces_is_still_refused(tmp_path):
    """The right edit made wrong (its kept tensor scaled): refused on the output head does
    reproduce, noise or not."""
    import dataclasses

    config = one_model("noisy", "pkg.noisy:Noisy", "[{shape: [batch, 4]}]", "{batch: [2, 3]}")
    root = write_repo(tmp_path / "repo", {"pkg/noisy.py": NOISY}, config)
    target = break_target("noisy", "pkg/noisy.py", SCALE_LINE, "GB0124", "Unsupported Tensor.item() call")
    right = offered(target, NOISY)[0]
    wrong = dataclasses.replace(right, lines=tuple(line.replace("h.detach().abs().max()", "2 * h.detach().abs().max()")
                                                   for line in right.lines))
    assert wrong.lines != right.lines
    verdict = prove(root, "noisy", [item("w", wrong, NOISY, target)], tmp_path / "work")["w"]
    assert not verdict["accepted"] and "outputs differ from head's" in verdict["reason"], verdict


def test_numpys_global_generator_is_seeded_like_torchs(tmp_path):
    """torchcfm pairs a batch by `np.random.choice` over a transport plan: numpy's global
    generator. The proof seeds it as it seeds torch's before every compared call, so head's
    two runs agree and nothing is left out (on the old code: "2 results left out"; with every
    output a draw, nothing could be compared and the edit was refused)."""
    seeded = NOISY.replace("np.random.default_rng().standard_normal()", "np.random.standard_normal()")
    assert seeded != NOISY
    verdicts = _verdicts(tmp_path, seeded)
    accepted = [v for v in verdicts.values() if v.get("accepted")]
    assert accepted, verdicts
    assert all("outputs equal on 2 shape cases" in v["evidence"] and "left out" not in v["evidence"]
               for v in accepted), accepted
