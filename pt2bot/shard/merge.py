"""`pt2bot merge`: the shards of a matrix joined into what one unsharded job writes.

Two kinds of input, never mixed: results files (`pt2bot run --shard I/N --out FILE`), joined
by `merge_result_files` into one results file; or the partial report directories of
`pt2bot review|audit --shard I/N` (pt2bot/shard/partial.py). For those, `join_shards` rebuilds
the inputs of the stages after the runs (results of both sides, findings, selection, diff)
and hands them to the same stages the unsharded job ends with: compare.build_report and
pipeline.finish_review for a review, audit.run.finish_audit for an audit (which stores the
night in the history, renders and publishes). The merge is not a second implementation of
the report, of the history or of publishing, so it cannot drift from them. It refuses
(exit 2) shards of different runs and duplicated shards, never depends on the order of its
inputs, turns the models of a shard that did not report into `status: "error"` results, and
copies every other file of the partial directories (logs, compile reports) into the merged one.

The shards of a pull request are written by jobs that ran its code: `read_partial` checks every
value, `--history` (the caller's word, never a shard's `mode`) decides whether the history is
written, and what a shard named reaches the log through `report.escape.log_line`.

Nothing here imports torch: the merge job needs no smoke run.
"""
from __future__ import annotations

import argparse
import collections
import filecmp
import os
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pt2bot.audit.run import DEFAULT_KEEP_RUNS, finish_audit, retention_from
from pt2bot.changes import ChangeSet
from pt2bot.compare import build_report
from pt2bot.config import Config
from pt2bot.configfile import parse_config
from pt2bot.errors import ConfigError, UserError
from pt2bot.findings import Finding
from pt2bot.fixes import merge_audit_proofs, merge_proofs
from pt2bot.jsonio import write_json
from pt2bot.pipeline import finish_review
from pt2bot.reach import mark_reached
from pt2bot.reportdata import Report
from pt2bot.report.escape import log_line, quote
from pt2bot.results import ModelRun, ResultsFile, RunError, load_results_file
from pt2bot.select import Selection
from pt2bot.shard import merge_result_files
from pt2bot.shard.partial import PARTIAL_FILE, Partial, read_partial
from pt2bot.verdict import NEUTRAL, conclude, judge, summary_title

# What the merge writes itself, so never copied from a partial directory.
RENDERED = frozenset({"report.json", "summary.md", "review.json", "check.json",
                      "results.sarif", "base.json", "head.json", PARTIAL_FILE,
                      "audit.md", "report.html"})
RENDERED_DIRS = frozenset({"charts"})          # the audit's charts are drawn again
# Shards that did not report are named one by one up to this many (every shard of the largest
# matrix the workflows start), in the log and in the title; beyond, they are counted.
MAX_LISTED = 64
# Directories below a shard's own are copied this deep (a shard writes compile/<model>/<side>/
# and smoke logs): a deeper tree is skipped with a note, not walked level by level.
MAX_COPY_DEPTH = 16

Log = Callable[[str], None]


# Keys every shard of one run shares; None (an empty shard ran no model) matches anything.
_SAME = ("mode", "config_digest", "selection_digest", "head", "base")
_SAME_IF_KNOWN = ("torch", "device", "backend")


def check_shards(parts: Sequence[Partial]) -> list[Partial]:
    """The shards in index order, after refusing duplicates and shards of another run."""
    if not parts:
        raise UserError("merge: no partial report directories given")
    counts = {p.count for p in parts}
    if len(counts) > 1:
        raise UserError("merge: the shards disagree on N: " + ", ".join(
            p.label for p in sorted(parts, key=lambda p: (p.count, p.index, p.directory))))
    seen: dict[int, Partial] = {}
    for p in sorted(parts, key=lambda p: (p.index, p.directory)):
        if p.index in seen:
            raise UserError(f"merge: shard {p.index}/{p.count} is given twice: "
                            f"{seen[p.index].directory} and {p.directory}")
        seen[p.index] = p
    ordered = [seen[i] for i in sorted(seen)]
    first = ordered[0]
    for p in ordered[1:]:
        for key in _SAME + _SAME_IF_KNOWN:
            a, b = first.data.get(key), p.data.get(key)
            if key in _SAME_IF_KNOWN and (a is None or b is None):
                continue
            if a != b:
                raise UserError(f"merge: {p.label}: {key} {quote(b)} differs from "
                                f"{first.label}'s {quote(a)}; shards must come from one run "
                                f"(config, selection, commit, torch, device)")
        if p.data["assignment"] != first.data["assignment"]:
            raise UserError(f"merge: {p.label} split the models differently from {first.label}"
                            " (a different --costs file?): every shard must read the same one")
    for key in _SAME_IF_KNOWN:     # an empty shard's None must not hide a mismatch of others
        values = sorted({str(p.data[key]) for p in ordered if p.data.get(key) is not None})
        if len(values) > 1:
            raise UserError(f"merge: the shards ran with different {key}: "
                            f"{', '.join(v[:80] for v in values[:5])}")
    return ordered


