"""The proof loop on the size and fill-value recipes (pt2bot/rules/size_fixes.py) and on the
wrong variants of them, by a real proof worker on a tiny model with pytorch_geometric's
`to_dense_batch` pattern (a fill value read back with `.item()`, then `new_full`) and mace's
(a product of sizes made through a tensor, passed to `view`). The recipes' candidates are
verified; `.item()` dropped alone (which moves the break to `new_full`), a fill broadcast
with `expand` (every row one memory location) and `int(...)` around the tensor of sizes
(still a break) are refused."""
from __future__ import annotations

import time

import pytest

from pt2bot.config import StaticConfig
from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, break_findings, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from pt2bot.static import check_paths
from proofs import one_model

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        fill = h.min().item() - 1
        out = h.new_full([h.shape[0] * 2, 4], fill)
        out[torch.arange(h.shape[0]) * 2] = h
        out = out.unsqueeze(-1) * h.mean(0)
        r = torch.prod(torch.tensor(out.shape[1:]))
        return out.view(out.shape[0], r)
"""
ITEM, FULL, SIZES, VIEW = 12, 13, 16, 17   # the lines of the two breaks and what feeds them

CONFIG = one_model("net", "pkg.net:Net", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")


def _wrong(start: int, end: int, lines: list[str], title: str) -> Candidate:
    return Candidate(code="PTC101", path="pkg/net.py", start_line=start, end_line=end,
                     lines=tuple(lines), title=title, safe=False)


@pytest.mark.torch
def test_the_loop_verifies_the_size_recipes_and_refuses_their_wrong_variants(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    (item,) = [f for f in found if f.rule == "PTC101" and f.line == ITEM]
    targets = {ITEM: {"kind": "break", "model": "net", "path": "pkg/net.py", "line": ITEM, "gb": "GB0124",
                      "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"},
               VIEW: {"kind": "break", "model": "net", "path": "pkg/net.py", "line": VIEW, "gb": "GB0033",
                      "gb_type": "Data dependent operator"}}
    (fill,) = [c for c in fix_candidates(item, NET) if ".fill_()" in c.title]
    sizes = {}
    for f in break_findings(targets[VIEW], NET, {}):   # no finding on the view's line
        for c in fix_candidates(f, NET):
            sizes.setdefault(c.lines, c)
    numel, inferred = sorted(sizes.values(), key=lambda c: c.rank)
    wrong = {
        "item-alone": (_wrong(ITEM, ITEM, ["        fill = h.min() - 1"], "drop `.item()` alone"), ITEM),
        "expand": (_wrong(ITEM, FULL, ["        fill = h.min() - 1",
                                       "        out = fill.expand([h.shape[0] * 2, 4])"], "expand the fill"), ITEM),
        "int": (_wrong(SIZES, SIZES, ["        r = int(torch.prod(torch.tensor(out.shape[1:])))"], "int()"), VIEW),
    }
    (detached,) = fill.variants
    assert detached.lines[0] == "        fill = h.min().detach() - 1"
    right = {"fill": (fill, ITEM), "fill-detached": (detached, ITEM), "numel": (numel, VIEW)}
    items = [(Proposal(cid=cid, cand=c, original=NET, patched=apply_candidate(NET, c), findings=[], targets=[]),
              [targets[line]]) for cid, (c, line) in {**wrong, **right}.items()]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("net"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))

    alone = verdicts["item-alone"]   # the break moves from `.item()` to `new_full`
    assert alone["accepted"] is False and "GB0033" in alone["reason"] and f":{FULL}" in alone["reason"], alone
    expand = verdicts["expand"]
    assert expand["accepted"] is False, expand
    assert "outputs differ" in expand["reason"] or "raise" in expand["reason"], expand
    still = verdicts["int"]   # `int()` of the tensor is a break too
    assert still["accepted"] is False and "GB0124" in still["reason"], still
    # `.item()` cut the gradient: the kept tensor lets the filled rows' gradient reach `h.min()`
    # and the weights, so only the detached form trains as head did
    plain = verdicts["fill"]
    assert plain["accepted"] is False, plain
    assert plain["reason"].startswith("the parameters' gradients differ from head's on shape case batch=2")
    for cid, head in (("fill-detached", "GB0124 gone"), ("numel", "GB0033 gone")):
        assert verdicts[cid]["accepted"] is True, verdicts[cid]
        assert verdicts[cid]["evidence"].startswith(head), verdicts[cid]
    assert inferred.lines == ("        return out.view(out.shape[0], -1)",)
