"""review.json, summary.md and SARIF from report.json's `fixes` (no torch): a verified fix is
the one suggestion block of its comment, spanning exactly the replaced lines; a failed one is
a hint marked "not verified"; a range GitHub cannot take gets no suggestion at all."""
from __future__ import annotations

import re

import cmarkgfm

from pt2bot.findings import Finding
from pt2bot.report.review import render_review
from pt2bot.report.sarif import findings_to_sarif
from pt2bot.report.summary import render_summary
from pt2bot.reportdata import Report
from pt2bot.report import render_sarif

F = Finding(rule="PTC201", path="pkg/m.py", line=12, col=8, severity="error",
            message="Branch on a tensor value.", source="if torch.isnan(h).any():",
            function="Net.forward", gb="GB0170", diff="added")
G = Finding(rule="PTC101", path="pkg/m.py", line=20, col=8, severity="error",
            message="`.item()` breaks the graph.", source="s = h.sum().item()",
            function="Net.forward", gb="GB0124", diff="added")
LINES = ["        h = torch.nan_to_num(h)"]


def fixes(**over) -> dict:
    good = {"id": "c0", "rule": "PTC201", "title": "the branchless form", "path": "pkg/m.py",
            "start_line": 12, "end_line": 13, "lines": LINES, "safe": False, "guards": ["nan"],
            "findings": [F.fingerprint()], "targets": [0], "verified": True,
            "models": ["net"], "evidence": "verified on `net`: GB0170 gone, 1 graph instead "
                                           "of 2, outputs equal on 2 shape cases",
            "reason": None, **over}
    bad = {"id": "c1", "rule": "PTC101", "title": "keep the tensor <b>@team</b>",
           "path": "pkg/m.py", "start_line": 20, "end_line": 20, "lines": ["        s = h.sum()"],
           "safe": False, "guards": [], "findings": [G.fingerprint()], "targets": [1],
           "verified": False, "models": ["net"], "evidence": "",
           "reason": "outputs differ from head's on shape case batch=2 (max abs error 0.5)"}
    targets = [{"kind": "break", "model": "net", "path": "pkg/m.py", "line": 12, "gb": "GB0170",
                "gb_type": "Data-dependent branching", "fingerprint": None, "fixed_by": "c0",
                "reason": None},
               {"kind": "break", "model": "net", "path": "pkg/m.py", "line": 20, "gb": "GB0124",
                "gb_type": "item", "fingerprint": None, "fixed_by": None,
                "reason": bad["reason"]}]
    return {"budget_s": 300.0, "spent_s": 4.2, "targets": targets, "candidates": [good, bad]}


def report(**over) -> Report:
    return Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fixes(**over),
                  counts={"fixes_verified": 1})


def by_fp(review: dict) -> dict:
    return {c["fingerprint"]: c for c in review["comments"]}


def on_diff(path: str, line: int) -> bool:
    return path == "pkg/m.py" and 10 <= line <= 22


def test_a_verified_fix_spans_its_lines_with_one_suggestion_block():
    c = by_fp(render_review(report(), on_diff))[F.fingerprint()]
    assert (c["start_line"], c["line"], c["side"]) == (12, 13, "RIGHT")
    assert c["fix"] == {"verified": True, "models": ["net"], "evidence": (
        "verified on `net`: GB0170 gone, 1 graph instead of 2, outputs equal on 2 shape cases")}
    assert c["body"].count("```suggestion") == 1
    assert re.search(r"\n```suggestion\n(.*?)\n```\n", c["body"], re.S).group(1) == LINES[0]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    # the evidence is our text with code spans: they render as code, not as literal backticks
    assert ("<strong>Verified fix</strong> (the branchless form): verified on <code>net</code>: GB0170 gone"
            in html)


