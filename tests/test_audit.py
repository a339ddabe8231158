"""The audit downstream of the runs: recorded results JSON → history → report → issue.

Real SQLite history, real compare.build_report, real matplotlib PNGs, and the tracking
issue's lifecycle against the fake GitHub over HTTP (tests/fakegithub.py).
"""
from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fakegithub import WRITE_TOKEN, FakeGitHub
from pt2bot.audit.run import audit_results
from pt2bot.configfile import parse_config
from pt2bot.findings import Finding
from pt2bot.publish.github import ClientTuning
from pt2bot.publish.issue import LABEL, plan_issue, publish_audit
from pt2bot.audit.history import History
from pt2bot.audit.report import AUDIT_MARKER, render_audit_markdown, render_regression_comment

DATA = Path(__file__).parent / "data" / "audit"
T0 = datetime(2026, 11, 1, 2, 0, tzinfo=timezone.utc)
PNG = b"\x89PNG\r\n\x1a\n"
CONFIG = """\
version: 1
models:
  - name: tiny_gpt
    entry: zoo.gpt:TinyGPT
    inputs: [{shape: [batch, seq], dtype: int64, high: 100}]
    shapes: {batch: [1, 4], seq: [8]}
  - name: tiny_mlp
    entry: zoo.mlp:TinyMLP
    inputs: [{shape: [batch, 32]}]
    shapes: {batch: [2, 8]}
run: {device: cpu, backend: inductor}
"""
BREAK = {"gb": "GB0059", "gb_type": "Unsupported function call: print <script>alert(1)</script>",
         "path": "zoo/gpt.py", "line": 21, "function": "forward", "source": "print(h.shape)",
         "reason": "print() <script>alert(1)</script> @maintainers #12", "explanation": "...",
         "hints": [], "url": "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html",
         "count": 1, "in_loop": False,
         "user_stack": [{"path": "zoo/gpt.py", "line": 21, "function": "forward"}]}


def night(i: int, *, gpt_break: bool = False, mlp_fails: bool = False,
          gpt_ms: float | None = None) -> dict:
    r = json.loads((DATA / "night1.json").read_text())
    r["commit"] = f"{i:x}" * 40 if i < 16 else f"{i:040x}"
    r["created"] = (T0 + timedelta(days=i)).isoformat()
    gpt, mlp = r["models"]
    if gpt_break:
        gpt["graph_breaks"] = [copy.deepcopy(BREAK)]
        gpt["graph_count"] = 2
    if mlp_fails:
        mlp.clear()
        mlp.update(name="tiny_mlp", status="error", reason=None, graph_breaks=[],
                   error={"kind": "import", "message": "ModuleNotFoundError: No module named 'zoo.mlpp'",
                          "path": "zoo/mlp.py", "line": 3}, files=["zoo/mlp.py"])
    if gpt_ms is not None:
        for k, case in enumerate(gpt["latency"]):
            med = gpt_ms * (1 + k)
            case["compiled_ms"].update(median=med, min=med * 0.97,
                                       samples=[med * (1 + 0.01 * ((j % 3) - 1)) for j in range(10)])
    return r


FINDINGS = [Finding(rule="PTC101", path="zoo/gpt.py", line=3, col=4, severity="error",
                    message="print in forward", source="print(x)", function="TinyGPT.forward")]


def run_night(history, tmp_path, i, results, **kw):
    kw.setdefault("charts", False)   # PNGs cost ~0.5 s a night; the tests about them opt in
    out = tmp_path / f"out{i}"
    report = audit_results(parse_config(CONFIG), results, FINDINGS, history=history,
                           out_dir=str(out), now=T0 + timedelta(days=i), **kw)
    return report, out


