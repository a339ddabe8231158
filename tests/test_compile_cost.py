"""Graph coverage and compile cost, measured by the smoke worker with real torch on tiny
fixture models (eager and aot_eager backends), compared base vs head, judged, and rendered.

The inductor parts (kernels, cache hits, cold/warm) are in tests/test_worker_inductor.py.
"""
from __future__ import annotations

import json
import os
import re

import pytest

from test_worker import line_of, spec

pytestmark = pytest.mark.torch

_RUNS: dict[tuple, dict] = {}


def run_of(name: str, entry: str, *, backend: str = "aot_eager", **kw) -> dict:
    """measure() once per (model, backend, settings) per test process."""
    key = (name, entry, backend, repr(sorted(kw.items())))
    if key not in _RUNS:
        from pt2bot.smoke.worker import measure
        _RUNS[key] = measure(spec(name, entry, phases=["breaks", "matrix"],
                                  run={"backend": backend, **kw.pop("run", {})}, **kw))
    return _RUNS[key]


# --------------------------------------------------------------------------- graph coverage

def test_a_clean_model_is_one_graph_with_every_op_inside():
    run = run_of("clean", "models.clean:Clean")
    cov = run["graph_coverage"]
    # Linear, relu, Linear: three call nodes in one graph, as calls_captured counts them
    assert (cov["captured_ops"], cov["unique_graphs"], cov["graph_ops"]) == (3, 1, [3])
    assert cov["largest_share"] == 1.0 and cov["eager_frames"] == []
    assert cov["aten_in_graphs"] > 0 and cov["aten_outside"] == 0


def test_a_break_in_a_loop_skips_the_frame_and_ops_run_outside_graphs():
    run = run_of("loop", "models.loop_layers:LoopLayers")
    cov = run["graph_coverage"]
    assert cov["captured_ops"] == sum(cov["graph_ops"]) and cov["unique_graphs"] >= 2
    assert cov["largest_share"] < 1.0
    # .item() runs outside any graph, in each of the three layers, and is counted as itself
    assert cov["aten_outside"] >= 3
    assert cov["aten_outside_ops"]["aten._local_scalar_dense"] == 3, cov["aten_outside_ops"]
    assert sum(cov["aten_outside_ops"].values()) == cov["aten_outside"]
    (frame,) = cov["eager_frames"]
    assert (frame["function"], frame["path"]) == ("forward", "models/loop_layers.py")
    assert frame["line"] == line_of("loop_layers.py", "loop-call") - 2   # `def forward`
    assert frame["reason"].startswith("graph break in a loop, the whole frame skipped")


def test_counting_ops_does_not_change_what_dynamo_captures():
    """The dispatch mode is invisible to dynamo: the same graphs, call nodes and guards."""
    import torch

    from pt2bot.smoke.breaks import measure_breaks
    from pt2bot.smoke.inputs import CaseInputs, build_inputs, build_model
    from pt2bot.smoke.trace import RepoPaths, compilation_metrics

    paths = RepoPaths(os.path.join(os.path.dirname(__file__), "fixtures"))
    s = spec("loop", "models.loop_layers:LoopLayers")
    model = build_model(s["model"]["entry"], {}, paths)
    case: CaseInputs = build_inputs(s["model"], model, {"batch": 4}, "cpu", paths)
    got = []
    for count in (False, True):
        with torch.no_grad():
            r = measure_breaks(model, case, paths, count_ops=count)
        got.append(r)
    plain, counted = got
    assert plain["graph_count"] == counted["graph_count"]
    assert plain["graph_coverage"]["graph_ops"] == counted["graph_coverage"]["graph_ops"]
    assert plain["graph_breaks"] == counted["graph_breaks"]
    assert plain["graph_coverage"]["aten_outside"] is None
    assert counted["graph_coverage"]["aten_outside"] >= 3
    assert compilation_metrics() == []    # the phase leaves nothing behind


