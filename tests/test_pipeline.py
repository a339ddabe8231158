"""pipeline.pool_latency: later rounds join the first run's samples, grouped per process."""
from __future__ import annotations

from pt2bot.compare import compare_latency
from pt2bot.pipeline import pool_latency


def _run(model_ms: list[float], ref_ms: list[float], status: str = "ok") -> dict:
    case = {"shape": {"batch": 2},
            "eager_ms": {"median": 1.0, "samples": [1.0] * len(model_ms)},
            "compiled_ms": {"median": model_ms[0], "samples": list(model_ms)},
            "reference_ms": {"median": ref_ms[0], "samples": list(ref_ms)}}
    return {"models": [{"name": "m", "status": status, "latency": [case]}]}


def test_rounds_are_kept_as_groups_for_model_and_reference():
    results = _run([1.0] * 10, [2.0] * 10)
    pool_latency(results, _run([1.5] * 10, [3.0] * 10))
    pool_latency(results, _run([1.1] * 10, [2.2] * 10))
    case = results["models"][0]["latency"][0]
    assert [len(r) for r in case["compiled_ms"]["rounds"]] == [10, 10, 10]
    assert [r[0] for r in case["reference_ms"]["rounds"]] == [2.0, 3.0, 2.2]
    assert case["compiled_ms"]["median"] == 1.1
    assert len(case["compiled_ms"]["samples"]) == 30


def test_failed_round_is_not_pooled():
    results = _run([1.0] * 10, [2.0] * 10)
    pool_latency(results, _run([9.0] * 10, [2.0] * 10, status="error"))
    assert "rounds" not in results["models"][0]["latency"][0]["compiled_ms"]


def _rounds(scale: float, n: int = 3) -> dict:
    """n worker processes; `scale` slows model and reference alike (a busy neighbour)."""
    xs = [scale * (1.0 + 0.01 * i) for i in range(20)]
    refs = [scale * (2.0 + 0.01 * i) for i in range(20)]
    results = _run(xs, refs)
    for _ in range(n - 1):
        pool_latency(results, _run(xs, refs))
    return results


def test_slow_processes_on_head_are_cancelled_by_their_reference():
    # Every head process ran 60 % slow, model and reference alike: not a regression.
    base, head = _rounds(1.0), _rounds(1.6)
    row, = compare_latency(base["models"][0], head["models"][0], threshold_pct=10)
    assert row["significant"] is False, row


def test_real_slowdown_is_still_detected():
    base, head = _rounds(1.0), _rounds(1.0)
    for r in head["models"][0]["latency"][0]["compiled_ms"]["rounds"]:
        r[:] = [x * 1.3 for x in r]
    head["models"][0]["latency"][0]["compiled_ms"]["samples"] = [
        x for r in head["models"][0]["latency"][0]["compiled_ms"]["rounds"] for x in r]
    row, = compare_latency(base["models"][0], head["models"][0], threshold_pct=10)
    assert row["significant"] is True and row["direction"] == "slower", row