def test_three_nights_break_then_fix(tmp_path):
    with History(str(tmp_path / "h.db")) as h:
        r1, out1 = run_night(h, tmp_path, 1, night(1), charts=True)
        r2, out2 = run_night(h, tmp_path, 2, night(2, gpt_break=True), charts=True)
        r3, out3 = run_night(h, tmp_path, 3, night(3), charts=True)

        assert r1["base"] is None and r1["head"] == night(1)["commit"]
        assert r1["conclusion"] == "success" and r1["audit"]["clean"]
        assert r1["audit"]["regressions"] == [] and r1["audit"]["previous"] is None

        a2 = r2["audit"]
        assert r2["base"] == night(1)["commit"] and r2["conclusion"] == "failure"
        assert not a2["clean"]
        [reg] = a2["regressions"]
        assert (reg["model"], reg["kind"], reg["gb"], reg["path"]) == (
            "tiny_gpt", "graph_break", "GB0059", "zoo/gpt.py")
        assert [o["kind"] for o in a2["outstanding"]] == ["graph_break"]
        gpt2 = next(m for m in r2["models"] if m["name"] == "tiny_gpt")
        assert gpt2["delta"]["graph_breaks"] == 1

        a3 = r3["audit"]
        assert r3["conclusion"] == "success" and a3["clean"] and a3["regressions"] == []
        assert [(i["model"], i["detail"]) for i in a3["improvements"]] == [
            ("tiny_gpt", "graph break fixed")]
        assert a3["reference"]["commit"] == night(1)["commit"]

        # history rows
        runs = h.all_runs()
        assert [r.commit for r in runs] == [night(i)["commit"] for i in (1, 2, 3)]
        assert [r.clean for r in runs] == [True, False, True]
        assert [len(h.rows("breaks", r.id)) for r in runs] == [1, 2, 1]  # tiny_mlp's + gpt's
        assert [p.graph_breaks for p in h.model_series("tiny_gpt")] == [0, 1, 0]
        assert {x["rule"]: x["count"] for x in h.rows("findings", runs[0].id)} == {"PTC101": 1}

    # output directory
    for name in ("report.json", "audit.md", "report.html", f"baseline-{r3['head']}.json"):
        assert (out3 / name).is_file(), name
    baseline = json.loads((out3 / f"baseline-{r3['head']}.json").read_text())
    assert baseline["schema"] == "pt2bot.results/1" and baseline["commit"] == r3["head"]
    on_disk = json.loads((out3 / "report.json").read_text())
    assert on_disk["schema"] == "pt2bot.report/1" and on_disk["audit"]["clean"]
    for key in ("graph_breaks", "latency"):
        png = (out3 / "charts" / f"{key}.png").read_bytes()
        assert png.startswith(PNG)
    import matplotlib.image as mpimg
    assert mpimg.imread(str(out3 / "charts" / "graph_breaks.png")).ndim == 3

    md2 = (out2 / "audit.md").read_text()
    assert md2.startswith(AUDIT_MARKER)
    assert "xychart-beta" in md2 and "line [0, 1]" in md2
    assert "<script>" not in md2 and "@maintainers" not in md2
    html2 = (out2 / "report.html").read_text()
    assert "<script>" not in html2 and "&lt;script&gt;" in html2 and "GB0059" in html2
    assert "data:image/png;base64," in html2
    md3 = (out3 / "audit.md").read_text()
    assert "line [0, 1, 0]" in md3


def test_failing_model_is_outstanding_and_recorded(tmp_path):
    with History(str(tmp_path / "h.db")) as h:
        run_night(h, tmp_path, 1, night(1))
        r2, out2 = run_night(h, tmp_path, 2, night(2, mlp_fails=True))
        a = r2["audit"]
        assert any(o["model"] == "tiny_mlp" and o["kind"] == "status" for o in a["outstanding"])
        assert any(r["model"] == "tiny_mlp" and "now fails" in r["detail"] for r in a["regressions"])
        assert [p.status for p in h.model_series("tiny_mlp")] == ["ok", "error"]
        # still failing the next night: outstanding, but not a new regression
        r3, _ = run_night(h, tmp_path, 3, night(3, mlp_fails=True))
        assert not r3["audit"]["clean"] and r3["audit"]["regressions"] == []
    assert "ModuleNotFoundError" in (out2 / "audit.md").read_text()