def test_a_model_with_torch_cond_runs_under_the_op_counter():
    """Higher-order operators refuse a dispatch mode that does not declare it handles them:
    the counter must, or every model using `torch.cond` fails its break pass."""
    import torch

    from pt2bot.smoke.breaks import measure_breaks
    from pt2bot.smoke.inputs import CaseInputs
    from pt2bot.smoke.trace import RepoPaths

    class CondNet(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))

    case = CaseInputs(shape={"batch": 2}, args=(torch.randn(2, 4),), kwargs={})
    with torch.no_grad():
        r = measure_breaks(CondNet(), case, RepoPaths(os.path.dirname(__file__)), count_ops=True)
    assert r["graph_count"] == 1 and r["graph_breaks"] == []
    assert r["graph_coverage"]["aten_outside"] is not None


def test_a_model_that_makes_a_tensor_subclass_still_gets_its_breaks():
    """flowtorch wraps tensors as `BijectiveTensor(x)`, which torch refuses under a dispatch
    mode ("Creating a new Tensor subclass ... but the raw Tensor object is already
    associated"): the break pass raised with the operator counter on, and a new user's
    review read "graph breaks 0 | 0 | 0" for a model that breaks. The pass runs again
    without the counter: the break is found, and the ATen counts are null (unmeasured)."""
    import torch

    from pt2bot.smoke.breaks import measure_breaks
    from pt2bot.smoke.inputs import CaseInputs
    from pt2bot.smoke.trace import RepoPaths

    class Tagged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            types = tuple(torch.Tensor if t is Tagged else t for t in types)
            return torch.Tensor.__torch_function__(func, types, args, kwargs or {})

    class Wrapping(torch.nn.Module):
        def forward(self, x):
            for _ in range(2):   # a break in a loop: the frame runs eagerly, under the counter
                n = x.sum().item()
                x = Tagged(x * 2) + n
            return x

    case = CaseInputs(shape={"batch": 2}, args=(torch.randn(2, 4),), kwargs={})
    with torch.no_grad():
        r = measure_breaks(Wrapping(), case, RepoPaths(os.path.dirname(__file__)), count_ops=True)
    (b,) = r["graph_breaks"]
    assert b["gb"] == "GB0124" and b["path"] == "test_compile_cost.py", b
    assert r["graph_coverage"]["aten_outside"] is None
    assert r["graph_coverage"]["aten_in_graphs"] is None


def test_recompile_limit_hits_name_the_frame():
    run = run_of("size_branch", "models.size_branch:SizeBranch", backend="eager",
                 shapes={"batch": [2, 8, 3, 16]}, dynamic=(), run={"recompile_limit": 1})
    rc = run["recompiles"]
    assert rc["eager_fallback"] is True
    (frame,) = rc["limit_frames"]
    assert (frame["function"], frame["path"]) == ("forward", "models/size_branch.py")


# --------------------------------------------------------------------------- compile cost

def test_the_first_compile_is_measured_on_the_process_tree():
    from pt2bot.smoke.compile_cost import PROC_METHOD

    run = run_of("clean", "models.clean:Clean")
    c = run["compile_cost"]
    assert c["backend"] == "aot_eager" and c["cpu_method"] == PROC_METHOD
    assert 0 < c["cpu_s"] < 60 and c["wall_s"] > 0
    assert c["fx_nodes"] > 0 and c["guards"] > 0 and c["graphs"] == 1
    # aot_eager keeps nothing on disk: no cache, no kernels, and so a cold compile
    assert (c["kernels"], c["cache_hits"], c["cache_misses"], c["cache"]) == (None,) * 3 + ("cold",)
    assert run["compile_s"]["cold"] == c["wall_s"] and run["compile_s"]["warm"] is None