def test_a_long_recipe_title_is_shown_whole():
    """A new user's verified fix read "... as it did), and the sid…)": the scale recipe's
    title is 245 characters of our prose around the user's expression."""
    title = ("scale by `torch.where(m > 5.0, 5.0 / torch.fmax(m, torch.as_tensor(5.0)), 1.0)` "
             "without the `if`: head's factor where the test holds, 1 where it does not (head's "
             "test decides, as it did), and the side not taken never divides by a `m` of 0 or NaN")
    c = by_fp(render_review(report(title=title), on_diff))[F.fingerprint()]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert "never divides by a <code>m</code> of 0 or NaN): verified on" in html.replace("&#x27;", "'")


def test_a_one_line_fix_has_no_start_line():
    c = by_fp(render_review(report(end_line=12), on_diff))[F.fingerprint()]
    assert (c["start_line"], c["line"]) == (None, 12)


def test_a_failed_candidate_is_a_marked_hint_never_a_suggestion():
    c = by_fp(render_review(report(), on_diff))[G.fingerprint()]
    assert "fix" not in c and "```suggestion" not in c["body"]
    assert "Candidate fix, **not verified**: keep the tensor" in c["body"]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert "<b>" not in html and "outputs differ from head" in html
    # refused for a difference: its code is not shown, only what it is
    assert "s = h.sum()" not in c["body"]
    # refused only because no input exercised it (held-out batch 40's rescale): its lines shown,
    # as code to read, never a suggestion block
    fx = fixes()
    fx["candidates"][1] = {**fx["candidates"][1], "unexercised": True,
                           "reason": "no shape case enters the block at line 20"}
    body = by_fp(render_review(Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx,
                                      counts={"fixes_verified": 1}), on_diff))[G.fingerprint()]["body"]
    assert "Its lines 20-20, not verified:" in body and "```suggestion" not in body
    assert "<code>        s = h.sum()" in cmarkgfm.github_flavored_markdown_to_html(body)


def test_no_suggestion_where_github_cannot_take_the_range():
    """The last replaced line is not a line of the diff: the comment stays on the finding's
    line, without a suggestion or a `fix`."""
    c = by_fp(render_review(report(), lambda p, n: n != 13 and on_diff(p, n)))[F.fingerprint()]
    assert (c["start_line"], c["line"]) == (None, 12)
    assert "fix" not in c and "```suggestion" not in c["body"]
    # a trailing empty line could not survive a suggestion block exactly: not posted either
    c = by_fp(render_review(report(lines=LINES + [""]), on_diff))[F.fingerprint()]
    assert "fix" not in c and "```suggestion" not in c["body"]


def test_summary_counts_the_verified_fixes_and_says_why_not():
    md = render_summary(report())
    assert "1 verified fix suggested inline for 1 of 2 new problems" in md
    assert "no verified fix: outputs differ from head" in md


def test_sarif_carries_the_verified_fix_only():
    sarif = render_sarif(report())
    res = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    [fix] = res["PTC201"]["fixes"]
    assert fix["properties"] == {"verified": True}
    assert fix["description"]["text"].startswith("the branchless form (verified on `net`")
    assert fix["artifactChanges"][0]["replacements"] == [{
        "deletedRegion": {"startLine": 12, "startColumn": 1, "endLine": 14, "endColumn": 1},
        "insertedContent": {"text": LINES[0] + "\n"}}]
    assert "fixes" not in res["PTC101"]
    assert "fixes" not in findings_to_sarif([F], tool_version="0")["runs"][0]["results"][0]


def test_the_synthetic_report_validates_against_the_schema():
    import json
    import os

    import jsonschema

    path = os.path.join(os.path.dirname(__file__), "..", "pt2bot", "schemas",
                        "report.schema.json")
    with open(path, encoding="utf-8") as fh:
        jsonschema.Draft202012Validator(json.load(fh)).validate(report().to_dict())


