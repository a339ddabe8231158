"""Reached or not: line coverage of a smoke run joined with the static findings.

The end-to-end half runs `pt2bot run` (real worker processes, real torch, eager backend) on a
tiny repository whose model has a taken line, lines on untaken branches (`self.training`, a
flag attribute, an impossible value) and a line only dynamo executes (under
`torch.compiler.is_compiling()`), then `pt2bot check --results`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pt2bot.findings import Finding
from pt2bot.reach import Coverage, mark_reached, mark_reached_dicts, parse_ranges
from pt2bot.errors import UserError
from pt2bot.results import load_results_file
from pt2bot.smoke.coverage import LineCoverage, format_ranges

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY312 = "/root/.pyenv/versions/3.12.1/bin/python"


# ----------------------------------------------------------------------------- ranges

@pytest.mark.parametrize("lines,text", [([], ""), ([5], "5"), ([1, 2, 3, 7, 9, 10], "1-3,7,9-10"),
                                        ([3, 1, 2, 2], "1-3")])
def test_ranges_are_compact_and_round_trip(lines, text):
    assert format_ranges(lines) == text
    back = [n for lo, hi in parse_ranges(text) for n in range(lo, hi + 1)]
    assert back == sorted(set(lines))


def test_parse_ranges_merges_and_skips_junk():
    assert parse_ranges("9-12, 1-3,x,4,0,7-5,11-20") == [(1, 4), (9, 20)]
    assert parse_ranges(None) == [] and parse_ranges(["1"]) == []


def _finding(path: str, line: int, end_line: int | None = None) -> Finding:
    return Finding(rule="PTC101", path=path, line=line, col=0, severity="error", message="m",
                   end_line=end_line)


def _results(**coverage: object) -> dict:
    return {"schema": "pt2bot.results/1",
            "models": [{"name": name, "status": "ok", "coverage": cov}
                       for name, cov in coverage.items()]}


def test_reached_by_names_every_model_that_ran_the_line_and_none_for_the_others():
    res = _results(a={"m.py": "1-5,9"}, b={"m.py": "9", "h.py": "2"}, c={})
    got = mark_reached([_finding("m.py", 9), _finding("m.py", 4), _finding("m.py", 7),
                        _finding("h.py", 2), _finding("x.py", 1)], res)
    assert [f.reached_by for f in got] == [("a", "b"), ("a",), (), ("b",), ()]
    # a multi-line finding is reached when any of its lines ran
    assert mark_reached([_finding("m.py", 6, 9)], res)[0].reached_by == ("a", "b")
    assert mark_reached([_finding("m.py", 6, 8)], res)[0].reached_by == ()
    # JSON: [] = nobody, absent = not known (docs/formats.md)
    assert got[2].to_dict()["reached_by"] == []


def test_without_coverage_nothing_is_said():
    f = [_finding("m.py", 1)]
    assert mark_reached(f, None)[0].reached_by is None
    old = {"schema": "pt2bot.results/1", "models": [{"name": "a", "status": "ok"},
                                                    {"name": "b", "status": "error"}]}
    assert mark_reached(f, old)[0].reached_by is None
    assert "reached_by" not in mark_reached(f, old)[0].to_dict()
    assert not Coverage.from_results(old).known
    dicts = mark_reached_dicts([f[0].to_dict()], _results(a={"m.py": "1"}))
    assert dicts[0]["reached_by"] == ["a"]


def test_load_results_file_refuses_what_is_not_results(tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text('{"schema": "pt2bot.report/1", "models": []}')
    with pytest.raises(UserError, match="not a pt2bot results file"):
        load_results_file(str(bad), what="--results")
    bad.write_text("{")
    with pytest.raises(UserError, match="not valid JSON"):
        load_results_file(str(bad), what="--results")
    with pytest.raises(UserError, match="cannot read"):
        load_results_file(str(tmp_path / "missing.json"), what="--results")


# ----------------------------------------------------------------------------- the tracers

_TRACED = textwrap.dedent("""\
    def f(x):
        y = x + 1
        if x > 100:
            y = -y
        for _ in range(3):
            y += 1
        return y


    def g():
        return f(1) + f(2)
    """)


_SCRIPT = textwrap.dedent("""\
    import importlib.util, json, sys
    spec = importlib.util.spec_from_file_location("cov", sys.argv[1])
    cov = importlib.util.module_from_spec(spec); spec.loader.exec_module(cov)
    sys.path.insert(0, sys.argv[2])
    import traced
    rec = cov.LineCoverage(lambda f: "traced.py" if f.endswith("traced.py") else None)
    with rec.executing():
        traced.g()
        traced.g()     # a second call: sys.monitoring has disabled the seen lines
    print(json.dumps(rec.to_json()))
    """)


def test_settrace_records_only_repo_lines_that_ran(tmp_path):
    (tmp_path / "traced.py").write_text(_TRACED)
    sys.path.insert(0, str(tmp_path))
    try:
        import traced
        rec = LineCoverage(lambda f: "traced.py" if f.endswith("traced.py") else None)
        with rec.executing():
            traced.g()
        assert sys.gettrace() is None or "coverage" in type(sys.gettrace()).__module__
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("traced", None)
    got = rec.to_json()
    assert set(got) == {"traced.py"}
    lines = {n for lo, hi in parse_ranges(got["traced.py"]) for n in range(lo, hi + 1)}
    assert 4 not in lines and {2, 3, 5, 6, 7, 11} <= lines


@pytest.mark.skipif(not os.path.exists(PY312), reason="no Python 3.12 to test sys.monitoring")
def test_sys_monitoring_path_on_python_312_gives_the_same_lines(tmp_path):
    (tmp_path / "traced.py").write_text(_TRACED)
    (tmp_path / "run.py").write_text(_SCRIPT)
    mod = os.path.join(ROOT, "pt2bot", "smoke", "coverage.py")
    runs = {}
    for py in (sys.executable, PY312):
        proc = subprocess.run([py, str(tmp_path / "run.py"), mod, str(tmp_path)],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        runs[py] = json.loads(proc.stdout)["traced.py"]
    lines = {py: {n for lo, hi in parse_ranges(t) for n in range(lo, hi + 1)}
             for py, t in runs.items()}
    # The body lines agree (3.12 reports no line event for a `def` line on entry; both
    # record the untaken branch as not run).
    body = {2, 3, 5, 6, 7, 11}
    for py, got in lines.items():
        assert body <= got and 4 not in got, (py, runs[py])


_OPERANDS = textwrap.dedent("""\
    FLAG = False

    def f(x, c):
        if FLAG and x.foo() > 0:
            return 1
        y = x if c else -x
        z = (not c) and (FLAG or x.baz())
        w = c or x.qux()
        return [t for t in range(x) if t and FLAG] and y


    def g():
        return f(3, True) + f(2, True)
    """)

_OPERANDS_SCRIPT = textwrap.dedent("""\
    import importlib.util, json, sys
    spec = importlib.util.spec_from_file_location("cov", sys.argv[1])
    cov = importlib.util.module_from_spec(spec); spec.loader.exec_module(cov)
    sys.path.insert(0, sys.argv[2])
    import operands
    rec = cov.LineCoverage(lambda f: "operands.py" if f.endswith("operands.py") else None,
                           watch={"operands.py": [4, 6, 7, 8, 9]})
    with rec.executing():
        operands.g()
    print(json.dumps(rec.unevaluated_json()))
    """)


@pytest.mark.parametrize("py", [sys.executable, PY312])
def test_operands_no_call_evaluated_on_a_watched_line_that_ran(tmp_path, py):
    """Python 3.11 (instruction tracing) and 3.12 (sys.monitoring) name the same operands:
    the ones after a short-circuit that never opened, the untaken arm, nothing that ran."""
    if not os.path.exists(py):
        pytest.skip(f"no {py}")
    (tmp_path / "operands.py").write_text(_OPERANDS)
    (tmp_path / "run.py").write_text(_OPERANDS_SCRIPT)
    proc = subprocess.run([py, str(tmp_path / "run.py"),
                           os.path.join(ROOT, "pt2bot", "smoke", "coverage.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = [(o["line"], o["code"], o["guard"], o["kind"])
           for o in json.loads(proc.stdout)["operands.py"]]
    # `x.qux()` after `c or` never ran either; line 9's filter `FLAG` ran (t is 1, 2), and the
    # list it leaves is empty, so `y` after it did not; the inner `x.baz()` is inside an
    # operand already said
    assert got == [(4, "x.foo() > 0", "FLAG", "and"), (6, "-x", "c", "else"),
                   (7, "FLAG or x.baz()", "not c", "and"), (8, "x.qux()", "c", "or"),
                   (9, "y", "[t for t in range(x) if t and FLAG]", "and")]


def test_an_unwatched_run_records_no_operands():
    rec = LineCoverage(lambda f: None)
    with rec.executing():
        pass
    assert rec.unevaluated_json() is None


_BRANCHY = textwrap.dedent("""\
    def f(self, x, xs):
        if self.flag and random() < 0.5:
            y = 1
        z = 0.0 if self.off else x.item()
        if x.sum() > 0:
            y = 2
        w = [t.item() for t in xs if t]
        q = bar(x) or baz(x)
        n = x.sum().item()
        return y
    """)


def test_branching_lines_are_the_ones_a_trace_can_run_in_part():
    """`traced_lines` leaves out a line with a conditional jump before its end: a trace of it
    may have skipped the call a finding is about (pt2bot/smoke/coverage.py)."""
    from pt2bot.smoke.coverage import branching_lines
    code = compile(_BRANCHY, "m.py", "exec")
    [fn] = [c for c in code.co_consts if hasattr(c, "co_code")]
    nested = [c for c in fn.co_consts if hasattr(c, "co_code")]
    lines = set(branching_lines(fn)).union(*(branching_lines(c) for c in nested))
    assert {2, 4, 7, 8} <= lines            # `and`, a conditional expression, a filter, `or`
    assert not lines & {3, 5, 6, 9, 10}     # a plain `if` test, an assignment, a return


# ----------------------------------------------------------------------------- end to end

MODEL = '''\
import torch

from reachpkg.helpers import scale


class Tiled(torch.nn.Module):
    def __init__(self, drop: float = 0.1) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.drop = drop
        self.use_tiling = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        if self.training and self.drop > 0:
            print("dropping")  # expect: training
        if self.use_tiling:
            y = y / y.abs().max().item()  # expect: tiling
        n = y.abs().sum().item()  # expect: taken
        if torch.compiler.is_compiling():
            print("compiling")  # expect: dynamo-only
        return scale(y, n)


class Unused(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + x.sum().item()  # expect: unused
'''

HELPERS = '''\
import torch


def scale(y: torch.Tensor, n: float) -> torch.Tensor:
    if n < 0:
        print("negative", n)  # expect: impossible
    return y / (n + 1.0)
'''

CONFIG = '''\
version: 1
static:
  paths: [reachpkg/]
  filter: nofilter
models:
  - name: tiled
    entry: reachpkg.model:Tiled
    inputs:
      - {shape: [batch, 8], dtype: float32}
    shapes: {batch: [2, 4]}
    dynamic: [batch]
    export: false
run: {device: cpu, backend: eager, latency: false, threads: 1, timeout_s: 300}
'''


def line_of(text: str, mark: str) -> int:
    hits = [i for i, t in enumerate(text.splitlines(), 1) if t.endswith(f"# expect: {mark}")]
    assert len(hits) == 1, mark
    return hits[0]


def _pt2bot(*args: str, cwd: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pt2bot", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The tiny repository, run once with `pt2bot run --out out/results.json`."""
    root = tmp_path_factory.mktemp("reach")
    (root / "reachpkg").mkdir()
    (root / "reachpkg" / "__init__.py").write_text("")
    (root / "reachpkg" / "model.py").write_text(MODEL)
    (root / "reachpkg" / "helpers.py").write_text(HELPERS)
    (root / "pt2bot.yml").write_text(CONFIG)
    proc = _pt2bot("run", "--out", "out/results.json", cwd=str(root))
    assert proc.returncode == 0, proc.stderr
    with open(root / "out" / "results.json", encoding="utf-8") as fh:
        results = json.load(fh)
    assert results["models"][0]["status"] == "ok", results["models"][0].get("error")
    return root, results