# --------------------------------------------------------------------------- merging

@dataclass(frozen=True)
class Merged:
    """The joined inputs of the stages after the runs."""

    mode: str
    count: int
    config: Config
    selection: Selection
    head: ResultsFile
    base: ResultsFile
    head_findings: list[Finding]
    base_findings: list[Finding]
    changeset: ChangeSet | None
    base_sha: str | None
    head_sha: str
    missing: dict[str, int]                # model -> the shard that did not report it
    missing_shards: tuple[int, ...]
    timings: dict[str, float]
    # each reporting shard's proof of fixes on its models (pt2bot/fixes.py)
    fixes: tuple[Mapping[str, Any], ...] = ()


def join_shards(parts: Sequence[Partial]) -> Merged:
    ordered = check_shards(parts)
    first = ordered[0]
    d = first.data
    count = first.count
    try:
        config = parse_config(d["config"]["text"], d["config"].get("path") or "pt2bot.yml")
    except ConfigError as e:
        raise UserError(f"merge: {first.label}: config.text: {e}") from None
    if config.digest != d["config_digest"]:
        raise UserError(f"merge: {first.label}: config_digest: expected the digest of "
                        f"config.text, {config.digest}, got {quote(d['config_digest'])}")
    selection = first.selection
    unknown = sorted((set(selection.selected) | set(selection.skipped))
                     - {m.name for m in config.models})
    if unknown:
        raise UserError(f"merge: {first.label}: selection: {quote(unknown[0])} is not a model "
                        f"of its config" + (f" (and {len(unknown) - 1} more)"
                                            if len(unknown) > 1 else ""))
    present = {p.index for p in ordered}
    missing_shards = tuple(i for i in range(1, count + 1) if i not in present)
    missing = {n: k for n, k in sorted(d["assignment"].items()) if k not in present}

    def side(which: str) -> ResultsFile:
        have = [(p, getattr(p, which)) for p in ordered]
        have = [(p, r) for p, r in have if r is not None and r.models]
        if not have:
            return ResultsFile.empty()
        return merge_result_files([r for _, r in have],
                                  labels=[f"{p.directory}/{which}.json" for p, _ in have])

    head, base = side("head"), side("base")
    if missing:
        head = _with_missing(head, missing, count, d)
    shard = "1/1" if not missing_shards else ",".join(f"{i}/{count}" for i in sorted(present))
    if head.models:
        head = head.with_(shard=shard)
    if base.models:
        base = base.with_(shard=shard)
    # Shard 1 marked which of *its* models reached each line: all models' runs decide.
    head_findings = mark_reached([f.with_(reached_by=None) for f in first.head_findings], head)
    base_findings = list(first.base_findings)
    changeset = first.changeset
    stages: dict[str, float] = {}
    total = 0.0
    for p in ordered:
        for k, v in (p.timings or {}).items():
            stages[k] = max(stages.get(k, 0.0), v)              # the matrix's wall time
        total += (p.timings or {}).get("total", 0.0)
    stages["shards_total"] = round(total, 3)                     # what the matrix cost
    if config.fixes.verify:
        for p in ordered:
            if p.fixes is None:
                raise UserError(f"merge: {p.label}: fixes: expected the shard's proof of "
                                "fixes (its config's `fixes.verify` is on), got null")
    return Merged(mode=d["mode"], count=count, config=config, selection=selection,
                  head=head, base=base, head_findings=head_findings,
                  base_findings=base_findings, changeset=changeset,
                  base_sha=d.get("base"), head_sha=d["head"], missing=missing,
                  missing_shards=missing_shards, timings=stages,
                  fixes=tuple(p.fixes for p in ordered if p.fixes is not None))


def missing_reason(shard: int, count: int) -> str:
    return f"shard {shard}/{count} did not report"


def _with_missing(head: ResultsFile, missing: Mapping[str, int], count: int,
                  d: Mapping[str, Any]) -> ResultsFile:
    """Head results plus an error RUN for each model of a shard that did not report."""
    runs = []
    for name, k in missing.items():
        why = missing_reason(k, count)
        runs.append(ModelRun.empty(name, "error", error=RunError(
            kind="crash", message=f"{why} (its job crashed, timed out or was cancelled): "
                                  "no result for this model")).with_(reason=why))
    if not head.models:
        head = ResultsFile(commit=d.get("head"), torch=d.get("torch"), device=d.get("device"),
                           backend=d.get("backend"), config_digest=d.get("config_digest"))
    return head.with_(models=tuple(sorted((*head.models, *runs), key=lambda r: str(r.name))))


