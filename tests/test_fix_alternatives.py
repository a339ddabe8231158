"""Two verified fixes on different lines that remove the same problems are alternatives, not
two suggestions to apply: a warning with an `.item()` in its text, inside an `if` on a tensor
value. Guarding the warning removes its two breaks; rewriting the `if` to skip the block in
compiled code removes those and the `if`'s own. Each was proven alone against head, so the
review posts the one that removes more and points the other comments at it (two green buttons
for one problem invite applying both, which nobody proved)."""
from __future__ import annotations

import dataclasses

import cmarkgfm
import pytest

from pt2bot.config import StaticConfig
from pt2bot.fixes import Proposal, _summarise
from pt2bot.report.review import failed_fix_line, render_review
from pt2bot.reportdata import ModelDelta, Report
from pt2bot.rules import Candidate, apply_candidate
from pt2bot.static import check_paths
from proofs import decided, one_model, write_repo

PAIR = """\
import warnings

import torch
from torch import nn


class Pair(nn.Module):
    def __init__(self, min_distance: float = 2.0):
        super().__init__()
        self.min_distance = min_distance

    def forward(self, pos):
        d = torch.cdist(pos, pos) + torch.eye(pos.shape[0]) * 1e3
        if d.numel() and d.min() < self.min_distance:
            warnings.warn(f"two atoms are {d.min().item():.3f} apart, closer than "
                          f"min_distance={self.min_distance}")
        return (1.0 / d).sum()
"""
IF, WARN = 14, 15

CONFIG = one_model("pair", "pkg.pair:Pair", "[{name: pos, shape: [atoms, 3]}]", "{atoms: [8]}")


def brk(line: int, gb: str, gb_type: str, path: str = "pkg/pair.py") -> dict:
    return {"kind": "break", "model": "pair", "path": path, "line": line, "gb": gb,
            "gb_type": gb_type, "fingerprint": f"{int(gb[2:]):08x}{line:08x}"}


TARGETS = [brk(IF, "GB0170", "Data-dependent branching"),
           brk(WARN, "GB0007", "Attempted to call function marked as skipped"),
           brk(WARN, "GB0124", "Unsupported Tensor.item() call with capture_scalar_outputs=False")]


# --------------------------------------------------------------------------- no torch

def proposal(cid: str, start: int, end: int, targets: list[int]) -> Proposal:
    src = "x = 1\n" * 20
    cand = Candidate(code="PTC201", path="m.py", start_line=start, end_line=end,
                     lines=("y = 2",) * (end - start + 1), title=cid, safe=False)
    return Proposal(cid=cid, cand=cand, original=src, patched=apply_candidate(src, cand),
                    findings=[], targets=targets,
                    results={"m": {"accepted": True, "evidence": "GB0170 gone"}})


def summarise(*proposals: Proposal) -> dict:
    targets = [brk(line, "GB0170", "Data-dependent branching", path="m.py") for line in (3, 5, 9, 12)]
    return {c["id"]: c for c in _summarise(targets, list(proposals), {}, None, 1.0,
                                           budget_s=10.0)["candidates"]}


def test_the_fix_that_removes_more_is_posted_and_the_other_is_its_alternative():
    out = summarise(proposal("small", 5, 6, [1]), proposal("big", 3, 3, [0, 1]))
    assert out["big"]["verified"] and not out["small"]["verified"]
    assert out["small"]["reason"] == ("an alternative to the verified suggestion at m.py:3, which removes "
                                      "the same (GB0170 at line 5) and GB0170 at line 3 too: only that one "
                                      "is posted")
    assert out["small"]["evidence"] == ""


def test_of_two_that_remove_the_same_the_first_tried_is_posted():
    out = summarise(proposal("first", 5, 5, [1]), proposal("second", 9, 9, [1]))
    assert out["first"]["verified"] and not out["second"]["verified"]
    assert out["second"]["reason"].endswith("which removes the same (GB0170 at line 5): only that one is posted")


def test_fixes_sharing_one_of_their_problems_are_not_both_posted():
    # neither removes all the other does: the second was never proven with the first applied
    out = summarise(proposal("a", 3, 3, [0, 1]), proposal("b", 9, 9, [1, 2]))
    assert out["a"]["verified"] and not out["b"]["verified"]
    assert out["b"]["reason"] == ("it also removes GB0170 at line 5, which the verified suggestion at m.py:3 "
                                  "removes, and the two were not proven together: only that one is posted; "
                                  "apply it and let the review run again")
    # it passed its own proof: the comment says it is not posted, not that it failed
    assert out["b"]["passed"] and out["a"]["passed"]
    assert failed_fix_line(out["b"]).startswith("🔧 Candidate fix, **passed its proof alone, not posted**: b (it also")


def test_fixes_of_different_problems_are_all_posted():
    out = summarise(proposal("a", 3, 3, [0]), proposal("b", 9, 9, [2]), proposal("c", 12, 12, [3]))
    assert all(c["verified"] for c in out.values())


# --------------------------------------------------------------------------- real torch

@pytest.mark.torch
def test_the_guarded_warning_and_the_skipped_block_are_one_suggestion(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/pair.py": PAIR}, CONFIG)
    findings = [dataclasses.replace(f, diff="added") for f in
                check_paths(str(root), ["pkg/pair.py"], StaticConfig(select=("ALL",)), jobs=1)]
    assert sorted((f.rule, f.line) for f in findings) == [("PTC101", WARN), ("PTC106", WARN), ("PTC201", IF)]
    report = decided(root, TARGETS, findings, Report(
        head="h" * 40, base="b" * 40, findings=tuple(findings),
        models=(ModelDelta(name="pair", new_breaks=tuple(TARGETS)),)))
    cands = {c["start_line"]: c for c in report.fixes["candidates"] if c["verified"] or "alternative" in (c["reason"] or "")}
    # both were accepted by the proof; only the `if` rewrite, which removes all three, is posted
    assert cands[IF]["verified"] and cands[IF]["targets"] == [0, 1, 2], report.fixes
    assert not cands[WARN]["verified"]
    assert cands[WARN]["reason"].startswith("an alternative to the verified suggestion at pkg/pair.py:14"), cands[WARN]
    assert [t["fixed_by"] for t in report.fixes["targets"]] == [cands[IF]["id"]] * 3

    comments = render_review(report, lambda path, line: 1 <= line <= 20)["comments"]
    assert sum(c["body"].count("```suggestion") for c in comments) == 1
    by_rule = {c["body"].split("**")[1]: c for c in comments if c["body"].startswith(("❌ **PTC", "⚠️ **PTC"))}
    assert by_rule["PTC201"]["line"] == IF and "fix" in by_rule["PTC201"]
    for rule in ("PTC106", "PTC101"):
        c = by_rule[rule]
        assert c["line"] == WARN and "fix" not in c
        html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
        assert "the suggestion on line 14 fixes this too." in html, c["body"]
        assert "not verified" not in html