def test_latency_judged_against_the_window_not_one_night(tmp_path):
    noise = [1.00, 1.04, 0.97, 1.02, 0.99, 1.03]
    with History(str(tmp_path / "h.db")) as h:
        for i, ms in enumerate(noise, start=1):
            run_night(h, tmp_path, i, night(i, gpt_ms=ms))
        # within the window's spread, though 6 % above last night: no verdict
        r, _ = run_night(h, tmp_path, 7, night(7, gpt_ms=1.05))
        cases = [c for c in r["audit"]["window"]["cases"] if c["model"] == "tiny_gpt"]
        assert cases and all(c["verdict"] == "same" for c in cases)
        assert r["audit"]["clean"]
        # 40 % slower than the window: a regression, and outstanding
        r, out = run_night(h, tmp_path, 8, night(8, gpt_ms=1.4))
        slow = [x for x in r["audit"]["regressions"] if x["kind"] == "latency"]
        assert {x["model"] for x in slow} == {"tiny_gpt"} and len(slow) == 2
        assert not r["audit"]["clean"] and r["conclusion"] == "failure"
        assert "slower" in (out / "audit.md").read_text()


def test_week_ago_comparison(tmp_path):
    with History(str(tmp_path / "h.db")) as h:
        run_night(h, tmp_path, 1, night(1))
        for i in range(2, 9):
            r, out = run_night(h, tmp_path, i, night(i, gpt_break=True))
        assert r["audit"]["week_ago"]["commit"] == night(1)["commit"]
        [chg] = r["audit"]["since_week"]
        assert chg["model"] == "tiny_gpt" and chg["worse"][0]["kind"] == "graph_break"
        assert r["audit"]["regressions"] == []        # nothing new since last night


def test_retention_applies_after_each_audit(tmp_path):
    with History(str(tmp_path / "h.db")) as h:
        for i in range(1, 6):
            r, _ = run_night(h, tmp_path, i, night(i), keep_runs=3)
        assert h.count_runs() == 3 and r["audit"]["runs_in_history"] == 3


@pytest.mark.parametrize("open_issues,clean,regressed,expected", [
    ([], True, False, ("none", None, False, ())),
    ([], False, True, ("create", None, False, ())),
    ([7], False, True, ("update", 7, True, ())),
    ([7], False, False, ("update", 7, False, ())),
    ([7], True, False, ("close", 7, False, ())),
    ([9, 7], False, True, ("update", 7, True, (9,))),
])
def test_plan_issue(open_issues, clean, regressed, expected):
    p = plan_issue(open_issues, clean=clean, regressed=regressed)
    assert (p.action, p.issue, p.comment, p.duplicates) == expected


FAST = ClientTuning(retries=2, backoff_factor=0.01, backoff_max=0.05, secondary_rate_wait=0.1,
                    seconds_between_writes=0.0)


def test_tracking_issue_lifecycle(tmp_path):
    with FakeGitHub() as gh, History(str(tmp_path / "h.db")) as h:
        env = {"GITHUB_API_URL": gh.base_url, "GITHUB_TOKEN": WRITE_TOKEN,
               "GITHUB_REPOSITORY": gh.full_name}
        # a human's issue with the same label is never touched
        gh.issues[100] = gh._new_issue(100, "human", "please look", [LABEL], gh.tokens[WRITE_TOKEN])

        def comments(n):
            return [c for c in gh.issue_comments if c["_issue"] == n]

        def tracking():
            return [i for i in gh.issues.values() if AUDIT_MARKER in (i["body"] or "")]

        def publish(i, results):
            report, _ = run_night(h, tmp_path, i, results)
            publish_audit(report, body=render_audit_markdown(report),
                          comment=render_regression_comment(report), env=env, tuning=FAST)
            return report

        publish(1, night(1))                                   # clean: no issue
        assert tracking() == []
        publish(2, night(2, gpt_break=True))                   # regression: issue opened
        [issue] = tracking()
        assert issue["state"] == "open" and LABEL in issue["labels"]
        assert "GB0059" in issue["body"] and comments(issue["number"]) == []
        publish(3, night(3, gpt_break=True))                   # unchanged: body only
        assert len(tracking()) == 1 and comments(issue["number"]) == []
        assert night(3)["commit"][:12] in issue["body"]
        publish(4, night(4, gpt_break=True, mlp_fails=True))   # a new regression: comment
        [c] = comments(issue["number"])
        assert "tiny\\_mlp" in c["body"] and "now fails" in c["body"]
        publish(5, night(5))                                   # all clean: closed
        assert issue["state"] == "closed" and len(comments(issue["number"])) == 1
        publish(6, night(6))                                   # still clean: nothing
        assert [i["state"] for i in tracking()] == ["closed"]
        publish(7, night(7, gpt_break=True))                   # regresses later: a new issue
        states = sorted((i["number"], i["state"]) for i in tracking())
        assert [s for _, s in states] == ["closed", "open"]
        assert gh.issues[100]["state"] == "open" and gh.issues[100]["body"] == "please look"
        assert gh.violations == []


