"""Masked rows computed everywhere and selected (pt2bot/rules/branch_fixes.py
`_masked_rows_fixes`): pytorch-ood's losses write the OOD samples' rows under `if
contains_unknown(target): unknown = is_unknown(target); loss[unknown] = f(logits[unknown])`.
The test breaks the graph and the boolean index breaks it again; `loss = torch.where(unknown,
f(logits), loss)` does neither. The recipe's text, the code it leaves alone (a value that is not
row by row, a test of something other than the mask, a tensor the caller passed in, a mask made
from what the value reads: torchmetrics' Pearson), then the proof loop on
real torch: the edit verified only once an input on which head skips the block (labels all 0
injected) compared it with head, and refused where none does, or where the value is not row by
row.
"""
from __future__ import annotations

import dataclasses

import pytest

from pt2bot.fixes import break_findings
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from pt2bot.smoke.verify import A_CASE_WOULD
from proofs import item, one_model, prove, write_repo

TITLE = "compute every row and select the masked ones with `torch.where`, with no `if`"

OOD = """\
import torch
from torch import nn


def is_unknown(target):
    return target < 0


def contains_unknown(target):
    return is_unknown(target).any()


class OELoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x, target):
        logits = self.lin(x)
        loss = torch.zeros(logits.shape[0])
        if contains_unknown(target):
            unknown = is_unknown(target)
            loss[unknown] = -(logits[unknown].mean(dim=1) - torch.logsumexp(logits[unknown], dim=1))
        return loss
"""
IF = 21
assert OOD.splitlines()[IF - 1].strip() == "if contains_unknown(target):"
FIXED = ("        unknown = is_unknown(target)",
         "        loss = torch.where(unknown, -(logits.mean(dim=1) - torch.logsumexp(logits, dim=1)), loss)")


def _target(line: int = IF, path: str = "pkg/ood.py") -> dict:
    return {"kind": "break", "model": "ood", "path": path, "line": line, "gb": "GB0170",
            "gb_type": "Data-dependent branching"}


def _rows(text: str, line: int = IF) -> list[Candidate]:
    """The recipe's candidates for dynamo's break on the `if` at `line` (a call as the test has
    no static finding: the review anchors the break itself, pt2bot/fixes.py `break_findings`)."""
    return [c for f in break_findings(_target(line, "m.py"), text, {}) for c in fix_candidates(f, text)
            if c.title.startswith(TITLE)]


def test_the_rows_are_computed_everywhere_and_selected():
    (c,) = _rows(OOD)
    assert (c.start_line, c.end_line, c.lines, c.safe) == (IF, IF + 2, FIXED, False)
    assert "empty" in c.guards
    compile(apply_candidate(OOD, c), "m.py", "exec")


PEARSON = """\
import torch


def pearson(corr_xy, var_x, var_y):
    corrcoef = torch.full_like(corr_xy, float("nan"))
    zero_var_mask = (var_x < 1e-6) | (var_y < 1e-6) | ~torch.isfinite(corr_xy)
    valid_mask = ~zero_var_mask
    if valid_mask.any():
        corrcoef[valid_mask] = (
            (corr_xy[valid_mask] / (var_x[valid_mask] * var_y[valid_mask]).sqrt()).squeeze()
        )
        corrcoef = torch.clamp(corrcoef, -1.0, 1.0)
    return corrcoef
"""


def test_no_edit_where_the_mask_is_made_from_what_the_value_reads():
    # torchmetrics' Pearson: the rows left out are those whose variances are degenerate, where
    # what computed them may have an infinite derivative (an independent re-run: NaN gradients
    # on constant predictions, where head's NaN result had none); the mask two names away
    assert _rows(PEARSON, 8) == []
    assert _rows(CORR, CORR_IF) == []


def test_a_multi_line_value_keeps_its_form_and_reads_the_left_out_rows_as_1():
    # a mask from the labels, a count the value divides by: 0 on the rows left out
    text = """\
import torch


def ratios(scores, target):
    count = target.float()
    out = torch.zeros_like(scores)
    known = target > 0
    if known.any():
        out[known] = (
            (scores[known] / count[known]).squeeze()
        )
        out = torch.clamp(out, -1.0, 1.0)
    return out
"""
    (c,) = _rows(text, 8)
    assert c.lines == ("    out = (",
                       "        torch.where(known, (torch.where(known, scores, 1) / torch.where(known, count, 1))"
                       ".squeeze(), out)",
                       "    )",
                       "    out = torch.clamp(out, -1.0, 1.0)")
    assert c.title == TITLE + "; the rows it leaves out read as 1 first (no inf/NaN there, in gradients either)"