def test_a_comment_carrying_a_verified_fix_leaves_dynamos_generic_hints_out():
    """The fix says what to write: dynamo's hints ("consider making the code branchless")
    would only repeat it vaguely. The rule's own pointer stays; without a fix, both stay."""
    from pt2bot.report.review import break_body, finding_body

    brk = {"gb": "GB0170", "gb_type": "Data-dependent branching", "path": "pkg/m.py",
           "line": 12, "hints": ["Use `torch.cond` to express dynamic control flow."]}
    f = Finding(**{**F.__dict__, "hints": ("Rule documentation: `pt2bot rules PTC201`",)})
    with_fix = finding_body(f, [("net", brk)], break_hints=False)
    assert "torch.cond" not in with_fix and "Rule documentation" in with_fix
    assert "torch.cond" in finding_body(f, [("net", brk)])
    assert "torch.cond" not in break_body(brk, "net", hints=False)
    assert "torch.cond" in break_body(brk, "net")


def test_a_target_without_a_fix_shows_its_model_and_reason_as_code_where_they_are_code():
    """A model named `vit_vit` in a code span keeps its underscore (no backslash shows), and
    the reason's own code spans render as code; a reason's prose is still escaped."""
    from pt2bot.report.summary import fix_target_line

    line = fix_target_line({"kind": "break", "gb": "GB0170", "path": "pkg/m.py", "line": 20,
                            "model": "vit_vit", "reason": "a new graph break (on `vit_vit`) <b>x</b>"})
    html = cmarkgfm.github_flavored_markdown_to_html(line)
    assert "(<code>vit_vit</code>): no verified fix: a new graph break (on <code>vit_vit</code>)" in html
    assert "\\_" not in html and "<b>" not in html
    # a refusal that names frames, a guard and counts is said whole
    long = ("a new recompile on shape case batch=4, depth=8 (in `forward` outside the repository (`tensor "
            "'input' size mismatch at index 0. expected 2, actual 4`), `forward` from line 28 at "
            "volcls/model.py:28, `unfoldNd` from line 53 outside the repository: a size changed; 5 "
            "recompiles there, head 2) (on `volume_patch_classifier`)")
    line = fix_target_line({"kind": "break", "gb": "GB0170", "path": "pkg/m.py", "line": 20,
                            "model": "volume_patch_classifier", "reason": long})
    assert line.endswith("head 2) (on `volume_patch_classifier`)"), line


def test_a_verified_setting_is_a_line_of_text_where_no_edit_was_verified():
    # G's `.item()` has no verified edit (c1 failed); capture_scalar_outputs verified for it:
    # the comment says so as text, names where it belongs, and holds no suggestion block
    setting = {"id": "c2", "setting": "capture_scalar_outputs", "path": "pkg/m.py", "line": 20,
               "findings": [G.fingerprint()], "targets": [1], "verified": True, "models": ["net"],
               "evidence": "verified on `net`: GB0124 gone, 1 graph instead of 2, compiled outputs equal "
                           "head's eager ones on 2 shape cases", "reason": None}
    fx = fixes()
    fx["settings"] = [setting]
    fx["targets"][1]["setting"] = "c2"
    rep = Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx, counts={"fixes_verified": 1})
    c = by_fp(render_review(rep, on_diff))[G.fingerprint()]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert "```suggestion" not in c["body"] and "fix" not in c
    assert c["setting"] == {"name": "capture_scalar_outputs", "verified": True, "models": ["net"],
                            "evidence": setting["evidence"]}
    assert (c["line"], c["start_line"]) == (20, None)
    assert ("⚙️ <strong>Verified setting</strong>, not a change to this line: "
            "<code>torch._dynamo.config.capture_scalar_outputs = True</code>, set before the model "
            "is compiled: verified on <code>net</code>: GB0124 gone") in html
    assert "checked on the models named here only" in html
    # the refused edit is not said as well: the setting is what there is to do
    assert "not verified" not in html
    summary = render_summary(rep)
    assert "1 dynamo setting verified for problems no edit fixed" in summary
    # the folded list is of problems without a verified edit: they have a verified setting
    assert "1 without a verified edit" in summary and "without a verified fix" not in summary
    # the setting first, the edit's reason after it: "no verified fix: ...; verified with ..."
    # read as a contradiction to a new user
    assert ("verified with `torch._dynamo.config.capture_scalar_outputs = True` set; no verified "
            "edit: outputs differ from head's on shape case batch=2 (max abs error 0.5)") in summary
    assert "no verified fix" not in summary
    assert "export failure on this line stays" not in html
    # an export failure on the same line, which the setting does not change, is said beside it
    # (MAE's user read the verified setting as covering the export failure too)
    fx["targets"].append({"kind": "export", "model": "net", "path": "pkg/m.py", "line": 20, "gb": None,
                          "gb_type": "data_dependent", "fingerprint": None, "fixed_by": None,
                          "reason": "the PTC101 recipe has no edit for this code", "setting": None})
    rep = Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx, counts={"fixes_verified": 1})
    html = cmarkgfm.github_flavored_markdown_to_html(by_fp(render_review(rep, on_diff))[G.fingerprint()]["body"])
    assert ("The export failure on this line stays (on <code>net</code>): <code>torch.export</code> does "
            "not trace through dynamo, so no dynamo setting changes it.") in html


