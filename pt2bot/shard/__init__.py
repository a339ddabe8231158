"""Sharding: one run spread over the jobs of a CI matrix, and the shards joined back.

The package, by job:
- here, the pure parts: the `I/N` spec (`parse_shard`), the split (`shard_models` for
  `pt2bot run --shard`, `split_names` for a review's or an audit's selection, balanced by
  per-model wall times when a results file gives them: `load_costs`), and the merge of
  results files (`merge_result_files`). `merge_result_files` refuses shards of different
  runs (config, commit, torch, device) and duplicated models, so a merged file is exactly
  what one unsharded run writes. The smoke runner imports these; nothing here imports
  torch, the smoke run or the later stages.
- `partial`: a shard's partial report directory (`pt2bot review|audit --shard I/N`), written
  and read back;
- `merge`: `pt2bot merge`, of results files or of partial report directories (the latter
  handed to the stages after the runs that the unsharded review and audit use).
"""
from __future__ import annotations

import re
import statistics
from typing import Any, Mapping, Sequence

from pt2bot.config import ModelConfig
from pt2bot.errors import UserError
from pt2bot.report.escape import quote
from pt2bot.results import RESULTS_SCHEMA, ModelRun, ResultsFile, load_results_file


# How many shards a matrix may have beyond one per model. The workflows start at most 64 jobs
# (PT2BOT_SHARDS), and a matrix of fixed size leaves shards empty when a pull request selects
# fewer models than that; more shards than both is never a real matrix. The bound matters
# because a shard directory is written by the pull request's job: the merge lists the shards
# that did not report, so an N of 10**8 there was a merge that never ended.
MAX_SHARDS = 64
# At most 9 digits each: int() of a longer string costs time, and of over 4,300 digits raises.
_SPEC = re.compile(r"\s*(\d{1,9})\s*/\s*(\d{1,9})\s*")


def max_shards(models: int) -> int:
    """The largest N for a split of `models` models: one per model, or `MAX_SHARDS`."""
    return max(models, MAX_SHARDS)


def parse_shard(shard: str | tuple[int, int] | None, *, models: int | None = None,
                what: str = "--shard") -> tuple[int, int]:
    """`"I/N"` (1-based) → (I, N); None → (1, 1).

    With `models` (how many models the shards split), N is at most `max_shards(models)`.
    Errors start with `what` (the option, or the file and key a merge read it from), quote
    the value capped and safe to print, and are usage errors (exit 2).
    """
    if shard is None:
        return (1, 1)
    if isinstance(shard, tuple):
        i, n = shard
    else:
        m = _SPEC.fullmatch(shard) if isinstance(shard, str) and len(shard) <= 64 else None
        if not m:
            raise UserError(f"{what}: expected I/N such as 1/4, got {quote(shard)}")
        i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise UserError(f"{what}: expected 1 <= I <= N, got {i}/{n}")
    if models is not None and n > max_shards(models):
        raise UserError(f"{what}: N = {n} is more shards than {models} selected model(s) can "
                        f"use: expected N <= {max_shards(models)} (one model per shard, or up to "
                        f"{MAX_SHARDS} shards, some of them empty)")
    return (i, n)


def shard_models(models: Sequence[ModelConfig], index: int, count: int) -> list[ModelConfig]:
    """Shard `index` of `count` (1-based): round-robin over the models sorted by name.

    Deterministic (depends only on the names) and balanced (shard sizes differ by at most
    one). Every shard of a CI matrix sees the same config, so the shards partition it.
    """
    ordered = sorted(models, key=lambda m: m.name)
    return [m for k, m in enumerate(ordered) if k % count == index - 1]


def split_names(names: Sequence[str], count: int,
                costs: Mapping[str, float] | None = None) -> list[list[str]]:
    """`names` split into `count` shards (lists in name order; some may be empty).

    Without costs: round-robin over the sorted names, as `shard_models` does. With costs
    (seconds per model, from an earlier run): longest first onto the least loaded shard
    (ties: the lower shard), which keeps the slowest shard close to total/count. A model
    without a recorded cost counts as the median of the known ones, so a new model is
    neither free nor feared. Depends only on the names and the costs: every job of a
    matrix that reads the same costs file computes the same split.
    """
    if count < 1:
        raise UserError(f"--shard: expected N >= 1, got {count}")
    ordered = sorted(set(names))
    known = {n: float(c) for n, c in (costs or {}).items() if n in ordered and c >= 0}
    if not known:
        return [[n for k, n in enumerate(ordered) if k % count == i] for i in range(count)]
    default = statistics.median(known.values())
    loads = [0.0] * count
    shards: list[list[str]] = [[] for _ in range(count)]
    for name in sorted(ordered, key=lambda n: (-known.get(n, default), n)):
        i = min(range(count), key=lambda k: (loads[k], k))
        shards[i].append(name)
        loads[i] += known.get(name, default)
    return [sorted(s) for s in shards]


