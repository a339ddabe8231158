"""Sibling candidates: several findings in one statement, each with an edit of the whole
statement that rewrites only its own part (ColorJitter's list of `f(img) if (p != 0).any()
else img` lambdas). Alone each leaves its siblings breaking inside the replaced lines and the
proof rejects it; pt2bot/fixes.py offers their changes together as one more candidate, tried
first and targeting all their targets, and review.json posts its suggestion once. Edits that
overlap (an `if` around a ternary) are not combined: of those, only one is posted.

The proof runs here in a real proof worker on tiny models (real torch, eager backend), with
the findings of the static check on the models' own file and the candidates the recipes
write for them.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import time

import cmarkgfm
import pytest

from pt2bot.config import StaticConfig
from pt2bot.configfile.schema import build_config
from pt2bot.fixes import (ProofSetting, Proposal, _prove_targets, compose_siblings, decide,
                          gather, order, prove_on_model)
from pt2bot.report.review import render_review
from pt2bot.reportdata import ModelDelta, Report
from pt2bot.results import ResultsFile
from pt2bot.rules import apply_candidate
from pt2bot.static import check_paths
from proofs import item, prove

NET = """\
import torch
from torch import nn


class Jitter(nn.Module):
    def forward(self, x, b, c):
        transforms = [
            lambda img: (
                img + b.view(-1, 1)
                if (b != 0).any()
                else img
            ),
            lambda img: img * c.view(-1, 1) if (c != 1).any() else img,
        ]
        for t in transforms:
            x = t(x)
        return x


class Nested(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2 if x.mean() > 1 else x
        else:
            y = x
        return y


class Prefix(nn.Module):
    def forward(self, x):
        lengths = (x > 0).sum(1)
        mask = torch.zeros(x.shape[0], x.shape[1], dtype=torch.bool)
        for i in range(x.shape[0]):
            mask[i, :lengths[i]] = True
        return torch.where(mask, x, 0.0)
"""
# where dynamo (torch 2.13) breaks: a multi-line ternary on its first line, PTC201 on the
# test's line below it
FIRST, SECOND = 9, 13          # the two ternaries in Jitter's list (PTC201 on 10 and 13)
OUTER, INNER = 22, 23          # Nested's `if` and the ternary inside it
STATEMENT = (7, 14)            # `transforms = [...]`
LOOP, WRITE = 33, 34           # Prefix's loop and the write dynamo breaks on (GB0124)
VECTORISED = ("        mask[:x.shape[0]][torch.arange(mask.shape[1], device=mask.device) < "
              "lengths[:x.shape[0], None]] = True")
BOTH = ["        transforms = [",
        "            lambda img: (",
        "                torch.where((b != 0).any(), img + b.view(-1, 1), img)",
        "            ),",
        "            lambda img: torch.where((c != 1).any(), img * c.view(-1, 1), img),",
        "        ]"]

CONFIG = """\
version: 1
models:
  - name: jitter
    entry: pkg.net:Jitter
    inputs: [{name: x, shape: [batch, 8]}, {name: b, shape: [batch]}, {name: c, shape: [batch]}]
    shapes: {batch: [2]}
    export: false
    timeout_s: 60
  - name: nested
    entry: pkg.net:Nested
    inputs: [{name: x, shape: [batch, 8], low: 1.0, high: 2.0}]
    shapes: {batch: [2]}
    export: false
    timeout_s: 60
  - name: prefix
    entry: pkg.net:Prefix
    inputs: [{name: x, shape: [batch, 6]}]
    shapes: {batch: [2, 4]}
    export: false
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def brk(model: str, line: int) -> dict:
    return {"kind": "break", "model": model, "path": "pkg/net.py", "line": line, "gb": "GB0170",
            "gb_type": "Data-dependent branching", "fingerprint": f"{model}{line:04d}" * 2}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("siblings") / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    findings = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    return root, [f for f in findings if f.rule in ("PTC201", "PTC104")]


def setting(root) -> ProofSetting:
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    return ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                        head_results=ResultsFile.empty(), device="cpu")


# --------------------------------------------------------------------------- no torch

