"""Sharding a run over CI jobs, and merging the shards' results files back into one.

Every shard of a matrix sees the same config, so `shard_models` partitions it by name
alone; `split_names` does the same for a review's or an audit's selection, balanced by
per-model wall times when a results file gives them (`load_costs`: the nightly audit's
baseline serves). `merge_results` refuses shards of different runs (config, commit, torch,
device) and duplicated models, so a merged file is exactly what one unsharded run writes.
The merge of whole report directories (`pt2bot merge DIR...`) is pt2bot/merge.py's; it
uses the same spec parser and this results merge.
"""
from __future__ import annotations

import re
import statistics
from typing import Any, Mapping, Sequence

from pt2bot.config import Config, ModelConfig
from pt2bot.errors import UserError
from pt2bot.jsonio import read_json
from pt2bot.results import RESULTS_SCHEMA, ModelRun, ResultsFile
from pt2bot.smoke.supervise import OUT_CAP_BYTES


def pick_models(config: Config, names: Sequence[str] | None = None) -> list[ModelConfig]:
    """The configured models named in `names` (all when None), in config order."""
    if names is None:
        return list(config.models)
    known = [m.name for m in config.models]
    unknown = [n for n in names if n not in known]
    if unknown:
        listing = ", ".join(known) if known else "(none configured)"
        raise UserError(f"unknown model {', '.join(map(repr, unknown))}; known models: {listing}")
    wanted = set(names)
    return [m for m in config.models if m.name in wanted]


def parse_shard(shard: str | tuple[int, int] | None) -> tuple[int, int]:
    """`"I/N"` (1-based) → (I, N); None → (1, 1)."""
    if shard is None:
        return (1, 1)
    if isinstance(shard, tuple):
        i, n = shard
    else:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(shard))
        if not m:
            raise UserError(f"--shard: expected I/N such as 1/4, got {shard!r}")
        i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise UserError(f"--shard: expected 1 <= I <= N, got {i}/{n}")
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
    data = load_results(path, what="--costs")
    if not isinstance(data, dict) or data.get("schema") != RESULTS_SCHEMA \
            or not isinstance(data.get("models"), list):
        raise UserError(f"--costs: {path}: not a {RESULTS_SCHEMA} results file")
    costs: dict[str, float] = {}
    for run in ResultsFile.from_json(data).models:
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
    """Join shard results: same schema, config digest, torch, commit and device required."""
    if not parts:
        raise UserError("merge: no results to merge")
    labels = list(labels) if labels else [f"input {k + 1}" for k in range(len(parts))]
    files: list[ResultsFile] = []
    for label, part in zip(labels, parts):
        if isinstance(part, ResultsFile):
            files.append(part)
            continue
        if not isinstance(part, dict) or part.get("schema") != RESULTS_SCHEMA \
                or not isinstance(part.get("models"), list):
            raise UserError(f"merge: {label}: not a {RESULTS_SCHEMA} results file")
        if not all(isinstance(r, dict) and isinstance(r.get("name"), str)
                   for r in part["models"]):
            raise UserError(f"merge: {label}: a model entry has no name")
        files.append(ResultsFile.from_json(part))
    first = files[0]
    for key in ("config_digest", "torch", "commit", "device"):
        for label, part in zip(labels[1:], files[1:]):
            if getattr(part, key) != getattr(first, key):
                raise UserError(f"merge: {label}: {key} {getattr(part, key)!r} differs from "
                                f"{labels[0]}'s {getattr(first, key)!r}; shards must come from "
                                f"one config, commit and torch")
    seen: dict[str, str] = {}
    models: list[ModelRun] = []
    for label, part in zip(labels, files):
        for run in part.models:
            if not isinstance(run.name, str):
                raise UserError(f"merge: {label}: a model entry has no name")
            if run.name in seen:
                raise UserError(f"merge: model {run.name!r} is in both {seen[run.name]} and "
                                f"{label}")
            seen[run.name] = label
            models.append(run)
    names = sorted({p.device_name for p in files if p.device_name})
    return first.with_(
        models=tuple(sorted(models, key=lambda r: str(r.name))),
        created=max(str(p.created or "") for p in files) or None,
        shard=_merged_shard([str(p.shard or "1/1") for p in files]),
        device_name=", ".join(names) if names else None)


def _merged_shard(shards: list[str]) -> str:
    """`1/1` when the inputs are exactly shards 1..N of N, else the list of what was joined."""
    try:
        pairs = sorted(parse_shard(s) for s in shards)
    except UserError:
        return ",".join(shards)
    n = pairs[0][1]
    if all(c == n for _, c in pairs) and [i for i, _ in pairs] == list(range(1, n + 1)):
        return "1/1"
    return ",".join(f"{i}/{c}" for i, c in pairs)


def load_results(path: str, *, what: str = "merge") -> dict[str, Any]:
    """A results file's JSON for `pt2bot merge` (size-capped; errors name the file)."""
    return read_json(path, what=what, max_bytes=4 * OUT_CAP_BYTES)


__all__ = ["load_costs", "load_results", "merge_result_files", "merge_results", "parse_shard",
           "pick_models", "shard_models", "split_names"]
