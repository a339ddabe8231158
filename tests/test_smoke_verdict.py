"""Confirmed or not observed: static claims held against what dynamo recorded on their lines.

Torch-free: recorded results (RUN dicts as docs/formats.md describes them) joined with findings
by pt2bot/reach.py, then through the verdict and every renderer. The end-to-end half, on a
tiny real model, is tests/test_smoke_verdict_e2e.py.
"""
from __future__ import annotations

import json

import pytest
from compare_fixtures import Selection, make_config, make_pr, results_pair
from gitrepo import GitRepo

from pt2bot.compare import build_report
from pt2bot.findings import Finding, SmokeCheck
from pt2bot.reach import Judge, mark_reached, mark_reached_dicts
from pt2bot.report.check import render_check
from pt2bot.report.findings_text import render_findings
from pt2bot.report.review import render_review
from pt2bot.report.sarif import findings_to_sarif
from pt2bot.report.summary import render_summary
from pt2bot.results import ResultsFile
from pt2bot.static.check import exit_code


def finding(rule: str = "PTC101", line: int = 12, **kw) -> Finding:
    gb = {"PTC101": "GB0124", "PTC105": "GB0059", "PTC201": "GB0170"}.get(rule)
    d = dict(rule=rule, path="pkg/m.py", line=line, col=8, severity="error" if gb else "warning",
             message=f"{rule} claim", source=f"line {line}", function="Net.forward", gb=gb)
    d.update(kw)
    return Finding(**d)


def run(name: str = "a", *, breaks=(), traced: str | None = "10-20", covered: str = "1-40",
        reasons=(), specialized=(), export=None, **extra) -> dict:
    out = {"name": name, "status": "ok", "graph_breaks": list(breaks),
           "recompiles": {"count": len(reasons), "cases": [
               {"shape": {"batch": 2}, "compiled": True, "recompiles": 0, "reasons": []},
               {"shape": {"batch": 8}, "compiled": True, "recompiles": len(reasons),
                "reasons": list(reasons)}]},
           "specialized": list(specialized), "export": export or {"ok": True},
           "coverage": {"pkg/m.py": covered}}
    if traced is not None:
        out["traced_lines"] = {"pkg/m.py": traced}
    out.update(extra)
    return out


def brk(line: int, gb: str = "GB0124", stack=(), **kw) -> dict:
    return {"gb": gb, "gb_type": "t", "path": "pkg/m.py", "line": line, "function": "forward",
            "count": 1, "in_loop": False,
            "user_stack": [{"path": "pkg/m.py", "line": n, "function": "f"} for n in stack]
            + [{"path": "pkg/m.py", "line": line, "function": "forward"}], **kw}


def results(*runs: dict, torch: str = "2.13.0+cpu") -> dict:
    return {"schema": "pt2bot.results/1", "torch": torch, "models": list(runs)}


def one(f: Finding, res: dict) -> Finding:
    [got] = mark_reached([f], res)
    return got


# ----------------------------------------------------------------------------- break claims

def test_a_break_with_the_predicted_gb_on_the_line_confirms_the_claim():
    got = one(finding(), results(run(breaks=[brk(12)])))
    assert got.smoke == SmokeCheck("confirmed", ("a",), "GB0124 at pkg/m.py:12")
    assert got.severity == "error" and got.reached_by == ("a",)
    assert got.to_dict()["smoke"] == {"status": "confirmed", "models": ["a"],
                                      "evidence": "GB0124 at pkg/m.py:12"}
    # on a multi-line finding, any of its lines
    assert one(finding(line=11, end_line=13), results(run(breaks=[brk(12)]))).confirmed
    # in a loop: the evidence says the frame ran eagerly
    got = one(finding(), results(run(breaks=[brk(12, in_loop=True)])))
    assert got.smoke.evidence == "GB0124 at pkg/m.py:12 (in a loop: the frame ran eagerly)"


def test_a_break_of_another_gb_neither_confirms_nor_refutes():
    """`print(x.item())`: dynamo breaks on the `.item()` first; the print's claim is masked."""
    got = one(finding("PTC105"), results(run(breaks=[brk(12, "GB0124")])))
    assert got.smoke is None and got.severity == "error"


