"""PTC116's fix: `copy.deepcopy(t)` of a tensor (a break: dynamo does not trace it) as
`t.detach().clone()`, a copy cut from autograd as a deep copy is, which traces. Not safe by
construction (the proof runs it): checked here on real torch, the copy written in place in
segment-anything's `apply_coords_torch` form, and proven by the loop on a model."""
from __future__ import annotations

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths
from proofs import break_target, decided, one_model, write_repo

SRC = """\
from copy import deepcopy

import torch
from torch import nn


class Resize(nn.Module):
    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        coords = deepcopy(coords).to(torch.float)   # scaled in place below
        coords[..., 0] = coords[..., 0] * (64 / 48)
        coords[..., 1] = coords[..., 1] * (64 / 48)
        return coords
"""
LINE = 9


def _candidates(tmp_path, src: str) -> list:
    (tmp_path / "m.py").write_text(src)
    found = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC116"]
    assert [f.line for f in found] == [LINE]
    return [c for f in found for c in fix_candidates(f, src)]


def test_the_copy_is_written_in_place(tmp_path):
    [c] = _candidates(tmp_path, SRC)
    assert (c.start_line, c.end_line, c.safe) == (LINE, LINE, False)
    assert c.lines == ("        coords = coords.detach().clone().to(torch.float)   # scaled in place below",)


def test_an_operand_that_binds_looser_is_parenthesised(tmp_path):
    src = SRC.replace("deepcopy(coords)", "deepcopy(coords * 1)")
    [c] = _candidates(tmp_path, src)
    assert c.lines[0].startswith("        coords = (coords * 1).detach().clone().to(torch.float)")


@pytest.mark.torch
def test_the_edit_traces_copies_and_leaves_the_input_as_it_was(tmp_path):
    import torch

    [c] = _candidates(tmp_path, SRC)
    before, after = {}, {}
    exec(compile(SRC, "before", "exec"), before)
    exec(compile(apply_candidate(SRC, c), "after", "exec"), after)
    for x in (torch.randn(2, 5, 2), torch.randint(0, 48, (1, 3, 2)), torch.randn(4, 2).t()):
        kept = x.clone()
        want = before["Resize"]()(x)
        torch._dynamo.reset()
        got = torch.compile(after["Resize"](), backend="eager", fullgraph=True)(x)
        assert got.dtype == want.dtype and torch.equal(got, want)
        assert torch.equal(x, kept)     # the copy is what the in-place writes change
    torch._dynamo.reset()
    with pytest.raises(Exception, match="deepcopy"):
        torch.compile(before["Resize"](), backend="eager", fullgraph=True)(torch.randn(2, 5, 2))
    torch._dynamo.reset()


CONFIG = one_model("resize", "pkg.m:Resize", "[{name: coords, shape: [batch, points, 2]}]",
                   "{batch: [1, 3], points: [5]}")


@pytest.mark.torch
def test_the_loop_verifies_the_copy(tmp_path):
    import dataclasses

    from pt2bot.reportdata import Report

    root = write_repo(tmp_path / "repo", {"pkg/m.py": SRC}, CONFIG)
    findings = [dataclasses.replace(f, diff="added") for f in
                check_paths(str(root), ["pkg/m.py"], StaticConfig(select=("ALL",)), jobs=1)]
    target = {**break_target("resize", "pkg/m.py", LINE, "GB4198", "Attempted to copy.deepcopy a tensor"),
              "fingerprint": "41980000" * 2}
    fixes = decided(root, [target], findings, Report(head="h" * 40, base="b" * 40,
                                                     findings=tuple(findings))).fixes
    [fix] = [c for c in fixes["candidates"] if c["verified"]]
    assert fix["rule"] == "PTC116" and fix["lines"][0].strip().startswith("coords = coords.detach().clone()")
    assert fix["evidence"].startswith("verified on `resize`: GB4198 gone"), fix