def test_the_findings_of_siblings_and_their_combined_candidate(repo):
    root, findings = repo
    assert sorted((f.line, f.rule) for f in findings) == [
        (10, "PTC201"), (13, "PTC201"), (OUTER, "PTC201"), (INNER, "PTC201"), (WRITE, "PTC104")]
    targets = [brk("jitter", FIRST), brk("jitter", SECOND)]
    proposals, why = gather(targets, findings, str(root), None)
    assert why == {}      # the break on the ternary's first line finds PTC201 on its test's
    [combo] = [p for p in proposals if len(p.findings) == 2]
    c = combo.cand
    assert (c.start_line, c.end_line, list(c.lines)) == (*STATEMENT, BOTH)
    assert c.title == ("select with `torch.where` instead of the conditional expression, "
                       "all 2 in this statement together")
    assert combo.targets == [0, 1] and combo.by_target == {0: [combo.findings[0]],
                                                           1: [combo.findings[1]]}
    assert set(c.guards) == {"empty", "zero"}
    ast.parse(combo.patched)
    # the parts stay candidates; the combination is tried before them
    parts = [p for p in proposals if p is not combo]
    assert len(parts) == 2 and all(p.cand.rank == c.rank + 1 for p in parts)
    assert order(proposals)[0] is combo


def test_a_break_inside_a_statement_on_no_expression_s_first_line_finds_nothing(repo):
    root, findings = repo
    # line 11 (`else img`) starts no part of the statement that spans more than it, and
    # the bare name that starts there is no anchor of a stand-in finding
    proposals, why = gather([brk("jitter", 11)], findings, str(root), None)
    assert proposals == [] and why == {0: "no static finding on the line offers a fix"}


def test_overlapping_edits_are_not_combined(repo):
    root, findings = repo
    proposals, _why = gather([brk("nested", OUTER), brk("nested", INNER)], findings,
                             str(root), None)
    # the `if`'s edits (each arm kept alone, where, cond) replace lines 22-25, the ternary's
    # its own line inside
    assert sorted((p.cand.start_line, p.cand.end_line) for p in proposals) == \
        [(OUTER, 25)] * 4 + [(INNER, INNER)]
    assert all(len(p.findings) == 1 for p in proposals)
    assert compose_siblings(proposals, {f.fingerprint(): (f.line, f.col) for f in findings}) == []
    assert order(proposals)[0].cand.start_line == OUTER   # an arm of the `if` kept, rank 0


def test_edits_that_touch_are_not_combined():
    """Two edits of one statement whose changed text is adjacent: which comes first is not
    known, so they are not applied together."""
    src = "import torch\nx = [a, b]\n"

    def p(lines: str, fp: str) -> Proposal:
        from pt2bot.rules import Candidate
        cand = Candidate(code="PTC201", path="m.py", start_line=2, end_line=2, lines=(lines,),
                         title="t", safe=False)
        return Proposal(cid="", cand=cand, original=src, patched=apply_candidate(src, cand),
                        findings=[fp], targets=[0], by_target={0: [fp]})
    apart = compose_siblings([p("x = [A, b]", "f1"), p("x = [a, B]", "f2")], {})
    assert [list(c.cand.lines) for c in apart] == [["x = [A, B]"]]
    assert compose_siblings([p("x = [A2, b]", "f1"), p("x = [aa, b]", "f2")], {}) == []


def _fixes(fp_a: str, fp_b: str) -> dict:
    cand = {"id": "c0", "rule": "PTC201", "title": "select with `torch.where`, all 2 together",
            "path": "pkg/net.py", "start_line": 7, "end_line": 14, "lines": BOTH, "safe": False,
            "guards": ["empty"], "findings": [fp_a, fp_b], "targets": [0, 1], "verified": True,
            "models": ["jitter"], "evidence": "verified on `jitter`: GB0170 gone", "reason": None}
    return {"budget_s": 240.0, "spent_s": 1.0, "candidates": [cand],
            "targets": [{**brk("jitter", FIRST), "fixed_by": "c0", "reason": None},
                        {**brk("jitter", SECOND), "fixed_by": "c0", "reason": None}]}


def test_one_fix_of_several_findings_is_one_suggestion(repo):
    _root, findings = repo
    a, b = sorted((f for f in findings if f.line in (10, 13)), key=lambda f: f.line)
    a, b = (dataclasses.replace(f, diff="added") for f in (a, b))
    report = Report(head="h" * 40, base="b" * 40, findings=(a, b),
                    fixes=_fixes(a.fingerprint(), b.fingerprint()), counts={"fixes_verified": 1})
    comments = render_review(report, lambda path, line: 1 <= line <= 20)["comments"]
    by = {c["fingerprint"]: c for c in comments}
    assert sum(c["body"].count("```suggestion") for c in comments) == 1
    carrier, other = by[a.fingerprint()], by[b.fingerprint()]
    assert (carrier["start_line"], carrier["line"]) == STATEMENT and "fix" in carrier
    assert (other["start_line"], other["line"]) == (None, 13) and "fix" not in other
    html = cmarkgfm.github_flavored_markdown_to_html(other["body"])
    assert "the suggestion on lines 7-14 fixes this too." in html
    assert "<pre" not in html