def test_a_traced_line_with_no_break_is_not_observed_and_demoted():
    f = finding()
    got = one(f, results(run(name="tiny_gpt", breaks=[brk(30)])))
    assert got.refuted and got.smoke.status == "not_observed"
    assert got.smoke.models == ("tiny_gpt",) and got.smoke.severity == "error"
    assert got.severity == "info"
    assert got.smoke.evidence == ("dynamo traced the line on batch=2 and did not break the "
                                  "graph there (graph-break pass, torch 2.13.0+cpu)")
    assert got.fingerprint() == f.fingerprint()        # the same finding, judged
    back = Finding.from_dict(json.loads(json.dumps(got.to_dict())))
    assert back == got                                  # partial.json round trip


def test_refuting_needs_every_model_that_ran_the_line_to_have_traced_it():
    # b ran line 12 eagerly (another shape case), its graph-break pass did not trace it
    res = results(run("a"), run("b", traced="30-40"))
    got = one(finding(), res)
    assert got.reached_by == ("a", "b") and got.smoke is None and got.severity == "error"
    # b's results from before `traced_lines` was recorded: b cannot tell either
    assert one(finding(), results(run("a"), run("b", traced=None))).smoke is None
    # a model that did not run the line does not matter
    got = one(finding(), results(run("a"), run("c", covered="30-40", traced="30-40")))
    assert got.reached_by == ("a",) and got.refuted


def test_a_break_with_a_frame_on_the_line_blocks_the_refutation():
    """A break in a helper the line calls: dynamo did break while running the line."""
    got = one(finding(), results(run(breaks=[brk(33, "GB0170", stack=[12])])))
    assert got.smoke is None
    # and does not confirm it (another line's break)
    assert not got.confirmed


def test_a_claim_under_a_condition_is_never_refuted():
    got = one(finding(condition="self.training"), results(run()))
    assert got.smoke is None and got.severity == "error"


def test_untraced_or_unreached_lines_keep_their_finding():
    assert one(finding(line=25), results(run())).smoke is None          # ran eagerly only
    got = one(finding(line=50), results(run()))                          # nobody ran it
    assert got.reached_by == () and got.smoke is None and got.severity == "error"
    # a graph-break pass that failed recorded no breaks: its traced lines say nothing
    bad = run(traced="10-20")
    bad["graph_breaks"] = None
    assert one(finding(), results(bad)).smoke is None
    # a failed model says nothing at all
    assert one(finding(), results({"name": "a", "status": "error"})).smoke is None


def test_confirmation_needs_no_coverage():
    """Results from before coverage was recorded still carry the breaks."""
    old = {"name": "a", "status": "ok", "graph_breaks": [brk(12)]}
    got = one(finding(), results(old))
    assert got.reached_by is None and got.confirmed


def test_judging_again_undoes_the_previous_verdict():
    """A sharded review's merge judges shard 1's findings again with every model."""
    refuted = one(finding(), results(run("a")))
    assert refuted.severity == "info"
    again = one(refuted, results(run("a"), run("b", traced="30-40")))
    assert again.smoke is None and again.severity == "error"
    confirmed = one(refuted, results(run("a", breaks=[brk(12)])))
    assert confirmed.confirmed and confirmed.severity == "error"
    assert one(confirmed, None).smoke is None
    # report.json's dict form is judged the same way
    [d] = mark_reached_dicts([refuted.to_dict()], results(run("a", breaks=[brk(12)])))
    assert d["smoke"]["status"] == "confirmed" and d["severity"] == "error"


# ----------------------------------------------------------------------------- other claims

def _reason(line: int | None, kind: str = "guard", guard: str = "2 <= L['x'].size()[0] <= 4"):
    return {"guard": guard, "dim": "batch", "kind": kind, "path": "pkg/m.py" if line else None,
            "line": line, "source": "if x.shape[0] > 4:"}


def test_a_recompile_claim_is_confirmed_by_a_guard_on_its_line_and_never_refuted():
    f = finding("PTC110", line=14)
    got = one(f, results(run(reasons=[_reason(14, guard="self.calls == 4")])))
    assert got.smoke.status == "confirmed"
    assert got.smoke.evidence == "recompile on guard self.calls == 4 at pkg/m.py:14 (batch=8)"
    # torch's own size-1 guard is nobody's claim
    assert one(f, results(run(reasons=[_reason(14, kind="size_one")]))).smoke is None
    # traced, and nothing recompiled: not refuted (it depends on calls and state)
    got = one(f, results(run()))
    assert got.smoke is None and got.severity == "warning"


