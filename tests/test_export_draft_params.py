"""draft_export sees the model's real parameters (pt2bot/smoke/export.py, _real_parameters).

draft_export decides a data-dependent branch on values it propagates beside the fake ones;
torch 2.13 and 2.14 leave a parameter's copy of them uninitialised. Which branch it took, and
whether it raised "Invalid NaN comparison" at an `.item()` comparison, then depended on stale
memory: a sharded review and an unsharded one of the same PR disagreed on a shape-advice note.
torch's deterministic mode fills uninitialised memory with NaN, which turns that one-call-in-ten
failure into an every-call one: the locator must still locate the failure, in a process of its
own as in a smoke worker.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.torch

_SCRIPT = textwrap.dedent("""
    import json, sys
    import torch
    from torch import nn
    from torch.export import Dim
    from pt2bot.smoke.export import draft_failures
    from pt2bot.smoke.trace import RepoPaths

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            x = self.lin(x)
            if x.abs().sum().item() >= 0:
                x = x + 1
            return x

    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    torch.manual_seed(0)
    failures = draft_failures(Block(), (torch.randn(4, 8),), {}, {"x": {0: Dim("batch")}},
                              RepoPaths(sys.argv[1]))
    print(json.dumps(failures))
""")


def test_draft_export_branches_on_the_parameters_real_values(tmp_path):
    script = tmp_path / "block.py"
    script.write_text(_SCRIPT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
         os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    failures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert failures is not None, "draft_export raised: it compared a NaN it read from a parameter"
    assert [(f["path"], f["line"]) for f in failures] == [("block.py", 16)]
    assert "x.abs().sum().item() >= 0" in failures[0]["source"]
