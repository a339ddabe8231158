"""A line of a TorchScript function cannot be watched (pt2bot/smoke/patch.py `watchable`):
eager runs it in TorchScript's interpreter, where no Python line runs, while dynamo traces its
Python source and breaks there. geoopt's weighted midpoint is `@torch.jit.script`; the proof
said "no shape case enters the block" of a block both shape cases entered. Now the candidate
is refused for what it is: which inputs reach the line cannot be observed.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, one_model, prove, write_repo

NET = """\
import torch
from torch import nn


@torch.jit.script
def shrink(x):
    if bool((x < 0).any()):
        y = x.relu()
    else:
        y = x.clamp(min=0.0)
    return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return shrink(self.lin(x) - 10.0)
"""
IF = 7
assert NET.splitlines()[IF - 1].strip() == "if bool((x < 0).any()):"
CONFIG = one_model("net", "pkg.net:Net", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_an_arm_of_a_torchscript_function_is_not_said_to_be_unreached(tmp_path):
    # every shape case runs the `if` arm (all values below 0); keeping the `else` arm drops it
    root = write_repo(tmp_path / "repo", {"pkg/net.py": NET}, CONFIG)
    keep = Candidate(code="PTC201", path="pkg/net.py", start_line=IF, end_line=IF + 3,
                     lines=("    y = x.clamp(min=0.0)",), title="keep the `else` arm", safe=False)
    target = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": IF, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    verdict = prove(root, "net", [item("keep", keep, NET, target)], tmp_path / "work")["keep"]
    assert verdict["accepted"] is False
    assert verdict["reason"] == ("`shrink` runs as TorchScript in eager, where no Python line of it "
                                 f"runs, so which inputs reach line {IF + 1} cannot be observed"), verdict
