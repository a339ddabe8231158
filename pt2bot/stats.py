"""Latency statistics: is head slower (or faster) than base, beyond noise?

The estimate is the ratio head/base of a low quantile (p10, see QUANTILE; medians with
`quantile=0.5`) with a percentile bootstrap confidence interval. A change is *significant*
only when the interval excludes 1 **and** the point estimate moves more than the threshold: on a shared runner the spread between processes
is often larger than small real changes, and a tight interval over a 2 % shift is not
worth a red check.

Samples may come flat (`[0.41, 0.40, ...]`) or grouped by measuring process
(`[[round 1...], [round 2...], ...]`, base and head measured in alternating rounds).
Groups are resampled hierarchically (rounds, then samples within a round), because
samples from one process share that process's luck (memory layout, frequency, neighbours)
and a flat bootstrap would treat them as independent and understate the noise.

With `base_reference` / `head_reference` (each process's timings of a fixed,
model-independent workload, grouped like the samples), each process's samples are first
divided by that process's reference quantile: the verdict then compares model time per unit of reference
time, which cancels a process-wide slow mode (a busy neighbour slows the reference too),
the dominant noise on a shared runner. Without references (or when the groups do not line
up) the raw samples are compared.

Latency rounds are decided sequentially (`decided`): after each round from the second on, the
review stops adding rounds for a model whose interval already lies within the threshold band;
"slower"/"faster" is only ever concluded after the last round (see "Sequential rounds" below).

Deterministic for a given seed. Uses numpy when importable (vectorised); the pure-Python
path gives the same kind of answer (not bit-identical) and is used when numpy is missing.
"""
from __future__ import annotations

import math
import random
from statistics import median
from typing import Any, Sequence

N_BOOT = 2000
# The verdict compares a LOW quantile of the times, not the median. Measured on a shared
# 2-core runner (benchmarks/bench_latency_verdict.py): whole processes land in a "slow mode"
# (a busy SMT sibling / neighbour: +30-60 %, tight within the process) for seconds at a
# time, so round medians are bimodal and a median ratio false-alarms on A/A comparisons
# 40-90 % of the time. Contention only ever adds time; the fast end of the pooled samples
# (p10) estimates the uncontended cost as long as each side saw some quiet time.
QUANTILE = 0.1
MIN_SAMPLES = 5   # per side; fewer cannot support an interval worth showing

Samples = Sequence[float] | Sequence[Sequence[float]]
ALPHA = 0.05      # the verdict's overall two-sided error rate (a false "slower" or "faster")
FIRST_LOOK = 2    # rounds per side at the first look: one process cannot show between-process noise

# --------------------------------------------------------------------------- sequential rounds
# A group-sequential design whose interim looks stop for futility only: after rounds
# FIRST_LOOK..K-1 (K = `run.rounds`, the most rounds a review runs) a model whose interval
# lies within the threshold band gets no more rounds ("unchanged" is settled); a change is
# only concluded at the last look, at the full alpha, as in the fixed design. A futility
# stop only removes chances to reject, so the false-alarm rate cannot exceed the fixed
# design's. Interim looks do not conclude a change, because after 2 rounds the bootstrap
# resamples 2 processes per side: its interval cannot be wider than those two processes'
# spread, whatever its level. Measured on 200 A/A and 200 A/B reviews of the same
# processes (benchmarks/results/latency_sequential.md), stopping for a change at the look
# after 2 rounds at 1.64 % (O'Brien-Fleming-type alpha spending) gave 9/200 false alarms
# and at 0.1 % (Haybittle-Peto) still 6/200, against 3/200 for the fixed 3-round design;
# stopping for futility only gave the fixed design's 3/200 and its detection (191/200).


def decided(verdict: dict[str, Any]) -> bool:
    """Whether an interim look settles the comparison: the interval lies within the
    threshold band on both sides (no ratio it holds is a change worth reporting). An interval
    beyond the threshold is not enough before the last round (the design above), and a
    comparison that cannot be made (too few samples) is undecided: more rounds may make it."""
    lo, hi, t = verdict.get("ci_low"), verdict.get("ci_high"), verdict.get("threshold_pct")
    if lo is None or hi is None or t is None:
        return False
    band = float(t) / 100.0
    return lo > 1.0 - band and hi < 1.0 + band