def test_the_rows_read_whole_where_the_value_divides_after_a_reduction():
    # a mean along dim 1 reads rows of more dims than the mask: `torch.where(m, y, 1)` would
    # broadcast the mask against the last dim, so the reads stay whole
    text = OOD.replace("-(logits[unknown].mean(dim=1) - torch.logsumexp(logits[unknown], dim=1))",
                       "logits[unknown].mean(dim=1) / torch.logsumexp(logits[unknown], dim=1)")
    (c,) = _rows(text)
    assert c.lines[1] == ("        loss = torch.where(unknown, logits.mean(dim=1) / torch.logsumexp(logits, dim=1), "
                          "loss)")
    assert c.title == TITLE


@pytest.mark.parametrize("edits", [
    # a mean over the selected rows together: each row's value depends on the others
    [("logits[unknown].mean(dim=1)", "logits[unknown].mean()")],
    [("logits[unknown].mean(dim=1)", "logits[unknown].mean(dim=0)")],
    [("torch.logsumexp(logits[unknown], dim=1)", "torch.logsumexp(logits[unknown], -1)")],
    # a call the recipe cannot tell is row by row
    [("logits[unknown].mean(dim=1)", "head(logits[unknown])")],
    # a test that is not "the mask has an entry": it may fail where the mask has some
    [("if contains_unknown(target):", "if contains_unknown(target[:1]):")],
    # the caller's tensor: head writes into it, the edit would rebind the name
    [("def forward(self, x, target):", "def forward(self, x, target, loss):"),
     ("        loss = torch.zeros(logits.shape[0])\n", "")],
])
def test_no_edit_where_selecting_could_differ(edits):
    text = OOD
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith("if contains_unknown"))
    assert _rows(text, line) == []


CONFIG = one_model("ood", "pkg.ood:OELoss", "[{name: x, shape: [batch, 4]}, {name: target, shape: [batch], dtype: int64, low: -1, high: 3}]", "{batch: [6, 9]}")