def test_cpu_of_live_descendants_is_counted(tmp_path):
    """A child that burns CPU and is never reaped (as inductor's compile pool) is read from
    /proc; getrusage alone would miss it."""
    import resource
    import subprocess
    import sys
    import time

    from pt2bot.smoke.compile_cost import descendants_cpu_s, process_tree_cpu_s

    before, _ = process_tree_cpu_s()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)   # children reaped earlier in this process
    child = subprocess.Popen([sys.executable, "-c",
                              "import time\nt=time.process_time()\n"
                              "while time.process_time()-t<0.6: pass\n"
                              "print('done', flush=True)\ntime.sleep(30)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "done"
        time.sleep(0.05)
        live = descendants_cpu_s()
        after, _ = process_tree_cpu_s()
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert live is not None and live >= 0.5
        assert after - before >= 0.5
        # not counted there (not reaped): getrusage's children total did not grow by it
        assert (reaped.ru_utime + reaped.ru_stime) - (r0.ru_utime + r0.ru_stime) < 0.5 <= live
    finally:
        child.kill()
        child.wait()


def test_kernel_definitions_are_counted_in_generated_code():
    from pt2bot.smoke.compile_cost import count_kernels
    code = ("async_compile = AsyncCompile()\n"
            "cpp_fused_relu_0 = async_compile.cpp_pybinding(['float*'], r'''\n...''')\n"
            "triton_poi_fused_add_0 = async_compile.triton('triton_poi_fused_add_0', '''\n''')\n"
            "async_compile.wait(globals())\n")
    assert count_kernels(code) == 2


# --------------------------------------------------------------------------- the verdict

def _report(base: dict, head: dict, **thresholds):
    from pt2bot.compare import build_report
    from pt2bot.config import Config, ModelConfig, Thresholds
    from pt2bot.results import ResultsFile

    def results(run: dict) -> ResultsFile:
        return ResultsFile.from_json({"schema": "pt2bot.results/1", "device": "cpu",
                                      "torch": "2.13", "models": [dict(run, name="stack")]})
    config = Config(models=(ModelConfig(name="stack", entry="models.stack:Stack"),),
                    thresholds=Thresholds(**thresholds))
    return build_report(base_results=results(base), head_results=results(head),
                        base_findings=[], head_findings=[], changeset=None, config=config,
                        base_sha="a" * 40, head_sha="b" * 40)


def _schema():
    import jsonschema
    from test_report_schema import SCHEMA_PATH
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _html(markdown: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def _fresh_pair() -> tuple[dict, dict]:
    """The 8-block and the 2-block stack measured in a process of their own, 8 first (the
    process's warm-up is not the 2-block's), as the review's worker measures each model: a CPU
    time taken in this test process also counted what earlier tests left running in it (its
    children) and which of them measured the same model first, and base came out the costlier
    in CI runs."""
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from pt2bot.smoke.worker import measure\n"
        "from test_worker import spec\n"
        "runs = [measure(spec(name, 'models.stack:Stack', phases=['breaks', 'matrix'],\n"
        "                     run={'backend': 'aot_eager'}, kwargs={'n_layer': n}))\n"
        "        for name, n in (('stack8', 8), ('stack2', 2))]\n"
        "json.dump(runs, sys.stdout, default=str)\n")
    here = os.path.dirname(os.path.abspath(__file__))
    got = subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True, text=True,
                         timeout=600, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             [here, os.path.dirname(here), os.environ.get("PYTHONPATH", "")])})
    assert got.returncode == 0, got.stderr[-2000:]
    head, base = json.loads(got.stdout)
    return head, base


