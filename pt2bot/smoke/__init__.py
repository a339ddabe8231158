"""The dynamic half of pt2bot: run configured models in isolated worker processes.

`run_models` (pt2bot.smoke.runner) is the API: it returns the typed results file
(pt2bot.results.ResultsFile); `cli_run` backs `pt2bot run`. The package, by job: runner
(orchestration), supervise (one worker's process group, timeout, exit classification),
device, env (the worker's environment), location (where in the user's code), and the
worker with its phases (worker, breaks, matrix, export, advice, timing, coverage, inputs, entry,
graph_breaks). Sharding and the merge of results files are pt2bot/shard's; `parse_shard`,
`shard_models` and `merge_results` are re-exported here, where they used to live. Importing this package never imports torch: only the worker
(`python -m pt2bot.smoke.worker SPEC OUT`) does.
"""
from __future__ import annotations

from pt2bot.shard import merge_results, parse_shard, shard_models
from pt2bot.smoke.env import scrub_env
from pt2bot.smoke.runner import cli_run, default_phases, pick_models, run_models

__all__ = ["cli_run", "default_phases", "merge_results", "parse_shard", "pick_models",
           "run_models", "scrub_env",
           "shard_models"]
