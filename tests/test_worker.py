"""The smoke worker on fixture models with known behaviour (real torch, eager backend).

Lines are found through `# expect: MARK` comments in tests/fixtures/models, so a test states
exactly which line must be reported without hard-coding numbers.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "fixtures")          # the "repository" the fixture models live in
MODELS = os.path.join(ROOT, "models")


def line_of(module: str, mark: str) -> int:
    with open(os.path.join(MODELS, module), encoding="utf-8") as fh:
        hits = [i for i, t in enumerate(fh, 1) if t.rstrip().endswith(f"# expect: {mark}")]
    assert len(hits) == 1, (module, mark)
    return hits[0]


def spec(name: str, entry: str, *, inputs: Any = None, shapes: Any = None,
         dynamic: Any = ("batch",), phases: Any = ("breaks", "matrix", "export"),
         run: dict | None = None, log_path: str | None = None, **model: Any) -> dict:
    m = {"name": name, "entry": entry, "kwargs": {},
         "inputs": inputs if inputs is not None else [{"shape": ["batch", 8],
                                                         "dtype": "float32"}],
         "inputs_entry": None, "shapes": shapes or {"batch": [2, 4, 8]}, "cases": None,
         "dynamic": list(dynamic), "export": True, "tolerance": {}}
    m.update(model)
    r = {"backend": "eager", "recompile_limit": 8, "warmup": 1, "repeats": 3, "threads": 1}
    r.update(run or {})
    return {"repo_root": ROOT, "model": m, "run": r, "device": "cpu", "phases": list(phases),
            "log_path": log_path}


_CACHE: dict[str, dict] = {}


def measured(name: str, entry: str, **kw: Any) -> dict:
    """measure() once per fixture per test process (the runs are the expensive part)."""
    if name not in _CACHE:
        from pt2bot.smoke.worker import measure
        _CACHE[name] = measure(spec(name, entry, **kw))
    return _CACHE[name]


def only_break(run: dict) -> dict:
    assert run["status"] == "ok", run.get("error")
    assert len(run["graph_breaks"]) == 1, run["graph_breaks"]
    return run["graph_breaks"][0]


# ----------------------------------------------------------------------------- clean

def test_clean_model_has_no_breaks_no_recompiles_and_exports_dynamic():
    run = measured("clean", "models.clean:Clean", shapes={"batch": [2, 4, 8, 1]})
    assert run["status"] == "ok" and run["phase_errors"] == []
    assert run["graph_count"] == 1 and run["graph_breaks"] == []
    rc = run["recompiles"]
    assert rc["count"] == 0 and rc["eager_fallback"] is False
    assert [c["compiled"] for c in rc["cases"]] == [True, False, False, True]
    # batch 1 recompiles (torch's 0/1 specialisation): reported apart, tagged size_one
    assert rc["size_one"] == 1
    one = rc["cases"][3]["reasons"]
    assert one and all(r["kind"] == "size_one" and r["dim"] == "batch" for r in one)
    assert run["specialized"] == []
    assert [a["match"] for a in run["accuracy"]] == [True] * 4
    # each case's eager output shapes, for the review to compare base's with head's
    assert [a["out_shapes"] for a in run["accuracy"]] == [[[a["shape"]["batch"], 4]] for a in run["accuracy"]]
    ex = run["export"]
    assert ex["ok"] is True and ex["kind"] is None and ex["static_dims"] == []
    assert [c["match"] for c in ex["cases"]] == [True] * 4
    assert run["files"] == ["models/clean.py"]
    json.dumps(run, allow_nan=False)   # the RUN is plain JSON


def test_a_model_that_updates_its_buffers_is_compared_from_the_same_state():
    """Each case's compiled call starts from the buffers its eager call started from (the
    model's as built): run after all the eager calls, it would centre with a mean they moved,
    and compiled outputs would differ from eager ones that are in fact the same computation."""
    run = measured("running", "models.running:Running", phases=("breaks", "matrix"))
    assert run["status"] == "ok" and run["phase_errors"] == []
    assert [a["match"] for a in run["accuracy"]] == [True] * 3, run["accuracy"]


def test_a_model_that_draws_random_numbers_is_compared_on_the_same_draws():
    """Each compiled or exported call draws from the generator state its eager call drew from:
    with unseeded calls a model trained with input noise and dropout differs from eager on every
    case, compiled or exported, and a PR adding the dropout would read as an accuracy mismatch
    that is only another draw."""
    run = measured("noisy", "models.noisy:Noisy", train=True)
    assert run["status"] == "ok" and run["phase_errors"] == []
    assert [a["match"] for a in run["accuracy"]] == [True] * 3, run["accuracy"]
    assert [c["match"] for c in run["export"]["cases"]] == [True] * 3, run["export"]


def test_a_flag_the_first_call_sets_is_as_built_for_every_call():
    """A one-time diagnostic (`if not self._logged: logger.warning(...); self._logged = True`)
    breaks a user's first compiled call. The eager reference calls run first: had they left the
    flag set, the break pass would never trace the log call and the review would miss it."""
    run = measured("log_once", "models.log_once:LogOnce", phases=("breaks", "matrix"))
    assert run["status"] == "ok" and run["phase_errors"] == []
    assert [(b["line"], b["gb"]) for b in run["graph_breaks"]] == [(line_of("log_once.py", "log"), "GB0291")]
    assert [a["match"] for a in run["accuracy"]] == [True] * 3, run["accuracy"]


def test_a_tensor_kept_as_a_plain_attribute_is_as_built_for_every_call():
    """A streaming block carries its last output's mean into the next call in a plain tensor
    attribute (`self.carry = y.detach().mean(0)`, no buffer). Each compared call must start
    from the value as built, or the compiled run is compared with an eager one of another state
    and the model reads as an accuracy mismatch that is only the calls' order."""
    run = measured("carry", "models.carry:Carry", phases=("breaks", "matrix", "export"))
    assert run["status"] == "ok" and run["phase_errors"] == []
    assert [a["match"] for a in run["accuracy"]] == [True] * 3, run["accuracy"]
    assert [c["match"] for c in run["export"]["cases"]] == [True] * 3, run["export"]


