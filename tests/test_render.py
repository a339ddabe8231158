"""Renderers: summary.md snapshot, size caps, hostile text, review.json, check.json, render_all."""
from __future__ import annotations

import dataclasses
import json
import os
import re

import pytest
from compare_fixtures import Selection, make_config, make_pr, results_pair
from gitrepo import GitRepo

from pt2bot.compare import build_report
from pt2bot.findings import Finding
from pt2bot.report import render_all
from pt2bot.report.check import render_check
from pt2bot.report.markdown import ZWSP, utf8_len
from pt2bot.report.review import render_review
from pt2bot.report.summary import SUMMARY_MARKER, render_summary
from pt2bot.reportdata import ModelDelta, Report
from pt2bot.results import ResultsFile

SNAPSHOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshots")
BASE_SHA, HEAD_SHA = "a" * 40, "b" * 40


@pytest.fixture(scope="module")
def pr(tmp_path_factory):
    return make_pr(GitRepo.init(tmp_path_factory.mktemp("pr") / "repo"))


def finding(**kw) -> Finding:
    d = dict(rule="PTC201", path="pkg/models.py", line=40, col=8, severity="error",
             message="`.item()` syncs with the device; keep the value as a tensor.",
             source="n = x.sum().item()", function="TinyGPT.forward", gb="GB0124",
             suggestion="        n = x.sum()", diff="added")
    d.update(kw)
    return Finding(**d)


def make_report(pr, base=None, head=None, findings=None, **kw):
    _, _, cs = pr
    rb, rh = results_pair()
    head_f = findings if findings is not None else [
        finding(), finding(rule="PTC101", line=3, source="print(x)", severity="warning",
                           message="print() in forward breaks the graph.", suggestion=None,
                           diff="added", gb=None),
        finding(rule="PTC301", path="pkg/layers.py", line=2, source="import torch",
                message="outside", diff="file", suggestion=None, gb=None)]
    rep = build_report(base_results=ResultsFile.from_json(base or rb),
                       head_results=ResultsFile.from_json(head or rh), base_findings=[],
                       head_findings=head_f, changeset=cs,
                       config=make_config(**kw),
                       selection=Selection(skipped={"skipped_one": "not affected"}),
                       base_sha=BASE_SHA, head_sha=HEAD_SHA)
    return rep.with_(timings={"total": 31.4})


def _model(rep: Report, name: str = "tiny_gpt") -> ModelDelta:
    return next(m for m in rep.models if m.name == name)


def with_model(rep: Report, name: str, **changes) -> Report:
    """`rep` with the entry of model `name` changed."""
    return rep.with_(models=tuple(m.with_(**changes) if m.name == name else m
                                  for m in rep.models))


def with_finding(rep: Report, index: int, **changes) -> Report:
    """`rep` with its `index`th finding changed."""
    findings = list(rep.findings)
    findings[index] = findings[index].with_(**changes)
    return rep.with_(findings=tuple(findings))


def munge(text: str) -> str:
    """Rewrite the volatile parts (versions, digests, durations) before comparing."""
    text = re.sub(r"sha256:[0-9a-f]+", "sha256:DIGEST", text)
    text = re.sub(r"torch [0-9][^ ]*", "torch VERSION", text)
    text = re.sub(r"pt2bot [0-9][^ <]*", "pt2bot VERSION", text)
    return re.sub(r"took [0-9.]+ s", "took N s", text)