def test_a_deeper_model_is_a_compile_regression_and_the_summary_says_so():
    """Head stacks 8 blocks where base had 2: its first compile (aot_eager) costs more CPU
    and does more work, and the review fails on it; the coverage delta is in words."""
    from pt2bot.report.summary import render_summary

    head, base = _fresh_pair()
    rep = _report(base, head)
    (m,) = rep.models
    c = m.compile
    assert c["regression"] is True and c["basis"] == "cpu_s" and c["ratio"] >= 1.3, c
    assert c["head"]["fx_nodes"] > 2 * c["base"]["fx_nodes"]
    assert set(c["base"]) >= {"cpu_s", "fx_nodes", "guards", "graphs", "kernels",
                              "cache_hits", "cache_misses"}
    assert c["note"].startswith("the compile does more work: fx nodes")
    (reason,) = [r for r in rep.reasons if r["code"] == "compile_regression"]
    assert reason["level"] == "failure" and rep.conclusion == "failure"
    assert "compile regression" in rep.summary_title
    cov = m.delta.coverage
    assert cov["changes"][0] == (f"captured ops {base['graph_coverage']['captured_ops']} → "
                                 f"{head['graph_coverage']['captured_ops']}")
    d = rep.to_dict()["models"][0]
    assert d["compile"] == c and d["delta"]["coverage"] == cov
    _schema().validate(json.loads(json.dumps(rep.as_written().to_dict())))
    html = _html(render_summary(rep))
    text = re.sub(r"<[^>]+>", "", html)
    assert "Graph coverage: captured ops" in text
    assert re.search(r"Compile \(first call, aot_eager, cold\): [0-9.]+ → [0-9.]+ CPU s "
                     r"\(×[0-9.]+\) · FX nodes \d+ → \d+ · guards \d+ → \d+ · graphs 1 → 1 · "
                     r"❌ regression \(threshold 30 %\)", text), text
    assert "first compile" in text and "costlier (CPU s" in text   # the reason's line
    # a higher threshold lets it pass
    rep = _report(base, head, compile_regression_pct=10_000)
    assert rep.models[0].compile["regression"] is False


def test_an_unchanged_model_is_never_a_regression_whatever_its_cpu_time():
    """A/A: the same model measured twice; even when the machine makes head's CPU time
    double, the compile did the same work, so it is not called costlier."""
    from pt2bot.compare import compare_compile
    from pt2bot.results import ModelRun

    base = run_of("stack2", "models.stack:Stack", kwargs={"n_layer": 2})
    again = run_of("stack2-again", "models.stack:Stack", kwargs={"n_layer": 2})
    rep = _report(base, again)
    assert rep.models[0].compile["regression"] is False
    assert not [r for r in rep.reasons if r["code"] == "compile_regression"]
    assert rep.models[0].delta.coverage["changes"] == []
    slow = dict(again, compile_cost=dict(again["compile_cost"],
                                         cpu_s=base["compile_cost"]["cpu_s"] * 2 + 1))
    got = compare_compile(ModelRun.from_json(base), ModelRun.from_json(slow))
    assert got["regression"] is False and got["ratio"] > 2
    assert got["note"].startswith("CPU time up, but FX nodes")


def test_cpu_seconds_across_cache_states_are_not_compared():
    """One side loaded its graphs from the cache: the FX nodes decide, not the CPU time."""
    from pt2bot.compare import compare_compile
    from pt2bot.results import ModelRun

    def run(cpu: float, nodes: int, cache: str) -> ModelRun:
        return ModelRun.from_json({"name": "m", "status": "ok", "compile_cost": {
            "cpu_s": cpu, "fx_nodes": nodes, "guards": 10, "graphs": 1, "cache": cache,
            "backend": "inductor", "cache_hits": int(cache == "warm"),
            "cache_misses": int(cache == "cold")}})
    got = compare_compile(run(2.0, 50, "warm"), run(20.0, 50, "cold"))
    assert got["regression"] is False and got["basis"] == "fx_nodes" and got["ratio"] == 1.0
    assert got["note"] == "CPU seconds do not compare (base warm, head cold): judged on FX nodes"
    got = compare_compile(run(2.0, 50, "warm"), run(2.0, 80, "cold"), threshold_pct=30)
    assert got["regression"] is True and got["ratio"] == 1.6
    got = compare_compile(None, run(2.0, 80, "cold"))
    assert got["base"] is None and got["note"] == "not measured on base"
    # and the line's heading says both sides' caches: "(first call, inductor, cold)" beside
    # "do not compare (base warm, head cold)" read as a contradiction
    from pt2bot.compare import compare_model
    from pt2bot.report.metrics import compile_line

    m = compare_model("m", run(2.0, 50, "warm"), run(20.0, 50, "cold"), renames={},
                      line_map=lambda p, n: n, threshold_pct=10.0)
    line = re.sub(r"<[^>]+>", "", _html(compile_line(m)))
    assert line.startswith("Compile (first call, inductor, warm → cold): 2.00 → 20.00 CPU s"), line
    m = compare_model("m", run(2.0, 50, "cold"), run(2.1, 50, "cold"), renames={},
                      line_map=lambda p, n: n, threshold_pct=10.0)
    assert re.sub(r"<[^>]+>", "", _html(compile_line(m))).startswith("Compile (first call, inductor, cold): ")