def test_an_export_claim_is_confirmed_by_export_a_specialisation_or_a_guard_there():
    f = finding("PTC301", line=6)
    exp = {"ok": False, "kind": "constraint_violation", "path": "pkg/m.py", "line": 6}
    assert one(f, results(run(export=exp))).smoke.evidence == \
        "torch.export failed (constraint_violation) at pkg/m.py:6"
    spec = {"dim": "batch", "value": 8, "path": "pkg/m.py", "line": 6, "source": "x.view(8, -1)"}
    assert one(f, results(run(specialized=[spec]))).smoke.evidence == \
        "dim batch specialised to 8 at pkg/m.py:6"
    assert one(f, results(run(reasons=[_reason(6)]))).confirmed
    # elsewhere: nothing
    assert one(f, results(run(export={**exp, "line": 9}))).smoke is None
    # a shape branch on a dim the matrix holds constant shows nothing: not exercised, kept
    got = one(f, results(run()))
    assert got.smoke is None and got.severity == "warning"


def test_an_export_claim_where_every_model_exports_with_its_dynamic_dims_is_not_observed():
    """Swin's padding `if H < self.img_size[0]:` (PTC301), with only `batch` dynamic and H and W
    pinned by the model's own `assert`: posted as a warning, it could not be acted on. Every
    model that ran the line exported with its dynamic dims kept dynamic and equal to eager."""
    f = finding("PTC301", line=6)
    ok = {"ok": True, "static_dims": [], "cases": [{"shape": {"batch": 2}, "match": True},
                                                   {"shape": {"batch": 8}, "match": True}]}
    got = one(f, results(run("a", export=ok), run("b", export=ok)))
    assert (got.smoke.status, got.severity, got.smoke.severity) == ("not_observed", "info", "warning")
    assert got.smoke.evidence.startswith("torch.export with the configured dynamic dims succeeded on "
                                         "`a`, `b`, which ran the line")
    # one model that failed export, pinned a dynamic dim, or differed on a case: kept as it was
    for bad in ({"ok": False, "kind": "constraint_violation", "path": "pkg/m.py", "line": 30},
                {**ok, "static_dims": [{"dim": "batch", "input": "x", "axis": 0, "value": 2}]},
                {**ok, "cases": [{"shape": {"batch": 2}, "match": False}]}):
        got = one(f, results(run("a", export=ok), run("b", export=bad)))
        assert got.smoke is None and got.severity == "warning", bad
    # a model that did not run the line does not count; a condition is never refuted
    got = one(f, results(run("a", export=ok), run("b", covered="30-40")))
    assert got.smoke.status == "not_observed" and got.smoke.models == ("a",)
    assert one(finding("PTC301", line=6, condition="self.training"), results(run("a", export=ok))).smoke is None


def test_claims_of_several_models_are_joined():
    res = results(run("a", breaks=[brk(12)]), run("b", breaks=[brk(12)]), run("c"))
    got = one(finding(), res)
    assert got.smoke.models == ("a", "b") and got.smoke.evidence == "GB0124 at pkg/m.py:12"
    # one model confirms, another traced it cleanly: confirmed (it does break for `a`)
    assert one(finding(), results(run("a", breaks=[brk(12)]), run("c"))).confirmed


def test_rules_without_a_run_claim_are_left_alone():
    assert one(finding("PTC401", line=12), results(run())).smoke is None   # claim: graphs
    assert one(finding("PTC999", line=12), results(run())).smoke is None   # not a rule
    assert Judge(None).check(finding()) is None


# ----------------------------------------------------------------------------- the check

def test_a_refuted_claim_never_fails_a_check():
    refuted = one(finding(), results(run()))
    confirmed = one(finding(line=13), results(run(breaks=[brk(13)])))
    assert exit_code([refuted], "error") == 0 and exit_code([refuted], "warning") == 0
    assert exit_code([refuted, confirmed], "error") == 1
    # even a verdict that left the severity as it was (not what reach.py writes)
    stale = finding().with_(smoke=SmokeCheck("not_observed", ("a",), "x", "error"))
    assert stale.severity == "error" and exit_code([stale], "error") == 0


