"""Uninitialised memory on a guard input (pt2bot/smoke/verify.py `guard_checks`, run under
pt2bot/smoke/values.py `defined_memory`): torchdiffeq's fixed-grid solver allocates its
solution with `torch.empty` and, on the invalid time grid the proof injects to exercise its
`assert`, leaves rows it never writes. Head's run and the candidate's then held whatever the
allocator left there, so the check kept in compiled code (eager unchanged) was refused for
"differs from head", garbage against garbage. Both runs now fill uninitialised memory alike.
"""
from __future__ import annotations

import pytest

from pt2bot.fixes import break_findings
from pt2bot.rules import fix_candidates
from proofs import item, one_model, prove, write_repo

FILL = """\
import torch
from torch import nn


def fill(y: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    out = torch.empty(4, y.shape[-1])
    idx = torch.arange(4) * (t > 0).long()
    out.index_copy_(0, idx, y[:4] * t.unsqueeze(-1))
    assert t.min() > -5 and t.max() < 1e4, "t out of range"
    return out


class Fill(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return fill(self.lin(x), x[:4, 0].abs() + 0.1)
"""
LINE = 9
CONFIG = one_model("fill", "pkg.fill:Fill", "[{name: x, shape: [batch, 3]}]", "{batch: [4, 6]}")


@pytest.mark.torch
def test_a_check_kept_in_compiled_code_is_not_refused_for_memory_nobody_wrote(tmp_path):
    assert FILL.splitlines()[LINE - 1].strip().startswith("assert t.min() > -5 and")
    target = {"kind": "break", "model": "fill", "path": "pkg/fill.py", "line": LINE, "gb": "GB0170",
              "gb_type": "Data-dependent assertion"}
    (kept,) = [c for f in break_findings(target, FILL, {}) for c in fix_candidates(f, FILL)
               if "_assert_async" in "\n".join(c.lines)][:1]
    root = write_repo(tmp_path / "repo", {"pkg/fill.py": FILL}, CONFIG)
    verdict = prove(root, "fill", [item("kept", kept, FILL, target)], tmp_path / "work")["kept"]
    assert verdict["accepted"] is True, verdict