def test_work_past_the_threshold_needs_cpu_to_rise_by_half_of_it():
    """A compile twice as big whose CPU time read only 1.2× (a busy moment on one side) is a
    regression; 1.1× is not; 1.2× with the same FX nodes is not either."""
    from pt2bot.compare import compare_compile
    from pt2bot.results import ModelRun

    def run(cpu: float, nodes: int) -> ModelRun:
        return ModelRun.from_json({"name": "m", "status": "ok", "compile_cost": {
            "cpu_s": cpu, "fx_nodes": nodes, "guards": 10, "graphs": 1, "cache": "cold",
            "backend": "aot_eager"}})
    assert compare_compile(run(1.0, 35), run(1.2, 67))["regression"] is True
    assert compare_compile(run(1.0, 35), run(1.1, 67))["regression"] is False
    assert compare_compile(run(1.0, 35), run(1.2, 40))["regression"] is False
    assert compare_compile(run(1.0, 35), run(1.35, 42))["regression"] is True
    assert compare_compile(run(0.1, 35), run(0.13, 67))["regression"] is False   # < 0.05 s
    # the failure says the work that crossed the threshold, not only a CPU rise under it (a new
    # user read "❌ first compile 28% costlier (CPU s 0.60 → 0.76; threshold 30%)")
    from pt2bot.verdict import compile_message
    assert compile_message(compare_compile(run(0.60, 94), run(0.76, 156))) == (
        "first compile 27% costlier (CPU s 0.60 → 0.76; FX nodes 94 → 156, 66% more work; threshold 30%)")
    assert compile_message(compare_compile(run(1.0, 35), run(1.35, 42))) == (
        "first compile 35% costlier (CPU s 1.00 → 1.35; threshold 30%)")


def test_work_that_grew_by_less_than_half_the_threshold_is_not_a_regression():
    """batch 30's trial: FX nodes 42 → 45 and guards 193 → 218 (+7 %, +13 %) beside CPU seconds
    0.12 → 0.30 at load 5 failed the review as "150% costlier"; work that grew by less than
    half the threshold is about the same work on a busier machine."""
    from pt2bot.compare import compare_compile
    from pt2bot.results import ModelRun

    def run(cpu: float, nodes: int, guards: int) -> ModelRun:
        return ModelRun.from_json({"name": "m", "status": "ok", "compile_cost": {
            "cpu_s": cpu, "fx_nodes": nodes, "guards": guards, "graphs": 1, "cache": "cold",
            "backend": "eager"}})
    c = compare_compile(run(0.12, 42, 193), run(0.30, 45, 218))
    assert c["regression"] is False and "grow by 15 % or more" in c["note"], c
    assert compare_compile(run(1.0, 35, 10), run(1.35, 40, 10))["regression"] is False
    assert compare_compile(run(0.12, 42, 193), run(0.30, 49, 218))["regression"] is True   # +17 %


