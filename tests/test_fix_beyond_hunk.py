"""An edit that reaches past the lines of one hunk of the diff: proven, and said as code to
apply by hand, never a suggestion block (pt2bot/fixes.py `_outside`). A new user's PR
windowed the intensities over the batch, `lo, hi = x.min().item(), x.max().item()`, and
returned zeros for a blank input: the edit that keeps one graph selects that return over the
rest of `forward`, lines the PR did not write. The review used to drop it unproven ("is not
inside one hunk of the diff"); a suggestion cannot replace those lines, but the author can,
and a proven edit is worth giving."""
from __future__ import annotations

import json
import re

import cmarkgfm
import pytest
from gitrepo import GitRepo

from pt2bot.cli import main
from pt2bot.fixes import Proposal, _summarise
from pt2bot.report.review import failed_fix_line
from pt2bot.report.summary import fix_target_line
from pt2bot.rules import Candidate, apply_candidate

# --------------------------------------------------------------------------- no torch


def _proposal(cid: str, outside: bool, accepted: bool) -> Proposal:
    src = "x = 1\n" * 20
    cand = Candidate(code="PTC101", path="m.py", start_line=3, end_line=9, lines=("y = @w",) * 7,
                     title="keep `lo` and `hi` tensors", safe=False)
    return Proposal(cid=cid, cand=cand, original=src, patched=apply_candidate(src, cand), findings=[],
                    targets=[0], outside=outside,
                    results={"m": {"accepted": accepted, "evidence": "GB0124 gone",
                                   "reason": None if accepted else "outputs differ"}})


TARGET = {"kind": "break", "model": "m", "path": "m.py", "line": 3, "gb": "GB0124", "gb_type": "item",
          "fingerprint": "0000007c00000003"}


def test_a_passed_edit_beyond_the_hunk_is_no_fix_but_keeps_what_it_proved():
    out = _summarise([TARGET], [_proposal("c0", True, True)], {}, None, 1.0, budget_s=10.0)
    [c], [t] = out["candidates"], out["targets"]
    assert (c["verified"], c["passed"], c["outside_diff"]) == (False, True, True)
    assert c["evidence"] == "verified on `m`: GB0124 gone"
    assert c["reason"].startswith("verified, but the edit (lines 3-9) reaches past the lines of one hunk")
    assert (t["fixed_by"], t["verified_outside"], t["reason"]) == (None, "c0", c["reason"])
    # the comment: what was proven and the lines as code, no suggestion block
    body = failed_fix_line(c)
    assert body.startswith("🔧 **Verified edit, beyond the PR's lines** (not a suggestion: it replaces "
                           "lines 3-9, past this hunk of the diff)")
    assert "```suggestion" not in body
    block = re.search(r"\n```python\n(.*?)\n```$", body, re.S).group(1)
    assert block.split("\n") == ["y = @w"] * 7      # verbatim: no zero-width space after `@`
    html = cmarkgfm.github_flavored_markdown_to_html(body)
    assert "<strong>Verified edit, beyond the PR's lines</strong>" in html and "GB0124 gone" in html
    assert "): an edit beyond the PR's lines, verified, but the edit (lines 3-9)" in fix_target_line(t)
    assert "no verified fix" not in fix_target_line(t)
    # an edit inside the hunk that passed is the fix; a refused one beyond it is just refused
    inside = _summarise([TARGET], [_proposal("c0", False, True)], {}, None, 1.0, budget_s=10.0)
    assert inside["candidates"][0]["verified"] and "outside_diff" not in inside["candidates"][0]
    refused = _summarise([TARGET], [_proposal("c0", True, False)], {}, None, 1.0, budget_s=10.0)
    [c] = refused["candidates"]
    assert (c["passed"], c["evidence"]) == (False, "")
    assert c["reason"].startswith("outputs differ (on `m`); the edit (lines 3-9) reaches past")
    assert "verified_outside" not in refused["targets"][0]


