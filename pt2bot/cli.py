"""Argument parsing only: each sub-command calls one function elsewhere.

The command names and options are a contract (documented in the README's Commands section).
Handlers are imported lazily so that `pt2bot check` never imports torch or PyGithub.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import threading
from typing import Any, Callable, Iterator, Sequence

from pt2bot import __version__
from pt2bot.errors import UserError
from pt2bot.findings import FILTERS  # the one definition (no torch, no YAML: cheap to import)

FORMATS = ("text", "github", "json", "sarif")


def _handler(spec: str) -> Callable[[argparse.Namespace], int]:
    module, _, func = spec.partition(":")
    return getattr(importlib.import_module(module), func)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pt2bot",
        description="Review PyTorch code for torch.compile / torch.export friendliness.")
    p.add_argument("--version", action="version", version=f"pt2bot {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("check", help="static rules only (no torch import)")
    c.add_argument("paths", nargs="*", metavar="PATH")
    c.add_argument("--base", help="report only findings in the diff against this ref")
    c.add_argument("--filter", choices=FILTERS, help="which findings to report relative to the diff")
    c.add_argument("--format", choices=FORMATS, default="text")
    c.add_argument("--config", help="pt2bot.yml (default: ./pt2bot.yml if present)")
    c.add_argument("--select", help="comma-separated codes or prefixes to enable (e.g. PTC1,PTC301)")
    c.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    c.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (0: auto)")
    c.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the per-file cache (in the user cache directory, or $PT2BOT_CACHE_DIR)")
    c.add_argument("--results", metavar="FILE",
                   help="a smoke run's results (pt2bot run --out FILE): say which configured "
                        "models executed each finding's line")
    fix = c.add_mutually_exclusive_group()
    fix.add_argument("--diff", action="store_true",
                     help="print the fixes that are safe by construction (eager behaviour unchanged, e.g. a print "
                          "guarded with torch.compiler.is_compiling()) as a unified diff, without running "
                          "them; exit 1 if there are any")
    fix.add_argument("--fix", action="store_true",
                     help="apply those safe fixes to the checked files (not run either), then report "
                          "what is left")
    c.set_defaults(handler="pt2bot.static:cli_check")

    r = sub.add_parser("rules", help="print the documentation of a rule (or list all rules)")
    r.add_argument("code", nargs="?")
    r.add_argument("--format", choices=("text", "markdown-table", "json"), default="text")
    r.set_defaults(handler="pt2bot.rules:cli_rules")

    s = sub.add_parser("run", help="smoke run of the working tree's models; writes results JSON")
    s.add_argument("--config", help="pt2bot.yml (default: ./pt2bot.yml)")
    s.add_argument("--model", action="append", default=[], metavar="NAME")
    s.add_argument("--shard", help="I/N: run a deterministic share of the models")
    s.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None)
    s.add_argument("--out", required=True, help="results JSON to write")
    s.set_defaults(handler="pt2bot.smoke:cli_run")

    m = sub.add_parser("merge", help="join shards: results JSON files, or partial report "
                                     "directories of `review`/`audit --shard`")
    m.add_argument("inputs", nargs="+", metavar="RESULTS.json|DIR")
    m.add_argument("--out", required=True, help="results JSON (from files) or report DIR")
    m.add_argument("--history", metavar="FILE",
                   help="audit shards: store the merged night here and render the audit")
    m.add_argument("--publish", action="store_true",
                   help="post the merged report (review) or the tracking issue (audit)")
    m.add_argument("--keep", metavar="SPEC", help="audit shards: history retention (as audit)")
    m.set_defaults(handler="pt2bot.shard.merge:cli_merge")

    v = sub.add_parser("review", help="the PR job: static + smoke on base and head, compare, render")
    v.add_argument("--base", required=True)
    v.add_argument("--head", default=None, help="default: the working tree (HEAD)")
    v.add_argument("--config", help="pt2bot.yml (default: ./pt2bot.yml)")
    v.add_argument("--out", required=True, metavar="DIR")
    v.add_argument("--publish", action="store_true")
    v.add_argument("--all", action="store_true", dest="all_models", help="run every model")
    v.add_argument("--baseline", help="stored base results (from `pt2bot audit`)")
    v.add_argument("--no-smoke", action="store_true", help="static rules only")
    v.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None)
    v.add_argument("--shard", metavar="I/N",
                   help="one job of a matrix: this shard's models, a partial report to merge")
    v.add_argument("--costs", metavar="FILE",
                   help="results file whose per-model duration_s balances the shards")
    v.set_defaults(handler="pt2bot.pipeline:cli_review")

    b = sub.add_parser("publish", help="post a finished report directory to GitHub")
    b.add_argument("dir", metavar="DIR")
    b.add_argument("--repo", help="OWNER/NAME (default: $GITHUB_REPOSITORY)")
    b.add_argument("--pr", type=int, help="pull request number (default: from the event)")
    b.set_defaults(handler="pt2bot.publish.github:cli_publish")

    a = sub.add_parser("audit", help="nightly: full run, store in history, compare, render")
    a.add_argument("--config", help="pt2bot.yml (default: ./pt2bot.yml)")
    a.add_argument("--history", metavar="FILE",
                   help="the history database (required unless --shard)")
    a.add_argument("--out", default="pt2bot-audit", metavar="DIR")
    a.add_argument("--publish", action="store_true")
    a.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None)
    a.add_argument("--keep", metavar="SPEC",
                   help="history retention: runs and/or days, e.g. 400, 90d, 400,90d "
                        "(default: $PT2BOT_HISTORY_KEEP, else 400 runs)")
    a.add_argument("--shard", metavar="I/N",
                   help="one job of a matrix: a partial report, no history (merge stores it)")
    a.add_argument("--costs", metavar="FILE",
                   help="results file whose per-model duration_s balances the shards")
    a.set_defaults(handler="pt2bot.audit.run:cli_audit")

    i = sub.add_parser("init", help="write a starting pt2bot.yml (models found, inputs inferred)")
    i.add_argument("root", nargs="?", default=".", help="the repository (default: .)")
    i.add_argument("--check", action="store_true",
                   help="run each proposed model once and keep the entries that run")
    i.add_argument("--force", action="store_true", help="overwrite an existing pt2bot.yml")
    i.set_defaults(handler="pt2bot.init:cli_init")
    return p


@contextlib.contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """Turn SIGTERM (a cancelled CI job) into SystemExit while a sub-command runs.

    The smoke workers lead their own sessions, so the signal never reaches them; as an
    exception it unwinds the command instead, and the smoke runner kills the workers it
    started (and the review removes its base worktree) on the way out. Every sub-command
    runs under it: `run`, `review`, `audit` and `init --check` all start workers.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with sigterm_as_exit():
            return int(_handler(args.handler)(args) or 0)
    except UserError as e:
        # The message may quote what a pull request wrote (a shard's or an artifact's values,
        # file names): printed through the log's one escape, so no workflow command starts.
        from pt2bot.report.escape import log_block
        print(f"pt2bot: error: {log_block(e)}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