def check_snapshot(name: str, text: str) -> None:
    path = os.path.join(SNAPSHOTS, name)
    text = munge(text)
    if os.environ.get("UPDATE_SNAPSHOTS") or not os.path.exists(path):
        os.makedirs(SNAPSHOTS, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not os.environ.get("UPDATE_SNAPSHOTS"):
            pytest.fail(f"snapshot {name} was missing and has been written; re-run")
    with open(path, encoding="utf-8") as fh:
        assert text == fh.read(), f"{name} changed; UPDATE_SNAPSHOTS=1 to accept"


def test_summary_snapshot(pr):
    md = render_summary(make_report(pr))
    assert md.splitlines()[0].startswith("### ❌ pt2bot: ")
    assert md.rstrip().endswith(SUMMARY_MARKER) and md.count("<!-- pt2bot:") == 1
    check_snapshot("summary_pr.md", md)


def test_summary_success_snapshot(pr):
    base, head = results_pair()
    keep = [m for m in base["models"] if m["name"] == "renamed_mlp"]
    head["models"] = [m for m in head["models"] if m["name"] == "renamed_mlp"]
    base["models"] = keep
    md = render_summary(make_report(pr, base, head, findings=[]))
    assert md.startswith("### ✅ pt2bot: No regressions")
    check_snapshot("summary_success.md", md)


def huge_report(pr, n_breaks=3000, n_findings=3000):
    rep = make_report(pr)
    b = _model(rep).new_breaks[0]
    rep = with_model(rep, "tiny_gpt", new_breaks=tuple(
        dict(b, line=i, source="y = x.item()  # ✓ é " + "z" * 300, fingerprint=f"{i:016x}")
        for i in range(1, n_breaks + 1)))
    f = rep.findings[0]
    # each its own problem: a fingerprint of its own (it hashes the source line)
    return rep.with_(findings=tuple(f.with_(line=i, message="ü" * 350, source=f"n = x[{i}]")
                                    for i in range(1, n_findings + 1)))


def test_summary_cap_truncates_longest_sections(pr):
    rep = huge_report(pr)
    md = render_summary(rep)
    assert len(md) <= 65_536
    assert md.splitlines()[0].startswith("### ❌")        # the verdict survives
    assert md.rstrip().endswith(SUMMARY_MARKER)           # and the footer + marker
    assert "more items not shown here" in md and "report.json" in md
    assert "Skipped models" in md                         # short sections kept whole
    assert md.count("```") % 2 == 0 and md.count("<details>") == md.count("</details>")
    check = render_check(rep)
    assert utf8_len(check["summary"]) <= 65_535 and "<!-- pt2bot:" not in check["summary"]
    assert len(check["annotations"]) == 500 and "more annotations" in check["text"]
    assert check["annotations"][0]["annotation_level"] == "failure"


@pytest.mark.parametrize("limit", [300, 2_000, 20_000])
def test_fit_never_exceeds_small_limits(pr, limit):
    md = render_summary(huge_report(pr, 300, 300), limit=limit)
    assert len(md) <= limit and md.rstrip().endswith(SUMMARY_MARKER)


HOSTILE = ("@octocat @org/team #1 <!-- pt2bot:summary --> <!-- pt2bot:fp=0123456789abcdef --> "
           "</details><img src=x onerror=alert(1)> [x](javascript:alert(1)) ``` ```` "
           "\u202eevil\u202c https://evil.example/x **bold** | pipe")


def hostile_report(pr):
    base, head = results_pair()
    for side in (base, head):
        for m in side["models"]:
            for b in m.get("graph_breaks") or []:
                b["reason"] = b["explanation"] = HOSTILE
                b["hints"] = [HOSTILE]
    tiny = next(m for m in head["models"] if m["name"] == "tiny_gpt")
    tiny["graph_breaks"][-1]["source"] = "n = x.item()  # " + HOSTILE
    tiny["graph_breaks"][-1]["gb_type"] = HOSTILE
    flaky = next(m for m in head["models"] if m["name"] == "flaky")
    flaky["error"]["message"] = HOSTILE + "\n" + HOSTILE
    flaky["name"] = "fl`a|ky @octocat"
    base["models"] = [m for m in base["models"] if m["name"] != "flaky"]
    # The condition is the user's source and model names are the user's config: both hostile.
    return make_report(pr, base, head, findings=[finding(message=HOSTILE,
                                                         suggestion="n = x  # " + HOSTILE,
                                                         condition=HOSTILE + " `x` ``y",
                                                         reached_by=("fl`a|ky @octocat",
                                                                     HOSTILE))])


def outside_code(text: str) -> str:
    """The text with fenced blocks and code spans removed (where HTML/links are live)."""
    text = re.sub(r"(?ms)^ *(`{3,})[^\n]*\n.*?^ *\1 *$", "", text)
    # A span opens at a backtick run that is not backslash-escaped (escape_inline writes \`)
    # and closes at the next run of exactly its length (CommonMark; no escapes inside).
    return re.sub(r"(?<![\\`])(`+)(?!`).+?(?<!`)\1(?!`)", "", text)


def assert_inert(text: str, *, markers: int) -> None:
    # Suggestions are verbatim code to commit: only marker-breaking applies inside them.
    suggestions = re.findall(r"(?ms)^(`{3,})suggestion\n(.*?)^\1$", text)
    assert all("<!-- pt2bot:" not in body for _, body in suggestions)
    text = re.sub(r"(?ms)^(`{3,})suggestion\n.*?^\1$", "", text)
    assert text.count("<!-- pt2bot:") == markers
    assert "@octocat" not in text and "@org/team" not in text
    assert "\u202e" not in text
    assert not re.search(r"(?<!&)#1\b", text)
    live = outside_code(text)
    assert "<img" not in live and "</details><img" not in live
    assert not re.search(r"(?<!\\)\]\(javascript:", live) and "https://evil" not in live


def test_hostile_text_in_summary(pr):
    rep = hostile_report(pr)
    md = render_summary(rep)
    assert_inert(md, markers=1)
    live = outside_code(md)
    assert live.count("<details>") == live.count("</details>") >= 2
    assert "@" + ZWSP + "octocat" in md


def test_hostile_text_in_review_and_check(pr):
    rep = hostile_report(pr)
    review = render_review(rep, lambda path, line: True)
    for c in review["comments"]:
        assert_inert(c["body"], markers=1)
        assert c["body"].rstrip().endswith(f"<!-- pt2bot:fp={c['fingerprint']} -->")
    assert_inert(review["body"], markers=0)
    check = render_check(rep)
    assert_inert(check["summary"], markers=0)
    for a in check["annotations"]:
        assert "<!--" not in a["message"] and "@octocat" not in a["message"]


def test_review_comments_only_on_diff_lines(pr):
    rep = make_report(pr)
    in_diff = {("pkg/models.py", 40)}
    review = render_review(rep, lambda path, line: (path, line) in in_diff)
    assert review["schema"] == "pt2bot.review/1" and review["head"] == HEAD_SHA
    # One comment at models.py:40: the finding predicts the GB0124 the smoke run found there,
    # so the two are one problem and one comment (see the merge tests below).
    assert sorted((c["path"], c["line"]) for c in review["comments"]) == [("pkg/models.py", 40)]
    by_fp = {c["fingerprint"]: c for c in review["comments"]}
    f = next(x for x in rep.findings if x.line == 40)
    assert "```suggestion\n        n = x.sum()\n```" in by_fp[f.fingerprint()]["body"]
    assert all(c["side"] == "RIGHT" for c in review["comments"])
    # The rest is listed in the body (the warning at line 3, flaky's failure).
    assert "pkg/models.py:3" in review["body"] and "pkg/flaky.py:7" in review["body"]
    # Without a predicate, the findings' own diff annotation decides.
    auto = render_review(rep)
    assert {(c["path"], c["line"]) for c in auto["comments"]} == {("pkg/models.py", 3),
                                                                   ("pkg/models.py", 40)}


def test_check_json(pr):
    rep = make_report(pr)
    check = render_check(rep)
    assert check["conclusion"] == "failure" and check["head_sha"] == HEAD_SHA
    assert check["title"] == rep.summary_title
    levels = {(a["path"], a["start_line"], a["title"]): a["annotation_level"]
              for a in check["annotations"]}
    assert levels[("pkg/models.py", 40, "PTC201")] == "failure"
    assert levels[("pkg/models.py", 3, "PTC101")] == "warning"
    assert levels[("pkg/flaky.py", 7, "model fails")] == "failure"
    # One annotation per problem: the new break at line 40 confirms the finding there.
    assert ("pkg/models.py", 40, "GB0124") not in levels
    at40 = [a for a in check["annotations"] if a["start_line"] == 40]
    assert len(at40) == 1 and "Confirmed by the smoke run: model" in at40[0]["message"]


def test_render_all_writes_the_directory(pr, tmp_path):
    rep = make_report(pr)
    rep.models[0].delta.latency[0]["ratio"] = float("nan")   # not valid JSON
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    out = tmp_path / "out"
    render_all(rep, str(out), env={"GITHUB_STEP_SUMMARY": str(step)})
    sarif = json.loads((out / "results.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} >= {"PTC201", "PTC101"}
    data = json.loads((out / "report.json").read_text())
    assert data["models"][0]["delta"]["latency"][0]["ratio"] is None
    from pt2bot.report.jsonreport import validation_errors
    assert validation_errors(data) == []
    summary = (out / "summary.md").read_text()
    assert step.read_text() == "earlier step\n" + summary
    # rendered from what report.json says: the NaN ratio is no comparison, not "nan"
    assert "nan" not in summary and "ratio" in summary
    assert json.loads((out / "review.json").read_text())["schema"] == "pt2bot.review/1"
    assert json.loads((out / "check.json").read_text())["conclusion"] == "failure"


# ---------------------------------------------------------------- one problem, one comment
def _break_of(rep, model="tiny_gpt"):
    return _model(rep, model).new_breaks[0]


def _on(review, path, line):
    return [c for c in review["comments"] if (c["path"], c["line"]) == (path, line)]


def test_finding_confirmed_by_a_break_is_one_comment(pr):
    rep = make_report(pr)
    f = next(x for x in rep.findings if x.line == 40)
    b = _break_of(rep)
    assert (b["path"], b["line"], b["gb"]) == (f.path, f.line, f.gb) == \
        ("pkg/models.py", 40, "GB0124")
    review = render_review(rep, lambda path, line: True)
    [c] = _on(review, "pkg/models.py", 40)
    body = c["body"]
    assert c["fingerprint"] == f.fingerprint()
    assert body.count("<!-- pt2bot:") == 1 and body.rstrip().endswith(f"fp={f.fingerprint()} -->")
    assert b["fingerprint"] not in json.dumps(review)       # the break has no comment of its own
    # The finding's actionable message and suggestion ...
    assert body.startswith("❌ **PTC201** `.item()` syncs with the device")
    assert "```suggestion\n        n = x.sum()\n```" in body
    # ... plus ONE confirmation line (with the GB link and type) and the break's hint.
    [line] = [ln for ln in body.splitlines() if ln.startswith("Confirmed by the smoke run:")]
    assert line.startswith("Confirmed by the smoke run: model `tiny_gpt` breaks here — [GB0124](")
    assert "Unsupported Tensor.item() call" in line
    assert "💡 Set \\`torch.\\_dynamo.config.capture\\_scalar\\_outputs = True\\`" in body
    assert "New graph break" not in body and "Predicts a graph break" not in body
    # (the fourth: the new recompile on line 18, which no finding covers)
    assert review["body"].startswith("**pt2bot** · ") and "· 4 inline comments" in review["body"]
    [rc] = _on(review, "pkg/models.py", 18)
    assert rc["body"].startswith("❌ **New recompile**")


def test_a_finding_a_new_break_confirms_is_a_failure_in_the_summary_too(pr):
    """flux's PTC201 under `guidance is not None`, demoted to a warning by its condition: the
    inline comment, confirmed by the new break, said ❌, the summary's static list ⚠️."""
    from pt2bot.report.summary import render_summary

    rep = make_report(pr)
    i = next(i for i, x in enumerate(rep.findings) if x.line == 40)
    rep = with_finding(rep, i, severity="warning", condition="guidance is not None")
    [c] = _on(render_review(rep, lambda path, line: True), "pkg/models.py", 40)
    assert c["body"].startswith("❌ **PTC201**")
    [line] = [ln for ln in render_summary(rep).splitlines() if "**PTC201**" in ln and "models.py:40" in ln]
    assert line.startswith("- ❌ **PTC201**"), line
    # without the break, the finding's own severity
    bare = with_model(rep, "tiny_gpt", new_breaks=())
    [line] = [ln for ln in render_summary(bare).splitlines() if "**PTC201**" in ln and "models.py:40" in ln]
    assert line.startswith("- ⚠️ **PTC201**"), line


def test_merged_comment_fingerprint_is_stable_across_reruns(pr):
    first = render_review(make_report(pr), lambda path, line: True)
    # Re-run: the same problem, the break now reported on a line shifted by an edit above
    # (the finding moved too); the comment keeps the finding's fingerprint.
    rep = make_report(pr)
    i, f = next((i, x) for i, x in enumerate(rep.findings) if x.rule == "PTC201")
    rep = with_finding(rep, i, line=44)
    _break_of(rep)["line"] = 44
    # (and the export failure placed on its line: moved with it)
    rep = dataclasses.replace(rep, reasons=tuple(
        {**r, "lines": [{**x, "line": 44 if x.get("line") == 40 else x.get("line")} for x in r["lines"]]}
        if r.get("lines") else r for r in rep.reasons))
    again = render_review(rep, lambda path, line: True)
    assert {c["fingerprint"] for c in again["comments"]} == \
        {c["fingerprint"] for c in first["comments"]}
    assert len(_on(again, "pkg/models.py", 44)) == 1
    # The break gone (fixed or not reached): still the finding's comment, no confirmation.
    rep = with_model(make_report(pr), "tiny_gpt", new_breaks=())
    [c] = _on(render_review(rep, lambda path, line: True), "pkg/models.py", 40)
    assert c["fingerprint"] == f.fingerprint() and "Confirmed" not in c["body"]
    assert "Predicts a graph break" in c["body"]
    # The finding gone, the break still there: the break's own comment (a different one).
    rep = make_report(pr, findings=[])
    b = _break_of(rep)
    [c] = _on(render_review(rep, lambda path, line: True), "pkg/models.py", 40)
    assert c["fingerprint"] == b["fingerprint"] and c["body"].startswith("❌ **New graph break**")


def test_different_problems_on_one_line_stay_separate(pr):
    # A finding that predicts no graph break is another problem than the break there.
    rep = make_report(pr, findings=[finding(rule="PTC401", gb=None, suggestion=None,
                                            message="hard-coded batch size")])
    review = render_review(rep, lambda path, line: True)
    bodies = [c["body"] for c in _on(review, "pkg/models.py", 40)]
    assert len(bodies) == 2 and not any("Confirmed by the smoke run" in x for x in bodies)
    assert sorted(x.split("**")[1] for x in bodies) == ["New graph break", "PTC401"]
    # A break on another line of the same file does not merge with the finding.
    rep = make_report(pr)
    _break_of(rep)["line"] = 41
    review = render_review(rep, lambda path, line: True)
    assert len(_on(review, "pkg/models.py", 40)) == len(_on(review, "pkg/models.py", 41)) == 1
    assert "Confirmed" not in _on(review, "pkg/models.py", 40)[0]["body"]


def test_break_merges_with_the_finding_predicting_its_gb(pr):
    two = [finding(rule="PTC201", gb="GB0124"),
           finding(rule="PTC777", gb="GB0170", source="if n > 0:", message="data-dependent branch",
                   suggestion=None)]
    rep = make_report(pr, findings=two)
    _break_of(rep)["gb"] = "GB0170"
    review = render_review(rep, lambda path, line: True)
    by_rule = {c["body"].split("**")[1]: c["body"] for c in _on(review, "pkg/models.py", 40)}
    assert set(by_rule) == {"PTC201", "PTC777"}                  # two problems, two comments
    assert "Confirmed by the smoke run" in by_rule["PTC777"]
    assert "Confirmed by the smoke run" not in by_rule["PTC201"]
    # Only one finding predicting some (other) break: the break still confirms it.
    rep = make_report(pr)
    _break_of(rep)["gb"] = "GB0170"
    [c] = _on(render_review(rep, lambda path, line: True), "pkg/models.py", 40)
    assert "model `tiny_gpt` breaks here — [GB0170](" in c["body"]


def test_two_models_breaking_on_the_line_make_one_comment(pr):
    rep = make_report(pr)
    tiny = _model(rep)
    other = tiny.with_(name="tiny_gpt_large", new_breaks=(
        dict(tiny.new_breaks[0], fingerprint="f" * 16, in_loop=True), *tiny.new_breaks[1:]))
    rep = rep.with_(models=(*rep.models, other))
    [c] = _on(render_review(rep, lambda path, line: True), "pkg/models.py", 40)
    [line] = [ln for ln in c["body"].splitlines() if ln.startswith("Confirmed")]
    assert "models `tiny_gpt`, `tiny_gpt_large` break here" in line
    assert line.count("[GB0124](") == 1 and "inside a loop" in line
    assert c["body"].count("💡") == 1                            # the same hint, once



def test_a_break_in_a_loop_of_an_outer_frame_names_that_frame(pr, tmp_path):
    """DINO's attention broke inside `VisionTransformer.forward`'s loop over its blocks:
    "at vision_transformer.py:88 in `forward` — inside a loop" read as the attention's own
    `forward`. The frame dynamo runs eagerly is the outermost of the break's stack."""
    import cmarkgfm

    from pt2bot.compare import _break_out
    from pt2bot.report.jsonreport import validation_errors
    from pt2bot.report.summary import break_block
    from pt2bot.results import GraphBreak

    b = GraphBreak.from_json({
        "gb": "GB0170", "gb_type": "Data-dependent branching", "path": "vit.py", "line": 88,
        "function": "forward", "source": "if attn.abs().max() > 1e4:", "in_loop": True,
        "user_stack": [{"path": "vit.py", "line": 213, "function": "forward"},
                       {"path": "vit.py", "line": 140, "function": "forward"},
                       {"path": "vit.py", "line": 88, "function": "forward"}]})
    out = _break_out(b, {})
    assert out["loop_frame"] == {"path": "vit.py", "line": 213, "function": "forward"}
    html = cmarkgfm.github_flavored_markdown_to_html(break_block(out))
    assert ("inside a loop of <code>forward</code> (<code>vit.py:213</code>): that whole frame "
            "runs eagerly") in html
    # a break in the loop of its own frame names no other
    alone = _break_out(GraphBreak.from_json({**b.to_json(), "user_stack": [
        {"path": "vit.py", "line": 88, "function": "forward"}]}), {})
    assert "loop_frame" not in alone
    rep = make_report(pr)
    tiny = _model(rep)
    rep = rep.with_(models=(tiny.with_(new_breaks=(
        dict(tiny.new_breaks[0], in_loop=True, loop_frame=out["loop_frame"]), *tiny.new_breaks[1:])),))
    out_dir = tmp_path / "out"
    render_all(rep, str(out_dir), env={})
    assert validation_errors(json.loads((out_dir / "report.json").read_text())) == []
    [c] = _on(render_review(rep, lambda path, line: True), "pkg/models.py", 40)
    assert ("(inside a loop of `forward` at `vit.py:213`: dynamo skips that whole frame and runs "
            "it eagerly)") in c["body"]


def test_review_shape_of_the_end_to_end_pr():
    """The shape `pt2bot review` produces for tests/test_review.py's PR (recorded from a run):
    PTC101 on the new `.item()` line predicts GB0124 and the breaker model breaks there;
    the moved print break is not new; flaky fails on head."""
    item = Finding(rule="PTC101", path="pkg/breaker.py", line=15, col=11, severity="error",
                   gb="GB0124", new=True, diff="added",
                   message="`.item()` copies the tensor to a Python number and breaks the "
                           "graph; keep it a tensor (drop `.item()`)",
                   hints=("Rule documentation: `pt2bot rules PTC101`",))
    rep = Report(head=HEAD_SHA, conclusion="failure",
                 summary_title="1 new static finding, 1 new graph break",
                 findings=(item, Finding(rule="PTC102", path="pkg/breaker.py", line=14, col=8,
                                         severity="warning", gb="GB0059", new=False,
                                         diff="added", message="print() breaks the graph")),
                 models=(
                     ModelDelta(name="breaker", new_breaks=(
                         {"gb": "GB0124", "path": "pkg/breaker.py", "line": 15,
                          "gb_type": "Unsupported Tensor.item() call with "
                                     "capture_scalar_outputs=False",
                          "hints": ["Set `torch._dynamo.config.capture_scalar_outputs = "
                                    "True` to include these operations."],
                          "fingerprint": "b60218ac314c86b8"},)),
                     ModelDelta(name="flaky", status="error", problems=(
                         {"kind": "fails_only_on_head", "path": "pkg/flaky.py", "line": 11,
                          "message": "fails on head but not on base: error (exception)"},))))
    review = render_review(rep, lambda path, line: (path, line) in {("pkg/breaker.py", 15),
                                                                    ("pkg/flaky.py", 11)})
    assert sorted((c["path"], c["line"]) for c in review["comments"]) == \
        [("pkg/breaker.py", 15), ("pkg/flaky.py", 11)]
    [c] = _on(review, "pkg/breaker.py", 15)
    assert c["fingerprint"] == item.fingerprint()
    assert c["body"].startswith("❌ **PTC101** `.item()` copies the tensor")
    assert "Confirmed by the smoke run: model `breaker` breaks here — [GB0124](" in c["body"]
    assert "💡 Rule documentation" in c["body"] and "💡 Set \\`torch" in c["body"]
    assert "b60218ac314c86b8" not in c["body"]


def test_hostile_text_renders_inert_with_a_real_gfm_renderer(pr):
    """Every rendered body through cmarkgfm (GitHub's renderer, raw HTML kept): no ping, no
    reference, no link but GB pages, no element the hostile text brought."""
    from test_security_publish import assert_inert, render
    rep = hostile_report(pr)
    for text in ("*" + HOSTILE, "pytorch/pytorch#456 GH-789 &#64;user www.evil.example",
                 "_GH-12_ __GH-34__ $\\color{red}{x}$ $$x$$ $`x`$"):
        rep = rep.with_(findings=(*rep.findings,
                                  rep.findings[0].with_(message=text, path=text + ".py")))
    review = render_review(rep, lambda path, line: True)
    bodies = [render_summary(rep), review["body"], render_check(rep)["summary"]]
    bodies += [c["body"] for c in review["comments"]]
    for body in bodies:
        assert_inert(body)
    r = render(bodies[0])
    assert {"table", "details", "summary", "sub"} <= {t for t, _ in r.elements}
    assert r.links and all("/gb/gb" in h for h in r.links)


# ---------------------------------------------------------------- condition and reachability
COND = "self.training and self.layerdrop > 0.0"


def _html(markdown: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def conditional_report(pr):
    return make_report(pr, findings=[
        # confirmed by the GB0124 break at line 40 (one comment), under a condition
        finding(condition=COND, reached_by=("tiny_gpt",)),
        # a demoted warning on a path no configured model took
        finding(rule="PTC102", line=3, source="print(x)", severity="info", gb=None,
                message="print() in forward breaks the graph.", suggestion=None,
                condition="self.verbose", reached_by=()),
        # on the default path, no smoke coverage known: neither is said
        finding(rule="PTC401", line=5, source="x.view(8, -1)", gb=None, suggestion=None,
                message="hard-coded size 8.")])


def test_a_finding_confirmed_by_the_export_failure_a_fix_removes_points_at_it():
    """PTC203 on the `if` under a `.item()` is confirmed by export failing on its line, and the
    verified suggestion on the lines around it removes that failure: its comment says so,
    where it read as a second problem beside the fix (complextorch's range-Doppler trial)."""
    from pt2bot.findings import CONFIRMED, SmokeCheck

    item = finding(rule="PTC101", line=29, source="peak = z.abs().max().item()", gb="GB0124",
                   suggestion=None)
    branch = finding(rule="PTC203", line=30, source="if peak > 0:", gb=None, suggestion=None,
                     smoke=SmokeCheck(CONFIRMED, ("radar",), "torch.export failed (data_dependent) at pkg/models.py:30"))
    brk = {"path": "pkg/models.py", "line": 29, "gb": "GB0124", "gb_type": "Unsupported Tensor.item() call",
           "fingerprint": "53385eba5d71ac64"}
    fixes = {"budget_s": 300.0, "spent_s": 9.0, "settings": [],
             "targets": [{"kind": "break", "model": "radar", **brk, "fixed_by": "c0", "reason": None},
                         {"kind": "export", "model": "radar", "path": "pkg/models.py", "line": 30, "gb": None,
                          "gb_type": "data_dependent", "fingerprint": None, "fixed_by": "c0", "reason": None}],
             "candidates": [{"id": "c0", "rule": "PTC101", "title": "keep `peak` a tensor", "path": "pkg/models.py",
                             "start_line": 29, "end_line": 31, "lines": ["        z = z / peak"] * 3,
                             "verified": True, "passed": True, "models": ["radar"], "findings": [item.fingerprint()],
                             "targets": [0, 1], "evidence": "verified on `radar`: GB0124 gone", "reason": None}]}
    report = Report(head="h" * 40, base="b" * 40, findings=(item, branch), fixes=fixes,
                    models=(ModelDelta(name="radar", new_breaks=(brk,)),))
    comments = {c["line"]: c for c in render_review(report, lambda path, line: True)["comments"]}
    assert comments[31]["body"].count("```suggestion") == 1
    assert "✅ **Verified fix** (keep `peak` a tensor): the suggestion on lines 29-31 fixes this too." \
        in comments[30]["body"], comments[30]["body"]


def test_the_recompiles_of_one_break_in_several_models_are_one_line_naming_them():
    """guided-diffusion's `.item()` clamp: three models break on the line, two of them with
    recompiles that follow; the comment read "↪ 1 recompile follows" and "↪ 2 recompiles
    follow", no model named."""
    from pt2bot.report.review import finding_body

    brk = {"path": "pkg/models.py", "line": 40, "gb": "GB0124", "gb_type": "Unsupported Tensor.item() call"}
    pairs = [("unet_cond", dict(brk, caused_recompiles=1)), ("unet_ss", dict(brk, caused_recompiles=0)),
             ("superres", dict(brk, caused_recompiles=2))]
    body = finding_body(finding(), pairs)
    [line] = [ln for ln in body.splitlines() if ln.startswith("↪")]
    assert line.startswith("↪ 3 recompiles follow from the new break at `pkg/models.py:40` (1 on `unet_cond`, "
                           "2 on `superres`): the frames the break splits off"), line


def test_a_reached_claim_the_run_cannot_judge_says_so():
    """A recompile claim on a line the smoke run executed, neither confirmed nor refuted (a
    mask kept across calls recompiles only where a call brings another dtype): "reached by"
    alone read as the run having had a say (openai/CLIP's PTC110)."""
    from pt2bot.report.findings_text import reached as plain_reached
    from pt2bot.report.summary import reached

    kept = finding(rule="PTC110", line=7, reached_by=("clip",), gb=None, suggestion=None)
    assert reached(kept) == ("reached by `clip`; the run saw no recompile there, which shows only where "
                             "what the finding names changes between calls")
    assert plain_reached(kept, quote="").startswith("reached by clip; the run saw no recompile there")
    # an export claim: what the export did not record, not that it saw the line (export stops at
    # its first failure; flux's size cap, under a guidance test that stopped it, read "the run
    # saw no export failure there")
    sized = finding(rule="PTC301", line=7, reached_by=("flux_dev",), gb=None, suggestion=None)
    assert reached(sized) == ("reached by `flux_dev`; the run's export recorded no failure on this line "
                              "(export stops at its first failure, and what fails depends on the dims "
                              "declared dynamic)")
    # a break claim the run judges, and a line no model ran: nothing added
    assert reached(finding(rule="PTC101", line=7, reached_by=("clip",))) == "reached by `clip`"
    assert reached(finding(rule="PTC110", line=7, reached_by=())) == "not reached by any configured model"


def test_review_comment_says_when_and_whether(pr):
    review = render_review(conditional_report(pr), lambda path, line: True)
    [c40] = _on(review, "pkg/models.py", 40)
    first = c40["body"].splitlines()[0]
    assert first.startswith("❌ **PTC201** ") and first.endswith(f" (on the path where `{COND}`)")
    # the model that breaks there ran the line: the confirmation says it, once
    assert "Smoke run: reached by" not in c40["body"]
    assert "Confirmed by the smoke run: model `tiny_gpt`" in c40["body"]
    # GitHub's renderer: the guard is one code span, with its `>` as text.
    assert "(on the path where <code>self.training and self.layerdrop &gt; 0.0</code>)" in _html(c40["body"])
    [c3] = _on(review, "pkg/models.py", 3)
    assert c3["body"].splitlines()[0] == ("ℹ️ **PTC102** print() in forward breaks the graph. "
                                          "(on the path where `self.verbose`)")
    assert "Smoke run: not reached by any configured model." in c3["body"]
    [c5] = _on(review, "pkg/models.py", 5)
    assert "(when" not in c5["body"] and "Smoke run:" not in c5["body"]
    # Outside the diff: the listed first line keeps the condition.
    review = render_review(conditional_report(pr), lambda path, line: False)
    assert f"(on the path where `{COND}`)" in review["body"]


def test_summary_findings_list_says_when_and_whether(pr):
    md = render_summary(conditional_report(pr))
    lines = {ln.split("`")[1]: ln for ln in md.splitlines() if ln.startswith("- ") and "**PTC" in ln}
    assert lines["pkg/models.py:40"].endswith(f" (on the path where `{COND}`) · reached by `tiny_gpt`")
    assert lines["pkg/models.py:3"].startswith("- ℹ️ **PTC102**")
    assert lines["pkg/models.py:3"].endswith(
        " (on the path where `self.verbose`) · not reached by any configured model")
    assert lines["pkg/models.py:5"].endswith("hard-coded size 8.")
    html = _html(md)
    assert "(on the path where <code>self.verbose</code>) · not reached by any configured model" in html
    # Many models: five named, the rest counted.
    rep = with_finding(conditional_report(pr), 0, reached_by=tuple(f"m{i}" for i in range(8)))
    assert "reached by `m0`, `m1`, `m2`, `m3`, `m4` and 3 more" in render_summary(rep)


def test_check_annotations_say_when_and_whether(pr):
    check = render_check(conditional_report(pr))
    by_line = {a["start_line"]: a for a in check["annotations"] if a["path"] == "pkg/models.py"}
    a40 = by_line[40]
    assert a40["annotation_level"] == "failure"
    assert a40["message"].startswith("`.item()` syncs with the device; keep the value as a "
                                     f"tensor. (on the path where {COND})\nSmoke run: reached by tiny_gpt.")
    # info never fails the check: a notice, whatever the diff says.
    assert by_line[3]["annotation_level"] == "notice"
    assert by_line[3]["message"] == ("print() in forward breaks the graph. (on the path where self.verbose)"
                                     "\nSmoke run: not reached by any configured model.")
    assert by_line[5]["message"] == "hard-coded size 8." and by_line[5]["annotation_level"] == \
        "failure"


def test_hostile_condition_and_model_names_stay_code(pr):
    rep = hostile_report(pr)
    [c] = [c for c in render_review(rep, lambda path, line: True)["comments"]
           if c["path"] == "pkg/models.py" and c["line"] == 40 and "**PTC201**" in c["body"]]
    first = c["body"].splitlines()[0]
    # The whole condition is inside one code span on the first line: no backtick run in it
    # closes the span early, nothing after it is live.
    html = _html(first)
    assert html.count("<code>") == 1 and "</code>)" in html
    assert "@octocat" not in first and "\u202e" not in c["body"]
    assert c["body"].count("<!-- pt2bot:") == 1


# ---------------------------------------------------------------- our code spans in messages
# A finding's message is our prose with code spans around the user's source
# (`` `{name}` breaks the graph ``): rendered, each span is code and the prose is escaped
# prose; the JSON keeps the message text as the rule wrote it.
SPAN_MESSAGES = {
    40: "`.item()` copies the tensor to a Python number; keep it a tensor (drop `.item()`)",
    41: "Python loop over `range(<size>)` unrolls per size; use `torch.arange(n)` instead",
    # the user's source inside our spans, and prose around them, all hostile
    42: "`x @octocat <img src=x> $x$ [a](https://evil.example)` then <b>b</b> *em* #1 "
        "[l](javascript:alert(1)) `` a`b `` done",
}


def span_report(pr):
    return make_report(pr, findings=[
        finding(line=line, message=msg, source=f"y = {line}", suggestion=None,
                condition="self.training" if line == 40 else None, hints=(
                    "Rule documentation: `pt2bot rules PTC201`",))
        for line, msg in SPAN_MESSAGES.items()])


def _bodies(rep):
    review = render_review(rep, lambda path, line: True)
    outside = render_review(rep, lambda path, line: False)
    comments = {c["line"]: c["body"] for c in review["comments"]}
    return render_summary(rep), comments, outside["body"]


def test_code_spans_in_our_messages_render_as_code(pr):
    from test_security_publish import assert_inert

    rep = span_report(pr)
    summary, comments, outside = _bodies(rep)
    item = ("<code>.item()</code> copies the tensor to a Python number; keep it a tensor "
            "(drop <code>.item()</code>) (on the path where <code>self.training</code>)")
    loop = ("Python loop over <code>range(&lt;size&gt;)</code> unrolls per size; use "
            "<code>torch.arange(n)</code> instead")
    for body, expected in ((summary, (item, loop)), (outside, (item, loop)),
                           (comments[40], (item,)), (comments[41], (loop,))):
        assert_inert(body)
        ours = "\n\n".join(ln for ln in body.splitlines() if "**PTC" in ln)
        html = _html(ours)
        assert "\\`" not in ours and "&amp;lt;" not in html
        assert all(e in html for e in expected), html
    assert_inert(comments[42])
    first = _html(comments[42].splitlines()[0])
    # the hostile span stays one code span; the prose around it stays text
    assert "<code>x @\u200bocta" in first or "<code>x @\u200b" in first
    assert "&lt;b&gt;b&lt;/b&gt; *em* #\u200b1" in first and "<b>" not in first
    assert "<code>a`b</code> done" in first
    assert "💡 Rule documentation: <code>pt2bot rules PTC201</code>" in _html(comments[40])
    # report.json (and `pt2bot check --format json`) keep the rule's text
    assert [f["message"] for f in rep.to_dict()["findings"]] == list(SPAN_MESSAGES.values())


def test_reasons_say_their_lines_and_the_header_groups_them(pr):
    rep = make_report(pr)
    at = {r["code"]: [(x["path"], x["line"]) for x in r.get("lines", ())] for r in rep.reasons}
    # the static finding, the break and head's export failure are all on the `.item()` line;
    # the new recompile's guard on its own; latency and a failing model have no line
    assert at["static_findings"] == at["new_graph_breaks"] == at["export_broken"] == [
        ("pkg/models.py", 40)]
    assert at["new_recompiles"] == [("pkg/models.py", 18)]
    assert at["latency_regression"] == [] and at["fails_only_on_head"] == []
    head = render_summary(rep).split("#### ", 1)[0]
    assert "- ❌ `tiny_gpt` at `pkg/models.py:40`: torch.export newly fails\n" in head
    assert "- ❌ `pkg/models.py:40`: 1 new static finding(s) at or above 'error'\n" in head
    assert ("📍 These failures are on 2 lines: `pkg/models.py:18` (recompile), "
            "`pkg/models.py:40` (static finding, graph break, export). Latency is measured on "
            "the whole model, with no line of its own.") in head


def test_lines_behind_only_where_failures_share_few_lines():
    from pt2bot.report.summary import lines_behind

    def reason(code, *lines, level="failure"):
        return {"code": code, "level": level, "message": "m",
                "lines": [{"path": "a.py", "line": n} for n in lines]}
    # one located failure: its bullet already says where
    assert lines_behind([reason("new_graph_breaks", 3), reason("latency_regression")]) == ""
    # warnings are not failures, and are not grouped
    assert lines_behind([reason("new_graph_breaks", 3),
                         reason("new_recompiles", 3, level="warning")]) == ""
    two = lines_behind([reason("new_graph_breaks", 3), reason("export_broken", 3)])
    assert two == "📍 These failures are on 1 line: `a.py:3` (graph break, export)."
    # more lines than a reader groups at a glance: the bullets say them
    assert lines_behind([reason("static_findings", *range(1, 7)),
                         reason("new_graph_breaks", 1)]) == ""
    both = lines_behind([reason("new_graph_breaks", 3), reason("export_broken", 3),
                         reason("compile_regression"), reason("latency_regression")])
    assert both.endswith("Compile cost and latency are measured on the whole model, with no "
                         "line of their own.")


def test_one_line_says_the_same_failure_of_several_models(pr):
    """One `if` in a function four models run: the same break, the same export failure and
    compile-cost warnings of their own figures, each once per model, read as thirteen lines
    (openai/CLIP); each is one line with its models, and a different message stays apart."""
    import cmarkgfm

    from pt2bot.report.summary import render_header, terminal_reasons

    at = [{"path": "clip/model.py", "line": 347}]
    reasons = [{"code": "static_findings", "level": "failure", "model": None, "lines": at, "count": 1,
                "message": "1 new static finding(s) at or above 'error'"}]
    for name in ("vit32", "vit64", "rn64", "text"):
        reasons += [
            {"code": "new_graph_breaks", "level": "failure", "model": name, "lines": at, "count": 1,
             "message": "1 new graph break(s) (allowed: 0)"
             + ("; 1 recompile follows from it" if name != "text" else "")},
            {"code": "export_broken", "level": "failure", "model": name, "lines": at, "count": 1,
             "message": "torch.export newly fails"}]
    for name, pct in (("vit32", 66), ("vit64", 113), ("rn64", 46), ("text", 41)):
        reasons.append({"code": "compile_regression", "level": "warning", "model": name,
                        "follows_breaks": True, "change_pct": pct, "message": (
            f"first compile {pct}% costlier (CPU s 0.90 → 1.49; threshold 30%); it follows from the "
            "new break: graphs 1 → 4, while the work compiled, FX nodes 172 → 182, is within the threshold")})
    html = cmarkgfm.github_flavored_markdown_to_html(render_header(make_report(pr).with_(reasons=tuple(reasons))))
    items = [li for li in html.split("<li>")[1:]]
    assert len(items) == 5, html
    assert items[1].startswith("❌ <code>vit32</code>, <code>vit64</code>, <code>rn64</code> at "
                               "<code>clip/model.py:347</code>: 1 new graph break(s) (allowed: 0); 1 recompile")
    assert items[2].startswith("❌ <code>text</code> at <code>clip/model.py:347</code>: 1 new graph break(s) "
                               "(allowed: 0)</li>")
    assert items[3].startswith("❌ <code>vit32</code>, <code>vit64</code>, <code>rn64</code>, <code>text</code> "
                               "at <code>clip/model.py:347</code>: torch.export newly fails")
    assert items[4].startswith("⚠️ <code>vit32</code>, <code>vit64</code>, <code>rn64</code>, <code>text</code>: "
                               "first compile 41% to 113% costlier; it follows from the new breaks")
    # and the title counts what there is to fix: one line's break, in four models
    from pt2bot.verdict import summary_title
    assert summary_title("failure", reasons, [], []) == ("1 new static finding, 1 new graph break in 4 "
                                                         "models, 1 export regression in 4 models")
    two_lines = [dict(reasons[1], lines=[{"path": "a.py", "line": 1}]), reasons[3]]
    assert summary_title("failure", two_lines, [], []) == "2 new graph breaks"
    # two lines in three models: the lines counted, which the models' own counts add up past
    spread = [reasons[1], dict(reasons[3], lines=at + [{"path": "clip/model.py", "line": 350}], count=2), reasons[5]]
    assert summary_title("failure", spread, [], []) == "new graph breaks on 2 lines in 3 models"
    # two findings on one line (two `.item()`s) are said as on one line (MAE's and S4's users)
    at = [{"path": "m.py", "line": 215}]
    two_items = [{"code": "static_findings", "level": "failure", "model": None, "count": 2, "lines": at + at,
                  "message": "2 new static finding(s) at or above 'error'"}]
    assert summary_title("failure", two_items, [], []) == "2 new static findings on 1 line"
    two_items[0]["lines"] = at + [{"path": "m.py", "line": 216}]
    assert summary_title("failure", two_items, [], []) == "2 new static findings"
    five = [dict(r, model=f"m{i}") for i, r in enumerate([reasons[2]] * 5)]
    assert terminal_reasons(five) == ["  ✗ m0, m1, m2 and 2 more models at clip/model.py:347: torch.export newly fails"]


def test_the_terminal_gets_the_reasons_as_safe_plain_lines(pr):
    from pt2bot.report.summary import terminal_reasons
    lines = terminal_reasons(list(make_report(pr).reasons))
    assert "  ✗ tiny_gpt at pkg/models.py:40: torch.export newly fails" in lines
    assert lines[-1] == ("  These failures are on 2 lines: pkg/models.py:18 (recompile), pkg/models.py:40 "
                         "(static finding, graph break, export). Latency is measured on the whole "
                         "model, with no line of its own.")
    # a path from a fork's tree cannot start a workflow command on a line of its own
    hostile = [{"code": "new_graph_breaks", "level": "failure", "model": None, "message": "1 new",
                "lines": [{"path": "a.py\n::error::pwned", "line": 3}]}]
    [line] = terminal_reasons(hostile)
    assert "\n" not in line and not line.lstrip().startswith("::")


def test_a_break_inside_an_installed_package_says_so_in_its_comment(pr):
    rep = make_report(pr)
    tiny = _model(rep)
    rep = rep.with_(models=(tiny.with_(new_breaks=(
        dict(tiny.new_breaks[0], inside="torchhd/embeddings.py:411"), *tiny.new_breaks[1:])),))
    [c] = _on(render_review(rep, lambda path, line: True), "pkg/models.py", 40)
    [line] = [ln for ln in c["body"].splitlines() if ln.startswith("Confirmed")]
    assert "inside `torchhd/embeddings.py:411` (an installed package)" in line, line
    # and a break with no finding on its line, in a comment of its own (a new user's four
    # breaks inside mixup, each on the one line calling CutMix, named none of its places)
    from pt2bot.report.review import break_body
    body = break_body(dict(tiny.new_breaks[0], inside="mixup/methods.py:53"), "tiny_gpt")
    assert body.splitlines()[0].endswith("(model `tiny_gpt`) inside `mixup/methods.py:53` (an installed package)")


def test_several_breaks_placed_on_one_line_are_one_comment(pr):
    """A new user's CutMix call: four breaks inside mixup, each placed on the one line calling
    it, were four comments stacked on that line."""
    import cmarkgfm

    rep = make_report(pr)
    tiny = _model(rep)
    b = _break_of(rep)
    inner = [dict(b, gb=gb, gb_type=kind, inside=inside, fingerprint=f"{i:016x}", hints=["file an issue"])
             for i, (gb, kind, inside) in enumerate((
                 ("GB0007", "Attempted to call function marked as skipped", "mixup/base.py:34"),
                 ("GB0294", "attempted to trace numpy function unsupported by PyTorch", "mixup/methods.py:44")), 1)]
    # (and no finding on the line, which would take one of them as its confirmation)
    rep = rep.with_(models=(tiny.with_(new_breaks=tuple(inner)),),
                    findings=tuple(f for f in rep.findings if f.line != b["line"]))
    review = render_review(rep, lambda path, line: True)
    [c] = _on(review, b["path"], b["line"])
    lines = c["body"].splitlines()
    assert lines[0] == "❌ **2 new graph breaks** on this line (model `tiny_gpt`):", c["body"]
    assert lines[1].startswith("- [GB0007](") and lines[1].endswith(
        "(model `tiny_gpt`) inside `mixup/base.py:34` (an installed package)"), lines[1]
    assert lines[2].startswith("- [GB0294](") and "inside `mixup/methods.py:44`" in lines[2], lines[2]
    assert "file an issue" not in c["body"]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert html.count("<li>") == 2, html


def test_a_long_finding_message_in_the_summary_ends_at_a_clause():
    """PTC101's advice, 470 characters, was cut mid-clause in the summary's list ("under
    `fullgraph=True` torch captures it as …"); the inline comment has it whole."""
    from pt2bot.report.summary import finding_line

    message = "; ".join(f"clause {i} " + "x" * 60 for i in range(8))
    line = finding_line(finding(message=message))
    assert "clause 4 " + "x" * 60 + "; …" in line and "clause 5" not in line
    assert finding_line(finding(message="short; advice")).count("short; advice") == 1