def compare_samples(base_samples: Samples, head_samples: Samples, *, threshold_pct: float,
                    alpha: float = ALPHA,
                    seed: int = 0, n_boot: int = N_BOOT,
                    quantile: float = QUANTILE,
                    base_reference: Samples | None = None,
                    head_reference: Samples | None = None,
                    use_numpy: bool | None = None) -> dict[str, Any]:
    """Ratio head/base of the `quantile` of the times (0.5: medians), with a (1 - alpha)
    bootstrap interval and a verdict.

    Returns `ratio`, `ci_low`, `ci_high`, `change_pct`, `significant`, `direction`
    ("slower" | "faster" | "same"), `median_ratio`, `base_median`, `head_median`,
    `n_base`, `n_head`, `statistic`, `method`, `note` (why no verdict, else None),
    `normalised` (whether the reference workload was used).
    """
    base_groups = _groups(base_samples)
    head_groups = _groups(head_samples)
    normalised = False
    if base_reference is not None and head_reference is not None:
        nb = _normalise(base_groups, _groups(base_reference), quantile)
        nh = _normalise(head_groups, _groups(head_reference), quantile)
        if nb is not None and nh is not None:
            normalised = True
    n_base = sum(len(g) for g in base_groups)
    n_head = sum(len(g) for g in head_groups)
    rounds = min(len(base_groups), len(head_groups))
    out: dict[str, Any] = {
        "ratio": None, "ci_low": None, "ci_high": None, "change_pct": None,
        "significant": False, "direction": "same",
        "base_median": _median_or_none(base_groups), "head_median": _median_or_none(head_groups),
        "n_base": n_base, "n_head": n_head, "alpha": alpha, "threshold_pct": threshold_pct,
        "median_ratio": None, "statistic": _stat_name(quantile) + ("/ref" if normalised else ""),
        "method": None, "note": None, "normalised": normalised, "rounds": rounds,
    }
    if n_base < MIN_SAMPLES or n_head < MIN_SAMPLES:
        out["note"] = f"too few samples (base {n_base}, head {n_head}; need {MIN_SAMPLES})"
        return out
    b_med, h_med = out["base_median"], out["head_median"]
    if not (b_med and b_med > 0 and h_med is not None and h_med >= 0):
        out["note"] = "non-positive base median"
        return out
    if normalised:
        base_groups, head_groups = nb, nh
    hierarchical = len(base_groups) > 1 and len(head_groups) > 1
    out["method"] = ("bootstrap-quantile-ratio" + ("/rounds" if hierarchical else "")
                     + ("/reference" if normalised else ""))
    if not hierarchical:
        base_groups = [[x for g in base_groups for x in g]]
        head_groups = [[x for g in head_groups for x in g]]

    if use_numpy is None:
        use_numpy = _have_numpy()
    boot = _boot_numpy if use_numpy else _boot_python
    ratios = boot(base_groups, head_groups, n_boot=n_boot, seed=seed, q=quantile)

    flat_b = sorted(x for g in base_groups for x in g)
    flat_h = sorted(x for g in head_groups for x in g)
    b_q, h_q = _quantile(flat_b, quantile), _quantile(flat_h, quantile)
    if b_q <= 0:
        out["note"] = "non-positive base time"
        return out
    out["median_ratio"] = round(h_med / b_med, 4)
    ratio = h_q / b_q
    ci_low = _quantile(ratios, alpha / 2)
    ci_high = _quantile(ratios, 1 - alpha / 2)
    change_pct = (ratio - 1.0) * 100.0
    excludes_one = ci_low > 1.0 or ci_high < 1.0
    significant = excludes_one and abs(change_pct) > threshold_pct
    out.update(ratio=round(ratio, 4), ci_low=round(ci_low, 4), ci_high=round(ci_high, 4),
               change_pct=round(change_pct, 2), significant=significant,
               direction=("slower" if ratio > 1 else "faster") if significant else "same")
    return out