def review_report(m: Merged) -> Report:
    """The report of the merged review: the same stage the unsharded review calls."""

    report = build_report(
        base_results=m.base, head_results=m.head, base_findings=m.base_findings,
        head_findings=m.head_findings, changeset=m.changeset, config=m.config,
        selection=m.selection, base_sha=m.base_sha, head_sha=m.head_sha)
    # the proof of fixes the unsharded review ends compare with, from the shards' verdicts
    report = merge_proofs(report, m.fixes, m.config, m.changeset, m.head)
    if not m.missing_shards:
        return report
    # A shard that did not report says nothing about the pull request: its models are
    # errors of the run (neutral), not failures on head.
    models = list(report.models)
    for i, entry in enumerate(models):
        k = m.missing.get(entry.name)
        if k is None:
            continue
        why = missing_reason(k, m.count)
        models[i] = entry.with_(status="error", reason=why, change="unknown", problems=({
            "kind": "shard_missing", "level": NEUTRAL,
            "message": f"{why}: no result for this model"},))
    reasons = judge(findings=report.findings, models=models,
                    head_results=m.head, base_results=m.base, config=m.config)
    if 1 in m.missing_shards:
        reasons.append({"code": "shard_missing", "level": NEUTRAL, "model": None,
                        "message": f"{missing_reason(1, m.count)}: the static checks did not "
                                   "run", "count": 1})
    conclusion = conclude(reasons)
    title = summary_title(conclusion, reasons, models, report.findings)
    gone = ", ".join(f"{i}/{m.count}" for i in m.missing_shards[:MAX_LISTED])
    if len(m.missing_shards) > MAX_LISTED:
        gone += f" and {len(m.missing_shards) - MAX_LISTED} more"
    return report.with_(models=tuple(models), reasons=tuple(reasons), conclusion=conclusion,
                        summary_title=f"{title}; shard {gone} did not report")


def copy_extras(parts: Sequence[Partial], out_dir: str, log: Log) -> int:
    """Every other file of the partial directories (logs, compile reports), shard 1 first.

    Regular files only (a symlink could point anywhere on the merge runner); a path two
    shards both wrote with different content keeps the lower shard's, with a warning. The
    walk keeps its own stack and stops at `MAX_COPY_DEPTH` (os.walk recursed once per level,
    and a shard's tree of 1,500 levels was a RecursionError); a file that cannot be copied is
    noted and skipped.
    """
    copied = 0
    for p in sorted(parts, key=lambda p: p.index):
        root = os.path.abspath(p.directory)
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                with os.scandir(os.path.join(root, rel_dir)) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:
                log(f"merge: {os.path.join(p.directory, rel_dir)}: cannot list it "
                    f"({e.strerror or e}), not copied")
                continue
            subdirs = []
            for entry in entries:
                rel = os.path.join(rel_dir, entry.name)
                src = os.path.join(root, rel)
                if entry.is_dir(follow_symlinks=False):
                    if not rel_dir and entry.name in RENDERED_DIRS:
                        continue
                    if rel.count(os.sep) + 1 > MAX_COPY_DEPTH:
                        log(f"merge: {src}: nested deeper than {MAX_COPY_DEPTH} directories, "
                            f"not copied")
                        continue
                    subdirs.append(rel)
                    continue
                if not rel_dir and (entry.name in RENDERED or entry.name.startswith("baseline-")):
                    continue
                if not entry.is_file(follow_symlinks=False):
                    log(f"merge: {src}: not a regular file, not copied")
                    continue
                dst = os.path.join(out_dir, rel)
                try:
                    if os.path.lexists(dst):
                        if not filecmp.cmp(src, dst, shallow=False):
                            log(f"merge: {rel} differs between shards; kept the lower shard's")
                        continue
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy2(src, dst)
                except OSError as e:
                    log(f"merge: {src}: not copied ({e.strerror or e})")
                    continue
                copied += 1
            stack.extend(reversed(subdirs))      # depth first, in name order, like os.walk
    return copied


@dataclass(frozen=True)
class MergeOptions:
    dirs: tuple[str, ...]
    out_dir: str
    history: str | None = None
    publish: bool = False
    keep_runs: int | None = DEFAULT_KEEP_RUNS
    keep_days: int | None = None