def load_costs(path: str) -> dict[str, float]:
    """Per-model wall time (`duration_s`) from a results file (`pt2bot run`, the audit's
    `baseline-<sha>.json`, a review's `head.json`). Errors name the file (exit 2)."""
    costs: dict[str, float] = {}
    for run in load_results_file(path, what="--costs").models:
        d = run.duration_s
        if isinstance(run.name, str) and isinstance(d, (int, float)) and d >= 0:
            costs[run.name] = float(d)
    return costs


def merge_results(parts: Sequence[dict[str, Any] | ResultsFile], *,
                  labels: Sequence[str] | None = None) -> dict[str, Any]:
    """Join shard results (JSON in, JSON out): see `merge_result_files`."""
    return merge_result_files(parts, labels=labels).to_json()


def merge_result_files(parts: Sequence[dict[str, Any] | ResultsFile], *,
                       labels: Sequence[str] | None = None) -> ResultsFile:
    """Join shard results: same schema, config digest, torch, commit and device required.

    `parts` are results files (`load_results_file`) or their JSON; `labels` name them in
    errors (their paths, for `pt2bot merge`).
    """
    if not parts:
        raise UserError("merge: no results to merge")
    labels = list(labels) if labels else [f"input {k + 1}" for k in range(len(parts))]
    files: list[ResultsFile] = []
    for label, part in zip(labels, parts):
        if not isinstance(part, ResultsFile):
            if not isinstance(part, dict) or part.get("schema") != RESULTS_SCHEMA \
                    or not isinstance(part.get("models"), list):
                raise UserError(f"merge: {label}: not a {RESULTS_SCHEMA} results file")
            part = ResultsFile.from_json(part)
        # A model entry that is not an object is kept aside in `extra["models"]` when read
        # (results.py): a merge would drop it silently, so it is refused like a nameless one.
        if "models" in part.extra or not all(isinstance(r.name, str) for r in part.models):
            raise UserError(f"merge: {label}: a model entry has no name")
        files.append(part)
    first = files[0]
    for key in ("config_digest", "torch", "commit", "device"):
        for label, part in zip(labels[1:], files[1:]):
            if getattr(part, key) != getattr(first, key):
                raise UserError(f"merge: {label}: {key} {quote(getattr(part, key))} differs "
                                f"from {labels[0]}'s {quote(getattr(first, key))}; shards must "
                                f"come from one config, commit and torch")
    seen: dict[str, str] = {}
    models: list[ModelRun] = []
    for label, part in zip(labels, files):
        for run in part.models:
            if run.name in seen:
                raise UserError(f"merge: model {quote(run.name)} is in both {seen[run.name]} "
                                f"and {label}")
            seen[run.name] = label
            models.append(run)
    names = sorted({p.device_name for p in files if p.device_name})
    return first.with_(
        models=tuple(sorted(models, key=lambda r: str(r.name))),
        created=max(str(p.created or "") for p in files) or None,
        shard=_merged_shard([str(p.shard or "1/1") for p in files]),
        device_name=", ".join(names) if names else None)


def _merged_shard(shards: list[str]) -> str:
    """`1/1` when the inputs are exactly shards 1..N of N, else the list of what was joined.

    The count is compared first: N comes from the files, and listing 1..N for an N of 10**12
    would never end."""
    try:
        pairs = sorted(parse_shard(s) for s in shards)
    except UserError:
        return ",".join(shards)
    n = pairs[0][1]
    if len(pairs) == n and all(c == n for _, c in pairs) \
            and [i for i, _ in pairs] == list(range(1, n + 1)):
        return "1/1"
    return ",".join(f"{i}/{c}" for i, c in pairs)


__all__ = ["MAX_SHARDS", "load_costs", "max_shards", "merge_result_files", "merge_results",
           "parse_shard", "shard_models", "split_names"]