def test_a_refused_setting_is_named_as_torchs_hint_that_does_not_work():
    """A new user's comment read "🔧 Candidate fix, **not verified**:  (a new graph break: ...
    at outside the repository ...)": a setting has no title, and the break it made was in a
    library. The comment leaves torch's hint out where the setting was tried, so the refusal
    must say which setting it was."""
    setting = {"id": "c2", "setting": "capture_scalar_outputs", "path": "pkg/m.py", "line": 20,
               "findings": [G.fingerprint()], "targets": [1], "verified": False, "models": ["net"],
               "evidence": "", "reason": "a new graph break: GB0007 outside the repository "
                                         "(on `net`)"}
    fx = fixes()
    fx["candidates"] = fx["candidates"][:1]     # no edit for G: the setting is all there was
    fx["settings"] = [setting]
    rep = Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx, counts={"fixes_verified": 1})
    c = by_fp(render_review(rep, on_diff))[G.fingerprint()]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert ("⚙️ torch's hint, <code>torch._dynamo.config.capture_scalar_outputs = True</code>, "
            "tried and <strong>not verified</strong>: a new graph break: GB0007 outside the "
            "repository (on <code>net</code>).") in html
    assert "Candidate fix" not in html and "```suggestion" not in c["body"]
    # the summary's list of what was left says the same attempt, not only the recipe's reason
    fx["targets"][1]["reason"] = "the PTC101 recipe has no edit for this code"
    summary = cmarkgfm.github_flavored_markdown_to_html(render_summary(rep))
    assert ("no verified fix: the PTC101 recipe has no edit for this code; "
            "<code>torch._dynamo.config.capture_scalar_outputs = True</code> tried, not verified: "
            "a new graph break: GB0007 outside the repository (on <code>net</code>)") in summary


def test_the_summary_leaves_out_torchs_hint_where_the_proof_answered_it():
    """The trial's summary printed "💡 Set `torch._dynamo.config.capture_scalar_outputs = True`"
    under the break while the proof had refused that very setting for it."""
    from pt2bot.report.summary import break_block, hints_settled

    fx = fixes()
    fx["targets"][0]["fingerprint"], fx["targets"][1]["fingerprint"] = "fa", "fb"
    brk = {"gb": "GB0124", "gb_type": "item", "path": "pkg/m.py", "line": 20,
           "hints": ["Set `torch._dynamo.config.capture_scalar_outputs = True`"], "fingerprint": "fb"}
    # an edit refused for it: torch's hint is still the user's best lead
    assert hints_settled(fx) == {"fa"}
    assert "💡 Set" in break_block(brk, hint=brk["fingerprint"] not in hints_settled(fx))
    fx["settings"] = [{"id": "c2", "setting": "capture_scalar_outputs", "targets": [1],
                       "verified": False, "reason": "a new graph break: GB0007 outside the repository"}]
    assert hints_settled(fx) == {"fa", "fb"}
    text = break_block(brk, hint=False)
    assert "Set `torch" not in text
    assert text.endswith("💡 torch's hint is left out: the proof of fixes tried its setting on this break; "
                         "Suggested fixes says whether it held")
    # answered by a verified edit, it says where that is: the section only counts it
    assert hints_settled(fx, edits_only=True) == {"fa"}
    assert break_block(brk, hint=False, inline=True).endswith(
        "💡 torch's hint is left out: the proof of fixes answered this break, its verified edit is suggested on the line")


