"""A library that takes another path in compiled code (`if torch.compiler.is_compiling():`),
on values its eager path handles otherwise: tad-dftd3's C6 lookup, on an atomic number of -1.
An edit that keeps a check in compiled code is compared on the check's refused values compiled,
against head's eager run; there head's own compiled code differs too, and the edit's compiled
run equals head's compiled run. That difference is the library's, not the edit's: the proof
compares with head's compiled run there, and says so."""
from __future__ import annotations

from proofs import break_target, item, offered, one_model, prove, write_repo

CHARGES = '''\
import torch
from torch import nn


class Charges(nn.Module):
    def forward(self, z):
        if torch.compiler.is_compiling():
            w = torch.where(z < 0, torch.zeros_like(z), z)
        else:
            w = torch.where(z < 0, -z, z)
        if (z > 100).any():
            raise ValueError("charge out of range")
        return w * 2
'''


def test_a_difference_head_s_own_compiled_code_has_is_not_the_edit_s(tmp_path):
    config = one_model("charges", "pkg.charges:Charges", "[{shape: [batch, 4], dtype: int64, low: 1, high: 50}]",
                       "{batch: [2, 3]}")
    root = write_repo(tmp_path / "repo", {"pkg/charges.py": CHARGES}, config)
    target = break_target("charges", "pkg/charges.py", 11, "GB0170", "Data-dependent branching")
    cands = offered(target, CHARGES)
    c = next(c for c in cands if "is_compiling" in "\n".join(c.lines))
    verdict = prove(root, "charges", [item("k", c, CHARGES, target)], tmp_path / "work")["k"]
    assert verdict["accepted"], verdict
    assert "head's own compiled code" in verdict["evidence"], verdict["evidence"]
