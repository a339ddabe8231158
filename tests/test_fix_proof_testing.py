"""`pt2bot.testing.verified_fixes`: the proof of fixes in the user's own test process, on a
module in a temp project, with real torch. The print's guard is proven and returned with its
diff; the file on disk is never written."""
from __future__ import annotations

import pytest
from pymodule import load_module

pytestmark = pytest.mark.torch

SOURCE = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        print("h", h.shape)
        return h.relu()
"""


def test_verified_fixes_proves_the_guarded_print(tmp_path):
    import torch

    from pt2bot.testing import verified_fixes

    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "netmod.py"
    path.write_text(SOURCE)
    mod = load_module(path, prefix="fixproof")
    model = mod.Net().eval()
    x = torch.randn(2, 4)

    fixes = verified_fixes(model, x, user_code=str(tmp_path), include_rejected=True)
    [fix] = fixes          # the first candidate is verified; the removal is not needed
    assert fix.verified and (fix.path, fix.start_line, fix.end_line, fix.rule) == (
        "netmod.py", 12, 12, "PTC105")
    assert fix.lines == ("        if not torch.compiler.is_compiling():",
                         '            print("h", h.shape)')
    assert fix.evidence == ("GB0059 gone, 1 graph instead of 2, outputs equal on 1 shape "
                            "case, but compiled code skips the `print` at line 12, which head's "
                            "eager run reaches on the shape case: a compiled run there no longer "
                            "gives it")
    assert "+        if not torch.compiler.is_compiling():" in fix.diff
    assert path.read_text() == SOURCE
    # the model is as it was: the patch was taken out again
    assert type(model).forward.__code__.co_filename == str(path)
    assert "is_compiling" not in type(model).forward.__code__.co_names