def test_the_evidence_of_several_models_is_said_whole_or_cut_at_a_clause():
    """Swin: two models' evidence ran past 600 characters and the comment read "on
    `swin_w7_56`: GB0170 gon…", under the button that applies the fix."""
    one = ("GB0170 gone, compiled outputs equal head's eager ones on 2 shape cases, equal with values a "
           "check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of several; head raised on NaN)")
    both = f"verified on `a`: {one}, {one}; on `b`: {one}, {one}"
    assert 600 < len(both) < 2000
    c = by_fp(render_review(report(evidence=both), on_diff))[F.fingerprint()]
    assert "on <code>b</code>: GB0170 gone" in cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert "…" not in c["body"]
    long = "; ".join([both] * 10)
    c = by_fp(render_review(report(evidence=long), on_diff))[F.fingerprint()]
    head = c["body"].split("\n\n```suggestion")[0]
    assert head.endswith("; ….") and "gon…" not in head


def test_what_a_verified_fix_does_unlike_head_is_said_first_and_once():
    """DINOv2: a NaN check turned into `torch._assert_async` raises RuntimeError under compile
    where head raises FloatingPointError. That was said in the middle of 1,900 characters of
    proof under "Verified fix"; a loop that catches FloatingPointError stops catching it. A
    user wanted it first."""
    swapped = ("compiled code raises RuntimeError where head raises FloatingPointError (on CUDA a "
               "device-side assert, which ends the process's CUDA context)")
    zeroed = ("`mask_token` gets zero gradients where head's get none: an optimizer with momentum or "
              "weight decay updates a parameter with a zero gradient and skips one with none")
    evidence = (f"verified on `net`: GB0170 gone, outputs equal on 2 shape cases, gradients equal on 2 "
                f"shape cases ({zeroed}), equal with NaN injected, eager and compiled, but {swapped}")
    r = report(evidence=evidence, caveats=[swapped, zeroed])
    c = by_fp(render_review(r, on_diff))[F.fingerprint()]
    assert c["fix"]["caveats"] == [swapped, zeroed]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    # the paragraph just before the proof and its suggestion block
    first = html.split("<strong>Verified fix</strong>")[0].split("<p>")[-2]
    assert first.startswith("⚠️ <strong>Unlike head</strong>: compiled code raises RuntimeError "
                            "where head raises FloatingPointError"), first
    assert "<code>mask_token</code> gets zero gradients" in first
    # said once: the proof after it keeps its other clauses, not these
    assert html.count("where head raises FloatingPointError") == 1
    assert html.count("gets zero gradients") == 1
    assert ("equal with NaN injected, eager and compiled.</p>" in html
            and "gradients equal on 2 shape cases, equal with NaN" in html), html
    summary = render_summary(r)
    assert "It does something unlike head, said first in its inline comment." in summary
    # a fix with nothing unlike head has no such line, and no `caveats` key
    c = by_fp(render_review(report(), on_diff))[F.fingerprint()]
    assert "Unlike head" not in c["body"] and "caveats" not in c["fix"]


