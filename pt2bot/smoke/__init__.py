"""The dynamic half of pt2bot: run configured models in isolated worker processes.

`run_models` (pt2bot.smoke.runner) is the API; `cli_run` / `cli_merge` back `pt2bot run` and
`pt2bot merge`. The package, by job: runner (orchestration), supervise (one worker's
process group, timeout, exit classification), device, env (the worker's environment),
shard (sharding and merging results files), location (where in the user's code), and the
worker with its phases (worker, breaks, matrix, export, timing, coverage, inputs, entry,
graph_breaks). Importing this package never imports torch: only the worker
(`python -m pt2bot.smoke.worker SPEC OUT`) does.
"""
from __future__ import annotations

from pt2bot.smoke.env import scrub_env
from pt2bot.smoke.runner import cli_merge, cli_run, run_models
from pt2bot.smoke.shard import merge_results, parse_shard, pick_models, shard_models

__all__ = ["cli_merge", "cli_run", "merge_results", "parse_shard", "pick_models",
           "run_models", "scrub_env", "shard_models"]
