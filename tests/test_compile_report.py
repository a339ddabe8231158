"""Compile reports: the structured trace per model and side, tlparse's HTML, the summary line.

Real parts: the worker and `pt2bot review` on real torch (eager backend) in a real git repo,
the tlparse binary from the `tlparse` extra (tests that need it skip without it), and real
scripts standing in for a tlparse that fails or hangs.
"""
from __future__ import annotations

import json
import os
import re
import stat
import sys

import pytest

from gitrepo import GitRepo
from pt2bot.report.compile_report import run_url, summary_line
from pt2bot.results import ModelRun, model_dir_name, report_dir, trace_path
from pt2bot.smoke import compile_report as cr
from pt2bot.reportdata import Delta, ModelDelta

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
TLPARSE = cr.find_tlparse()
needs_tlparse = pytest.mark.skipif(TLPARSE is None, reason="tlparse is not installed")
_GLOG = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ \S+:\d+\] (\{.*\})$")


def _records(path: str) -> list[dict]:
    """Every record of a trace file (a line that starts a record, then tab-indented payload);
    fails on a line that is neither, so a cut-off record would show."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                assert out, "payload before any record"
                continue
            m = _GLOG.match(line)
            assert m, line[:200]
            out.append(json.loads(m.group(1)))
    return out


# ----------------------------------------------------------------------------- pure parts

def test_model_dirs_are_safe_and_sides_checked():
    assert report_dir("tiny_gpt", "head") == "compile/tiny_gpt/head"
    assert trace_path("m", "base") == "compile/m/base/trace.log"
    odd = model_dir_name("../x y")
    assert "/" not in odd and not odd.startswith(".") and odd != model_dir_name("_x y")
    with pytest.raises(ValueError):
        report_dir("m", "../../etc")


@pytest.mark.parametrize("env,url", [
    ({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
      "GITHUB_RUN_ID": "42"}, "https://github.com/o/r/actions/runs/42"),
    ({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}, None),
    ({"GITHUB_SERVER_URL": "javascript:alert(1)", "GITHUB_REPOSITORY": "o/r",
      "GITHUB_RUN_ID": "1"}, None),
    ({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r)](x",
      "GITHUB_RUN_ID": "1"}, None),
    ({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
      "GITHUB_RUN_ID": "1 2"}, None)])
def test_run_url_only_from_well_formed_variables(env, url):
    assert run_url(env) == url


def _model(name: str = "tiny", *, html: bool = True, breaks: int = 1,
           recompiles: int = 0) -> ModelDelta:
    report = {"trace": trace_path(name, "head"),
              "html": f"{report_dir(name, 'head')}/index.html" if html else None}
    return ModelDelta(name=name, new_breaks=({"gb": "GB0124"},) * breaks,
                      delta=Delta(recompiles=recompiles), head={"compile_report": report})


ENV = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
       "GITHUB_RUN_ID": "7"}


def test_summary_line_points_at_the_html_with_the_run_link():
    line = summary_line(_model(), "review", environ=ENV)
    assert line == ("🔎 Compile report: in the `pt2bot-report` artifact ([artifacts of this "
                    "run](https://github.com/o/r/actions/runs/7#artifacts)), "
                    "`compile/tiny/head/index.html` (the PR's own content, written where its "
                    "code ran: untrusted, like the rest of the artifact).")
    # outside an Actions run (a local review, `--out` named anything) there is no artifact
    audit = summary_line(_model(), "audit", environ={})
    assert audit == "🔎 Compile report: in the report directory (the `pt2bot-audit` artifact in " \
                    "GitHub Actions), `compile/tiny/head/index.html`."


def test_summary_line_says_a_prs_compile_report_is_untrusted():
    # The summary invites a maintainer to open an HTML page (or render a trace) that the
    # PR's code wrote, in an artifact a fork controls whole: say so where the invitation is.
    for html in (True, False):
        line = summary_line(_model(html=html), "review", environ=ENV)
        assert "the PR's own content" in line and "untrusted" in line, line
    # The nightly audit runs the repository's own code: no PR to warn about.
    assert "untrusted" not in summary_line(_model(), "audit", environ={})


def test_summary_line_without_tlparse_says_how_to_render_and_only_for_regressions():
    line = summary_line(_model(html=False), None, environ={})
    assert "`compile/tiny/head/trace.log`" in line and "tlparse trace.log -o report" in line
    assert summary_line(_model(breaks=0), None, environ={}) is None
    assert summary_line(_model(breaks=0, recompiles=2), None, environ={}) is not None
    no_trace = _model().with_(head={})
    assert summary_line(no_trace, None, environ={}) is None


def test_summary_line_never_carries_results_text_into_markdown():
    # The paths come from the (sanitised) name, never from the results: a forged
    # compile_report cannot put links or markup into the summary.
    m = _model(name="x`](https://evil.example)<!--")
    m.head["compile_report"]["html"] = "[click](https://evil.example) @admin"
    line = summary_line(m, None, environ={})
    assert "evil" in line and "](https://evil" not in line and "<!--" not in line
    assert "@admin" not in line and "click" not in line


def _script(tmp_path, body: str, name: str = "fake-tlparse") -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_failing_or_hanging_or_missing_tlparse_is_a_note(tmp_path):
    trace = tmp_path / "compile" / "m" / "head" / "trace.log"
    trace.parent.mkdir(parents=True)
    trace.write_text("not a trace\n")
    failing = _script(tmp_path, "sys.stderr.write('boom: bad line\\n'); sys.exit(3)")
    assert cr.render_html(str(trace), tlparse=failing) == "tlparse exited with code 3: boom: bad line"
    hanging = _script(tmp_path, "time.sleep(60)", "hanging-tlparse")
    assert "took more than 0.5 s" in cr.render_html(str(trace), tlparse=hanging, timeout_s=0.5)
    assert cr.render_html(str(trace), tlparse=None) == cr.NO_TLPARSE
    silent = _script(tmp_path, "", "silent-tlparse")
    assert cr.render_html(str(trace), tlparse=silent) == "tlparse wrote no index.html"
    assert sorted(os.listdir(trace.parent)) == ["trace.log"]   # no temp dirs left behind
    run = cr.finish_compile_report(ModelRun.empty("m"), out_dir=str(tmp_path), name="m",
                                   side="head", tlparse=failing)
    assert run.compile_report.trace == "compile/m/head/trace.log"
    assert run.compile_report.html is None and "code 3" in run.compile_report.note
    gone = cr.finish_compile_report(run, out_dir=str(tmp_path / "nothing"), name="m",
                                    side="head", tlparse=failing)
    assert gone.compile_report is None and "compile_report" not in gone.to_json()


def test_find_tlparse_honours_the_override(tmp_path):
    assert cr.find_tlparse({"PT2BOT_TLPARSE": ""}) is None
    fake = _script(tmp_path, "")
    assert cr.find_tlparse({"PT2BOT_TLPARSE": fake}) == fake


def test_copy_replaces_a_side_and_skips_links(tmp_path):
    src, dest = tmp_path / "smoke", tmp_path / "report"
    (src / "compile" / "m" / "head").mkdir(parents=True)
    (src / "compile" / "m" / "head" / "trace.log").write_text("new")
    os.symlink("/etc/passwd", src / "compile" / "m" / "head" / "leak")
    (dest / "compile" / "m" / "head" / "old").mkdir(parents=True)
    (dest / "compile" / "m" / "base").mkdir(parents=True)
    (dest / "compile" / "m" / "base" / "trace.log").write_text("base")
    assert cr.copy_compile_reports(str(src), str(dest)) == 1
    assert sorted(os.listdir(dest / "compile" / "m" / "head")) == ["trace.log"]
    assert (dest / "compile" / "m" / "base" / "trace.log").read_text() == "base"
    assert cr.copy_compile_reports(str(src), str(dest), move=True) == 1
    assert not (src / "compile").exists()        # the report directory holds one copy
    assert (dest / "compile" / "m" / "head" / "trace.log").read_text() == "new"


# ----------------------------------------------------------------------------- real torch

def _spec(tmp_path, **extra) -> dict:
    sys.path.insert(0, HERE)
    from test_worker import spec
    s = spec("item", "models.item_branch:ItemBranch", phases=["breaks", "matrix"])
    s.update(trace_path=str(tmp_path / "compile" / "item" / "head" / "trace.log"),
             trace_rel="compile/item/head/trace.log", **extra)
    return s


@pytest.mark.torch
def test_the_trace_is_capped_at_whole_records(tmp_path):
    from pt2bot.smoke.worker import measure

    run = measure(_spec(tmp_path, trace_cap_bytes=20_000))
    path = tmp_path / "compile" / "item" / "head" / "trace.log"
    got = run["compile_report"]
    assert got["truncated"] is True and got["bytes"] == path.stat().st_size <= 20_000
    records = _records(str(path))
    assert records and any("str" in r for r in records)   # interned file names come first
    assert run["graph_breaks"][0]["gb"] == "GB0124"       # the cap costs the run nothing


@pytest.mark.torch
def test_the_trace_has_both_phases_and_renders(tmp_path):
    from pt2bot.smoke.worker import measure

    run = measure(_spec(tmp_path))
    path = tmp_path / "compile" / "item" / "head" / "trace.log"
    assert run["compile_report"]["truncated"] is False
    kinds = {next(iter(r)) for r in _records(str(path))}
    names = {r["artifact"]["name"] for r in _records(str(path)) if "artifact" in r}
    assert {"dynamo_start", "compilation_metrics"} <= kinds
    assert "dynamo_graph_break_reason" in names and "recompile_reasons" in names  # matrix too
    if TLPARSE:
        assert cr.render_html(str(path), tlparse=TLPARSE) is None
        html = (path.parent / "index.html").read_text(encoding="utf-8")
        assert "item_branch.py" in html


# ----------------------------------------------------------------------------- review

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: gate
    entry: pkg.gate:Gate
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
    export: false
run: {backend: eager, latency: false, timeout_s: 300, threads: 1}
"""

