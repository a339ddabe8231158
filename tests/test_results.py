"""pt2bot.results: the typed model reads every recorded file and writes it back unchanged."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pt2bot.results import (FAILED_STATUSES, PHASES, RESULTS_SCHEMA, GraphBreak, ModelRun,
                            ResultsFile, RunError, Samples, is_failed, summarise)

DATA = Path(__file__).parent / "data"
RECORDED = sorted([*DATA.glob("results/*.json"), *DATA.glob("audit/*.json")])


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_results_round_trip_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    results = ResultsFile.from_json(data)
    assert results.is_results and results.models
    # Same keys, same order, same values: json.dumps of both is identical.
    assert json.dumps(results.to_json()) == json.dumps(data)
    assert all(isinstance(m, ModelRun) for m in results.models)


def test_recorded_results_are_typed_all_the_way_down():
    results = ResultsFile.from_json(json.loads((DATA / "results" / "head.json").read_text()))
    runs = results.by_name()
    tiny = runs["tiny_gpt"]
    assert isinstance(tiny.breaks()[0], GraphBreak) and tiny.breaks()[0].gb == "GB0170"
    assert tiny.recompiles.count == 1
    reason = tiny.recompiles.cases[1].reasons[0]
    assert (reason.dim, reason.path, reason.line) == ("batch", "pkg/models.py", 18)
    assert tiny.export.ok is False and tiny.export.kind == "data_dependent"
    assert isinstance(tiny.latency[0].compiled_ms, Samples)
    assert runs["flaky"].failed and isinstance(runs["flaky"].error, RunError)
    assert not any(m.extra for m in results.models)       # nothing unknown in our own files


def test_unknown_keys_and_malformed_values_survive_a_round_trip():
    run = {"name": "m", "status": "ok", "future_key": {"a": [1, 2]},
           "graph_count": "two",                      # wrong type: kept verbatim, not typed
           "graph_breaks": [{"gb": "GB0001", "line": 3, "new_field": True}],
           "latency": [{"shape": {"b": 1}, "compiled_ms": {"median": 1, "samples": [1, 2.5]},
                        "p99": 9}]}
    typed = ModelRun.from_json(run)
    assert typed.graph_count is None and typed.extra["graph_count"] == "two"
    assert typed.extra["future_key"] == {"a": [1, 2]}
    assert typed.breaks()[0].extra == {"new_field": True}
    assert typed.latency[0].compiled_ms.median == 1 and typed.latency[0].extra == {"p99": 9}
    assert json.dumps(typed.to_json()) == json.dumps(run)
    # Setting a field puts it in the JSON; a malformed value it replaces is gone.
    fixed = typed.with_(graph_count=2, log="logs/m.log")
    assert fixed.to_json()["graph_count"] == 2 and fixed.to_json()["log"] == "logs/m.log"
    assert "graph_count" not in fixed.extra


def test_one_empty_run_for_worker_and_runner():
    fresh = ModelRun.empty("m").to_json()
    assert fresh["status"] == "ok" and fresh["phases"] == [] and fresh["phase_s"] == {}
    assert "error" not in fresh and "log" not in fresh
    for key in ("graph_count", "graph_breaks", "recompiles", "specialized", "accuracy",
                "export", "latency", "compile_s", "peak_mem_mb", "files", "duration_s"):
        assert fresh[key] is None, key
    failed = ModelRun.empty("m", "timeout", error=RunError(kind="timeout", message="late"),
                            log="logs/m.log", duration_s=1.23456).to_json()
    assert set(failed) == set(fresh) | {"error", "log"}
    assert failed["error"] == {"kind": "timeout", "message": "late", "path": None,
                               "line": None, "signal": None}
    assert failed["duration_s"] == 1.235


def test_vocabulary():
    assert PHASES == ("breaks", "matrix", "export", "advice", "latency")
    assert FAILED_STATUSES == ("error", "timeout") and is_failed("timeout")
    assert not is_failed("ok") and not is_failed("skipped")
    assert ResultsFile.empty().to_json() == {"schema": RESULTS_SCHEMA, "models": []}


def test_pooled_samples_keep_each_process_as_a_round():
    first = summarise([1.0, 2.0, 3.0])
    assert first.iqr == 1.0          # p75 - p25, interpolated, also below 4 samples
    pooled = first.pooled([4.0, 5.0]).pooled([6.0])
    assert pooled.rounds == ((1.0, 2.0, 3.0), (4.0, 5.0), (6.0,))
    assert pooled.samples == (1.0, 2.0, 3.0, 4.0, 5.0, 6.0) and pooled.median == 3.5
    assert pooled.grouped() == [[1.0, 2.0, 3.0], [4.0, 5.0], [6.0]]


def test_junk_entries_in_a_list_hide_nothing_else_and_are_written_back():
    data = {"schema": RESULTS_SCHEMA, "models": ["junk", {"name": "m", "status": "ok"}, 3]}
    results = ResultsFile.from_json(data)
    assert results.is_results and [m.name for m in results.models] == ["m"]
    assert json.dumps(results.to_json()) == json.dumps(data)
    assert not ResultsFile.from_json({"schema": RESULTS_SCHEMA, "models": "x"}).is_results
    assert not ResultsFile.from_json({"schema": "pt2bot.report/1", "models": []}).is_results


def test_an_edit_that_makes_a_python_number_a_tensor_does_not_match_heads_output():
    """An edit's outputs against head's (`types`): a 0-d tensor equals a Python float of the
    same value under `!=`, yet its caller gets another type. Compiled or exported outputs
    against eager ones keep the old comparison."""
    torch = pytest.importorskip("torch")
    from pt2bot.smoke.inputs import compare_outputs

    got = compare_outputs((torch.ones(2), 0.25), (torch.ones(2), torch.tensor(0.25, dtype=torch.float64)),
                          types=True)
    assert got["match"] is False
    assert got["message"] == "output is a tensor where head's is a Python float (0.25)"
    assert compare_outputs((torch.ones(2), 0.25), (torch.ones(2), torch.tensor(0.25)))["match"] is True
    assert compare_outputs((torch.ones(2), 0.25), (torch.ones(2), 0.25), types=True)["match"] is True


def test_a_nan_on_one_side_is_said_as_such_not_as_an_error_of_zero():
    """The largest error is taken over finite differences; a NaN where the other side has a
    number is a mismatch whose reason must not read "max abs error 0"."""
    torch = pytest.importorskip("torch")
    from pt2bot.smoke.inputs import compare_outputs

    got = compare_outputs(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, float("nan"), 3.0]))
    assert got["match"] is False and got["max_abs_err"] == 0.0
    assert got["message"] == "NaN or inf on one side only in 1 of 3 values"
    got = compare_outputs(torch.tensor([1.0, float("inf")]), torch.tensor([1.0, 5.0]))
    assert got["message"] == "NaN or inf on one side only in 1 of 2 values"
    # NaN on both sides matches (equal_nan), a plain difference keeps its number
    assert compare_outputs(torch.tensor([float("nan")]), torch.tensor([float("nan")]))["match"] is True
    assert compare_outputs(torch.tensor([1.0]), torch.tensor([2.0])).get("message") is None
