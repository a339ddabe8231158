from __future__ import annotations

import random

import pytest

from pt2bot.stats import compare_samples, summarise_samples

BACKENDS = [pytest.param(True, id="numpy"), pytest.param(False, id="python")]


def noisy(med: float, n: int, seed: int, spread: float = 0.03) -> list[float]:
    r = random.Random(seed)
    return [med * (1 + r.gauss(0, spread)) for _ in range(n)]


@pytest.mark.parametrize("use_numpy", BACKENDS)
def test_clear_slowdown_is_significant(use_numpy):
    out = compare_samples(noisy(1.0, 30, 1), noisy(1.3, 30, 2), threshold_pct=10,
                          use_numpy=use_numpy)
    assert out["significant"] and out["direction"] == "slower"
    assert 1.0 < out["ci_low"] <= out["ratio"] <= out["ci_high"]
    assert 25 < out["change_pct"] < 35


@pytest.mark.parametrize("use_numpy", BACKENDS)
def test_speedup_is_significant_and_faster(use_numpy):
    out = compare_samples(noisy(1.0, 30, 1), noisy(0.7, 30, 2), threshold_pct=10,
                          use_numpy=use_numpy)
    assert out["significant"] and out["direction"] == "faster" and out["ci_high"] < 1


def test_identical_distributions_are_not_significant():
    out = compare_samples(noisy(1.0, 30, 1), noisy(1.0, 30, 2), threshold_pct=10)
    assert not out["significant"] and out["ci_low"] < 1 < out["ci_high"]


def test_tight_interval_below_threshold_is_not_significant():
    # The interval excludes 1 (a real 3% change), but 3% is under the 10% threshold.
    out = compare_samples(noisy(1.0, 60, 1, 0.002), noisy(1.03, 60, 2, 0.002),
                          threshold_pct=10)
    assert out["ci_low"] > 1 and not out["significant"] and out["direction"] == "same"


def test_large_but_noisy_change_is_not_significant():
    # 15% apart on medians, but with 5 samples and 40% spread the interval covers 1.
    base = [1.0, 0.6, 1.5, 0.7, 1.4]
    head = [1.15, 0.7, 1.6, 0.8, 1.5]
    out = compare_samples(base, head, threshold_pct=10)
    assert out["ratio"] > 1.1 and out["ci_low"] < 1 and not out["significant"]


def test_too_few_samples_gives_a_note_not_a_verdict():
    out = compare_samples([1, 1, 1], [2, 2, 2], threshold_pct=10)
    assert out["ratio"] is None and not out["significant"] and "too few" in out["note"]


def test_garbage_samples_are_dropped():
    base = [1.0, float("nan"), None, "x", 1.0, 1.01, 0.99, 1.0, float("inf")]
    out = compare_samples(base, [1.0, 1.0, 1.01, 0.99, 1.0], threshold_pct=10)
    assert out["n_base"] == 5 and not out["significant"]


@pytest.mark.parametrize("use_numpy", BACKENDS)
def test_deterministic_for_a_seed(use_numpy):
    a, b = noisy(1.0, 25, 3, 0.1), noisy(1.05, 25, 4, 0.1)
    x = compare_samples(a, b, threshold_pct=10, use_numpy=use_numpy)
    y = compare_samples(a, b, threshold_pct=10, use_numpy=use_numpy)
    z = compare_samples(a, b, threshold_pct=10, use_numpy=use_numpy, seed=1)
    assert x == y
    assert (x["ci_low"], x["ci_high"]) != (z["ci_low"], z["ci_high"])


def test_numpy_and_python_agree_closely():
    a, b = noisy(1.0, 40, 5, 0.05), noisy(1.2, 40, 6, 0.05)
    x = compare_samples(a, b, threshold_pct=10, use_numpy=True)
    y = compare_samples(a, b, threshold_pct=10, use_numpy=False)
    assert x["ratio"] == y["ratio"] and x["significant"] == y["significant"]
    assert abs(x["ci_low"] - y["ci_low"]) < 0.02 and abs(x["ci_high"] - y["ci_high"]) < 0.02


@pytest.mark.parametrize("use_numpy", BACKENDS)
def test_rounds_carry_process_noise(use_numpy):
    """Process-level offsets (each round a different level) fool a flat bootstrap; the
    per-round bootstrap sees that rounds disagree and does not call a change."""
    levels_b, levels_h = (1.0, 1.3, 1.0), (1.3, 1.0, 1.3)
    base = [noisy(lv, 20, i, 0.01) for i, lv in enumerate(levels_b)]
    head = [noisy(lv, 20, 10 + i, 0.01) for i, lv in enumerate(levels_h)]
    flat = compare_samples([x for g in base for x in g], [x for g in head for x in g],
                           threshold_pct=10, use_numpy=use_numpy, quantile=0.5)
    grouped = compare_samples(base, head, threshold_pct=10, use_numpy=use_numpy,
                              quantile=0.5)
    assert flat["significant"]
    assert not grouped["significant"] and grouped["method"].endswith("/rounds")