def test_a_form_no_candidate_was_tried_for_is_said_in_the_comment_and_once_in_the_summary():
    """Held-out batch 39's early return: no recipe writes the `torch.cond` over its two paths,
    and the reason that spells it out was only in the summary's folded list, twice, once for
    the break and once, word for word, for the export at the same line."""
    why = ("no recipe rewrites an early return before 4 more statements: what keeps both paths in "
           "one graph is `torch.cond(p.min() > 0.4, early, rest, ())`; not verified: no proof runs it")
    fx = fixes()
    fx["candidates"] = [fx["candidates"][0]]
    # (the target's key: here the finding's own fingerprint, as a break confirming it would be)
    fx["targets"][1] = {**fx["targets"][1], "reason": why, "fingerprint": G.fingerprint()}
    fx["targets"].append({"kind": "export", "model": "net", "path": "pkg/m.py", "line": 20, "gb": None,
                          "gb_type": "data_dependent", "fingerprint": None, "fixed_by": None, "reason": why})
    rep = Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx, counts={"fixes_verified": 1})
    c = by_fp(render_review(rep, on_diff))[G.fingerprint()]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert "🔧 No verified fix: no recipe rewrites an early return before 4 more statements" in html
    assert "<code>torch.cond(p.min() &gt; 0.4, early, rest, ())</code>" in html and "```suggestion" not in c["body"]
    # a generic reason (no form in it) stays out of the comment
    fx["targets"][1] = {**fx["targets"][1], "reason": "the PTC304 recipe has no edit for this code"}
    rep = Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx, counts={"fixes_verified": 1})
    assert "No verified fix" not in by_fp(render_review(rep, on_diff))[G.fingerprint()]["body"]
    # the summary: one item for the break and the export at the same line with the same reason
    fx["targets"][1] = {**fx["targets"][1], "reason": why}
    text = re.sub(r"<[^>]+>", "", cmarkgfm.github_flavored_markdown_to_html(render_summary(
        Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx, counts={"fixes_verified": 1}))))
    assert text.count("no recipe rewrites an early return") == 1, text
    assert "break GB0124 and export at pkg/m.py:20 (net): no verified fix: no recipe rewrites" in text, text
    # and the same on another model is the same item, naming both (MAE's six items: one line's
    # break and export on three models)
    fx["targets"].append({**fx["targets"][1], "model": "other"})
    text = re.sub(r"<[^>]+>", "", cmarkgfm.github_flavored_markdown_to_html(render_summary(
        Report(head="h" * 40, base="b" * 40, findings=(F, G), fixes=fx, counts={"fixes_verified": 1}))))
    assert text.count("no recipe rewrites an early return") == 1, text
    assert "break GB0124 and export at pkg/m.py:20 (net, other): no verified fix" in text, text


def test_an_export_verdict_on_a_line_of_the_diff_with_no_comment_gets_one():
    """S4's FFT padded to a power of two failed its review on four models with no inline
    comment: no static finding and no break on the line, which the summary named."""
    at = [{"path": "pkg/m.py", "line": 14}]
    reasons = tuple({"code": code, "level": level, "model": m, "message": msg, "count": 1, "lines": at}
                    for m in ("a", "b")
                    for code, level, msg in (("export_broken", "failure", "torch.export newly fails"),
                                             ("export_new_cause", "warning",
                                              "seq can no longer be dynamic at pkg/m.py:14 (the code specialises seq to 16)")))
    review = render_review(Report(head="h" * 40, base="b" * 40, reasons=reasons), on_diff)
    (c,) = review["comments"]
    assert (c["path"], c["line"], c["start_line"]) == ("pkg/m.py", 14, None)
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert "<strong>Export</strong>: on this line:" in html
    assert "<li>torch.export newly fails (on <code>a</code>, <code>b</code>)</li>" in html, html
    assert "seq can no longer be dynamic at pkg/m.py:14" in html
    # a line off the diff, or one a finding's comment already covers, gets none of its own
    off = tuple({**r, "lines": [{"path": "pkg/m.py", "line": 40}]} for r in reasons)
    assert render_review(Report(head="h" * 40, base="b" * 40, reasons=off), on_diff)["comments"] == []
    covered = tuple({**r, "lines": [{"path": "pkg/m.py", "line": 12}]} for r in reasons)
    rep = Report(head="h" * 40, base="b" * 40, findings=(F,), reasons=covered)
    assert [c["line"] for c in render_review(rep, on_diff)["comments"]] == [12]