def test_a_finding_whose_break_another_finding_s_fix_removes_points_at_it(repo):
    """The fix belongs to one finding, and the break confirming a second finding is among its
    targets (a print of an `.item()`: the print's fix removes the `.item()`'s break too): the
    second comment says so instead of leaving the user to find out, and has no block of its own."""
    _root, findings = repo
    a, b = sorted((f for f in findings if f.line in (10, 13)), key=lambda f: f.line)
    a, b = (dataclasses.replace(f, diff="added") for f in (a, b))
    confirming = {**brk("jitter", 13), "fingerprint": "ab" * 8}
    fixes = _fixes(a.fingerprint(), "unused")
    fixes["candidates"][0].update(findings=[a.fingerprint()], targets=[0])
    fixes["targets"] = [{**confirming, "fixed_by": "c0", "reason": None}]
    report = Report(head="h" * 40, base="b" * 40, findings=(a, b), fixes=fixes,
                    models=(ModelDelta(name="jitter", new_breaks=(confirming,)),),
                    counts={"fixes_verified": 1})
    comments = render_review(report, lambda path, line: 1 <= line <= 20)["comments"]
    by = {c["fingerprint"]: c for c in comments}
    assert sum(c["body"].count("```suggestion") for c in comments) == 1
    assert "fix" in by[a.fingerprint()] and "fix" not in by[b.fingerprint()]
    html = cmarkgfm.github_flavored_markdown_to_html(by[b.fingerprint()]["body"])
    assert "the suggestion on lines 7-14 fixes this too." in html


def test_the_suggestion_goes_on_a_comment_of_the_lines_it_replaces(repo):
    """Two findings one fix removes, the first not on the lines it replaces (a `.item()` in a
    warning's text, its fix a rewrite of the `if` above): the first stays on its own line and
    points at the suggestion, which a comment on the replaced line carries. It was moved onto
    the `if` line, where the `.item()` comment read as about a line with no `.item()`."""
    _root, findings = repo
    a, b = sorted((f for f in findings if f.line in (10, 13)), key=lambda f: f.line)
    a, b = (dataclasses.replace(f, diff="added") for f in (a, b))
    fixes = _fixes(a.fingerprint(), b.fingerprint())
    fixes["candidates"][0].update(start_line=13, end_line=13, lines=[BOTH[4]])
    report = Report(head="h" * 40, base="b" * 40, findings=(a, b), fixes=fixes,
                    counts={"fixes_verified": 1})
    comments = render_review(report, lambda path, line: 1 <= line <= 20)["comments"]
    by = {c["fingerprint"]: c for c in comments}
    assert sum(c["body"].count("```suggestion") for c in comments) == 1
    first, carrier = by[a.fingerprint()], by[b.fingerprint()]
    assert (first["start_line"], first["line"]) == (None, 10) and "fix" not in first
    assert (carrier["start_line"], carrier["line"]) == (None, 13) and "fix" in carrier
    html = cmarkgfm.github_flavored_markdown_to_html(first["body"])
    assert "the suggestion on line 13 fixes this too." in html


# --------------------------------------------------------------------------- the prefix loop

def test_the_prefix_loop_becomes_one_masked_write(repo):
    root, findings = repo
    proposals, why = gather([{**brk("prefix", WRITE), "gb": "GB0124"}], findings, str(root), None)
    [p] = proposals
    assert why == {} and p.cand.code == "PTC104"
    assert (p.cand.start_line, p.cand.end_line, p.cand.lines) == (LOOP, WRITE, (VECTORISED,))
    assert not p.cand.safe


LOOP_TEXT = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, n: int):
        lengths = x.sum(1).long()
        mask = torch.zeros(4, 5)
        for i in range(n):
            {write}
        return mask