def test_summarise_samples():
    s = summarise_samples([3.0, 1.0, 2.0, 4.0, float("nan")])
    assert s["median"] == 2.5 and s["min"] == 1.0 and s["iqr"] == 1.5
    assert s["samples"] == [3.0, 1.0, 2.0, 4.0]
    assert summarise_samples([])["median"] is None


def test_low_quantile_ignores_slow_mode_rounds_but_sees_real_slowdowns():
    """Contention puts whole rounds in a slow mode (+40%); the default p10 statistic
    compares the fast ends, so A/A with different slow rounds is quiet and a real 25%
    slowdown under the same noise is caught."""
    def rounds(levels, seed):
        return [x for i, lv in enumerate(levels) for x in noisy(lv, 20, seed + i, 0.01)]
    base = rounds((1.0, 1.4, 1.4, 1.0), 0)
    same = rounds((1.4, 1.0, 1.4, 1.4), 10)
    slower = rounds((1.25, 1.75, 1.25, 1.75), 20)
    aa = compare_samples(base, same, threshold_pct=10)
    assert aa["statistic"] == "p10" and not aa["significant"]
    assert compare_samples(base, same, threshold_pct=10, quantile=0.5)["significant"]
    ab = compare_samples(base, slower, threshold_pct=10)
    assert ab["significant"] and ab["direction"] == "slower" and 1.2 < ab["ratio"] < 1.3


def _process(level: float, speed: float, seed: int, n: int = 30) -> tuple[list, list]:
    """One worker process: model samples at `level` and reference samples at 0.1 ms, both
    slowed by the process's `speed` factor (a busy neighbour slows everything it runs)."""
    return noisy(level * speed, n, seed, 0.01), noisy(0.1 * speed, n, seed + 500, 0.01)


def _side(level: float, speeds: tuple[float, ...], seed: int) -> tuple[list, list]:
    procs = [_process(level, s, seed + i) for i, s in enumerate(speeds)]
    return [p[0] for p in procs], [p[1] for p in procs]


@pytest.mark.parametrize("use_numpy", BACKENDS)
def test_reference_cancels_whole_process_slow_modes(use_numpy):
    """Every head process slow (x1.6), base quiet: raw timings call a regression; per unit
    of reference time there is none."""
    base, base_ref = _side(1.0, (1.0, 1.0, 1.0), 0)
    head, head_ref = _side(1.0, (1.6, 1.5, 1.7), 10)
    raw = compare_samples(base, head, threshold_pct=10, use_numpy=use_numpy)
    assert raw["significant"] and raw["direction"] == "slower" and not raw["normalised"]
    out = compare_samples(base, head, threshold_pct=10, base_reference=base_ref,
                          head_reference=head_ref, use_numpy=use_numpy)
    assert out["normalised"] and out["statistic"] == "p10/ref"
    assert out["method"].endswith("/reference")
    assert not out["significant"] and out["direction"] == "same"
    assert abs(out["ratio"] - 1) < 0.05 and out["ci_high"] < 1.1
    assert out["median_ratio"] > 1.4    # the raw medians are still reported as measured


@pytest.mark.parametrize("use_numpy", BACKENDS)
def test_reference_sees_a_real_slowdown_through_slow_modes(use_numpy):
    """A real 25% slowdown (the model, not the reference) while base processes are slow:
    raw p10 says faster or nothing; normalised it is a 25% regression."""
    base, base_ref = _side(1.0, (1.5, 1.6, 1.4), 0)
    head, head_ref = _side(1.25, (1.0, 1.0, 1.05), 10)
    raw = compare_samples(base, head, threshold_pct=10, use_numpy=use_numpy)
    assert raw["direction"] != "slower"
    out = compare_samples(base, head, threshold_pct=10, base_reference=base_ref,
                          head_reference=head_ref, use_numpy=use_numpy)
    assert out["significant"] and out["direction"] == "slower"
    assert 1.2 < out["ratio"] < 1.3 and out["ci_low"] > 1


def test_reference_ignored_when_it_does_not_pair_with_the_samples():
    base, base_ref = _side(1.0, (1.0, 1.0, 1.0), 0)
    head, head_ref = _side(1.0, (1.0, 1.0, 1.0), 10)
    # the reference of only one round (e.g. an older pipeline that did not pool it)
    out = compare_samples(base, head, threshold_pct=10, base_reference=base_ref[0],
                          head_reference=head_ref)
    assert not out["normalised"] and out["statistic"] == "p10"
    bad = compare_samples(base, head, threshold_pct=10, base_reference=[[0.0] * 30] * 3,
                          head_reference=head_ref)
    assert not bad["normalised"] and bad["ratio"] is not None