def merge_report_dirs(opts: MergeOptions, log: Log = lambda s: None) -> dict[str, Any]:
    """Join partial report directories into the directory an unsharded run writes."""
    t0 = time.perf_counter()
    out = os.path.abspath(opts.out_dir)
    for d in opts.dirs:   # copying a directory into itself would never end
        inp = os.path.abspath(d)
        if os.path.commonpath([inp, out]) in (inp, out):
            raise UserError(f"merge: --out {opts.out_dir} and the input {d} contain one another")
    parts = [read_partial(d) for d in opts.dirs]
    merged = join_shards(parts)     # refuses review shards mixed with audit shards
    # --history says what the caller merges: an audit's shards (stored there) or, without
    # it, a review's. The shards' own `mode` never decides alone: a pull request's job
    # writes them, and `mode: audit` must not make its review's merge write the history.
    if merged.mode == "audit" and not opts.history:
        raise UserError("merge: these are shards of an audit: give --history FILE, where the "
                        "merged night is stored (once)")
    if merged.mode == "review" and opts.history:
        raise UserError("merge: these are shards of a review, which stores nothing: --history "
                        "is for an audit's shards (leave it out here)")
    lost = collections.Counter(merged.missing.values())
    for k in merged.missing_shards[:MAX_LISTED]:
        log(f"shard {k}/{merged.count} did not report: {lost[k]} model(s) reported as errors")
    if len(merged.missing_shards) > MAX_LISTED:
        log(f"... and {len(merged.missing_shards) - MAX_LISTED} more shard(s) did not report: "
            f"{sum(lost[k] for k in merged.missing_shards[MAX_LISTED:])} model(s) reported as "
            f"errors")
    os.makedirs(out, exist_ok=True)
    # The shards' other files first: the stages below end by publishing the directory, and
    # the files they render are never copied (RENDERED), so the order changes no file.
    copied = copy_extras(parts, out, log)
    if merged.mode == "review":
        report = review_report(merged)
        timings = dict(merged.timings)
        timings["merge"] = round(time.perf_counter() - t0, 3)
        typed = report.with_(timings=timings)
        finish_review(typed, out, base_results=merged.base, head_results=merged.head,
                      changeset=merged.changeset, publish=opts.publish)
        report = typed.to_dict()
    else:
        # The one write of this night to the history.
        report = finish_audit(merged.config, merged.head.with_(
            commit=merged.head.commit or merged.head_sha), merged.head_findings,
            history=str(opts.history), out_dir=out, keep_runs=opts.keep_runs,
            keep_days=opts.keep_days, publish=opts.publish, log=log,
            fixes=merge_audit_proofs(merged.head, merged.head_findings, merged.fixes,
                                     merged.config))
    log(f"merged {len(parts)} of {merged.count} shard(s) into {opts.out_dir} "
        f"({len(merged.head.models)} model(s), {copied} file(s) copied) in "
        f"{time.perf_counter() - t0:.2f} s")
    return report


def join_results_files(paths: Sequence[str], out: str) -> ResultsFile:
    """`pt2bot merge RESULTS.json... --out FILE`: the shards of `pt2bot run --shard` as one."""
    merged = merge_result_files([load_results_file(p, what="merge") for p in paths],
                                labels=list(paths))
    write_json(out, merged.to_json())
    return merged


# --------------------------------------------------------------------------- CLI

def cli_merge(args: argparse.Namespace) -> int:
    """`pt2bot merge`: results files or partial report directories, not both."""
    dirs = [p for p in args.inputs if os.path.isdir(p)]
    if not dirs:
        if args.history or args.publish:
            raise UserError("merge: --history and --publish are for report directories")
        merged = join_results_files(args.inputs, args.out)
        print(f"pt2bot merge: {len(merged.models)} model(s) from {len(args.inputs)} file(s); "
              f"results: {args.out}", file=sys.stderr)
        return 0
    if len(dirs) != len(args.inputs):
        files = [p for p in args.inputs if p not in dirs]
        raise UserError(f"merge: give report directories or results files, not both "
                        f"({files[0]} is a file, {dirs[0]} a directory)")

    keep_runs, keep_days = retention_from(args, os.environ)

    def log(msg: str) -> None:
        # File and model names in these lines come from the shards: one escape for all.
        print(f"pt2bot: {log_line(msg)}", file=sys.stderr, flush=True)

    report = merge_report_dirs(MergeOptions(
        dirs=tuple(dirs), out_dir=args.out, history=args.history, publish=args.publish,
        keep_runs=keep_runs, keep_days=keep_days), log)
    print(log_line(f"{report['conclusion'].upper()}: {report.get('summary_title', '')}"
                   .rstrip(": ")))
    return 1 if report["conclusion"] == "failure" else 0


__all__ = ["MergeOptions", "Merged", "check_shards", "cli_merge", "copy_extras",
           "join_results_files", "join_shards", "merge_report_dirs", "review_report"]