"""


@pytest.mark.parametrize("write, want", [
    ("mask[i, :lengths[i]] = -1.5",
     "mask[:n][torch.arange(mask.shape[1], device=mask.device) < lengths[:n, None]] = -1.5"),
    ("mask[i, 0:lengths[i]] = 0",
     "mask[:n][torch.arange(mask.shape[1], device=mask.device) < lengths[:n, None]] = 0"),
    ("mask[i, lengths[i]:] = True", None),            # a suffix
    ("mask[i, 1:lengths[i]] = True", None),           # not from the start
    ("mask[i, :lengths[i]] = x[i]", None),            # a value per row
    ("mask[i, :lengths[i + 1]] = True", None),        # another row's length
    ("mask[i, :lengths[i]:2] = True", None),          # a step
])
def test_the_prefix_loop_only_in_exactly_that_shape(tmp_path, write, want):
    from pt2bot.rules import fix_candidates
    text = LOOP_TEXT.format(write=write)
    (tmp_path / "m.py").write_text(text)
    # every one has a tensor as a bound (the suffix's lower one too): a finding, on the write
    [f] = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
           if f.rule == "PTC104"]
    assert f.line == 10
    got = [c.lines for c in fix_candidates(f, text) if c.start_line == 9]
    assert got == ([("        " + want,)] if want else [])


def test_the_prefix_loop_needs_its_own_lines_and_nothing_else_in_it(tmp_path):
    from pt2bot.rules import fix_candidates
    for text in (LOOP_TEXT.format(write="mask[i, :lengths[i]] = True\n            mask[i, 0] = False"),
                 LOOP_TEXT.replace("range(n)", "range(1, n)").format(write="mask[i, :lengths[i]] = True"),
                 LOOP_TEXT.replace("        return mask", "        else:\n            pass\n        return mask")
                 .format(write="mask[i, :lengths[i]] = True"),
                 # the loop's variable read after it: gone with the loop
                 LOOP_TEXT.replace("        return mask", "        return mask[i]")
                 .format(write="mask[i, :lengths[i]] = True")):
        (tmp_path / "m.py").write_text(text)
        fs = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
              if f.rule == "PTC104" and f.line == 10]
        assert fs and not [c for f in fs for c in fix_candidates(f, text) if c.start_line == 9], text


# --------------------------------------------------------------------------- real torch

@pytest.mark.torch
def test_the_combined_candidate_is_verified_where_each_part_is_not(repo, tmp_path):
    root, findings = repo
    s = setting(root)
    targets = [brk("jitter", FIRST), brk("jitter", SECOND)]
    proposals, why, _budget = _prove_targets(s, targets, findings, {"jitter"}, {}, time.monotonic())
    report = decide(Report(head="h" * 40, base="b" * 40, findings=tuple(findings)), targets,
                    proposals, why, s.config, 0.0)
    fixes = report.fixes
    verified = [c for c in fixes["candidates"] if c["verified"]]
    [fix] = verified
    assert (fix["start_line"], fix["end_line"], fix["lines"], fix["targets"]) == \
        (*STATEMENT, BOTH, [0, 1]), fixes
    assert fix["evidence"].startswith("verified on `jitter`: GB0170 gone"), fix
    assert [t["fixed_by"] for t in fixes["targets"]] == [fix["id"]] * 2
    # the parts were not needed; tried alone (below) each is refused
    assert all("already fixed its target" in (c["reason"] or "")
               for c in fixes["candidates"] if not c["verified"])
    parts = [p for p in proposals if len(p.findings) == 1]
    wrong = _swapped(parts[0])
    items = [(p, [targets[i] for i in p.targets]) for p in parts] + [(wrong, targets)]
    verdicts = prove_on_model(s, s.config.model("jitter"), None, items, str(root),
                              time.monotonic() + 200, str(tmp_path))
    for p in parts:
        v = verdicts[p.cid]
        assert v["accepted"] is False and re.match(
            r"GB0170 still breaks the graph at pkg/net.py:\d+", v["reason"]), v
    v = verdicts[wrong.cid]
    assert v["accepted"] is False and v["reason"].startswith("outputs differ from head's"), v


def _swapped(part: Proposal) -> Proposal:
    """The combined edit with the second ternary's sides swapped: no break left, wrong values."""
    lines = list(BOTH)
    lines[4] = "            lambda img: torch.where((c != 1).any(), img, img * c.view(-1, 1)),"
    cand = dataclasses.replace(part.cand, start_line=STATEMENT[0], end_line=STATEMENT[1],
                               lines=tuple(lines))
    return Proposal(cid="wrong", cand=cand, original=NET, patched=apply_candidate(NET, cand),
                    findings=[], targets=[0, 1])