def test_more_of_the_model_compiled_once_its_break_is_fixed_is_not_a_regression():
    """whisper's decoder: dynamo gave up on it at the SDPA break on base; the PR that fixes the
    break compiles it whole, FX nodes 97 → 220, graphs 2 → 1, CPU 0.26 → 1.05 s, and the review
    failed it as "303% costlier". With a break fixed and no more graphs, that is code base ran
    eagerly, now compiled."""
    from pt2bot.compare import compare_compile
    from pt2bot.results import ModelRun

    def run(cpu: float, nodes: int, graphs: int) -> ModelRun:
        return ModelRun.from_json({"name": "m", "status": "ok", "compile_cost": {
            "cpu_s": cpu, "fx_nodes": nodes, "guards": 285, "graphs": graphs, "cache": "cold",
            "backend": "eager"}})
    fixed = compare_compile(run(0.26, 97, 2), run(1.05, 220, 1), fixed_breaks=True)
    assert fixed["regression"] is False and fixed["note"].startswith("more of the model compiled"), fixed
    assert compare_compile(run(0.26, 97, 2), run(1.05, 220, 1))["regression"] is True
    # a fix that leaves more graphs than base had is judged as before
    assert compare_compile(run(0.26, 97, 2), run(1.05, 220, 3), fixed_breaks=True)["regression"] is True


def test_a_change_in_ops_outside_graphs_names_the_operators_that_moved():
    """Two more layers, each with its `.item()`: the change says which operators ran outside
    the graphs, not only how many (V-JEPA's user read "ops outside graphs 10 → 14" and could
    not tell which 4)."""
    from pt2bot.compare import compare_coverage
    from pt2bot.results import ModelRun

    base = ModelRun.from_json(run_of("loop", "models.loop_layers:LoopLayers"))
    head = ModelRun.from_json(run_of("loop5", "models.loop_layers:LoopLayers", kwargs={"n_layer": 5}))
    (moved,) = [c for c in compare_coverage(base, head)["changes"] if c.startswith("ops outside")]
    b, h = base.graph_coverage.aten_outside, head.graph_coverage.aten_outside
    # (each `.item()` is `_local_scalar_dense`; torch also lifts the Python float it gives
    # back into the resumed graph outside any graph, `lift_fresh`)
    assert moved.startswith(f"ops outside graphs {b} → {h} (+2 aten._local_scalar_dense"), moved
    assert b + 2 <= h and moved.endswith(")") and "-" not in moved, moved
    # results written before the operators were counted: the numbers alone
    old = ModelRun.from_json({**base.to_json(), "graph_coverage": {
        k: v for k, v in base.graph_coverage.to_json().items() if k != "aten_outside_ops"}})
    assert "ops outside graphs" in " ".join(compare_coverage(old, head)["changes"])
    assert f"ops outside graphs {b} → {h}" in compare_coverage(old, head)["changes"]


def test_a_new_model_shows_heads_coverage_and_cost_without_a_verdict():
    from pt2bot.compare import compare_model
    from pt2bot.report.metrics import compile_line, coverage_line
    from pt2bot.results import ModelRun

    head = ModelRun.from_json(run_of("loop", "models.loop_layers:LoopLayers"))
    m = compare_model("loop", None, head, renames={}, line_map=lambda p, n: n,
                      threshold_pct=10.0)
    assert m.change == "new" and m.compile["base"] is None
    assert m.compile["regression"] is False and m.compile["note"] == "not measured on base"
    cov = head.graph_coverage
    text = re.sub(r"<[^>]+>", "", _html(coverage_line(m)))
    assert text.strip() == (
        f"Graph coverage: {cov.captured_ops} captured ops in {cov.unique_graphs} graphs "
        f"(largest {cov.largest_share * 100:.0f} %); {cov.aten_outside} ATen ops outside "
        f"graphs ({cov.aten_in_graphs} inside); 1 frame run eagerly.")
    line = re.sub(r"<[^>]+>", "", _html(compile_line(m)))
    assert line.startswith("Compile (first call, aot_eager, cold): ")
    assert "no base to compare: not measured on base." in line