@pytest.fixture(scope="module")
def pr(tmp_path_factory):
    return make_pr(GitRepo.init(tmp_path_factory.mktemp("pr") / "repo"))


def judged_report(pr, extra_findings=()):
    """The recorded PR (tests/data/results) with head's tiny_gpt tracing pkg/models.py:30-45:
    its GB0124 at line 40 confirms a PTC101 there; a PTC101 at line 33 is not observed."""
    _, _, cs = pr
    base, head = results_pair()
    tiny = next(m for m in head["models"] if m["name"] == "tiny_gpt")
    tiny["coverage"] = {"pkg/models.py": "1-50", "pkg/layers.py": "1-30"}
    tiny["traced_lines"] = {"pkg/models.py": "30-45"}
    for m in head["models"]:
        if m["name"] != "tiny_gpt" and m["status"] == "ok":
            m["coverage"] = {}
    common = dict(path="pkg/models.py", col=8, severity="error", function="TinyGPT.forward",
                  gb="GB0124", diff="added", message="`.item()` breaks the graph.")
    findings = [Finding(rule="PTC101", line=40, source="n = x.sum().item()", **common),
                Finding(rule="PTC101", line=33, source="m = y.sum().item()", **common),
                *extra_findings]
    head_res = ResultsFile.from_json(head)
    findings = mark_reached(findings, head_res)
    rep = build_report(base_results=ResultsFile.from_json(base), head_results=head_res,
                       base_findings=[], head_findings=findings, changeset=cs,
                       config=make_config(), selection=Selection(), base_sha="a" * 40,
                       head_sha="b" * 40)
    return rep


def test_the_review_says_confirmed_and_holds_back_the_refuted_claim(pr):
    rep = judged_report(pr)
    by_line = {f.line: f for f in rep.findings}
    assert by_line[40].confirmed and by_line[33].refuted and by_line[33].severity == "info"
    # the refuted error does not fail the review; the confirmed one and the new break do
    static = [r for r in rep.reasons if r["code"] == "static_findings"]
    assert static and static[0]["count"] == 1
    review = render_review(rep, lambda path, line: True)
    lines = {c["line"] for c in review["comments"] if c["path"] == "pkg/models.py"}
    assert 40 in lines and 33 not in lines
    assert "1 new static finding not posted: the smoke run traced the line" in review["body"]
    check = render_check(rep)
    ann = {a["start_line"]: a for a in check["annotations"] if a["path"] == "pkg/models.py"}
    assert ann[33]["annotation_level"] == "notice"
    assert "Smoke run: not observed (tiny_gpt): dynamo traced the line" in ann[33]["message"]
    assert "(error demoted to info)" in ann[33]["message"]
    assert ann[40]["annotation_level"] == "failure"


def test_the_summary_folds_the_refuted_claim_and_shows_the_evidence(pr):
    from test_security_publish import render
    md = render_summary(judged_report(pr))
    assert "#### Static findings (2 new, 0 pre-existing; 1 confirmed by the smoke run, " \
           "1 not observed)" in md
    [c40] = [ln for ln in md.splitlines() if "`pkg/models.py:40`" in ln and "**PTC101**" in ln]
    assert c40.endswith("· ✔️ confirmed by the smoke run (`tiny_gpt`): "
                        "`GB0124 at pkg/models.py:40`")
    [c33] = [ln for ln in md.splitlines() if "`pkg/models.py:33`" in ln and "**PTC101**" in ln]
    assert c33.startswith("- ℹ️ **PTC101**") and "(error demoted to info)" in c33
    # folded away: the line sits inside the <details> of the not-observed claims
    head, _, folded = md.partition("1 new not observed by the smoke run")
    assert "pkg/models.py:33" not in head and "pkg/models.py:33" in folded.split("</details>")[0]
    r = render(md)
    assert "details" in {t for t, _ in r.elements}


