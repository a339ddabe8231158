"""compare.build_report on recorded results (tests/data/results) and a real PR in git."""
from __future__ import annotations

import copy

import pytest
from compare_fixtures import Selection, make_config, make_pr, results_pair
from gitrepo import GitRepo

from pt2bot.compare import build_report, match_breaks
from pt2bot.findings import Finding
from pt2bot.report.jsonreport import validation_errors
from pt2bot.results import GraphBreak, ModelRun, ResultsFile

SKIP = Selection(skipped={"skipped_one": "no changed file in its import closure"})


@pytest.fixture(scope="module")
def pr(tmp_path_factory):
    """One real PR for the module (build_report never mutates the ChangeSet)."""
    return make_pr(GitRepo.init(tmp_path_factory.mktemp("pr") / "repo"))


def typed(results: dict | None) -> ResultsFile | None:
    """Recorded results (JSON) as compare takes them."""
    return None if results is None else ResultsFile.from_json(results)


def report_for(pr, base=None, head=None, *, config=None, findings=((), ()), changeset=True,
               **kw):
    """report.json's data (`Report.to_dict()`) of the recorded results, or of these."""
    b_sha, h_sha, cs = pr
    rb, rh = results_pair()
    return build_report(base_results=typed(rb if base is None else base),
                        head_results=typed(rh if head is None else head),
                        base_findings=list(findings[0]), head_findings=list(findings[1]),
                        changeset=cs if changeset else None, config=config or make_config(),
                        selection=kw.get("selection", SKIP), base_sha=b_sha,
                        head_sha=h_sha).to_dict()


def model(report, name):
    return next(m for m in report["models"] if m["name"] == name)


def test_breaks_new_fixed_moved_renamed(pr):
    rep = report_for(pr)
    tiny = model(rep, "tiny_gpt")
    assert [b["gb"] for b in tiny["new_breaks"]] == ["GB0124"]
    assert tiny["new_breaks"][0]["path"] == "pkg/models.py" and tiny["new_breaks"][0]["line"] == 40
    assert [b["gb"] for b in tiny["fixed_breaks"]] == ["GB0059"]
    # GB0170 moved 12 → 15 by inserted lines; the source-less logger break 20 → 23 by the map.
    assert tiny["unchanged_breaks"] == 2
    assert tiny["delta"]["graph_breaks"] == 0 and tiny["change"] == "changed"
    mlp = model(rep, "renamed_mlp")     # pkg/mlp.py → pkg/nets/mlp.py
    assert mlp["new_breaks"] == [] and mlp["fixed_breaks"] == [] and mlp["unchanged_breaks"] == 1


def test_without_a_diff_only_source_matching_survives(pr):
    rep = report_for(pr, changeset=False)
    assert rep["mode"] == "audit"
    tiny = model(rep, "tiny_gpt")
    # No line map: the source-less break at 20 vs 23 cannot be matched.
    assert sorted(b["line"] for b in tiny["new_breaks"]) == [23, 40]
    # No rename info: the same break in the renamed file looks removed + added.
    mlp = model(rep, "renamed_mlp")
    assert [b["path"] for b in mlp["new_breaks"]] == ["pkg/nets/mlp.py"]
    assert [b["path"] for b in mlp["fixed_breaks"]] == ["pkg/mlp.py"]


def test_model_changes_and_failures(pr):
    rep = report_for(pr)
    assert model(rep, "new_model")["change"] == "new"
    old = model(rep, "old_model")
    assert old["change"] == "removed" and old["status"] == "skipped"
    flaky = model(rep, "flaky")
    assert flaky["status"] == "error"
    assert [p["kind"] for p in flaky["problems"]] == ["fails_only_on_head"]
    assert flaky["problems"][0]["path"] == "pkg/flaky.py"
    assert rep["skipped"] == [{"name": "skipped_one",
                               "reason": "no changed file in its import closure"}]
    assert model(rep, "skipped_one")["status"] == "skipped"
    assert model(rep, "renamed_mlp")["change"] == "changed"   # export fixed


def test_export_recompiles_latency(pr):
    rep = report_for(pr)
    tiny, mlp = model(rep, "tiny_gpt"), model(rep, "renamed_mlp")
    assert tiny["delta"]["export"] == "broken" and mlp["delta"]["export"] == "fixed"
    assert model(rep, "new_model")["delta"]["export"] == "same"
    cases = {c["shape"]["batch"]: c for c in tiny["delta"]["recompile_cases"]}
    assert cases[4]["delta"] == 1 and cases[1]["delta"] == 0
    assert cases[4]["reasons"][0]["source"] == "if x.shape[0] > 4:"
    assert tiny["delta"]["new_recompiles"] == 1
    lat = {x["shape"]["batch"]: x for x in tiny["delta"]["latency"]}
    assert lat[4]["significant"] and lat[4]["direction"] == "slower"
    assert lat[4]["ci_low"] > 1 and 20 < lat[4]["change_pct"] < 40
    assert not lat[1]["significant"] and lat[1]["ci_low"] < 1 < lat[1]["ci_high"]
    assert all(not x["significant"] for x in mlp["delta"]["latency"])


def test_a_change_within_the_threshold_is_said_so_not_denied(pr):
    """A latency interval that lies above 1 by less than `latency_regression_pct` is no
    regression, and the table says it is within the threshold: "no significant change"
    would deny what the interval shows (a 9 % slowdown, [1.06, 1.11], once read so)."""
    import dataclasses

    import cmarkgfm

    from pt2bot.report.summary import latency_table, render_summary

    b_sha, h_sha, cs = pr
    base, head = results_pair()
    rows = {c: build_report(base_results=typed(base), head_results=typed(head), base_findings=[],
                            head_findings=[], changeset=cs, config=make_config(**t), selection=SKIP,
                            base_sha=b_sha, head_sha=h_sha) for c, t in (("10", {}), ("50", {"latency_regression_pct": 50}))}
    lat = {c: {x["shape"]["batch"]: x for x in model(r.to_dict(), "tiny_gpt")["delta"]["latency"]}
           for c, r in rows.items()}
    assert lat["10"][4]["significant"] and lat["10"][4]["threshold_pct"] == 10
    assert not lat["50"][4]["significant"] and lat["50"][4]["ci_low"] > 1
    assert lat["50"][4]["threshold_pct"] == 50 and validation_errors(rows["50"].to_dict()) == []
    html = cmarkgfm.github_flavored_markdown_to_html(render_summary(rows["50"]))
    row4 = next(r for r in html.split("<tr>") if "batch=4" in r and "ms" not in r[:5])
    assert "≈ slower, within the 50 % threshold" in row4
    row1 = next(r for r in html.split("<tr>") if "batch=1" in r)
    assert "≈ no significant change" in row1     # its interval holds 1
    assert "🔺 slower" in render_summary(rows["10"])
    # an interval that holds 1 and reaches past the threshold rules nothing out (a loaded
    # runner's three rounds)
    noisy = {"shape": {"batch": 2}, "base_ms": 7.4, "head_ms": 7.34, "ratio": 1.01, "ci_low": 0.49,
             "ci_high": 2.1, "significant": False, "direction": "same", "threshold_pct": 10.0}
    m = next(m for m in rows["10"].models if m.name == "tiny_gpt")
    m = dataclasses.replace(m, delta=dataclasses.replace(m.delta, latency=(noisy,)))
    assert "| ❔ inconclusive: the interval reaches past ±10 % |" in latency_table(m)
    # latency off: a changed model says its counts are no measure of speed (a revert that made
    # CLIP's attention pool 1.7x slower read "FX nodes 273 → 272", "No regressions")
    untimed = dataclasses.replace(m, latency_gate="not_measured", change="changed",
                                  delta=dataclasses.replace(m.delta, latency=()))
    assert latency_table(untimed).startswith("Latency: not measured (latency is off for this model)")
    assert latency_table(dataclasses.replace(untimed, change="unchanged")) == ""
    # said in full once: the next such model points at the first (CLIP's six models read the
    # same three lines six times)
    from pt2bot.report.summary import model_sections
    two = dataclasses.replace(rows["10"], models=(untimed, dataclasses.replace(untimed, name="other")))
    text = ["\n\n".join(s.blocks) for s in model_sections(two)]
    assert "count what compiles, not the work each op does" in text[0]
    assert "count what compiles" not in text[1]
    assert "Latency: not measured (latency is off for this model; see `tiny_gpt` above)." in text[1]