def test_a_costlier_compile_from_a_new_break_alone_is_the_breaks_not_a_second_failure():
    """A new user's PR added one `int(...)` break: "first compile 200% costlier (CPU s 7.77 →
    23.31)" failed the check beside the break, on FX nodes 110 → 119. A break splits the model
    into graphs compiled one by one; where the work itself (FX nodes) grew less than the
    threshold, the cost is the break's, said with it as a warning. Work past the threshold
    beside the break is still a regression."""
    def run(cpu: float, nodes: int, graphs: int, breaks: bool) -> dict:
        brk = [{"gb": "GB0124", "gb_type": "Unsupported Tensor.item() call", "path": "pkg/m.py",
                "line": 21, "function": "forward", "source": "n = int(m.sum(1).max())"}]
        return {"status": "ok", "graph_count": graphs, "graph_breaks": brk if breaks else [],
                "compile_cost": {"cpu_s": cpu, "fx_nodes": nodes, "guards": 500, "graphs": graphs,
                                 "cache": "cold", "backend": "inductor"}}
    rep = _report(run(7.77, 110, 1, False), run(23.31, 119, 2, True))
    (m,) = rep.models
    assert m.compile["regression"] is True and m.compile["follows_breaks"] is True
    # more graphs alone is no more work (MAE's "does more work: graphs 1 → 2" beside fewer nodes)
    assert m.compile["note"] == "the compile is split into more graphs, each traced and compiled on its own: graphs 1 → 2"
    (reason,) = [r for r in rep.reasons if r["code"] == "compile_regression"]
    assert reason["level"] == "warning" and "compile regression" not in rep.summary_title
    assert reason["message"].endswith("; it follows from the new break: graphs 1 → 2, while the "
                                      "work compiled, FX nodes 110 → 119, is within the threshold")
    _schema().validate(json.loads(json.dumps(rep.as_written().to_dict())))
    # the same cost with twice the work: the PR's own, a failure
    rep = _report(run(7.77, 110, 1, False), run(23.31, 220, 2, True))
    assert "follows_breaks" not in rep.models[0].compile
    (reason,) = [r for r in rep.reasons if r["code"] == "compile_regression"]
    assert reason["level"] == "failure"
    # no new break: more graphs are the PR's own doing too
    rep = _report(run(7.77, 110, 1, True), run(23.31, 119, 2, True))
    assert [r["level"] for r in rep.reasons if r["code"] == "compile_regression"] == ["failure"]


def test_the_work_beside_a_new_break_is_its_operations_not_its_nodes():
    """Each graph a new break splits off has inputs and an output of its own: four more graphs
    grow a tiny model's FX nodes by a third (38 → 51 here, past a 30 % threshold) with the same
    operations, and the nodes alone called that the PR's own work. (Held-out batch 33's
    blank-crop return is not such a case: its operations grew 13 → 21, the window it adds.)"""
    def run(nodes: int, ops: int | None, graphs: int, breaks: bool) -> dict:
        brk = [{"gb": "GB0124", "gb_type": "Unsupported Tensor.item() call", "path": "pkg/m.py",
                "line": 24, "function": "forward", "source": "lo, hi = x.min().item(), x.max().item()"}]
        cost = {"cpu_s": 0.48 if not breaks else 0.75, "fx_nodes": nodes, "guards": 150, "graphs": graphs,
                "cache": "cold", "backend": "eager"}
        if ops is not None:
            cost["fx_ops"] = ops
        return {"status": "ok", "graph_count": graphs, "graph_breaks": brk if breaks else [],
                "compile_cost": cost}
    rep = _report(run(38, 24, 3, False), run(51, 25, 7, True))
    (m,) = rep.models
    assert m.compile["follows_breaks"] is True and m.compile["head"]["fx_ops"] == 25
    # (0.27 CPU s more: said in the model's section, no warning of its own beside the break)
    assert [r for r in rep.reasons if r["code"] == "compile_regression"] == []
    from pt2bot.report.metrics import compile_line
    assert "following from the new graph breaks" in compile_line(m)
    rep = _report(run(38, 24, 3, False), {**run(51, 25, 7, True), "compile_cost": {
        **run(51, 25, 7, True)["compile_cost"], "cpu_s": 1.75}})
    (reason,) = [r for r in rep.reasons if r["code"] == "compile_regression"]
    assert reason["level"] == "warning"
    assert reason["message"].endswith("while the work compiled, FX operations 24 → 25, is within the threshold")
    # results without operations (older ones): the nodes decide, as before
    rep = _report(run(38, None, 3, False), run(51, None, 7, True))
    assert "follows_breaks" not in rep.models[0].compile