def test_two_findings_that_read_the_same_are_one_bullet_with_their_count(pr):
    """`{"pixel": pix.item(), "frequency": freq.item()}`: two PTC101 findings on one line, the
    same text word for word, were two bullets; one bullet says how many."""
    from pt2bot.findings import Finding
    twin = Finding(rule="PTC101", path="pkg/models.py", line=40, col=30, severity="error",
                   function="TinyGPT.forward", gb="GB0124", diff="added",
                   message="`.item()` breaks the graph.", source="n = x.sum().item()")
    md = render_summary(judged_report(pr, [twin]))
    assert "#### Static findings (3 new, 0 pre-existing; 2 confirmed by the smoke run, " in md
    [c40] = [ln for ln in md.splitlines() if "`pkg/models.py:40`" in ln and "**PTC101**" in ln]
    assert c40.endswith("`GB0124 at pkg/models.py:40` · 2 on this line")


def test_a_confirmed_finding_without_a_new_break_says_what_the_run_recorded(pr):
    """A claim confirmed by a break base had too (not new): the comment still says so."""
    shape = Finding(rule="PTC301", path="pkg/models.py", line=18, col=8, severity="warning",
                    function="TinyGPT.forward", diff="added", source="if x.shape[0] > 4:",
                    message="shape branch")
    rep = judged_report(pr, [shape])
    [f18] = [f for f in rep.findings if f.line == 18]
    assert f18.confirmed and f18.smoke.evidence.startswith("recompile on guard ")
    review = render_review(rep, lambda path, line: True)
    [c] = [c for c in review["comments"] if c["line"] == 18]
    assert "✔️ Confirmed by the smoke run (`tiny_gpt`): `recompile on guard" in c["body"]
    [c40] = [c for c in review["comments"] if c["line"] == 40]
    assert c40["body"].count("onfirmed by the smoke run") == 1    # the new break's line only


def test_every_format_carries_the_verdict():
    refuted = one(finding(), results(run("tiny_gpt")))
    confirmed = one(finding(line=13), results(run("tiny_gpt", breaks=[brk(13)])))
    text = render_findings([refuted, confirmed], "text")
    assert ("    not observed by the smoke run (`tiny_gpt`): dynamo traced the line on batch=2 "
            "and did not break the graph there (graph-break pass, torch 2.13.0+cpu) "
            "(error demoted to info)") in text
    assert "    confirmed by the smoke run (`tiny_gpt`): GB0124 at pkg/m.py:13" in text
    assert "PTC101 [info]" in text and "not observed by the smoke run; never failing" in text
    gh = render_findings([refuted, confirmed], "github").splitlines()
    assert gh[0].startswith("::notice ") and gh[1].startswith("::error ")
    data = json.loads(render_findings([refuted, confirmed], "json"))["findings"]
    assert data[0]["smoke"]["status"] == "not_observed" and data[0]["severity"] == "info"
    sarif = findings_to_sarif([refuted, confirmed], tool_version="0")["runs"][0]["results"]
    assert sarif[0]["level"] == "note" and sarif[1]["level"] == "error"
    assert sarif[0]["properties"]["smoke"]["status"] == "not_observed"
    assert "Not observed by the smoke run (`tiny_gpt`)" in sarif[0]["message"]["text"]
    assert sarif[1]["properties"]["smoke"] == confirmed.smoke.to_dict()


def test_hostile_evidence_stays_inert(pr):
    from test_render import HOSTILE
    from test_security_publish import assert_inert
    rep = judged_report(pr)
    evil = SmokeCheck("confirmed", (HOSTILE,), HOSTILE + " `x` ``y")
    meh = SmokeCheck("not_observed", (HOSTILE,), HOSTILE, "error")
    rep = rep.with_(findings=tuple(f.with_(smoke=evil if f.line == 40 else meh)
                                   for f in rep.findings))
    review = render_review(rep, lambda path, line: True)
    for body in (render_summary(rep), review["body"], render_check(rep)["summary"],
                 *(c["body"] for c in review["comments"])):
        assert_inert(body)


def test_the_report_schema_accepts_the_verdicts(pr):
    import os

    import jsonschema
    path = os.path.join(os.path.dirname(__file__), "..", "pt2bot", "schemas",
                        "report.schema.json")
    with open(path, encoding="utf-8") as fh:
        validator = jsonschema.Draft202012Validator(json.load(fh))
    doc = judged_report(pr).to_dict()
    assert {f["smoke"]["status"] for f in doc["findings"]} == {"confirmed", "not_observed"}
    assert [e.message for e in validator.iter_errors(doc)] == []
    doc["findings"][0]["smoke"]["status"] = "refuted"
    assert list(validator.iter_errors(doc))
