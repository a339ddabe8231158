"""A bin count with a fixed number of bins (pt2bot/rules/dynamic_output_shape.py
`_counted_bins_fixes`, offered for PTC304): `bincount`'s output has `max(minlength, x.max() + 1)`
elements, a size read from the data, so dynamo breaks the graph (GB0036). X-MoE's maintainers
counted the tokens per expert with `scatter_add_` into `num_experts` zeros instead: the same
counts where every value is below the bin count, as an expert index from `topk` is. The recipe's
text and the code it leaves alone, then the proof loop on real torch: verified on a router whose
indices stay below the bin count, refused on one whose values reach past it (`bincount` grows
its output there, `scatter_add_` raises).
"""
from __future__ import annotations

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

ROUTER = """\
import torch
from torch import nn


class Router(nn.Module):
    def __init__(self, experts=4):
        super().__init__()
        self.gate = nn.Linear(8, 4)
        self.num_experts = experts

    def forward(self, x):
        logits = self.gate(x)
        top = logits.topk(2, dim=-1).indices
        counts = top.reshape(-1).bincount(minlength=self.num_experts)
        return logits, counts
"""
LINE = 14
assert ROUTER.splitlines()[LINE - 1].strip().startswith("counts = ")
FIXED = ("        counts = torch.zeros(self.num_experts, dtype=torch.long, device=top.device)"
         ".scatter_add_(0, top.reshape(-1).long(), torch.ones_like(top.reshape(-1), dtype=torch.long))")
CONFIG = one_model("router", "pkg.router:Router", "[{name: x, shape: [batch, 8]}]", "{batch: [3, 5]}",
                   extra="    kwargs: {experts: EXPERTS}\n")


def _target(line: int = LINE, path: str = "pkg/router.py") -> dict:
    return break_target("router", path, line, "GB0036", "Dynamic shape operator")


def _edits(text: str, line: int = LINE, path: str = "m.py") -> list:
    return offered(_target(line, path), text, "`scatter_add_`")


def test_the_counts_are_scattered_into_the_bins():
    (c,) = _edits(ROUTER)
    assert (c.start_line, c.end_line, c.lines, c.safe, c.guards) == (LINE, LINE, (FIXED,), False, ())
    assert c.title.startswith("count into `self.num_experts` bins with `scatter_add_`")
    assert "past it `bincount` grows its output" in c.title
    compile(apply_candidate(ROUTER, c), "m.py", "exec")
    fn = ROUTER.replace("top.reshape(-1).bincount(minlength=self.num_experts)",
                        "torch.bincount(top.flatten(), minlength=len(logits) * 2)")
    (c,) = _edits(fn)
    assert c.lines == ("        counts = torch.zeros(len(logits) * 2, dtype=torch.long, device=top.device)"
                       ".scatter_add_(0, top.flatten().long(), torch.ones_like(top.flatten(), dtype=torch.long))",)


@pytest.mark.parametrize("call", [
    "top.reshape(-1).bincount()",                                      # no bin count: its size is the data's
    "torch.bincount(top.reshape(-1), logits[:, 0], 4)",                # weights: another dtype
    "top.reshape(-1).bincount(weights=logits.flatten(), minlength=4)",
    "torch.bincount(top.reshape(-1), minlength=int(logits.argmax()))",  # a bin count read from the data
    "top.topk(1).indices.reshape(-1).bincount(minlength=4)",           # `x` computed by a call, written twice
])
def test_no_edit_where_the_counts_are_not_those_bins(call):
    assert _edits(ROUTER.replace("top.reshape(-1).bincount(minlength=self.num_experts)", call)) == []


@pytest.mark.torch
@pytest.mark.parametrize("experts, accepted", [(4, True), (2, False)])
def test_the_loop_verifies_it_only_where_the_values_stay_below_the_bins(tmp_path, experts, accepted):
    root = write_repo(tmp_path / "repo", {"pkg/router.py": ROUTER}, CONFIG.replace("EXPERTS", str(experts)))
    (c,) = _edits(ROUTER, path="pkg/router.py")
    verdict = prove(root, "router", [item("bins", c, ROUTER, _target())], tmp_path / "work")["bins"]
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        assert verdict["evidence"].startswith("GB0036 gone, outputs equal on 2 shape cases"), verdict
    else:
        # two experts' bins, indices up to 3: head's bincount grows to four, the scatter raises
        assert verdict["reason"].startswith("the patched model raises: forward(batch=3) raised RuntimeError: "
                                            "index 2 is out of bounds"), verdict