@pytest.mark.torch
def test_siblings_that_cannot_be_combined_post_one_fix(repo):
    root, findings = repo
    s = setting(root)
    targets = [brk("nested", OUTER), brk("nested", INNER)]
    proposals, why, _budget = _prove_targets(s, targets, findings, {"nested"}, {}, time.monotonic())
    marked = tuple(dataclasses.replace(f, diff="added") for f in findings)
    report = decide(Report(head="h" * 40, base="b" * 40, findings=marked), targets,
                    proposals, why, s.config, 0.0)
    fixes = report.fixes
    assert not any("together" in c["title"] for c in fixes["candidates"])
    [fix] = [c for c in fixes["candidates"] if c["verified"]]
    assert (fix["start_line"], fix["end_line"], fix["targets"]) == (INNER, INNER, [1]), fixes
    assert fix["lines"] == ["            y = torch.where(x.mean() > 1, x * 2, x)"]
    outer = [c for c in fixes["candidates"] if c["start_line"] == OUTER]
    assert outer and all(not c["verified"] for c in outer)
    assert fixes["targets"][0]["fixed_by"] is None
    comments = render_review(report, lambda path, line: 20 <= line <= 26)["comments"]
    assert sum(c["body"].count("```suggestion") for c in comments) == 1


@pytest.mark.torch
def test_the_prefix_loop_is_verified_and_an_off_by_one_is_refused(repo, tmp_path):
    root, findings = repo
    s = setting(root)
    target = {**brk("prefix", WRITE), "gb": "GB0124",
              "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}
    [right], _why = gather([target], findings, str(root), None)
    right.cid = "right"
    off = dataclasses.replace(right.cand, lines=(VECTORISED.replace(" < ", " <= "),))
    wrong = Proposal(cid="wrong", cand=off, original=NET, patched=apply_candidate(NET, off),
                     findings=[], targets=[0])
    verdicts = prove_on_model(s, s.config.model("prefix"), None, [(wrong, [target]), (right, [target])],
                              str(root), time.monotonic() + 200, str(tmp_path))
    assert verdicts["right"]["accepted"] is True, verdicts
    assert verdicts["right"]["evidence"].startswith("GB0124 gone"), verdicts
    assert verdicts["wrong"]["accepted"] is False
    assert verdicts["wrong"]["reason"].startswith("outputs differ from head's"), verdicts


# --------------------------------------------------------------------------- statements next to each other

STEP = """\
import torch
from torch import nn


class Step(nn.Module):
    def forward(self, y, dt, flag: bool = False):
        t0 = y.sum() * 0
        # the step's checks
        assert t0 + dt > t0, 'underflow in dt {}'.format(dt.item())
{between}        assert torch.isfinite(y).all(), 'non-finite values in state: {}'.format(y)

        return y * dt
"""
STEP_CONFIG = """\
version: 1
models:
  - name: step
    entry: pkg.step:Step
    inputs: [{name: y, shape: [batch, 4]}, {name: dt, shape: [], low: 0.1, high: 1.0}]
    shapes: {batch: [2]}
    export: false
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def _step_repo(root, between: str = ""):
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "step.py").write_text(STEP.replace("{between}", between))
    (root / "pt2bot.yml").write_text(STEP_CONFIG)
    findings = check_paths(str(root), ["pkg/step.py"], StaticConfig(select=("ALL",)), jobs=1)
    last = 10 + between.count("\n")
    targets = [{**brk("step", line), "path": "pkg/step.py"} for line in (9, last)]
    return findings, targets, last


def test_edits_of_statements_next_to_each_other_are_combined(tmp_path):
    findings, targets, _ = _step_repo(tmp_path, "\n        # and the state's\n")
    proposals, why = gather(targets, findings, str(tmp_path), None)
    assert why == {}
    [combo] = [p for p in proposals if len(p.targets) == 2]
    parts = sorted((p for p in proposals if p is not combo), key=lambda p: p.cand.start_line)
    assert [(p.cand.start_line, p.cand.end_line) for p in parts] == [(9, 9), (12, 12)]
    c = combo.cand
    assert (c.start_line, c.end_line) == (9, 12)
    # each part's lines, and the blank and comment lines between them as they were
    assert list(c.lines) == [*parts[0].cand.lines, "", "        # and the state's",
                             *parts[1].cand.lines]
    assert c.title.endswith("all 2 on lines 9-12 together")
    assert order(proposals)[0] is combo
    ast.parse(combo.patched)


@pytest.mark.parametrize("between", [
    "        dt = dt * 1\n",                               # a statement between them
    "        if flag:\n            assert (dt > 0).all()\n",  # not one block: a deeper line
])
def test_edits_not_next_to_each_other_in_one_block_are_not_combined(tmp_path, between):
    findings, _targets, last = _step_repo(tmp_path, between)
    lines = sorted({f.line for f in findings if f.rule == "PTC201"})
    targets = [{**brk("step", line), "path": "pkg/step.py"} for line in lines]
    proposals, _why = gather(targets, findings, str(tmp_path), None)
    assert {p.cand.start_line for p in proposals} == set(lines) >= {9, last}
    assert all(len(p.targets) == 1 for p in proposals), [p.cand.title for p in proposals]


@pytest.mark.torch
def test_edits_next_to_each_other_are_verified_and_posted_as_one_suggestion(tmp_path):
    findings, targets, _ = _step_repo(tmp_path)
    config = build_config(STEP_CONFIG, str(tmp_path / "pt2bot.yml"))
    s = ProofSetting(config=config, changeset=None, root=str(tmp_path), head_sha=None,
                     head_results=ResultsFile.empty(), device="cpu")
    proposals, why, _budget = _prove_targets(s, targets, findings, {"step"}, {}, time.monotonic())
    marked = tuple(dataclasses.replace(f, diff="added") for f in findings)
    report = decide(Report(head="h" * 40, base="b" * 40, findings=marked), targets, proposals,
                    why, config, 0.0)
    fixes = report.fixes
    [fix] = [c for c in fixes["candidates"] if c["verified"]]
    assert (fix["start_line"], fix["end_line"], fix["targets"]) == (9, 10, [0, 1]), fixes
    assert fix["evidence"].startswith("verified on `step`: GB0170 gone, 1 graph instead of 3"), fix
    assert [t["fixed_by"] for t in fixes["targets"]] == [fix["id"]] * 2
    comments = render_review(report, lambda path, line: 1 <= line <= 13)["comments"]
    [block] = [c for c in comments if "```suggestion" in c["body"]]
    assert (block["start_line"], block["line"]) == (9, 10)
    assert block["body"].count("```suggestion") == 1
    suggested = block["body"].split("```suggestion\n", 1)[1].split("\n```", 1)[0]
    assert suggested.split("\n") == fix["lines"]
    assert suggested.count("torch._assert_async(") == 2


RANGE = """\
import torch
from torch import nn


def validate(t, data_range=(0.0, 1.0)):
    if data_range[0] < data_range[1]:
        assert data_range[0] <= t.min(), \\
            f'Expected values to be greater or equal to {data_range[0]}, got {t.min()}'
        assert t.max() <= data_range[1], \\
            f'Expected values to be lower or equal to {data_range[1]}, got {t.max()}'
    return t


class Score(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return validate(self.lin(x).sigmoid()) * 2
"""
RANGE_CONFIG = STEP_CONFIG.replace("name: step", "name: score").replace("pkg.step:Step", "pkg.score:Score").replace(
    "inputs: [{name: y, shape: [batch, 4]}, {name: dt, shape: [], low: 0.1, high: 1.0}]",
    "inputs: [{name: x, shape: [batch, 4]}]")


def _range_repo(root):
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "score.py").write_text(RANGE)
    (root / "pt2bot.yml").write_text(RANGE_CONFIG)
    # dynamo breaks on the first check and runs the function in eager: the second is no target
    return [{**brk("score", 7), "path": "pkg/score.py"}]


def test_the_checks_after_a_target_s_check_are_taken_along(tmp_path):
    """piq's input validation: the range's two asserts in a row. Only the first is a target
    (the break there sends the function to eager, so dynamo never reaches the second); its edit
    alone uncovers the second one's break. The next checks of the block are composed with it."""
    targets = _range_repo(tmp_path)
    proposals, why = gather(targets, [], str(tmp_path), None)
    assert why == {}
    [combo] = [p for p in proposals if p.cand.end_line == 10]
    assert (combo.cand.start_line, combo.targets) == (7, [0])
    assert combo.cand.title.endswith("all 2 on lines 7-10 together")
    assert "".join(combo.cand.lines).count("torch._assert_async(") == 2
    assert order(proposals)[0] is combo
    # the second check's own edit is only a part: never proven alone
    assert {(p.cand.start_line, p.cand.end_line) for p in proposals} == {(7, 8), (7, 10)}


@pytest.mark.torch
def test_the_checks_taken_along_are_verified_with_no_break_uncovered(tmp_path):
    targets = _range_repo(tmp_path)
    config = build_config(RANGE_CONFIG, str(tmp_path / "pt2bot.yml"))
    s = ProofSetting(config=config, changeset=None, root=str(tmp_path), head_sha=None,
                     head_results=ResultsFile.empty(), device="cpu")
    proposals, _why, _budget = _prove_targets(s, targets, [], {"score"}, {}, time.monotonic())
    [combo] = [p for p in proposals if p.cand.end_line == 10]
    verdict = combo.results["score"]
    assert verdict["accepted"] is True, verdict
    assert verdict["evidence"].startswith("GB0170 gone"), verdict
    assert "uncovers" not in verdict["evidence"], verdict
    assert "compiled code raises RuntimeError where head raises AssertionError" in verdict["evidence"], verdict


BLOCKS = """\
import torch
from torch import nn


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        for idx in h.argmax(1):
            row = idx.item() // 2
            col = idx.item() % 2
            h = h * (1 + row + col)
        return h
"""
BLOCKS_CONFIG = STEP_CONFIG.replace("name: step", "name: blocks").replace("pkg.step:Step", "pkg.blocks:Blocks").replace(
    "inputs: [{name: y, shape: [batch, 4]}, {name: dt, shape: [], low: 0.1, high: 1.0}]",
    "inputs: [{name: x, shape: [batch, 4]}]")
ROW = 13


def _blocks_repo(root):
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "blocks.py").write_text(BLOCKS)
    (root / "pt2bot.yml").write_text(BLOCKS_CONFIG)
    findings = check_paths(str(root), ["pkg/blocks.py"], StaticConfig(select=("ALL",)), jobs=1)
    # dynamo breaks on the first `.item()` and skips the loop's frame: the second is no target
    return findings, [{**brk("blocks", ROW), "path": "pkg/blocks.py", "gb": "GB0124",
                       "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}]


def test_the_same_edit_of_the_next_statements_is_taken_along(tmp_path):
    """mixup's PuzzleMix: `bh = idx.item() // n` then `bw = idx.item() % n` in a loop. The
    first's edit alone moves the break a line down; both together are one more candidate."""
    findings, targets = _blocks_repo(tmp_path)
    proposals, why = gather(targets, findings, str(tmp_path), None)
    assert why == {}
    [combo] = [p for p in proposals if (p.cand.start_line, p.cand.end_line) == (ROW, ROW + 1)]
    assert combo.targets == [0] and combo.cand.title.endswith(f"all 2 on lines {ROW}-{ROW + 1} together")
    assert ".item()" not in "".join(combo.cand.lines)
    assert order(proposals)[0] is combo


@pytest.mark.torch
def test_an_edit_that_moves_the_break_to_the_next_statement_is_refused(tmp_path):
    findings, targets = _blocks_repo(tmp_path)
    config = build_config(BLOCKS_CONFIG, str(tmp_path / "pt2bot.yml"))
    s = ProofSetting(config=config, changeset=None, root=str(tmp_path), head_sha=None,
                     head_results=ResultsFile.empty(), device="cpu")
    proposals, _why, _budget = _prove_targets(s, targets, findings, {"blocks"}, {}, time.monotonic())
    [both] = [p for p in proposals if (p.cand.start_line, p.cand.end_line) == (ROW, ROW + 1)]
    assert both.results["blocks"]["accepted"] is True, both.results
    assert "uncovers" not in both.results["blocks"]["evidence"], both.results
    # the first statement's edit alone, proven on its own, moves the break a line down
    [alone] = [p for p in proposals if (p.cand.start_line, p.cand.end_line) == (ROW, ROW)
               and p.cand.title == "keep the tensor: drop `.item()`"]
    verdict = prove(tmp_path, "blocks", [item("alone", alone.cand, BLOCKS, targets[0])], tmp_path / "work")["alone"]
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"] == (f"the break moves to GB0124 at pkg/blocks.py:{ROW + 1}, the statement right "
                                 "after the edit: the frame breaks as before, a line further down"), verdict
