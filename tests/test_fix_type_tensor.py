"""PTC115's fix: `t.type(torch.Tensor)` (a break: dynamo cannot pass the class to a tensor
method) as `t.to(device="cpu", dtype=torch.get_default_dtype())`, the same conversion, which
traces. Not safe by construction (the proof runs it): checked here on real torch, values and
dtype, with the default dtype changed too."""
from __future__ import annotations

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths

SRC = """\
import torch
from torch import nn


class LeakyLogDet(nn.Module):
    def forward(self, inputs):
        mask = (inputs < 0).type(
            torch.Tensor)   # a float mask
        return inputs * mask
"""


def _candidates(tmp_path, src: str) -> list:
    (tmp_path / "m.py").write_text(src)
    found = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC115"]
    assert [f.line for f in found] == [7]
    return [c for f in found for c in fix_candidates(f, src)]


def test_the_conversion_is_written_in_place(tmp_path):
    [c] = _candidates(tmp_path, SRC)
    assert (c.start_line, c.end_line, c.safe) == (7, 8, False)
    assert c.lines == ('        mask = (inputs < 0).to(device="cpu", dtype=torch.get_default_dtype())   '
                       '# a float mask',)


def test_no_edit_where_torch_goes_by_another_name(tmp_path):
    src = SRC.replace("import torch\n", "import torch as th\n").replace("torch.Tensor", "th.Tensor")
    assert _candidates(tmp_path, src) == []


@pytest.mark.torch
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_the_edit_traces_and_converts_the_same(tmp_path, default):
    import torch

    [c] = _candidates(tmp_path, SRC)
    fixed = apply_candidate(SRC, c)
    before, after = {}, {}
    exec(compile(SRC, "before", "exec"), before)
    exec(compile(fixed, "after", "exec"), after)
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, default))
    try:
        x = torch.randn(3, 5)
        want = before["LeakyLogDet"]()(x)
        torch._dynamo.reset()
        got = torch.compile(after["LeakyLogDet"](), backend="eager", fullgraph=True)(x)
        assert got.dtype == want.dtype and torch.equal(got, want)
        torch._dynamo.reset()
        with pytest.raises(Exception, match="Unsupported"):
            torch.compile(before["LeakyLogDet"](), backend="eager", fullgraph=True)(x)
    finally:
        torch.set_default_dtype(old)
        torch._dynamo.reset()