def test_conclusion_and_reasons(pr):
    rep = report_for(pr)
    assert rep["conclusion"] == "failure"
    codes = {(r["code"], r["model"]) for r in rep["reasons"] if r["level"] == "failure"}
    assert codes == {("new_graph_breaks", "tiny_gpt"), ("new_recompiles", "tiny_gpt"),
                     ("export_broken", "tiny_gpt"), ("latency_regression", "tiny_gpt"),
                     ("fails_only_on_head", "flaky")}
    assert "new graph break" in rep["summary_title"]
    assert validation_errors(rep) == []


def _clean_pair():
    """Only `tiny_gpt`, head == base: a clean baseline to switch one signal on (compared
    without a diff, since the recorded lines belong to the PR's files)."""
    base, head = results_pair()
    keep = {m["name"]: m for m in base["models"]}
    head["models"] = [keep["tiny_gpt"] | {}]
    base["models"] = [keep["tiny_gpt"]]
    return base, head


@pytest.mark.parametrize("change, thresholds, expected", [
    (None, {}, "success"),
    ("break", {}, "failure"),
    ("break", {"new_graph_breaks": 1}, "success"),
    ("recompile", {}, "failure"),
    ("recompile", {"new_recompiles": 2}, "success"),
    ("export", {}, "failure"),
    ("export", {"export_regression": "warn"}, "success"),
    ("accuracy", {}, "failure"),
    ("accuracy", {"accuracy": "ignore"}, "success"),
    ("slower", {}, "failure"),
    ("slower", {"latency_regression_pct": 50}, "success"),
    ("noisy", {}, "success"),
    (None, {"require_gpu": True}, "neutral"),
    ("break", {"require_gpu": True}, "failure"),
])
def test_conclusion_table(pr, change, thresholds, expected):
    import copy
    base, head = _clean_pair()
    h = head["models"][0] = copy.deepcopy(head["models"][0])
    if change == "break":
        h["graph_breaks"] = h["graph_breaks"] + [dict(h["graph_breaks"][0], line=44,
                                                      source="print(y)")]
    elif change == "recompile":
        h["recompiles"]["cases"][1]["recompiles"] = 2
        h["recompiles"]["count"] = 2
    elif change == "export":
        h["export"] = {"ok": False, "kind": "data_dependent", "message": "x"}
    elif change == "accuracy":
        h["accuracy"][0]["match"] = False
    elif change in ("slower", "noisy"):
        lat = h["latency"][1]["compiled_ms"]
        if change == "slower":
            lat["samples"] = [x * 1.3 for x in lat["samples"]]
        else:   # +30% on the median, but wildly spread: no verdict
            b = lat["median"]
            lat["samples"] = [b * k for k in (0.6, 2.0, 0.7, 1.9, 1.3, 1.35)]
        lat["median"] = sorted(lat["samples"])[len(lat["samples"]) // 2]
    rep = report_for(pr, base, head, config=make_config(**thresholds),
                     selection=Selection(), changeset=False)
    assert rep["conclusion"] == expected, rep["reasons"]


def test_outputs_that_change_shape_are_a_change_said_in_the_summary(pr):
    """The review compares compile behaviour; a model whose eager outputs all changed shape
    (segment-anything's resize fed the batch and channel dims as height and width) was listed
    "unchanged". It is "changed", the summary names a case, and nothing fails on it."""
    import cmarkgfm

    from pt2bot.report.summary import render_summary

    base, head = _clean_pair()
    h = head["models"][0] = copy.deepcopy(head["models"][0])
    for b, a in zip(base["models"][0]["accuracy"], h["accuracy"]):
        n = a["shape"]["batch"]
        b["out_shapes"] = [[n, 3, 48, 64], None]
        a["out_shapes"] = [[n, 3, 21, 64], None] if n > 1 else [[n, 3, 48, 64], None]
    report = build_report(base_results=typed(base), head_results=typed(head), base_findings=[],
                          head_findings=[], changeset=None, config=make_config(),
                          selection=Selection(), base_sha=pr[0], head_sha=pr[1])
    rep = report.to_dict()
    m = model(rep, "tiny_gpt")
    assert m["change"] == "changed" and rep["conclusion"] == "success"
    changed = m["delta"]["output_shapes"]
    cases = [a["shape"]["batch"] for a in h["accuracy"]]
    assert [c["shape"]["batch"] for c in changed] == [n for n in cases if n > 1]
    assert changed[0]["base"] == [[changed[0]["shape"]["batch"], 3, 48, 64], None]
    assert validation_errors(rep) == []
    html = cmarkgfm.github_flavored_markdown_to_html(render_summary(report))
    n, label = changed[0]["shape"]["batch"], ",".join(f"{k}={v}" for k, v in changed[0]["shape"].items())
    assert (f"Eager outputs change shape on {len(changed)} of {len(cases)} shape cases: on "
            f"<code>{label}</code>, <code>({n}, 3, 48, 64), number</code> on base, "
            f"<code>({n}, 3, 21, 64), number</code> on head.") in html, html
    # results written before the shapes were recorded compare as before
    for a in h["accuracy"]:
        del a["out_shapes"]
    m = model(report_for(pr, base, head, selection=Selection(), changeset=False), "tiny_gpt")
    assert m["change"] == "unchanged" and "output_shapes" not in m["delta"]


def test_run_broken_is_neutral(pr):
    rep = report_for(pr, head={"models": []}, selection=Selection())
    assert {m["change"] for m in rep["models"] if m["base"]} == {"removed"}
    assert rep["conclusion"] == "success"      # deleting models is not a regression
    b_sha, h_sha, cs = pr
    base, _ = results_pair()
    rep = build_report(base_results=typed(base), head_results=None, base_findings=[],
                       head_findings=[], changeset=cs, config=make_config(),
                       base_sha=b_sha, head_sha=h_sha).to_dict()
    assert rep["conclusion"] == "neutral"
    assert [r["code"] for r in rep["reasons"] if r["level"] == "neutral"] == ["run_broken"]


def test_every_model_failing_on_both_sides_is_the_environment(pr):
    base, head = results_pair()
    err = {"status": "error", "error": {"kind": "import", "message": "No module named x"}}
    for side in (base, head):
        side["models"] = [m | err for m in side["models"] if m["name"] == "tiny_gpt"]
    rep = report_for(pr, base, head, selection=Selection())
    assert rep["conclusion"] == "neutral", rep["reasons"]
    # ... but failing only on head is the pull request's doing.
    base, head = results_pair()
    head["models"] = [m | err for m in head["models"] if m["name"] == "tiny_gpt"]
    base["models"] = [m for m in base["models"] if m["name"] == "tiny_gpt"]
    assert report_for(pr, base, head, selection=Selection())["conclusion"] == "failure"


def F(rule="PTC101", path="pkg/models.py", line=10, source="x.item()", diff="added",
      severity="error", **kw) -> Finding:
    return Finding(rule=rule, path=path, line=line, col=4, severity=severity,
                   message="msg", source=source, function="TinyGPT.forward", diff=diff, **kw)


def test_findings_new_vs_preexisting_and_filter(pr):
    base_f = [F(path="pkg/mlp.py", line=9, source="t0 = time.time()", diff=None),
              F(line=3, source="print(x)", diff=None)]
    head_f = [F(path="pkg/nets/mlp.py", line=9, source="t0 = time.time()"),   # renamed
              F(line=8, source="print(x)  # moved"),                          # moved
              F(line=40, source="n = x.sum().item()"),                        # new
              F(line=45, source="y.tolist()", diff="outside")]                # filtered
    rep = report_for(pr, findings=(base_f, head_f))
    got = {(f["path"], f["line"]): f["new"] for f in rep["findings"]}
    assert got == {("pkg/nets/mlp.py", 9): False, ("pkg/models.py", 8): False,
                   ("pkg/models.py", 40): True}
    assert rep["findings_hidden"] == 1
    assert any(r["code"] == "static_findings" and r["count"] == 1 for r in rep["reasons"])


@pytest.mark.parametrize("fail_on, severity, fails", [
    ("error", "error", True), ("error", "warning", False), ("warning", "warning", True),
    ("never", "error", False)])
def test_static_fail_on(pr, fail_on, severity, fails):
    from pt2bot.config import StaticConfig
    base, head = _clean_pair()
    cfg = make_config()
    cfg = type(cfg)(static=StaticConfig(fail_on=fail_on), models=cfg.models, raw=cfg.raw)
    rep = report_for(pr, base, head, config=cfg, findings=([], [F(severity=severity)]),
                     selection=Selection(), changeset=False)
    assert (rep["conclusion"] == "failure") is fails


def test_same_source_twice_pairs_by_line_map():
    brk = {"gb": "GB0059", "gb_type": "t", "path": "a.py", "function": "f", "source": "print(x)"}
    base = [dict(brk, line=10), dict(brk, line=20)]
    head = [dict(brk, line=25)]     # the one at 20 moved to 25; the one at 10 was deleted
    new, fixed, same = match_breaks([GraphBreak.from_json(b) for b in base],
                                    [GraphBreak.from_json(b) for b in head], renames={},
                                    line_map=lambda p, n: {10: None, 20: 25}.get(n))
    assert same == 1 and new == [] and [b["line"] for b in fixed] == [10]


def test_a_break_in_an_installed_package_is_the_same_site_on_both_sides():
    """A new user's norse model: the cells' `state.v.requires_grad = True`, met in a frame dynamo
    started in the package, has no path, line or source. It was "new" and "fixed" at once, with
    one fingerprint, and failed every review of the model with "1 new graph break"."""
    lib = {"gb": "GB0206", "gb_type": "setattr() on Tensor.requires_grad", "path": None,
           "line": None, "function": None, "source": "", "in_loop": True}
    base = [dict(lib, library="norse/torch/module/lif.py:99")]
    head = [dict(lib, library="norse/torch/module/lif.py:99"),
            dict(lib, library="norse/torch/module/leaky_integrator.py:93")]
    new, fixed, same = match_breaks([GraphBreak.from_json(b) for b in base],
                                    [GraphBreak.from_json(b) for b in head], renames={},
                                    line_map=lambda p, n: n)
    assert same == 1 and fixed == []
    assert [b["library"] for b in new] == ["norse/torch/module/leaky_integrator.py:93"]
    # two places in packages are two sites to the review too
    assert len({GraphBreak.from_json(b).library for b in head}) == 2
    from pt2bot.compare import break_fingerprint
    assert len({break_fingerprint(GraphBreak.from_json(b)) for b in head}) == 2


def test_an_export_whose_draws_were_fixed_is_a_notice(pr):
    """A new user's CutMix (held-out batch 44): the exported program kept numpy's draw, and
    the export row read "✓ ✓ same"; the summary now says why its check mark holds for one seed."""
    said = ("its random draws are fixed: under another seed than the one it was exported under, the exported "
            "program's outputs differ from eager's on shape case batch=4 (max abs err 0.3)")
    base, head = results_pair()
    m = next(m for m in head["models"] if m["name"] == "renamed_mlp")
    m["export"] = {**(m.get("export") or {}), "ok": True, "frozen": said}
    rep = report_for(pr, base, head)
    (p,) = [p for p in model(rep, "renamed_mlp")["problems"] if p["kind"] == "export_frozen"]
    assert p["level"] == "notice" and p["message"] == f"torch.export: the program exports, but {said}"
    assert validation_errors(rep) == []


def test_a_matrix_that_raises_only_on_head_fails_the_check(pr):
    """recurrentgemma's PR turning its jaxtyping/typeguard checks back on: compiled with the
    batch marked dynamic, every call raised TypeCheckError on head, where base's ran, and the
    review said only "⚪ not measured on head"."""
    err = ("TypeCheckError: Type-check error whilst checking the parameters of "
           "recurrentgemma.torch.griffin.Griffin.forward.\n  File \"/venv/lib/python3.11/site-packages/"
           "typeguard/__init__.py\", line 543, in check_type\n")
    base, head = results_pair()
    m = next(m for m in head["models"] if m["name"] == "renamed_mlp")
    for c in m["recompiles"]["cases"]:
        c["error"] = err
    rep = report_for(pr, base, head)
    problems = model(rep, "renamed_mlp")["problems"]
    (p,) = [p for p in problems if p["kind"] == "compiled_raises"]
    n = len(m["recompiles"]["cases"])
    assert p["level"] == "failure" and p["message"] == (
        f"compiled, the model newly raises on every shape case ({n}): TypeCheckError: Type-check "
        "error whilst checking the parameters of recurrentgemma.torch.griffin.Griffin.forward. (in "
        "typeguard/__init__.py:543); base's compiled runs of them did not (the shape matrix compiles "
        "with the dims pt2bot.yml declares dynamic marked)"), p
    assert not [p for p in problems if p["kind"] == "not_measured" and "shape matrix" in p["message"]]
    assert rep["conclusion"] == "failure"
    assert validation_errors(rep) == []
    # the exception's text is the PR's: rendered as text in the summary, not as markup or a mention
    import cmarkgfm

    from pt2bot.report.summary import render_summary
    for c in m["recompiles"]["cases"]:
        c["error"] = "TypeCheckError: <img src=x onerror=alert(1)> @octocat [x](http://evil.example)"
    b_sha, h_sha, cs = pr
    html = cmarkgfm.github_flavored_markdown_to_html(render_summary(build_report(
        base_results=typed(base), head_results=typed(head), base_findings=[], head_findings=[],
        changeset=cs, config=make_config(), selection=SKIP, base_sha=b_sha, head_sha=h_sha)))
    assert "compiled, the model newly raises on every shape case" in html
    assert "<img" not in html and 'href="http://evil.example"' not in html and "@octocat" not in html, html
    from pt2bot.verdict import summary_title
    assert summary_title("failure", [{"level": "failure", "code": "compiled_raises", "count": 1,
                                      "model": n} for n in ("a", "b")], [], []) == \
        "2 compiled models failing"
    # raised on both sides: not the PR's, said as unmeasured (the test below)
    for c in next(m for m in base["models"] if m["name"] == "renamed_mlp")["recompiles"]["cases"]:
        c["error"] = err
    assert not [p for p in model(report_for(pr, base, head), "renamed_mlp")["problems"]
                if p["kind"] == "compiled_raises"]


def test_a_run_whose_matrix_or_phase_raised_says_what_it_did_not_measure(pr):
    """A new user's spiking network: norse's Poisson encoder draws `torch.rand(...,
    generator=None)`, which no compile with a dynamic batch takes, so every shape case raised on
    both sides; the table still read "recompiles 0 | 0 | 0" and nothing said why."""
    import cmarkgfm

    from pt2bot.report.summary import render_summary

    err = ("TorchRuntimeError: RuntimeError when making fake tensor call\n  Explanation: ...\n"
           "from user code:\n   File \"/venv/lib/python3.11/site-packages/norse/torch/functional/"
           "encode.py\", line 157, in poisson_encode\n    torch.rand(\n")
    base, head = results_pair()
    for side in (base, head):
        m = next(m for m in side["models"] if m["name"] == "renamed_mlp")
        for c in m["recompiles"]["cases"]:
            c["error"] = err
    next(m for m in head["models"] if m["name"] == "renamed_mlp")["phase_errors"] = [
        {"phase": "latency", "kind": "TorchRuntimeError", "message": err.split(": ", 1)[1]}]
    rep = report_for(pr, base, head)
    (p,) = [p for p in model(rep, "renamed_mlp")["problems"] if p["kind"] == "not_measured"]
    assert p["level"] == "notice" and p["message"] == (
        "not measured on head, nor on base: the shape matrix (recompiles): every case raised "
        "TorchRuntimeError: RuntimeError when making fake tensor call (in "
        "norse/torch/functional/encode.py:157); latency: TorchRuntimeError: RuntimeError when "
        "making fake tensor call")
    assert rep["conclusion"] == report_for(pr)["conclusion"]   # a notice, not a verdict
    assert not [p for m in rep["models"] if m["name"] != "renamed_mlp" for p in m["problems"]
                if p["kind"] == "not_measured"]
    assert validation_errors(rep) == []
    b_sha, h_sha, cs = pr
    summary = render_summary(build_report(
        base_results=typed(base), head_results=typed(head), base_findings=[], head_findings=[],
        changeset=cs, config=make_config(), selection=SKIP, base_sha=b_sha, head_sha=h_sha))
    assert "| recompiles | not measured | not measured | — |" in summary
    html = cmarkgfm.github_flavored_markdown_to_html(summary)
    assert "⚪ not measured on head, nor on base: the shape matrix (recompiles)" in html


def test_a_break_pass_that_raised_is_not_a_count_of_zero(pr):
    """flowtorch's tensor subclass made the break pass raise on both sides of a new user's
    review, which read "graph breaks | 0 | 0 | 0"; where only head's raised, every break of
    base would have read as fixed. A side whose break pass raised measured no break: no break
    is new or fixed, the table says so, and the notice says why."""
    import cmarkgfm

    from pt2bot.report.summary import render_summary

    base, head = results_pair()
    m = next(m for m in head["models"] if m["name"] == "renamed_mlp")
    m["graph_breaks"], m["graph_count"] = [], None
    m["phase_errors"] = [{"phase": "breaks", "kind": "RuntimeError", "message":
                          "Creating a new Tensor subclass BijectiveTensor but the raw Tensor "
                          "object is already associated to a python object\nmore"}]
    rep = report_for(pr, base, head)
    got = model(rep, "renamed_mlp")
    assert got["new_breaks"] == [] and got["fixed_breaks"] == []
    (p,) = [p for p in got["problems"] if p["kind"] == "not_measured"]
    assert p["message"] == ("not measured on head: graph breaks: RuntimeError: Creating a new "
                            "Tensor subclass BijectiveTensor but the raw Tensor object is "
                            "already associated to a python object")
    assert validation_errors(rep) == []
    b_sha, h_sha, cs = pr
    summary = render_summary(build_report(
        base_results=typed(base), head_results=typed(head), base_findings=[], head_findings=[],
        changeset=cs, config=make_config(), selection=SKIP, base_sha=b_sha, head_sha=h_sha))
    html = cmarkgfm.github_flavored_markdown_to_html(summary)
    assert "<td>graph breaks</td>\n<td>1</td>\n<td>not measured</td>\n<td>—</td>" in html
    assert "<td>graphs</td>\n<td>2</td>\n<td>not measured</td>\n<td>—</td>" in html
    section = summary.split("`renamed_mlp`", 1)[1].split("\n#### ", 1)[0]
    assert "graph breaks: RuntimeError" in section and "Fixed" not in section


def test_a_shape_case_that_raised_alone_is_said_not_measured(pr):
    """The same encoder compiles with the static first case and raises once the batch is
    dynamic: that case is recorded `"compiled": true` (frames before the failure compiled) with
    its error, and its recompiles and accuracy were never measured. The other case's figures
    stand, so the table keeps its counts, and the notice names the case that raised (on both
    sides: where only head's raises, the PR made it, and that fails the check, above)."""
    err = "TorchRuntimeError: RuntimeError when making fake tensor call\n  Explanation: ..."
    base, head = results_pair()
    for side in (base, head):
        m = next(m for m in side["models"] if m["name"] == "renamed_mlp")
        m["recompiles"]["cases"][1].update(compiled=True, error=err)
    rep = report_for(pr, base, head)
    (p,) = [p for p in model(rep, "renamed_mlp")["problems"] if p["kind"] == "not_measured"]
    assert p["message"] == (
        "not measured on head, nor on base: the shape matrix (recompiles, accuracy): 1 of 2 cases raised "
        "(batch=4,seq=32): TorchRuntimeError: RuntimeError when making fake tensor call")
    assert rep["conclusion"] == report_for(pr)["conclusion"]
    assert validation_errors(rep) == []


def test_malformed_results_are_reported_not_crashed(pr):
    base, head = results_pair()
    head["models"] += ["junk", {"name": 3}, {"name": "weird", "status": "ok",
                                             "graph_breaks": "nope", "latency": [None, {}],
                                             "recompiles": [], "export": "yes",
                                             "accuracy": {"x": 1}}]
    head["models"][0]["latency"][0]["compiled_ms"] = None
    rep = report_for(pr, base, head)
    weird = model(rep, "weird")
    assert weird["change"] == "new" and weird["delta"]["export"] == "n/a"
    assert validation_errors(rep) == []


# ------------------------------------------------- one verdict per problem (recorded results)
from compare_fixtures import resume_pair  # noqa: E402

from pt2bot.compare import compare_model  # noqa: E402

BREAK_AT = {"gb": "GB0124", "path": "pkg/gated.py", "line": 19}


def _gated(base: dict, head: dict) -> dict:
    return compare_model("gated", ModelRun.from_json(base["models"][0]),
                         ModelRun.from_json(head["models"][0]), renames={},
                         line_map=lambda path, line: line, threshold_pct=10).to_dict()


def _reasons(m: dict) -> list[dict]:
    return [r for c in m["delta"]["recompile_cases"] for r in c["reasons"]]


def test_recompiles_in_frames_split_off_by_a_new_break_follow_from_it():
    m = _gated(*resume_pair())
    assert [(b["gb"], b["line"], b["caused_recompiles"]) for b in m["new_breaks"]] == \
        [("GB0124", 19, 3)]
    d = m["delta"]
    assert (d["recompiles"], d["new_recompiles"], d["caused_recompiles"]) == (0, 0, 3)
    assert [r["caused_by"] for r in _reasons(m)] == [BREAK_AT] * 3
    [case] = [c for c in d["recompile_cases"] if c["head"]]
    assert (case["base"], case["head"], case["caused"], case["delta"]) == (0, 3, 3, 0)
    assert m["change"] == "changed"


def test_results_without_frames_compare_as_before():
    base, head = resume_pair()
    for c in head["models"][0]["recompiles"]["cases"]:
        for r in c["reasons"]:
            for k in ("frame", "compile_id", "resumed_after"):
                r.pop(k, None)
    m = _gated(base, head)
    d = m["delta"]
    assert (d["recompiles"], d["new_recompiles"], d["caused_recompiles"]) == (3, 3, 0)
    assert not any("caused_by" in r for r in _reasons(m))
    assert m["new_breaks"][0]["caused_recompiles"] == 0
    assert all("caused" not in c for c in d["recompile_cases"])


def test_an_old_breaks_frames_recompiling_for_sizes_is_not_new_but_said_apart():
    # The same break on base (not new): the frames it splits off are compiled again, dynamic,
    # when a size first changes (automatic dynamic, once per frame). Head's excess of those
    # is said as such, not as new recompiles, and not as caused by a new break.
    base, head = resume_pair()
    base["models"][0]["graph_breaks"] = head["models"][0]["graph_breaks"]
    m = _gated(base, head)
    d = m["delta"]
    assert m["new_breaks"] == [] and d["new_recompiles"] == 0 and d["recompiles"] == 0
    assert (d["caused_recompiles"], d["after_break_recompiles"]) == (0, 3)
    assert [r["after_break"] for r in _reasons(m)] == [BREAK_AT] * 3
    assert not any("caused_by" in r for r in _reasons(m))


def test_a_frame_of_an_installed_package_is_tied_to_no_break_but_is_not_the_models_own():
    # A torchhd embedding's `forward`, a frame of its own once the library's break split it
    # off, fed a tensor the PR computes: no break's user stack reaches it (its file is the
    # package's), but only a break makes dynamo compile a frame apart from frame 0, the
    # model's `forward`; with no new break on head, that break is one base has too.
    base, head = resume_pair()
    base["models"][0]["graph_breaks"] = head["models"][0]["graph_breaks"]
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    lib = {"guard": "tensor 'input' size mismatch at index 0. expected 2, actual 3", "dim": None,
           "kind": "size_mismatch", "path": None, "line": None, "source": None,
           "frame": {"function": "forward", "path": None, "line": 536}, "compile_id": "7/1"}
    case["reasons"].append(lib)
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    m = _gated(base, head)
    d = m["delta"]
    assert (d["new_recompiles"], d["after_break_recompiles"]) == (0, 4)
    [untied] = [r for r in _reasons(m) if r["frame"]["path"] is None]
    assert untied["after_break"] == {"gb": None, "path": None, "line": None}
    # the model's own frame recompiling on a size is the model's: counted
    own = {**lib, "frame": {"function": "forward", "path": "pkg/gated.py", "line": 23},
           "compile_id": "0/1"}
    case["reasons"][-1] = own
    d = _gated(base, head)["delta"]
    assert (d["new_recompiles"], d["after_break_recompiles"]) == (1, 3)


def test_a_package_frame_under_the_one_new_break_follows_from_it():
    # torch-complex's `ComplexTensor.__mul__` under a PR's `y = x * mask` (dynamo cannot proxy
    # the subclass, so the line breaks and the operator's Python method becomes a frame of its
    # own): its recompiles for sizes read as a second problem beside the break. With that break
    # the only one on head, they are the break's; with another break on head too, not said.
    base, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    lib = {"guard": "tensor 'self.imag' size mismatch at index 0. expected 2, actual 3", "dim": None,
           "kind": "size_mismatch", "path": None, "line": None, "source": None,
           "frame": {"function": "__mul__", "path": None, "line": 68,
                     "library": "torch_complex/tensor.py"}, "compile_id": "7/1"}
    case["reasons"].append(lib)
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    m = _gated(base, head)
    d = m["delta"]
    assert (d["new_recompiles"], d["caused_recompiles"]) == (0, 4), d
    [mul] = [r for r in _reasons(m) if r["frame"]["function"] == "__mul__"]
    assert mul["caused_by"] == BREAK_AT
    # a second break on head, on base too: which one split the package's frame off is not known
    old = {**head["models"][0]["graph_breaks"][0], "gb": "GB0117", "line": 30, "function": "encode",
           "source": "x", "fingerprint": "cd" * 8}
    head["models"][0]["graph_breaks"].append(old)
    base["models"][0]["graph_breaks"] = [old]
    d = _gated(base, head)["delta"]
    assert d["caused_recompiles"] == 3, d


def test_a_repository_frame_the_eager_frame_calls_after_the_one_new_break_follows_from_it():
    # recurrentgemma's PR 2: a break inside the checkpointed block loop made dynamo give up on
    # `Griffin.forward`, and `decode`, called by it after the loop, became a frame of its own
    # that recompiled for a new size: "1 new recompile(s) over the shape matrix" failed beside
    # the break. No stack of the break passes through `decode`; with the one new break, it is
    # that break's.
    base, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    dec = {"guard": "tensor 'x' size mismatch at index 0. expected 2, actual 3", "dim": None,
           "kind": "size_mismatch", "path": "pkg/gated.py", "line": 40, "source": None,
           "frame": {"function": "decode", "path": "pkg/gated.py", "line": 39}, "compile_id": "9/1"}
    case["reasons"].append(dec)
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    d = _gated(base, head)["delta"]
    assert (d["new_recompiles"], d["caused_recompiles"]) == (0, 4), d
    # the model's own frame is compiled with or without a break: its recompile stays the code's
    dec["compile_id"] = "0/1"
    d = _gated(base, head)["delta"]
    assert (d["new_recompiles"], d["caused_recompiles"]) == (1, 3), d


def test_a_number_passed_to_a_frame_the_break_split_off_follows_from_it():
    # held-out batch 43's otloss: a PR's loss whose Sinkhorn loop breaks runs it in eager, and
    # the package's `uniform_weights(batch, n, ...)`, inlined before, becomes a frame of its own
    # called for 10 points, then 6: its guard `n == 10` read as "2 new recompiles" beside the
    # break. A number a split-off frame is passed is the break's; in the model's own frame
    # (frame 0) such a guard stays the code's.
    base, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    lib = {"guard": "n == 10", "dim": None, "kind": "guard", "path": None, "line": None,
           "source": "w = torch.full((batch, n), 1.0 / n, device=device, dtype=dtype)",
           "frame": {"function": "uniform_weights", "path": None, "line": 12,
                     "library": "torch_complex/tensor.py"}, "compile_id": "7/1"}
    case["reasons"].append(lib)
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    d = _gated(base, head)["delta"]
    assert (d["new_recompiles"], d["caused_recompiles"]) == (0, 4), d
    lib["compile_id"] = "0/1"
    d = _gated(base, head)["delta"]
    assert (d["new_recompiles"], d["caused_recompiles"]) == (1, 3), d


def test_with_a_new_break_base_s_package_frames_do_not_hide_head_s_old_break_frame():
    # torchhd's PR 2: a new break (the PR's `if`), and beside its own recompile one in a frame
    # the library's old break splits off; base recompiled frames of the installed package too.
    # Those count against head's excess only by the rule head's frames are matched by: with a
    # new break, an untied package frame explains nothing on either side (base's counted made
    # the old break's frame read as a new recompile).
    base, head = resume_pair()
    hb = head["models"][0]
    old = {**hb["graph_breaks"][0], "gb": "GB0117", "line": 30, "function": "encode", "source": "x",
           "fingerprint": "cd" * 8,
           "user_stack": [{"path": "pkg/gated.py", "line": 25, "function": "forward"},
                          {"path": "pkg/gated.py", "line": 30, "function": "encode"}]}
    hb["graph_breaks"].append(old)
    base["models"][0]["graph_breaks"] = [old]
    lib = {"guard": "tensor 'input' size mismatch at index 0. expected 2, actual 3", "dim": None,
           "kind": "size_mismatch", "path": None, "line": None, "source": None,
           "frame": {"function": "forward", "path": None, "line": 536}, "compile_id": "7/1"}
    enc = {**lib, "guard": "tensor 'x' size mismatch at index 0. expected 2, actual 3",
           "frame": {"function": "encode", "path": "pkg/gated.py", "line": 29}, "compile_id": "8/1"}
    for side, extra in ((base, [lib]), (head, [lib, enc])):
        rec = side["models"][0]["recompiles"]
        case = next(c for c in rec["cases"] if c["shape"] == {"batch": 3})
        case["reasons"] += extra
        case["recompiles"] += len(extra)
        rec["count"] += len(extra)
    d = _gated(base, head)["delta"]
    assert (d["new_recompiles"], d["caused_recompiles"], d["after_break_recompiles"]) == (0, 3, 1), d


def test_a_package_frame_is_split_off_by_a_break_inside_that_package():
    # Held-out batch 33's PR 2: a new `.item()` break, and unfoldNd's `forward`, split off by
    # the library's own break inside it (`int(numpy.prod(...))` in unfoldNd/utils.py), fed the
    # tensor the PR computes: its recompile on a new size is that old break's once-per-frame
    # one, not the PR's (the review said "7 new recompiles", every guard in unfoldNd's frames)
    base, head = resume_pair()
    old = {**head["models"][0]["graph_breaks"][0], "gb": "GB0033", "line": 30, "function": "forward",
           "source": "x = self.unfold(x)", "fingerprint": "cd" * 8, "inside": "unfoldNd/utils.py:32",
           "user_stack": [{"path": "pkg/gated.py", "line": 30, "function": "forward"}]}
    for side in (base, head):
        side["models"][0]["graph_breaks"].append(old)
    lib = {"guard": "tensor 'input' size mismatch at index 0. expected 2, actual 3", "dim": None,
           "kind": "size_mismatch", "path": None, "line": None, "source": None,
           "frame": {"function": "forward", "path": None, "line": 53, "library": "unfoldNd/unfold.py"},
           "compile_id": "7/1"}
    rec = head["models"][0]["recompiles"]
    case = next(c for c in rec["cases"] if c["shape"] == {"batch": 3})
    case["reasons"].append(lib)
    case["recompiles"] += 1
    rec["count"] += 1
    m = _gated(base, head)
    d = m["delta"]
    assert (d["new_recompiles"], d["after_break_recompiles"]) == (0, 1), d
    [tied] = [r for r in _reasons(m) if r["frame"].get("library")]
    assert tied["after_break"] == {"gb": "GB0033", "path": "pkg/gated.py", "line": 30}
    # a frame of another package is not tied to it
    lib["frame"] = {**lib["frame"], "library": "other/mod.py"}
    assert _gated(base, head)["delta"]["new_recompiles"] == 1


def test_an_old_breaks_frames_that_base_recompiled_too_explain_nothing_more():
    # Base recompiled the same frames the same way: head has no excess there, and a guard
    # of head's own (a value passed across the break) is then a new recompile.
    base, head = resume_pair()
    base["models"][0]["graph_breaks"] = head["models"][0]["graph_breaks"]
    base["models"][0]["recompiles"] = copy.deepcopy(head["models"][0]["recompiles"])
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    case["reasons"].append({"guard": "n == 1.0", "dim": None, "kind": "guard", "path": None,
                            "line": None, "source": None,
                            "frame": {"function": "torch_dynamo_resume_in_forward_at_25",
                                      "path": "pkg/gated.py", "line": 25},
                            "compile_id": "9/1",
                            "resumed_after": {"path": "pkg/gated.py", "line": 25}})
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    d = _gated(base, head)["delta"]
    assert (d["new_recompiles"], d["after_break_recompiles"]) == (1, 0)


def test_base_s_own_recompiles_are_listed_after_head_s_where_the_pr_moved_their_lines():
    # The PR added lines above the frame base recompiled too: its line, its resume name's
    # line and the line torch's guard comment names all moved. Matched through the diff's line
    # map, base's guard is listed after head's new one, not first as if it were the PR's.
    base, head = resume_pair()
    base["models"][0]["graph_breaks"] = head["models"][0]["graph_breaks"]

    def same(line: int) -> dict:
        return {"guard": f"n == 8  # e = f(n)  # pkg/gated.py:{line + 2} in forward", "dim": None,
                "kind": "guard", "path": None, "line": None, "source": None,
                "frame": {"function": f"torch_dynamo_resume_in_forward_at_{line}", "path": "pkg/gated.py",
                          "line": line}, "compile_id": "9/1", "resumed_after": {"path": "pkg/gated.py", "line": line}}
    own = {**same(28), "guard": "m == 2.0", "compile_id": "10/1"}
    for side, extra in ((base, [same(25)]), (head, [same(28), own])):
        rec = side["models"][0]["recompiles"]
        case = next(c for c in rec["cases"] if c["shape"] == {"batch": 3})
        case["reasons"] = extra + case["reasons"]
        case["recompiles"] += len(extra)
        rec["count"] += len(extra)
    m = compare_model("gated", ModelRun.from_json(base["models"][0]), ModelRun.from_json(head["models"][0]),
                      renames={}, line_map=lambda path, line: line + 3 if line >= 20 else line,
                      threshold_pct=10).to_dict()
    [case] = [c for c in m["delta"]["recompile_cases"] if c["reasons"]]
    guards = [r["guard"].split("  #")[0] for r in case["reasons"]]
    assert guards.index("m == 2.0") < guards.index("n == 8"), guards


def test_a_recompile_of_its_own_next_to_the_break_is_still_counted():
    base, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    # The root frame (`forward`, compiled with or without the break) recompiles as well.
    case["reasons"].insert(0, {"guard": "L['x'].size()[0] <= 4", "dim": "batch", "kind": "guard",
                               "path": "pkg/gated.py", "line": 24, "source": "if x.shape[0] > 4:",
                               "frame": {"function": "forward", "path": "pkg/gated.py",
                                         "line": 23},
                               "compile_id": "0/1"})
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    m = _gated(base, head)
    d = m["delta"]
    assert (d["recompiles"], d["new_recompiles"], d["caused_recompiles"]) == (1, 1, 3)
    first, *rest = _reasons(m)
    assert "caused_by" not in first and first["frame"]["function"] == "forward"
    assert [r["caused_by"] for r in rest] == [BREAK_AT] * 3


def _size_one(frame: dict, cid: str, resumed: bool = False) -> dict:
    r = {"guard": "tensor 'args[1]' size mismatch at index 0. expected 1, actual 3", "dim": None,
         "kind": "size_one", "path": None, "line": None, "source": None, "frame": frame,
         "compile_id": cid}
    if resumed:
        r["resumed_after"] = {"path": "pkg/gated.py", "line": 19}
    return r


def test_every_recompile_figure_leaves_out_torchs_size_one_compiles():
    # Seen on tad-dftd3: the table said 47 -> 49 "+1", the details "+0, 3 following", because
    # the table left out torch's 0/1 specialisation (`recompiles.count`) and the cases did not.
    # Here head also compiles twice more for size 1 only: once in a frame the new break split
    # off, once in a helper both sides compile (base once, head twice).
    base, head = resume_pair()
    resumed = {"function": "torch_dynamo_resume_in_gate_at_19", "path": "pkg/gated.py", "line": 19}
    helper = {"function": "einsum", "path": None, "line": None}
    bcase = next(c for c in base["models"][0]["recompiles"]["cases"] if c["shape"] == {"batch": 3})
    hcase = next(c for c in head["models"][0]["recompiles"]["cases"] if c["shape"] == {"batch": 3})
    bcase["reasons"] += [_size_one(helper, "7/1")]
    hcase["reasons"] += [_size_one(resumed, "2/2", resumed=True), _size_one(helper, "7/1"),
                         _size_one(helper, "7/2")]
    bcase["recompiles"] += 1
    hcase["recompiles"] += 3
    base["models"][0]["recompiles"]["size_one"] = 1
    head["models"][0]["recompiles"]["size_one"] = 3
    m = _gated(base, head)
    d = m["delta"]
    counts = (head["models"][0]["recompiles"]["count"], base["models"][0]["recompiles"]["count"])
    [case] = [c for c in d["recompile_cases"] if c["head"]]
    assert (case["base"], case["head"], case["caused"], case["delta"]) == (0, 3, 3, 0)
    assert case["size_one"] == {"base": 1, "head": 3}
    assert sum(c["head"] for c in d["recompile_cases"]) == counts[0]
    assert sum(c["delta"] for c in d["recompile_cases"]) == d["recompiles"] == \
        counts[0] - counts[1] - d["caused_recompiles"] == 0
    assert (d["new_recompiles"], d["caused_recompiles"]) == (0, 3)
    assert m["new_breaks"][0]["caused_recompiles"] == 3
    # the size-1 ones are listed last, and never as the break's
    assert [r["kind"] for r in case["reasons"]][-2:] == ["size_one"] * 2
    assert not any("caused_by" in r for r in case["reasons"] if r["kind"] == "size_one")


def test_a_guard_of_the_users_code_in_a_split_off_frame_is_its_own_problem():
    # `make demo`: head adds an `.item()` branch (line 23) and, after it, a hard-coded chunk size
    # (`h.reshape(b, -1, 16, d)`, line 26). The resume frame recompiles once for the new seq
    # (size mismatch: the break's) and once on the reshape's guard: a second regression.
    base, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    resumed = next(r for r in case["reasons"] if r.get("resumed_after"))
    case["reasons"].append({"guard": "(h.size()[1] // 16) != 1", "dim": None, "kind": "guard",
                            "path": "pkg/gated.py", "line": 21,
                            "source": "h = h.reshape(h.shape[0], -1, 16, h.shape[-1])",
                            "frame": resumed["frame"], "resumed_after": resumed["resumed_after"],
                            "compile_id": "9/1"})
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    m = _gated(base, head)
    d = m["delta"]
    assert (d["recompiles"], d["new_recompiles"], d["caused_recompiles"]) == (1, 1, 3)
    own = [r for r in _reasons(m) if r["kind"] == "guard"]
    assert len(own) == 1 and "caused_by" not in own[0]


def test_only_heads_excess_over_base_is_attributed():
    # Base recompiled twice on the same case already: at most one of head's three can be
    # the break's doing, the other two are not explained away (nor counted as new).
    base, head = resume_pair()
    bc = next(c for c in base["models"][0]["recompiles"]["cases"] if c["shape"] == {"batch": 3})
    bc["recompiles"] = 2
    base["models"][0]["recompiles"]["count"] = 2
    m = _gated(base, head)
    d = m["delta"]
    assert (d["recompiles"], d["new_recompiles"], d["caused_recompiles"]) == (0, 0, 1)
    # The resume functions are the surest sign: the one attributed is one of them.
    caused = [r for r in _reasons(m) if "caused_by" in r]
    assert len(caused) == 1 and "resumed_after" in caused[0]


@pytest.mark.parametrize("allowed, conclusion", [(0, "failure"), (1, "success")])
def test_the_thresholds_count_the_break_once(allowed, conclusion):
    base, head = resume_pair()
    cfg = make_config(new_graph_breaks=allowed)
    rep = build_report(base_results=typed(base), head_results=typed(head), base_findings=[],
                       head_findings=[], changeset=None, config=cfg, base_sha="b" * 40,
                       head_sha="h" * 40).to_dict()
    assert rep["conclusion"] == conclusion, rep["reasons"]
    [r] = [r for r in rep["reasons"] if r["model"] == "gated"]
    assert r["code"] == "new_graph_breaks" and r["count"] == 1
    assert r["message"].endswith("; 3 recompiles follow from it")
    assert validation_errors(rep) == []


def test_report_json_keeps_its_key_order(pr):
    """report.json is written in the order its keys have always had: the top level, the
    delta, and each kind of model entry, where `change` sits where the way the entry was made
    put it (pt2bot/reportdata.py KEY_ORDER)."""
    base, head = results_pair()
    head["models"].append({"name": "skipped_one", "status": "skipped", "reason": None})
    rep = report_for(pr, base, head)
    assert list(rep) == ["schema", "pt2bot", "mode", "base", "head", "conclusion",
                         "summary_title", "reasons", "torch", "device", "device_name", "backend",
                         "config_digest", "thresholds", "findings", "findings_hidden", "models",
                         "skipped", "counts"]
    tail = ["delta", "new_breaks", "fixed_breaks", "unchanged_breaks", "problems"]
    # no head run to compare (here: removed from head's results); every entry ends with the
    # latency gate's decision (`latency_gate_note` after it only when there is one)
    assert list(model(rep, "old_model")) == ["name", "status", "reason", "change", "base",
                                             "head", *tail, "latency_gate"]
    # a run the smoke run skipped
    assert list(model(rep, "skipped_one")) == ["name", "status", "reason", "base", "head",
                                               "change", *tail, "latency_gate"]
    # compared runs; `error` only where head failed
    assert list(model(rep, "tiny_gpt")) == ["name", "status", "reason", "base", "head", *tail,
                                            "change", "latency_gate"]
    assert list(model(rep, "flaky")) == ["name", "status", "reason", "base", "head", "error",
                                         *tail, "change", "latency_gate"]
    counts = ["graph_breaks", "graph_count", "recompiles", "new_recompiles", "caused_recompiles",
              "after_break_recompiles", "recompile_cases", "export", "accuracy", "new_specialized", "fixed_specialized",
              "latency"]
    assert list(model(rep, "tiny_gpt")["delta"]) == [*counts, "eager_fallback"]
    assert list(model(rep, "flaky")["delta"]) == counts      # head failed: nothing compared


def test_a_gated_model_has_no_latency_verdict(pr):
    """A head RUN the latency gate marked "unchanged" (pt2bot/latency_gate.py): each shape's
    row has no ratio, no interval and no verdict, the entry says `latency_gate`, the report
    stays valid, and the summary says so in a line, rendered by GitHub's renderer."""
    import cmarkgfm

    from pt2bot.report.summary import render_summary

    base, head = results_pair()
    tiny = next(m for m in head["models"] if m["name"] == "tiny_gpt")
    tiny["latency_gate"] = {"gate": "unchanged", "note": "unchanged: same graphs, same code"}
    flaky = next(m for m in head["models"] if m["name"] == "flaky")
    flaky["latency_gate"] = {"gate": "measured", "note": "changed code ran on head (pkg/m.py:3)"}
    rep = report_for(pr, base, head)
    gated = model(rep, "tiny_gpt")
    assert gated["latency_gate"] == "unchanged"
    assert [r["shape"] for r in gated["delta"]["latency"]] == [
        {"batch": 1, "seq": 32}, {"batch": 4, "seq": 32}]
    for row in gated["delta"]["latency"]:
        assert (row["significant"], row["direction"], row["ratio"], row["ci_low"],
                row["ci_high"]) == (False, "same", None, None, None)
        assert row["note"] == "unchanged: same graphs, same code"
    # the recorded head is 25 % slower on batch=4: gated, that is no reason any more
    assert [r["model"] for r in report_for(pr)["reasons"]
            if r["code"] == "latency_regression"] == ["tiny_gpt"]
    assert not [r for r in rep["reasons"] if r["code"] == "latency_regression"]
    assert model(rep, "flaky")["latency_gate_note"] == "changed code ran on head (pkg/m.py:3)"
    assert validation_errors(rep) == []
    b_sha, h_sha, cs = pr
    typed_report = build_report(
        base_results=typed(base), head_results=typed(head), base_findings=[], head_findings=[],
        changeset=cs, config=make_config(), selection=SKIP, base_sha=b_sha, head_sha=h_sha)
    html = cmarkgfm.github_flavored_markdown_to_html(render_summary(typed_report))
    assert "Latency: unchanged: same graphs, same code" in html


def test_a_value_passed_across_the_break_and_guarded_follows_from_it():
    # minGPT with `print("...", t.mean().item())` in attention: the frame resumed after the
    # print takes the float (`___stack2`) and the sizes `B, T` computed before it as its
    # arguments, guards each by value, and recompiles for every new value: the print's
    # consequence (gone with it), not a new recompile of its own. Guards recorded so by
    # torch 2.13 (`pt2bot review` of minGPT, eager); the reshape guard of the test above is
    # an expression, and stays the frame's own.
    base, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    resumed = next(r for r in case["reasons"] if r.get("resumed_after", {}).get("line") == 19)
    guards = ["___stack2 == -1.9169241189956665                         # print(\"attention "
              "entropy\", -(att * att.clamp_min(1e-9).log()).sum(-1).mean().item())",
              "___stack2 == -2.5486111640930176  #",
              "T == 16                                                  # y = y.transpose(1, 2)",
              # (flux's `if t.max().item() <= 1.0:`: the value tested where it broke)
              "___stack0 <= 1.0                                         # if t.max().item() <= 1.0:",
              "(h.size()[1] // 16) != 1"]
    for i, g in enumerate(guards):
        case["reasons"].append({"guard": g, "dim": None, "kind": "guard", "path": None,
                                "line": None, "source": None, "frame": resumed["frame"],
                                "resumed_after": resumed["resumed_after"],
                                "compile_id": f"9/{i + 1}"})
    case["recompiles"] += len(guards)
    head["models"][0]["recompiles"]["count"] += len(guards)
    m = _gated(base, head)
    d = m["delta"]
    assert (d["recompiles"], d["new_recompiles"], d["caused_recompiles"]) == (1, 1, 7)
    first, *rest = _reasons(m)       # the unexplained first, then (up to 5) the break's
    assert first["guard"] == "(h.size()[1] // 16) != 1" and "caused_by" not in first
    assert [r["caused_by"] for r in rest] == [BREAK_AT] * 4
    # The same value guard in the root frame (compiled without the break too) is its own.
    _, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    case["reasons"].append({"guard": "T == 16", "dim": None, "kind": "guard", "path": None,
                            "line": None, "source": None,
                            "frame": {"function": "forward", "path": "pkg/gated.py", "line": 23},
                            "compile_id": "0/1"})
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    assert _gated(base, head)["delta"]["new_recompiles"] == 1
    # and a local's test in a resumed frame is the user's own code
    base, head = resume_pair()
    case = next(c for c in head["models"][0]["recompiles"]["cases"] if c["recompiles"])
    resumed = next(r for r in case["reasons"] if r.get("resumed_after", {}).get("line") == 19)
    case["reasons"].append({"guard": "T <= 16", "dim": None, "kind": "guard", "path": None, "line": None,
                            "source": None, "frame": resumed["frame"], "resumed_after": resumed["resumed_after"],
                            "compile_id": "9/1"})
    case["recompiles"] += 1
    head["models"][0]["recompiles"]["count"] += 1
    assert _gated(base, head)["delta"]["new_recompiles"] == 1


def test_latency_gate_says_not_measured_where_head_timed_nothing():
    # a run with `latency: false` has no latency phase: "measured" there claimed a
    # measurement nobody made
    def run(phases: tuple[str, ...], status: str = "ok") -> ModelRun:
        return ModelRun(name="m", status=status, phases=phases)

    def gate(head: ModelRun) -> str:
        return compare_model("m", run(("breaks", "matrix")), head, renames={},
                             line_map=lambda path, line: line, threshold_pct=10).latency_gate

    assert gate(run(("breaks", "matrix"))) == "not_measured"
    assert gate(run(("breaks", "matrix", "latency"))) == "measured"
    assert gate(run(("breaks", "matrix", "latency"), status="error")) == "not_measured"


def test_a_break_on_a_line_the_pr_rewrote_in_place_is_the_same_break():
    """A new user's PR made `return -self.flow.log_prob(z)` (line 25, where the library call
    has always broken, GB0033) into `score = -self.flow.log_prob(z)` and added two lines after
    it. The review failed on "2 new graph breaks" beside "🎉 Fixed 1 graph break" at the same
    line: the rewritten line's break is the one base had; only the `.item()` is new. A break
    of another kind there, or the same kind elsewhere, stays new."""
    def brk(line: int, source: str, gb: str = "GB0033") -> GraphBreak:
        return GraphBreak.from_json({"gb": gb, "gb_type": {"GB0033": "Data dependent operator",
                                                          "GB0124": "Unsupported Tensor.item()"}[gb],
                                     "path": "pkg/m.py", "line": line, "function": "forward",
                                     "source": source})

    # lines 1-24 kept, 25 edited in place, 26 on moved down by the two lines added after 25
    line_map = lambda p, n: None if n == 25 else (n if n < 25 else n + 2)   # noqa: E731
    base = [brk(25, "return -self.flow.log_prob(z)")]
    head = [brk(25, "score = -self.flow.log_prob(z)"),
            brk(27, "self.last_max_score = score.max().item()", "GB0124")]
    new, fixed, same = match_breaks(base, head, renames={}, line_map=line_map)
    assert [(b["gb"], b["line"]) for b in new] == [("GB0124", 27)] and fixed == [] and same == 1
    # the same edit with lines added above it too: base's line is found past them
    shifted = lambda p, n: None if n == 25 else (n + 3 if n > 10 else n)   # noqa: E731
    new, fixed, same = match_breaks(base, [brk(28, "score = -self.flow.log_prob(z)")],
                                    renames={}, line_map=shifted)
    assert (new, fixed, same) == ([], [], 1)
    # another kind on the rewritten line is new, and base's is fixed
    new, fixed, same = match_breaks(base, [brk(25, "score = z.sum().item()", "GB0124")],
                                    renames={}, line_map=line_map)
    assert [b["gb"] for b in new] == ["GB0124"] and [b["gb"] for b in fixed] == ["GB0033"]
    # and a line the diff kept is never paired this way (its own map says where it went)
    new, fixed, same = match_breaks([brk(20, "a = f(x)")], [brk(20, "b = f(x)")],
                                    renames={}, line_map=line_map)
    assert len(new) == len(fixed) == 1 and same == 0


def test_the_function_a_break_is_in_compiled_as_a_frame_of_its_own_follows_from_it():
    # guided-diffusion's `SuperResModel.forward` calls `super().forward`, where a PR added a NaN
    # check: dynamo records the break with the inner frame's stack alone, and the caller now
    # runs `UNetModel.forward` as frame 1, whose unmarked input recompiles on a new size. The
    # review failed "2 new recompiles" that the break explains.
    import dataclasses

    from pt2bot.compare import cause_of
    from pt2bot.results import Frame, RecompileReason

    brk = {"gb": "GB0170", "path": "pkg/unet.py", "line": 664}
    breaks = [(brk, (("pkg/unet.py", 664, "forward"),))]
    inner = RecompileReason(guard="tensor 'x' size mismatch at index 0. expected 2, actual 4",
                            kind="size_mismatch", frame=Frame(path="pkg/unet.py", line=634, function="forward"),
                            compile_id="1/3")
    assert cause_of(inner, breaks) is brk
    # the model's own frame, compiled before the break too, never follows from it
    assert cause_of(dataclasses.replace(inner, compile_id="0/2"), breaks) is None
    # nor another function of the frame's name elsewhere
    elsewhere = dataclasses.replace(inner, frame=Frame(path="pkg/other.py", line=3, function="forward"))
    assert cause_of(elsewhere, breaks) is None


def test_a_failure_raised_elsewhere_through_a_line_the_pr_added_is_commented_there(pr):
    """guided-diffusion's 18ff408 reverted: the float channel count the PR's line computes
    raises inside another file's `nn.Conv2d`, and the failure was located there only, with no
    comment on the PR; its traceback's innermost frame on an added line now carries it."""
    from pt2bot.report.review import render_review
    from pt2bot.reportdata import Report

    base, head = results_pair()
    run = next(m for m in head["models"] if m["name"] == "tiny_gpt")
    run.update(status="error", error={"kind": "build", "message": "TypeError: empty() received an invalid "
                                      "combination of arguments", "path": "pkg/layers.py", "line": 15,
                                      "frames": [{"path": "pkg/models.py", "line": 40},
                                                 {"path": "pkg/layers.py", "line": 15}]})
    b_sha, h_sha, cs = pr
    rep = build_report(base_results=typed(base), head_results=typed(head), base_findings=[], head_findings=[],
                       changeset=cs, config=make_config(), selection=SKIP, base_sha=b_sha, head_sha=h_sha)
    [p] = [p for p in model(rep.to_dict(), "tiny_gpt")["problems"] if p["kind"] == "fails_only_on_head"]
    assert (p["path"], p["line"], p["reached_from"]) == ("pkg/layers.py", 15, {"path": "pkg/models.py", "line": 40})
    review = render_review(Report(head=h_sha, models=rep.models), lambda path, line: (path, line) == ("pkg/models.py", 40))
    [c] = review["comments"]
    assert (c["path"], c["line"]) == ("pkg/models.py", 40)
    assert "Raised at `pkg/layers.py:15`, called from this line." in c["body"]


DETR_FORWARD = '''import torch


class DETR(torch.nn.Module):
    def forward(self, samples):
        """Samples are a NestedTensor, or a list or batch of images."""
        if isinstance(samples, {kinds}):
            samples = nested(samples)
        features = self.backbone(samples)
        return features


def nested(samples):
    return samples
'''


def test_a_failure_raised_through_a_function_the_pr_changed_above_the_call_is_commented_there(tmp_path):
    """DETR's ae03a2d reverted: `isinstance(samples, list)` no longer wraps a batched tensor,
    and `self.backbone(samples)` two lines below raises in backbone.py. No frame of the
    traceback is on the PR's line, and the failure was said only in the summary; the frame's
    function, changed above the call, now carries it, and the comment says it is a call
    through that function, not that the line raised."""
    from pt2bot.changes import diff_changes, with_code_spans
    from pt2bot.report.review import render_review
    from pt2bot.reportdata import Report

    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pkg/detr.py", DETR_FORWARD.format(kinds="(list, torch.Tensor)"))
    b_sha = repo.commit("base")
    repo.write("pkg/detr.py", DETR_FORWARD.format(kinds="list"))
    h_sha = repo.commit("pr")
    cs = with_code_spans(diff_changes(str(repo.path), b_sha, h_sha), str(repo.path))
    assert cs.files["pkg/detr.py"].functions == ((5, 10, "forward"), (13, 14, "nested"))

    def failing(frames, names=("tiny_gpt",)):
        base, head = results_pair()
        for run in (m for m in head["models"] if m["name"] in names):
            run.update(status="error", error={
                "kind": "exception", "path": "pkg/backbone.py", "line": 73, "frames": frames,
                "message": "forward(batch=2) raised AttributeError: 'Tensor' object has no attribute 'tensors'"})
        rep = build_report(base_results=typed(base), head_results=typed(head), base_findings=[],
                           head_findings=[], changeset=cs, config=make_config(), selection=SKIP,
                           base_sha=b_sha, head_sha=h_sha)
        [p] = [p for p in model(rep.to_dict(), "tiny_gpt")["problems"]
               if p["kind"] == "fails_only_on_head"]
        assert validation_errors(rep.to_dict()) == []
        return rep, p

    rep, p = failing([{"path": "pkg/detr.py", "line": 9}, {"path": "pkg/backbone.py", "line": 73}])
    assert p["reached_from"] == {"path": "pkg/detr.py", "line": 7, "function": "forward", "via": 9}
    review = render_review(Report(head=h_sha, models=rep.models),
                           lambda path, line: (path, line) == ("pkg/detr.py", 7))
    [c] = review["comments"]
    assert (c["path"], c["line"]) == ("pkg/detr.py", 7)
    assert ("Raised at `pkg/backbone.py:73`, in a call from line 9 of `forward`, a function this "
            "pull request changed here.") in c["body"]
    # a frame in a function the PR did not change, or above the changed line, carries nothing
    for frames in ([{"path": "pkg/detr.py", "line": 14}], [{"path": "pkg/detr.py", "line": 6}]):
        assert "reached_from" not in failing(frames + [{"path": "pkg/backbone.py", "line": 73}])[1]
    # two models failing alike get one comment there, naming both (DETR's two got two)
    rep, _ = failing([{"path": "pkg/detr.py", "line": 9}, {"path": "pkg/backbone.py", "line": 73}],
                     names=("tiny_gpt", "renamed_mlp"))
    [c] = render_review(Report(head=h_sha, models=rep.models),
                        lambda path, line: (path, line) == ("pkg/detr.py", 7))["comments"]
    assert c["body"].startswith("❌ pt2bot: models `tiny_gpt`, `renamed_mlp` fail on head but not on base")