def test_less_cpu_for_the_same_work_is_not_read_as_cheaper():
    """guided-diffusion's PR 3 split a graph in three and read "8.85 → 3.72 CPU s (×0.42)",
    an improvement; the work compiled (FX nodes) was the same."""
    from pt2bot.report.metrics import compile_line
    from pt2bot.reportdata import ModelDelta

    side = {"cpu_s": 8.85, "fx_nodes": 711, "graphs": 1, "cache": "cold"}
    cost = {"base": side, "head": {**side, "cpu_s": 3.72, "fx_nodes": 705, "graphs": 3}, "ratio": 0.42,
            "basis": "cpu_s", "regression": False, "threshold_pct": 30.0, "note": None}
    line = compile_line(ModelDelta(name="m", compile=cost))
    assert line.endswith("no regression: less CPU time for about the same work (FX nodes), not a cheaper "
                         "compile: more likely the machine's load."), line
    # fewer FX nodes: the compile did less, and says nothing more
    less = {**cost, "head": {**cost["head"], "fx_nodes": 300}}
    assert compile_line(ModelDelta(name="m", compile=less)).endswith("no regression.")


def test_a_first_call_that_raised_is_measured_again_and_never_compared():
    """ESM-2's contact head: head's first compiled call raised ConstraintViolationError (a
    dim declared dynamic that the code pins) part way through, and ran again with the dims
    marked weakly, reusing the frames it had compiled: "FX nodes 245 → 57 · graphs 2 → 2 · no
    regression" beside a table of graphs 2 → 4. Those figures are said as what they are."""
    from pt2bot.compare import compare_compile, compare_model
    from pt2bot.report.metrics import compile_line
    from pt2bot.results import ModelRun

    run = run_of("view", "models.hard_view:HardView", backend="eager",
                 inputs=[{"shape": ["batch", 4]}], shapes={"batch": [8, 16]}, dynamic=("batch",))
    assert run["specialized"] and run["compile_cost"]["retried"] is True
    clean = run_of("clean", "models.clean:Clean")
    assert "retried" not in clean["compile_cost"]
    base = ModelRun.from_json({"name": "m", "status": "ok", "compile_cost": {
        "cpu_s": 0.9, "fx_nodes": 245, "guards": 590, "graphs": 2, "cache": "cold", "backend": "eager"}})
    head = ModelRun.from_json({"name": "m", "status": "ok", "compile_cost": {
        "cpu_s": 0.48, "fx_nodes": 57, "guards": 119, "graphs": 2, "cache": "cold", "backend": "eager",
        "retried": True}})
    got = compare_compile(base, head)
    assert got["regression"] is False and got["ratio"] is None
    assert got["note"].startswith("not compared: head's first compiled call raised")
    m = compare_model("m", base, head, renames={}, line_map=lambda p, n: n, threshold_pct=10.0)
    line = re.sub(r"<[^>]+>", "", _html(compile_line(m)))
    assert "no regression" not in line and "not compared: head's first compiled call raised" in line, line
    both = ModelRun.from_json({**base.to_json(), "compile_cost": {**base.compile_cost.to_json(), "retried": True}})
    assert compare_compile(both, head)["note"].startswith(
        "not compared: base's and head's first compiled calls raised (a dim declared dynamic that the "
        "code pins) and were run again")