def test_weights_a_call_rescales_in_place_are_as_built_for_every_call():
    """A layer that rescales its weight through `.data` in forward (FrEIA's spectral norm
    correction): the first call changes the weights the next calls read. Each compared call
    must start from the weights as built, or the compiled run is compared with an eager one of
    other weights, and a proof compares a candidate that drops the rescaling with head on
    weights head already rescaled."""
    run = measured("renorm", "models.renorm:Renorm", phases=("breaks", "matrix"))
    assert run["status"] == "ok" and run["phase_errors"] == []
    assert [a["match"] for a in run["accuracy"]] == [True] * 3, run["accuracy"]


# ----------------------------------------------------------------------------- breaks

def test_item_branch_is_gb0124_and_export_is_data_dependent():
    run = measured("item", "models.item_branch:ItemBranch")
    line = line_of("item_branch.py", "GB0124")
    b = only_break(run)
    assert (b["gb"], b["path"], b["line"], b["function"]) == (
        "GB0124", "models/item_branch.py", line, "forward")
    assert b["gb_type"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert b["url"].endswith("/gb/gb0124.html") and b["hints"] and b["count"] == 1
    assert b["source"].startswith("if y.sum().item() > 0:")
    assert b["in_loop"] is False
    assert run["graph_count"] == 2
    ex = run["export"]
    assert (ex["ok"], ex["kind"], ex["path"], ex["line"]) == (
        False, "data_dependent", "models/item_branch.py", line)


def test_print_on_first_line_is_found():
    # explain() misses a break with nothing traced before it; the trace does not
    b = only_break(measured("print", "models.printing:Printing"))
    assert (b["gb"], b["path"], b["line"]) == ("GB0059", "models/printing.py",
                                               line_of("printing.py", "GB0059"))


def test_break_in_layer_called_from_loop_is_one_counted_site():
    run = measured("loop", "models.loop_layers:LoopLayers")
    b = only_break(run)
    assert (b["gb"], b["path"], b["line"]) == ("GB0124", "models/loop_layers.py",
                                               line_of("loop_layers.py", "GB0124"))
    assert b["in_loop"] is True            # the outer frame was skipped (GB7000)
    assert b["count"] >= 2                 # hit by more than one frame/layer, reported once
    assert [(f["path"], f["line"]) for f in b["user_stack"]] == [
        ("models/loop_layers.py", line_of("loop_layers.py", "loop-call")),
        ("models/loop_layers.py", line_of("loop_layers.py", "GB0124"))]


def test_break_in_helper_of_another_file_points_at_the_helper():
    run = measured("nested", "models.nested:Nested")
    b = only_break(run)
    assert (b["gb"], b["path"], b["line"], b["function"]) == (
        "GB0124", "models/helpers.py", line_of("helpers.py", "GB0124-helper"), "normalize")
    assert [(f["path"], f["line"]) for f in b["user_stack"]] == [
        ("models/nested.py", line_of("nested.py", "helper-call")),
        ("models/helpers.py", line_of("helpers.py", "GB0124-helper"))]
    assert run["files"] == ["models/helpers.py", "models/nested.py"]


def test_data_dependent_shape_op_breaks():
    run = measured("nonzero", "models.nonzero:NonZero")
    b = only_break(run)
    assert (b["gb"], b["path"], b["line"]) == ("GB0036", "models/nonzero.py",
                                               line_of("nonzero.py", "nonzero"))
    assert [a["match"] for a in run["accuracy"]] == [True, True, True]


# ----------------------------------------------------------------------------- matrix

def test_size_branch_recompiles_with_located_reason():
    run = measured("size", "models.size_branch:SizeBranch")
    line = line_of("size_branch.py", "size-branch")
    rc = run["recompiles"]
    assert rc["count"] == 1 and rc["size_one"] == 0
    assert [c["recompiles"] for c in rc["cases"]] == [0, 0, 1]
    (reason,) = rc["cases"][2]["reasons"]
    assert (reason["dim"], reason["kind"], reason["path"], reason["line"]) == (
        "batch", "guard", "models/size_branch.py", line)
    assert "x.size()[0]" in reason["guard"]
    assert run["graph_breaks"] == []
    ex = run["export"]
    assert (ex["ok"], ex["kind"], ex["path"], ex["line"]) == (
        False, "constraint_violation", "models/size_branch.py", line)


def test_a_constraint_violation_is_placed_on_the_guard_it_names():
    """DINO's position embedding, resized by a float made from the image's size: torch's
    violation names `(0.1 + sym_float(h // 8)) / 4.0 == 0.525`, which the interpolation added;
    the failure was placed at the patch embedding's conv, the first size specialisation."""
    run = measured("pos", "models.shape_advice:PosResizeUnchecked", inputs=[{"shape": ["batch", 3, "height", "width"]}],
                   shapes={"batch": [2], "height": [16, 32], "width": [32, 16]},
                   dynamic=("batch", "height", "width"), phases=("breaks", "export"))
    ex = run["export"]
    assert (ex["ok"], ex["kind"]) == (False, "constraint_violation"), ex
    assert (ex["path"], ex["line"]) == ("models/shape_advice.py", line_of("shape_advice.py", "pos-resize")), ex


def test_a_constraint_violation_bounding_a_size_is_placed_on_the_guard_of_that_bound():
    """nanochat: the violation says `seq <= 64`, the attention window's test; the failure was
    placed at the rotary table's `assert T <= self.cos.size(1)`, the first bound on seq (320)."""
    run = measured("window", "models.shape_advice:WindowedRotary", inputs=[{"shape": ["batch", "seq", 4]}],
                   shapes={"batch": [2], "seq": [16, 32]}, dynamic=("seq",), phases=("breaks", "export"))
    ex = run["export"]
    assert (ex["ok"], ex["kind"]) == (False, "constraint_violation"), ex
    assert "<= 64" in ex["message"], ex["message"]
    assert (ex["path"], ex["line"]) == ("models/shape_advice.py", line_of("shape_advice.py", "window")), ex


def test_a_range_guard_is_placed_at_the_bound_the_size_is_past():
    """nanochat: torch wrote the failed `3 <= idx.size()[1] <= 128` at a linear layer (the
    lower bound's line), where a sequence of 160 fails the attention window's upper bound."""
    run = measured("range", "models.shape_advice:WindowedLinear", inputs=[{"shape": ["batch", "seq", 4]}],
                   shapes={"batch": [2], "seq": [16, 100]}, dynamic=("seq",), phases=("matrix",))
    (reason,) = run["recompiles"]["cases"][1]["reasons"]
    assert reason["guard"] == "3 <= x.size()[1] <= 64", reason
    assert (reason["path"], reason["line"]) == ("models/shape_advice.py", line_of("shape_advice.py", "linear-window"))


def test_a_break_only_dynamic_sizes_hit_is_kept_from_the_matrix():
    """The break pass compiles one case with static sizes: `is_causal=n_ctx > 1` is a bool
    there. The matrix marks `seq` dynamic and the comparison becomes a symbolic bool, which
    `scaled_dot_product_attention` refuses (a break, GB0112). The review of whisper's SDPA
    change said "0 graph breaks" and "8 new recompiles"; the break is now one of the run's,
    marked as seen in the matrix only."""
    run = measured("dynamic_causal", "models.dynamic_causal:DynamicCausal",
                   inputs=[{"name": "q", "shape": ["batch", 2, "seq", 8], "dtype": "float32"}],
                   shapes={"batch": [2], "seq": [3, 8]}, dynamic=("seq",), phases=("breaks", "matrix"))
    assert run["status"] == "ok" and run["graph_count"] == 1
    b = only_break(run)
    assert (b["path"], b["line"], b["matrix_only"]) == (
        "models/dynamic_causal.py", line_of("dynamic_causal.py", "sdpa"), True)
    assert "is_causal" in b["source"]
    # without the matrix, the pass alone sees no break (and says nothing of the matrix's)
    alone = measured("dynamic_causal_breaks", "models.dynamic_causal:DynamicCausal",
                     inputs=[{"name": "q", "shape": ["batch", 2, "seq", 8], "dtype": "float32"}],
                     shapes={"batch": [2], "seq": [3, 8]}, dynamic=("seq",), phases=("breaks",))
    assert alone["graph_breaks"] == []


def test_a_weight_not_finite_as_built_is_named_with_the_nan_outputs():
    """whisper's decoder logits were NaN or inf on every shape case, and `pt2bot run` said only
    that; the cause, a positional embedding left `torch.empty`, is named."""
    from pt2bot.results import ModelRun
    from pt2bot.smoke.runner import status_line

    run = measured("unset_weight", "models.unset_weight:UnsetWeight", phases=("breaks",))
    assert run["status"] == "ok" and len(run["nonfinite"]) == 3
    assert run["unset_weights"] == ["positional_embedding"]
    line = status_line(ModelRun.from_json(run))
    assert ("an output is NaN or inf on shape cases batch=2, batch=4, batch=8 (`positional_embedding` "
            "holds NaN, inf or values past 1e30 as built: memory never written, `torch.empty` until a "
            "checkpoint is loaded?)") in line, line


def test_a_failure_keeps_every_repository_frame_it_passed_through():
    """The review comments on the PR's line a failure passed through when it raised elsewhere:
    the RUN's error keeps the traceback's repository frames, outermost first."""
    run = measured("float_channels", "models.float_channels:FloatChannels", phases=("breaks",))
    assert run["status"] == "error" and run["error"]["kind"] == "build", run["error"]
    path = "models/float_channels.py"
    assert run["error"]["frames"] == [{"path": path, "line": line_of("float_channels.py", "computed")},
                                      {"path": path, "line": line_of("float_channels.py", "raised")}]
    assert (run["error"]["path"], run["error"]["line"]) == (path, line_of("float_channels.py", "raised"))


def test_outputs_that_hold_one_value_on_every_case_are_said():
    """guided-diffusion's UNets as built return 0 (their last layers are zero-initialised): "ok"
    and compiled outputs that "match" read as shown; the run says the outputs show little."""
    from pt2bot.results import ModelRun
    from pt2bot.smoke.runner import status_line

    run = measured("zero_init", "models.zero_init:ZeroInit", phases=("breaks",))
    assert run["status"] == "ok" and run["uniform"] is True and "nonfinite" not in run
    assert "but every output holds a single value on every shape case" in status_line(ModelRun.from_json(run))
    assert "uniform" not in measured("unset_weight", "models.unset_weight:UnsetWeight", phases=("breaks",))
    assert "uniform" not in measured("clean", "models.clean:Clean", shapes={"batch": [2, 4, 8, 1]})


def test_hard_coded_view_specialises_a_declared_dynamic_dim():
    run = measured("view", "models.hard_view:HardView", inputs=[{"shape": ["batch", 4]}])
    line = line_of("hard_view.py", "hard-view")
    (s,) = run["specialized"]
    assert (s["dim"], s["path"], s["line"]) == ("batch", "models/hard_view.py", line)
    assert s["source"].startswith("y = x.view(8, -1)")
    # the matrix still ran every case after the constraint violation
    assert [c["compiled"] for c in run["recompiles"]["cases"]] == [True, True, True]
    assert run["recompiles"]["count"] == 2
    ex = run["export"]
    assert (ex["ok"], ex["kind"], ex["path"], ex["line"]) == (
        False, "constraint_violation", "models/hard_view.py", line)


def test_recompile_limit_hit_is_reported_as_eager_fallback():
    from pt2bot.smoke.worker import measure
    run = measure(spec("limit", "models.size_branch:SizeBranch", shapes={"batch": [2, 8, 3]},
                       phases=["matrix"], run={"recompile_limit": 1}))
    rc = run["recompiles"]
    assert rc["eager_fallback"] is True and rc["limit"] == 1
    assert [c["eager_fallback"] for c in rc["cases"]] == [False, True, True]
    assert run["graph_breaks"] is None and run["export"] is None   # phases not asked for
    assert [a["match"] for a in run["accuracy"]] == [True, True, True]


def test_factory_inputs_have_their_dims_inferred():
    from pt2bot.smoke.worker import measure
    run = measure(spec("factory", "models.clean:build_clean", inputs=[],
                       inputs_entry="models.clean:make_inputs", shapes={"batch": [3, 5, 1]},
                       phases=["matrix", "export"]))
    assert run["status"] == "ok", run.get("error")
    reasons = run["recompiles"]["cases"][2]["reasons"]
    assert reasons and reasons[0]["dim"] == "batch" and reasons[0]["kind"] == "size_one"
    assert run["export"]["ok"] is True and run["export"]["static_dims"] == []


# ----------------------------------------------------------------------------- errors

def test_forward_that_raises_is_an_exception_result():
    run = measured("raises", "models.raises:Raises")
    assert run["status"] == "error"
    assert (run["error"]["kind"], run["error"]["path"], run["error"]["line"]) == (
        "exception", "models/raises.py", line_of("raises.py", "raise"))
    assert "always fails" in run["error"]["message"]


def test_wrong_shaped_input_is_an_input_error():
    run = measured("wrong", "models.clean:Clean", inputs=[{"shape": ["batch", 5]}])
    assert run["status"] == "error" and run["error"]["kind"] == "input"
    assert "mat1 and mat2" in run["error"]["message"]


def test_inputs_that_do_not_fit_forward_are_input_errors():
    from pt2bot.smoke.worker import measure
    two = [{"shape": ["batch", 8]}, {"shape": ["batch", 8]}]
    run = measure(spec("arity", "models.clean:Clean", inputs=two))
    assert run["error"]["kind"] == "input" and "forward()" in run["error"]["message"]
    run = measure(spec("dim", "models.clean:Clean", inputs=[{"shape": ["seq", 8]}]))
    assert run["error"]["kind"] == "input" and "'seq'" in run["error"]["message"]


def test_import_failure_is_located():
    run = measured("bad_import", "models.broken_import:Model")
    assert run["status"] == "error"
    assert (run["error"]["kind"], run["error"]["path"], run["error"]["line"]) == (
        "import", "models/broken_import.py", line_of("broken_import.py", "import-raise"))


def test_a_model_that_imports_and_is_not_built_is_a_build_error():
    # the constructor refusing the entry's kwargs, or raising, is no import failure: the
    # install is fine, and "error (import)" sent a user looking at the wrong thing
    from pt2bot.smoke.worker import measure
    run = measure(spec("typo", "models.clean:Clean", kwargs={"hiden": 4}))
    assert run["status"] == "error" and run["error"]["kind"] == "build", run["error"]
    assert 'unexpected keyword argument "hiden"; did you mean "hidden"?' in run["error"]["message"]
    run = measure(spec("raising", "models.clean:build_clean", kwargs={"hidden": -1}))
    assert run["error"]["kind"] == "build", run["error"]
    assert "(build_raised)" in run["error"]["message"]


# ----------------------------------------------------------------------------- latency

def test_latency_phase_runs_alone():
    from pt2bot.smoke.worker import measure
    run = measure(spec("lat", "models.clean:Clean", phases=["latency"],
                       shapes={"batch": [2, 4]}))
    assert run["phases"] == ["latency"] and run["phase_errors"] == []
    assert run["graph_breaks"] is None and run["recompiles"] is None
    assert [lat["shape"] for lat in run["latency"]] == [{"batch": 2}, {"batch": 4}]
    for lat in run["latency"]:
        for side in ("eager_ms", "compiled_ms"):
            st = lat[side]
            assert len(st["samples"]) == 3 and st["min"] <= st["median"]
            assert st["min"] > 0 and st["iqr"] >= 0
    cs = run["compile_s"]
    assert (cs["cold"] is None) != (cs["warm"] is None)
    assert run["peak_mem_method"] == "ru_maxrss_delta" and run["peak_mem_mb"] >= 0


# ----------------------------------------------------------------------------- process

def test_worker_process_writes_run_and_routes_logs(tmp_path):
    s = spec("item", "models.item_branch:ItemBranch", phases=["breaks"],
             log_path=str(tmp_path / "logs" / "item.log"))
    (tmp_path / "logs").mkdir()
    sp, out = tmp_path / "spec.json", tmp_path / "out.json"
    sp.write_text(json.dumps(s))
    proc = subprocess.run([sys.executable, "-m", "pt2bot.smoke.worker", str(sp), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""       # everything went to the log
    run = json.loads(out.read_text())
    assert run["status"] == "ok" and run["graph_breaks"][0]["gb"] == "GB0124"
    log = (tmp_path / "logs" / "item.log").read_text()
    assert "Graph break from `Tensor.item()`" in log     # torch's own warning, routed


# ----------------------------------------------------------------------------- coverage, trace

def _lines(text: str) -> set[int]:
    from pt2bot.reach import parse_ranges
    return {n for lo, hi in parse_ranges(text) for n in range(lo, hi + 1)}


def test_breaks_phase_records_the_lines_the_model_ran():
    run = measured("nested", "models.nested:Nested")
    cov = run["coverage"]
    # repo files only; the package's __init__ ran too, when the entry module was imported
    # (unless an earlier test in this process imported the package first: measured in-process)
    assert set(cov) - {"models/__init__.py"} == {"models/nested.py", "models/helpers.py"}
    assert line_of("nested.py", "helper-call") in _lines(cov["models/nested.py"])
    assert line_of("helpers.py", "GB0124-helper") in _lines(cov["models/helpers.py"])
    # import (module level) and construction (__init__) are executed lines as well: the
    # latency gate asks whether changed code ran there
    with open(os.path.join(MODELS, "nested.py"), encoding="utf-8") as fh:
        src = fh.read().splitlines()
    ran = _lines(cov["models/nested.py"])
    for text in ("from models.helpers import normalize", "self.fc = torch.nn.Linear(8, 8)"):
        assert [i for i, line in enumerate(src, 1) if text in line][0] in ran
    assert "compile_report" not in run            # no trace_path in the spec: no report


def test_without_the_breaks_phase_no_coverage_but_the_trace_of_the_matrix(tmp_path):
    from pt2bot.smoke.worker import measure
    s = spec("size", "models.size_branch:SizeBranch", phases=["matrix"])
    s.update(trace_path=str(tmp_path / "t" / "trace.log"), trace_rel="compile/size/head/trace.log")
    run = measure(s)
    assert run["status"] == "ok" and "coverage" not in run
    rep = run["compile_report"]
    assert rep["trace"] == "compile/size/head/trace.log" and rep["truncated"] is False
    assert rep["bytes"] == (tmp_path / "t" / "trace.log").stat().st_size > 0
    assert '"recompile_reasons"' in (tmp_path / "t" / "trace.log").read_text()