@pytest.mark.torch
def test_the_run_records_executed_and_dynamo_traced_lines(project):
    _root, results = project
    cov = results["models"][0]["coverage"]
    # import and construction run under coverage too: the package's __init__ is there when
    # this process had not imported it before
    assert set(cov) - {"reachpkg/__init__.py"} == {"reachpkg/model.py", "reachpkg/helpers.py"}
    ran = {p: {n for lo, hi in parse_ranges(t) for n in range(lo, hi + 1)} for p, t in cov.items()}
    model = ran["reachpkg/model.py"]
    assert line_of(MODEL, "taken") in model
    # eager never runs this line; dynamo traced it (the compiled call's starts_line)
    assert line_of(MODEL, "dynamo-only") in model
    for mark in ("training", "tiling", "unused"):
        assert line_of(MODEL, mark) not in model, mark
    assert line_of(HELPERS, "impossible") not in ran["reachpkg/helpers.py"]
    assert line_of(HELPERS, "impossible") + 1 in ran["reachpkg/helpers.py"]
    # what dynamo itself traced in the graph-break pass is kept apart: a part of the coverage
    traced = {p: {n for lo, hi in parse_ranges(t) for n in range(lo, hi + 1)}
              for p, t in results["models"][0]["traced_lines"].items()}
    assert all(traced[p] <= ran[p] for p in traced)
    assert {line_of(MODEL, "taken"), line_of(MODEL, "dynamo-only")} <= traced["reachpkg/model.py"]
    assert line_of(HELPERS, "impossible") + 1 in traced["reachpkg/helpers.py"]
    # `pt2bot run --out FILE` keeps the compile report beside FILE, side head
    report = results["models"][0]["compile_report"]
    assert report["trace"] == "compile/tiled/head/trace.log"
    assert (_root / "out" / "compile" / "tiled" / "head" / "trace.log").is_file()