BASE = """\
import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x).relu()
"""

HEAD = BASE.replace("        return self.fc(x).relu()\n",
                    "        y = self.fc(x)\n"
                    "        if y.sum().item() > 0:\n"
                    "            y = y + 1\n"
                    "        return y.relu()\n")


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    repo = GitRepo.init(tmp_path_factory.mktemp("cr") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/gate.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/gate.py", HEAD)
    repo.commit("pr")
    out = str(tmp_path_factory.mktemp("out") / "report")
    mp = pytest.MonkeyPatch()
    try:
        from pt2bot.cli import main
        mp.chdir(repo.path)
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        for k, v in ENV.items():
            mp.setenv(k, v)
        rc = main(["review", "--base", "main", "--out", out])
    finally:
        mp.undo()
    with open(os.path.join(out, "report.json"), encoding="utf-8") as fh:
        return rc, out, json.load(fh), repo


@pytest.mark.torch
def test_review_keeps_both_sides_reports_and_the_summary_points_at_head(reviewed):
    _rc, out, report, _repo = reviewed
    model = next(m for m in report["models"] if m["name"] == "gate")
    assert model["new_breaks"], model
    for side in ("head", "base"):
        assert os.path.isfile(os.path.join(out, "compile", "gate", side, "trace.log")), side
        run = model[side]
        assert run["compile_report"]["trace"] == f"compile/gate/{side}/trace.log"
        if TLPARSE:
            assert run["compile_report"]["html"] == f"compile/gate/{side}/index.html"
            assert os.path.isfile(os.path.join(out, "compile", "gate", side, "index.html"))
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        summary = fh.read()
    where = ("`compile/gate/head/index.html`" if TLPARSE else "`compile/gate/head/trace.log`")
    assert ("in the `pt2bot-report` artifact ([artifacts of this run]"
            "(https://github.com/o/r/actions/runs/7#artifacts)), " + where) in summary


@pytest.mark.torch
def test_review_findings_say_whether_head_reached_them(reviewed):
    _rc, out, report, _repo = reviewed
    item = [f for f in report["findings"] if f["rule"] == "PTC101"]
    assert item and item[0]["reached_by"] == ["gate"]
    # one copy of each report in the artifact: none left under the smoke run's directory
    smoke = os.path.join(out, "smoke")
    assert not [f for _d, _s, files in os.walk(smoke) for f in files if f == "trace.log"]


@pytest.mark.torch
def test_audit_writes_the_compile_report_and_reach(reviewed, tmp_path, monkeypatch):
    from pt2bot.cli import main

    _rc, _out, _report, repo = reviewed
    monkeypatch.chdir(repo.path)
    repo.checkout("pr")
    out = tmp_path / "audit"
    main(["audit", "--history", str(tmp_path / "h.sqlite"), "--out", str(out)])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    head = report["models"][0]["head"]
    assert head["compile_report"]["trace"] == "compile/gate/head/trace.log"
    assert (out / "compile" / "gate" / "head" / "trace.log").is_file()
    if TLPARSE:
        assert (out / "compile" / "gate" / "head" / "index.html").is_file()
    item = [f for f in report["findings"] if f["rule"] == "PTC101"]
    assert item and item[0]["reached_by"] == ["gate"]


@needs_tlparse
def test_tlparse_is_pinned_in_the_extras():
    import tomllib
    from importlib.metadata import version

    with open(os.path.join(os.path.dirname(HERE), "pyproject.toml"), "rb") as fh:
        extras = tomllib.load(fh)["project"]["optional-dependencies"]
    pin = f"tlparse=={version('tlparse')}"
    assert pin in extras["tlparse"] and pin in extras["test"]
    with open(os.path.join(os.path.dirname(HERE), "Dockerfile"), encoding="utf-8") as fh:
        assert f'"{pin}"' in fh.read()      # the image installs the same one
