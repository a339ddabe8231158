"""draft_export (the export locator's fallback, pt2bot/smoke/export.py) leaves no files behind.

torch's draft_export logs a structured trace to a new file in <tmp>/export_<user>/ on every
call and never removes it: a machine that ran pt2bot's suite had 440 of them. The locator
points it at a directory of its own and removes that. Real torch, the fixture model whose
`.item()` branch makes export data-dependent.
"""
from __future__ import annotations

import os
import tempfile

import pytest

from pymodule import load_module

pytestmark = pytest.mark.torch

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "models")


def test_draft_export_locates_the_failure_and_leaves_no_trace_file(tmp_path, monkeypatch):
    import torch

    from pt2bot.smoke.export import _draft_location
    from pt2bot.smoke.trace import RepoPaths

    mod = load_module(os.path.join(MODELS, "item_branch.py"), "pt2bot_dtrace")
    torch.manual_seed(0)
    model = mod.ItemBranch().eval()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))   # torch's gettempdir() and ours
    monkeypatch.delenv("TORCH_DTRACE", raising=False)
    path, line, _src, _ftype = _draft_location(model, (torch.randn(4, 8),), {}, None,
                                               RepoPaths(os.path.dirname(MODELS)))
    assert (path, line) == ("models/item_branch.py", 12)
    left = [os.path.relpath(os.path.join(d, f), tmp) for d, _, fs in os.walk(tmp) for f in fs]
    assert left == []
    assert "TORCH_DTRACE" not in os.environ