@pytest.mark.torch
def test_findings_on_executed_lines_are_reached_and_on_untaken_branches_not(project):
    from pt2bot.config import StaticConfig
    from pt2bot.static import check_paths

    root, results = project
    findings = mark_reached(check_paths(str(root), ["reachpkg"], StaticConfig()), results)
    by_line = {(f.path, f.line): f for f in findings}

    def reach(path: str, text: str, mark: str) -> tuple[str, ...] | None:
        f = by_line.get((path, line_of(text, mark)))
        assert f is not None, (mark, sorted(by_line))
        return f.reached_by

    assert reach("reachpkg/model.py", MODEL, "taken") == ("tiled",)
    assert reach("reachpkg/model.py", MODEL, "dynamo-only") == ("tiled",)
    for mark in ("training", "tiling", "unused"):
        assert reach("reachpkg/model.py", MODEL, mark) == (), mark
    assert reach("reachpkg/helpers.py", HELPERS, "impossible") == ()
    # and what dynamo did there: the taken `.item()` and the print only dynamo runs broke the
    # graph where the findings say (pt2bot/reach.py); an untaken branch is left as it was
    for mark in ("taken", "dynamo-only"):
        f = by_line[("reachpkg/model.py", line_of(MODEL, mark))]
        assert f.confirmed and f.smoke.models == ("tiled",), (mark, f.smoke)
        assert f.smoke.evidence.startswith(f"{f.gb} at reachpkg/model.py:{f.line}")
    assert by_line[("reachpkg/model.py", line_of(MODEL, "tiling"))].smoke is None


@pytest.mark.torch
def test_check_with_results_carries_reached_by_in_json(project):
    root, _results = project
    proc = _pt2bot("check", "--results", "out/results.json", "--format", "json", cwd=str(root))
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    got = {f["line"]: f["reached_by"] for f in data["findings"] if f["path"] == "reachpkg/model.py"}
    assert got[line_of(MODEL, "taken")] == ["tiled"]
    assert got[line_of(MODEL, "tiling")] == [] and got[line_of(MODEL, "unused")] == []
    # without results nothing is claimed
    plain = json.loads(_pt2bot("check", "--format", "json", cwd=str(root)).stdout)
    assert plain["findings"] and all("reached_by" not in f for f in plain["findings"])
    # a file that is not results is a usage error, located
    (root / "out" / "bad.json").write_text("[]")
    bad = _pt2bot("check", "--results", "out/bad.json", cwd=str(root))
    assert bad.returncode == 2 and "out/bad.json" in bad.stderr and "results" in bad.stderr