def test_cli_refuses_a_corrupt_history_before_running_anything(git_repo, tmp_path, monkeypatch,
                                                                 capsys):
    from pt2bot.cli import main

    git_repo.write("pt2bot.yml", CONFIG)
    git_repo.commit("config")
    bad = tmp_path / "history.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)   # a cut-off download
    monkeypatch.chdir(git_repo.path)
    rc = main(["audit", "--history", str(bad), "--out", str(tmp_path / "out")])
    assert rc == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "left untouched" in err
    assert bad.read_bytes() == b"SQLite format 3\x00" + b"\x00" * 50
    assert not (tmp_path / "out" / "smoke").exists()


def test_retention_setting_from_the_environment():
    import argparse

    from pt2bot.audit.run import retention_from
    from pt2bot.errors import UserError
    from pt2bot.audit.history import DEFAULT_KEEP_RUNS

    ns = argparse.Namespace()
    assert retention_from(ns, {}) == (DEFAULT_KEEP_RUNS, None)
    assert retention_from(ns, {"PT2BOT_HISTORY_KEEP": "60,30d"}) == (60, 30)
    assert retention_from(argparse.Namespace(keep="10"), {"PT2BOT_HISTORY_KEEP": "60"}) == (10, None)
    with pytest.raises(UserError):
        retention_from(ns, {"PT2BOT_HISTORY_KEEP": "forever"})


def _with_cost(r: dict, cpu_s: float, fx_nodes: int, captured: int) -> dict:
    gpt = r["models"][0]
    gpt["compile_cost"] = {"cpu_s": cpu_s, "wall_s": cpu_s, "fx_nodes": fx_nodes, "guards": 40,
                           "graphs": 1, "kernels": None, "kernel_bytes": None,
                           "cache_hits": None, "cache_misses": None, "cache": "cold",
                           "backend": "aot_eager", "cpu_method": "test"}
    gpt["graph_coverage"] = {"captured_ops": captured, "unique_graphs": 1,
                             "graph_ops": [captured], "largest_share": 1.0,
                             "aten_in_graphs": captured * 2, "aten_outside": 0,
                             "eager_frames": []}
    return r


def test_compile_cost_is_a_trend_and_a_regression_between_nights(tmp_path):
    """Three nights: the compile's cost and captured ops land in the history, the trends,
    the Mermaid and PNG charts; the night that doubles the compile is a regression."""
    history = History(str(tmp_path / "h.db"))
    run_night(history, tmp_path, 1, _with_cost(night(1), 0.50, 90, 40))
    r2, _ = run_night(history, tmp_path, 2, _with_cost(night(2), 0.52, 90, 40))
    assert not [x for x in r2["audit"]["regressions"] if x["kind"] == "compile"]
    r3, out = run_night(history, tmp_path, 3, _with_cost(night(3), 1.10, 180, 80), charts=True)
    (item,) = [x for x in r3["audit"]["regressions"] if x["kind"] == "compile"]
    assert item["model"] == "tiny_gpt" and item["detail"].startswith("first compile 112% costlier")
    t = r3["audit"]["trends"]
    assert t["compile_cpu_s"]["tiny_gpt"] == [0.5, 0.52, 1.1]
    assert t["captured_ops"]["tiny_gpt"] == [40, 40, 80]
    assert "tiny_mlp" not in t["compile_cpu_s"]      # never measured: no line at all
    md = (out / "audit.md").read_text()
    assert "tiny_gpt: first compile" in md and "1.10 CPU s (cold), 180 FX nodes" in md
    png = (out / "charts" / "compile.png").read_bytes()
    assert png.startswith(PNG) and (out / "charts" / "captured_ops.png").is_file()
    assert r3["audit"]["charts"]["compile"] == "charts/compile.png"
    history.close()