# --------------------------------------------------------------------------- real torch

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: window
    entry: pkg.window:Window
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
run: {backend: eager, latency: false, timeout_s: 300}
fixes: {budget_s: 200}
"""
BASE = """\
import torch
from torch import nn


class Window(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.proj(x))
        h = h + 1
        nz = h.nonzero()   # a break on base too (GB0036), in the lines the edit repeats
        h = torch.tanh(h)
        return self.head(h)
"""
HEAD = BASE.replace("""    def forward(self, x):
""", """    def forward(self, x):
        lo, hi = x.min().item(), x.max().item()
        if hi - lo < 1e-6:
            return torch.zeros(x.shape[0], self.head.out_features, device=x.device)
        x = (x - lo) / (hi - lo)
""")


@pytest.mark.torch
def test_the_review_proves_it_and_gives_the_lines_in_the_comment(tmp_path, monkeypatch):
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/window.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/window.py", HEAD)
    repo.commit("pr")
    out = tmp_path / "out"
    monkeypatch.chdir(repo.path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    main(["review", "--base", "main", "--out", str(out)])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    review = json.loads((out / "review.json").read_text(encoding="utf-8"))
    fixes = report["fixes"]
    passed = [c for c in fixes["candidates"] if c.get("outside_diff") and c["passed"]]
    assert len(passed) == 1, fixes
    [beyond] = passed
    # to the end of forward, two lines past the hunk's three lines of context
    assert (beyond["start_line"], beyond["end_line"]) == (12, 20)
    assert beyond["evidence"].startswith("verified on `window`: GB0124 gone"), beyond
    assert report["counts"]["fixes_verified"] == 0
    [target] = [t for t in fixes["targets"] if t["line"] == 12]
    assert target["verified_outside"] == beyond["id"] and target["fixed_by"] is None
    [comment] = [c for c in review["comments"] if "Verified edit, beyond the PR's lines" in c["body"]]
    assert "fix" not in comment and "```suggestion" not in comment["body"]
    block = re.search(r"\n```python\n(.*?)\n```", comment["body"], re.S).group(1)
    assert block.split("\n") == beyond["lines"]
    # applied by hand, the lines make head's file one that parses
    lines = HEAD.splitlines()
    compile("\n".join(lines[:11] + beyond["lines"] + lines[20:]) + "\n", "window.py", "exec")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "1 more problem has a verified edit that reaches past the PR's lines" in summary
    # SARIF's fixes replace any lines: the edit is one there, with what it proved
    sarif = json.loads((out / "results.sarif").read_text(encoding="utf-8"))
    fixed = [r for r in sarif["runs"][0]["results"] if r.get("fixes")]
    assert fixed and fixed[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["deletedRegion"]["startLine"] == 12


def test_the_lines_to_copy_cannot_close_their_block_nor_forge_a_marker():
    """The lines come from the PR's own code (a fork's): a backtick run in them must not close
    the block and turn the rest into Markdown, and a pt2bot marker in them must not be one the
    publisher would find; the code itself stays verbatim, as a suggestion block's does."""
    import cmarkgfm

    from pt2bot.report.markdown import MARKER_PREFIX

    lines = ["    s = '```'  # @team", f"    # {MARKER_PREFIX}fp=0000000000000000 -->",
             "    <img src=x onerror=alert(1)>"]
    c = {"outside_diff": True, "passed": True, "start_line": 3, "end_line": 5, "path": "m.py",
         "lines": lines, "title": "t", "evidence": "GB0124 gone", "verified": False}
    body = failed_fix_line(c)
    html = cmarkgfm.github_flavored_markdown_to_html(body)
    assert "<img" not in html and html.count("<pre") == 1 and "&lt;img src=x" in html
    assert MARKER_PREFIX not in body.split("become:", 1)[1]
    assert "    s = '```'  # @team" in body     # verbatim: no zero-width space after the `@`