@pytest.mark.torch
def test_the_loop_verifies_it_where_labels_with_no_unknown_skip_the_block(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/ood.py": OOD}, CONFIG)
    (rows,) = _rows(OOD)
    rows = dataclasses.replace(rows, path="pkg/ood.py")
    # the same edit with a mean over every row: equal where no row is OOD, not elsewhere
    pooled = dataclasses.replace(rows, lines=(FIXED[0], FIXED[1].replace("logits.mean(dim=1)", "logits.mean()")))
    # (the wrong one first: once a candidate is verified, the others for its target are not tried)
    verdicts = prove(root, "ood", [item("pooled", pooled, OOD, _target()), item("rows", rows, OOD, _target())],
                     tmp_path / "work")
    assert verdicts["rows"]["accepted"] is True, verdicts["rows"]
    assert "GB0170 gone" in verdicts["rows"]["evidence"]
    assert f"the block at line {IF + 1} skipped by head on inputs with an empty mask" in verdicts["rows"]["evidence"]
    # the boolean index inside the block broke the graph too, and the same edit removed it
    assert verdicts["rows"].get("also") == [{"path": "pkg/ood.py", "line": IF + 2, "gb": "GB0036",
                                         "gb_type": "Dynamic shape operator"}], verdicts["rows"]
    assert verdicts["pooled"]["accepted"] is False
    assert verdicts["pooled"]["reason"].startswith("outputs differ from head's on shape case batch="), verdicts["pooled"]


@pytest.mark.torch
def test_the_loop_refuses_it_where_no_input_skips_the_block(tmp_path):
    # the OOD rows are those below 100: no label and no injected value makes the mask empty,
    # so no run compares the edit with head where the test alone decided
    text = OOD.replace("return target < 0", "return target < 100")
    root = write_repo(tmp_path / "repo", {"pkg/ood.py": text}, CONFIG)
    (rows,) = _rows(text)
    rows = dataclasses.replace(rows, path="pkg/ood.py")
    verdict = prove(root, "ood", [item("rows", rows, text, _target())], tmp_path / "work")["rows"]
    assert verdict["accepted"] is False
    assert verdict["reason"] == (f"no shape case or guard input skips the block at line {IF + 1}, so dropping "
                                 "the `if`'s test was never compared with head where the test fails" + A_CASE_WOULD), verdict


CORR = """\
import torch
from torch import nn


class Corr(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        mu, var = h.mean(dim=0), h.var(dim=0)
        out = torch.full_like(var, float("nan"))
        valid = var > 1e-6
        if valid.any():
            out[valid] = mu[valid] / var[valid].sqrt()
        return out
"""
CORR_IF = 15

RATIO = """\
import torch
from torch import nn


class Ratio(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, target):
        h = self.lin(x).sum(dim=1)
        count = target.float()
        out = torch.zeros_like(h)
        known = target > 0
        if known.any():
            out[known] = h[known] / count[known]
        return out
"""
RATIO_IF = 15
RATIO_CONFIG = CONFIG.replace("name: ood", "name: ratio").replace("pkg.ood:OELoss", "pkg.ratio:Ratio").replace(
    "low: -1, high: 3", "low: 0, high: 3")


@pytest.mark.torch
def test_the_rows_left_out_read_1_where_an_empty_mask_would_make_nan_gradients(tmp_path):
    # `h / count` over every row divides by the zero counts of the rows labelled 0, inf, and
    # its gradient there is NaN in the layer (already on a shape case, whose labels hold some
    # 0s), where head's are finite. Read as 1 there, the left-out rows give h / 1 and zero
    # gradients; on labels all 0 (the guard input) head skips the block
    assert RATIO.splitlines()[RATIO_IF - 1].strip() == "if known.any():"
    root = write_repo(tmp_path / "repo", {"pkg/ratio.py": RATIO}, RATIO_CONFIG)
    (rows,) = _rows(RATIO, RATIO_IF)
    assert rows.lines == ("        out = torch.where(known, torch.where(known, h, 1) / torch.where(known, count, 1), "
                          "out)",)
    rows = dataclasses.replace(rows, path="pkg/ratio.py")
    whole = dataclasses.replace(rows, lines=("        out = torch.where(known, h / count, out)",))
    target = {**_target(RATIO_IF, "pkg/ratio.py"), "model": "ratio"}
    # (the wrong one first: once a candidate is verified, the others for its target are not tried)
    verdicts = prove(root, "ratio", [item("whole", whole, RATIO, target), item("rows", rows, RATIO, target)],
                     tmp_path / "work")
    assert verdicts["whole"]["accepted"] is False
    assert "NaN where head's are finite" in verdicts["whole"]["reason"], verdicts["whole"]
    assert verdicts["rows"]["accepted"] is True, verdicts["rows"]
    assert "GB0170 gone" in verdicts["rows"]["evidence"]
    assert "skipped by head on inputs with an empty mask" in verdicts["rows"]["evidence"], verdicts["rows"]


def test_a_break_the_verified_edit_also_removed_is_fixed_by_it_in_the_report():
    """The proof's `also` (head's breaks on the replaced lines that the patched run no longer
    has) makes those targets the candidate's too: the review then says on their lines that the
    suggestion fixes them (pt2bot/report/review.py `fixed_by_text`)."""
    from pt2bot.fixes import Proposal, _summarise

    (rows,) = _rows(OOD)
    inner = {**_target(IF + 2, "m.py"), "gb": "GB0036", "gb_type": "Dynamic shape operator"}
    other = {**inner, "model": "another"}     # the same line on a model the proof did not run
    also = [{"path": "m.py", "line": IF + 2, "gb": "GB0036", "gb_type": "Dynamic shape operator"}]
    p = Proposal(cid="c0", cand=rows, original=OOD, patched=apply_candidate(OOD, rows), findings=[],
                 targets=[0], results={"ood": {"accepted": True, "evidence": "GB0170 gone", "also": also}})
    out = _summarise([{**_target(IF, "m.py")}, inner, other], [p], {}, None, 1.0, budget_s=10.0)
    assert out["candidates"][0]["targets"] == [0, 1]
    assert [t["fixed_by"] for t in out["targets"]] == ["c0", "c0", None]
    p.results["ood"] = {"accepted": True, "evidence": "GB0170 gone"}     # the proof saw it stay
    out = _summarise([{**_target(IF, "m.py")}, inner], [p], {}, None, 1.0, budget_s=10.0)
    assert [t["fixed_by"] for t in out["targets"]] == ["c0", None]
