"""The proof loop on the candidates the recipes write (not hand-written ones): a tiny model
with a masked write over the leading dimensions (`e[labels == 0] += w`, as monai's vista3d
writes it) and an integer draw read back with `int(...item())`, its candidates taken from
`fix_candidates` on the model's own file, proven by a real proof worker. The plain
`torch.where` form of the masked write is wrong for that mask and the loop refuses it; the
reshaped form and the kept draw are verified."""
from __future__ import annotations

import dataclasses
import time

import pytest

from pt2bot.config import StaticConfig
from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths
from proofs import one_model

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("w", torch.linspace(-1, 1, 8))

    def forward(self, x):
        h = self.lin(x)
        e = h.unsqueeze(1).repeat(1, 2, 1)
        labels = (h[:, :2] > 0).long()
        e[labels == 0] += self.w
        k = int(torch.randint(3, (1,)).item())
        return e.sum(1) * (k + 1)
"""
WRITE, DRAW = 15, 16   # the lines of the two breaks

CONFIG = one_model("net", "pkg.net:Net", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 4]}")


@pytest.mark.torch
def test_the_loop_refuses_the_wrong_form_and_verifies_the_right_ones(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    by_line = {f.line: f for f in found if f.rule in ("PTC304", "PTC101")}
    targets = {WRITE: {"kind": "break", "model": "net", "path": "pkg/net.py", "line": WRITE, "gb": "GB0036",
                       "gb_type": "Dynamic shape operator"},
               DRAW: {"kind": "break", "model": "net", "path": "pkg/net.py", "line": DRAW, "gb": "GB0124",
                      "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}}
    (reshaped,) = fix_candidates(by_line[WRITE], NET)   # the labels' mask: the leading dims' form only
    # the plain form, offered before the recipe read the mask's shape, tried for the proof's refusal
    plain = dataclasses.replace(reshaped, lines=("        e.copy_(torch.where(labels == 0, e + self.w, e))",))
    cands = [(f"{WRITE}-0", plain, WRITE), (f"{WRITE}-1", reshaped, WRITE)]
    cands += [(f"{DRAW}-{i}", c, DRAW) for i, c in enumerate(fix_candidates(by_line[DRAW], NET))]
    items = [(Proposal(cid=cid, cand=cand, original=NET, patched=apply_candidate(NET, cand), findings=[],
                       targets=[]), [targets[line]]) for cid, cand, line in cands]
    assert [p.cid for p, _ in items] == [f"{WRITE}-0", f"{WRITE}-1", f"{DRAW}-0"]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("net"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))

    plain = verdicts[f"{WRITE}-0"]   # torch.where(labels == 0, ...) cannot broadcast a (B, 2) mask on (B, 2, 8)
    assert plain["accepted"] is False
    assert plain["reason"].startswith("the patched model raises: forward(batch=2) raised RuntimeError"), plain
    reshaped = verdicts[f"{WRITE}-1"]
    assert reshaped["accepted"] is True, reshaped
    assert reshaped["evidence"].startswith("GB0036 gone")
    draw = verdicts[f"{DRAW}-0"]
    assert draw["accepted"] is True, draw
    assert draw["evidence"].startswith("GB0124 gone")


STEP_NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        y = torch.zeros_like(h)
        m = h > 0.0
        y[m] = (-1 / h[m]).exp()
        return y * 2
"""
STORE = 14


@pytest.mark.torch
def test_the_loop_verifies_a_masked_write_of_computed_values_and_refuses_one_without_the_mask(tmp_path):
    """e3nn's soft_unit_step in a model: the recipe's `torch.where` form, `h`'s unselected
    elements set to 1.0 first, is verified (GB0036 gone, head's outputs); the same edit without
    the mask (`y = (-1 / h).exp()`, also without the break) differs from head and is
    refused."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(STEP_NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    (finding,) = [f for f in found if f.rule == "PTC304" and f.line == STORE]
    (plain,) = fix_candidates(finding, STEP_NET)
    wrong = plain.__class__(**{**plain.__dict__, "lines": ("        y = (-1 / h).exp()",)})
    target = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": STORE, "gb": "GB0036",
              "gb_type": "Dynamic shape operator"}
    items = [(Proposal(cid=cid, cand=c, original=STEP_NET, patched=apply_candidate(STEP_NET, c), findings=[],
                       targets=[]), [target])
             for cid, c in (("wrong", wrong), ("plain", plain))]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("net"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["wrong"]["accepted"] is False
    assert verdicts["wrong"]["reason"].startswith("outputs differ from head's"), verdicts["wrong"]
    assert verdicts["plain"]["accepted"] is True, verdicts["plain"]
    assert verdicts["plain"]["evidence"].startswith("GB0036 gone")
    assert "torch.where(m, h, 1.0)" in plain.lines[0], plain.lines


# RoMa's shortest-arc flip: the mask indexes the rows of a (batch, 4) tensor, and reads a
# column to do it; indexing reads the same elements twice, so the leading-dimensions form is
# offered (the plain form cannot broadcast a (batch,) mask over (batch, 4))
ROWS = NET.replace("""        h = self.lin(x)
        e = h.unsqueeze(1).repeat(1, 2, 1)
        labels = (h[:, :2] > 0).long()
        e[labels == 0] += self.w
        k = int(torch.randint(3, (1,)).item())
        return e.sum(1) * (k + 1)
""", """        quat = self.lin(x)
        quat[quat[:, 3] < 0] *= -1
        return quat * 2
""")
FLIP = 13


@pytest.mark.torch
def test_a_row_mask_that_indexes_gets_the_leading_dimensions_form_verified(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(ROWS)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    (f,) = [f for f in found if f.rule == "PTC304" and f.line == FLIP]
    (lead,) = fix_candidates(f, ROWS)
    assert lead.lines == (
        "        quat.copy_(torch.where((quat[:, 3] < 0).reshape((quat[:, 3] < 0).shape + (1,) * "
        "(quat.dim() - (quat[:, 3] < 0).dim())), quat * (-1), quat))",)
    # the plain form, offered before the mask's shape was read: the proof refuses it here, but
    # on a square matrix it computes, over the columns (see tests/test_fixes_torch.py)
    plain = dataclasses.replace(lead, lines=("        quat.copy_(torch.where(quat[:, 3] < 0, quat * (-1), quat))",))
    cands = [plain, lead]
    target = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": FLIP, "gb": "GB0036",
              "gb_type": "Dynamic shape operator"}
    items = [(Proposal(cid=f"c{i}", cand=c, original=ROWS, patched=apply_candidate(ROWS, c), findings=[],
                       targets=[]), [target]) for i, c in enumerate(cands)]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("net"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["c0"]["accepted"] is False and "must match the size" in verdicts["c0"]["reason"], verdicts
    assert verdicts["c1"]["accepted"] is True, verdicts["c1"]