def summarise_samples(samples: Sequence[float]) -> dict[str, Any]:
    """The results JSON's timing summary: `median`, `min`, `iqr` (ms) and the `samples`.

    The one summary of timings (the worker's and the pooled rounds'; as a typed record:
    `pt2bot.results.summarise`). The IQR is p75 - p25 with the same linear-interpolated
    quantile as the verdict, for any number of samples (the worker used to take the range
    below 4 samples, which made a 3-sample IQR incomparable with a 4-sample one).
    Non-finite values are dropped; no samples gives nulls (unmeasured, not zero). Values are
    rounded to 6 decimals (ns resolution) for stable, compact JSON.
    """
    xs = sorted(float(v) for v in samples if _finite(v))
    if not xs:
        return {"median": None, "min": None, "iqr": None, "samples": []}
    return {"median": round(median(xs), 6), "min": round(xs[0], 6),
            "iqr": round(_quantile(xs, 0.75) - _quantile(xs, 0.25), 6),
            "samples": [round(float(v), 6) for v in samples if _finite(v)]}


def _groups(samples: Samples) -> list[list[float]]:
    """Normalise to a list of non-empty groups of finite floats."""
    items = list(samples or [])
    if items and all(isinstance(x, (list, tuple)) for x in items):
        groups = [[float(v) for v in g if _finite(v)] for g in items]
    else:
        groups = [[float(v) for v in items if _finite(v)]]
    return [g for g in groups if g]


def _normalise(groups: list[list[float]], ref: list[list[float]],
               q: float) -> list[list[float]] | None:
    """Each group divided by its own reference quantile; None when they do not pair up."""
    if len(groups) != len(ref) or any(len(r) < MIN_SAMPLES for r in ref):
        return None
    scales = [_quantile(r, q) for r in ref]
    if any(not (sc > 0) for sc in scales):
        return None
    return [[x / sc for x in g] for g, sc in zip(groups, scales)]


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _median_or_none(groups: list[list[float]]) -> float | None:
    flat = [x for g in groups for x in g]
    return median(flat) if flat else None


def _have_numpy() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def _quantile(sorted_or_not: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (numpy's default method)."""
    xs = sorted(sorted_or_not)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _stat_name(q: float) -> str:
    return "median" if q == 0.5 else f"p{round(q * 100):d}"


def _boot_python(base: list[list[float]], head: list[list[float]], *, n_boot: int,
                 seed: int, q: float) -> list[float]:
    rng = random.Random(seed)

    def resample_median(groups: list[list[float]]) -> float:
        # Each chosen round contributes as many draws as the largest round: equal weight.
        m = max(len(g) for g in groups)
        drawn: list[float] = []
        for _ in groups:
            g = groups[rng.randrange(len(groups))]
            drawn.extend(g[rng.randrange(len(g))] for _ in range(m))
        return _quantile(drawn, q)

    ratios = []
    for _ in range(n_boot):
        b = resample_median(base)
        h = resample_median(head)
        ratios.append(h / b if b > 0 else math.inf)
    return ratios


def _boot_numpy(base: list[list[float]], head: list[list[float]], *, n_boot: int,
                seed: int, q: float) -> list[float]:
    import numpy as np

    rng = np.random.default_rng(seed)

    def resample_medians(groups: list[list[float]]) -> "np.ndarray":
        values = np.concatenate([np.asarray(g, dtype=float) for g in groups])
        sizes = np.array([len(g) for g in groups])
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        m = int(sizes.max())
        chosen = rng.integers(0, len(groups), size=(n_boot, len(groups)))
        within = np.floor(rng.random((n_boot, len(groups), m)) * sizes[chosen][..., None])
        idx = offsets[chosen][..., None] + within.astype(int)
        return np.quantile(values[idx].reshape(n_boot, -1), q, axis=1)

    b = resample_medians(base)
    h = resample_medians(head)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(b > 0, h / b, np.inf)
    return r.tolist()


__all__ = ["compare_samples", "decided", "summarise_samples",
           "ALPHA", "FIRST_LOOK", "N_BOOT", "MIN_SAMPLES", "QUANTILE"]
