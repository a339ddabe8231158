"""The PR job, end to end: the one module that knows the whole order of the stages.

changes → select → static (base, head) → smoke (base, head; the latency gate; alternating
latency rounds, decided sequentially) → compare → render → (publish). Side effects live at
the ends: git and the smoke workers at the start, the report directory and GitHub at the end
(`finish_review`, which `pt2bot merge` of a sharded review's partial directories ends with
too).
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Callable

from pt2bot import changes, git, latency_gate, select
from pt2bot.compare import build_report, keep, latency_decided, pool_rounds
from pt2bot.config import Config
from pt2bot.configfile import load_config
from pt2bot.errors import UserError
from pt2bot.findings import Finding
from pt2bot.fixes import ProofSetting, prove_fixes, prove_shard
from pt2bot.jsonio import write_json
from pt2bot.reach import EVIDENCE_FOR, EXPORT, mark_reached, rule_claims
from pt2bot.report import render_all
from pt2bot.report.summary import terminal_reasons
from pt2bot.reportdata import Report
from pt2bot.results import ModelRun, ResultsFile, load_results_file
from pt2bot.shard.partial import (ShardPlan, mark_partial, plan_shard, shard_selection,
                                  write_partial_inputs)
from pt2bot.smoke import default_phases, run_models
from pt2bot.smoke.compile_report import copy_compile_reports
from pt2bot.static import check_paths, open_cache, resolve_torch


@dataclass(frozen=True)
class ReviewOptions:
    base: str
    out_dir: str
    head: str | None = None           # None: the working tree
    config_path: str | None = None
    all_models: bool = False
    baseline: str | None = None       # stored base results (from `pt2bot audit`)
    smoke: bool = True
    device: str | None = None
    publish: bool = False
    repo_dir: str = field(default_factory=os.getcwd)
    shard: str | None = None          # "I/N": one job of a matrix (a partial report)
    costs: str | None = None          # results file with per-model duration_s (--costs)


@dataclass
class Timings:
    """Wall time per stage, reported in report.json so the review's cost is visible."""

    stages: dict[str, float] = field(default_factory=dict)

    def run(self, name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            self.stages[name] = self.stages.get(name, 0.0) + round(time.perf_counter() - t0, 3)


def review(opts: ReviewOptions, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Run the PR job and write the report directory; returns report.json's data."""
    timings = Timings()
    t_start = time.perf_counter()
    root = git.repo_root(opts.repo_dir)
    config = load_config(opts.config_path, required=True, root=root)
    base_sha = changes.resolve_base(root, opts.base, opts.head)
    head_sha = git.head_sha(root) if opts.head is None else git.rev_parse(root, opts.head)
    if head_sha is None:
        raise UserError(f"--head {opts.head!r} names no commit")
    changeset = timings.run("diff", lambda: changes.diff_changes(root, base_sha, opts.head,
                                                                 own_output=[opts.out_dir]))
    # head is the working tree without --head; it is named only where it differs from the
    # commit (a clean checkout read "+ working tree" as if edits were pending)
    pending = len(changes.diff_changes(root, head_sha, None, own_output=[opts.out_dir]).files) \
        if opts.head is None else 0
    log(f"base {base_sha[:12]}, head {head_sha[:12]}"
        f"{f' + working tree ({pending} uncommitted file(s))' if pending else ''}: "
        f"{len(changeset.files)} changed file(s)")

    baseline = _load_baseline(opts.baseline, base_sha, log) if opts.baseline else None
    stored_files = ({m.name: set(m.files) for m in baseline.models if m.name and m.files}
                    if baseline else None)
    if opts.all_models:
        selection = select.select_all(config)
    else:
        selection = select.select_models(config, changeset, root, stored_files=stored_files)
    if not opts.smoke:
        selection = select.Selection(
            selected=(), reasons={},
            skipped={m.name: "smoke run disabled (--no-smoke)" for m in config.models})
    for name, why in selection.skipped.items():
        log(f"skip {name}: {why}")
    plan = _plan_shard(opts, selection, log)
    # What this job runs: the whole selection, or its shard's share of it.
    run_selection = selection if plan is None else shard_selection(selection, plan)

    static_paths = list(config.static.paths) or None
    head_findings: list[Finding] = []
    base_findings: list[Finding] = []
    with ExitStack() as stack:
        head_root = root if opts.head is None else stack.enter_context(git.worktree(root, head_sha))
        base_root = stack.enter_context(git.worktree(root, base_sha))
        if selection.selected:
            # which changed statements a model could run, for the report's `not_run` (every
            # shard computes it: the merge keeps the first shard's diff)
            changeset = changes.with_code_spans(changeset, head_root)

        @functools.cache
        def static_env() -> tuple[str, Any]:
            # claims that hold on the torch the smoke run uses (static.torch, else installed);
            # the cache is shared: unchanged files are analysed once
            return resolve_torch(config.static)[0], open_cache(root, config.static)

        def head_static(tree: str) -> list[Finding]:
            torch, cache = static_env()
            return changes.annotate_findings(check_paths(
                tree, static_paths, config.static, torch=torch, cache=cache), changeset)

        if plan is None or plan.runs_static:   # once per review, not once per shard
            head_findings = timings.run("static", lambda: head_static(head_root))
            torch, cache = static_env()
            base_findings = timings.run("static", lambda: check_paths(
                base_root, static_paths, config.static, torch=torch, cache=cache))
            log(f"static: {len(head_findings)} finding(s) on head, {len(base_findings)} on base")

        # Nothing selected is a clean result, not a broken run.
        head_results, base_results = ResultsFile.empty(), ResultsFile.empty()
        if run_selection.selected:
            # where head has findings an export failure's location could confirm (reach.py);
            # None: this job has no static findings (a shard but the first), so all of them
            claimed = (None if plan is not None and not plan.runs_static
                       else export_claim_paths(head_findings))
            gate = (latency_gate.code_changes(changeset, base_root, head_root)
                    if config.run.latency else None)
            head_results, base_results = timings.run("smoke", lambda: _smoke_both(
                config, opts, run_selection.selected, head_root, base_root, baseline, log,
                claimed, gate, watch=changes.changed_code(changeset)))
        if plan is not None:
            head_results, base_results = (_mark_shard(r, plan)
                                          for r in (head_results, base_results))

    head_findings = mark_reached(head_findings, head_results)   # pt2bot/reach.py
    report = build_report(
        base_results=base_results, head_results=head_results,
        base_findings=base_findings, head_findings=head_findings,
        changeset=changeset, config=config, selection=run_selection,
        base_sha=base_sha, head_sha=head_sha)
    # the proof of suggested fixes: here, or each shard's for its models (joined by the merge)
    proof = ProofSetting(config=config, changeset=changeset, root=root,
                         head_sha=None if opts.head is None else head_sha,
                         head_results=head_results, device=head_results.device or opts.device,
                         log=log)
    shard_fixes = None
    if plan is None:
        report = timings.run("fixes", lambda: prove_fixes(report, proof))
    else:
        # the findings the unsharded proof reads (the report's, after the diff filter):
        # shard 1's report has them; another shard runs head's static checks when it has
        # something to prove
        shard_fixes = timings.run("fixes", lambda: prove_shard(
            report, proof, list(report.findings) if plan.runs_static else None,
            lambda tree: [f for f in head_static(tree) if keep(f, config.static.filter)]))
    timings.stages["total"] = round(time.perf_counter() - t_start, 3)
    report = report.with_(timings=timings.stages)
    if plan is not None:
        os.makedirs(opts.out_dir, exist_ok=True)
        report = mark_partial(report, plan, config, selection)
        write_partial_inputs(
            opts.out_dir, mode="review", plan=plan, config=config, selection=selection,
            base_sha=base_sha, head_sha=head_sha, results=(head_results, base_results),
            head_findings=head_findings, base_findings=base_findings, changeset=changeset,
            timings=timings.stages, fixes=shard_fixes)

    finish_review(report, opts.out_dir, base_results=base_results, head_results=head_results,
                  changeset=changeset, publish=opts.publish)
    return report.to_dict()


def finish_review(report: Report, out_dir: str, *, base_results: ResultsFile,
                  head_results: ResultsFile, changeset: changes.ChangeSet | None,
                  publish: bool = False) -> None:
    """The end of a review, whether its models ran here or in the shards of a matrix
    (`pt2bot merge`): each side's results, the rendered report directory, then (publish) the
    pull request's comment, review and check run."""
    os.makedirs(out_dir, exist_ok=True)
    for side, results in (("base", base_results), ("head", head_results)):
        if results.models:
            write_json(os.path.join(out_dir, f"{side}.json"), results.to_json())
    render_all(report, out_dir, commentable=None if changeset is None else (
        lambda path, line: changes.is_commentable(changeset, path, line)))
    if publish:
        # Imported here: PyGithub is only needed to publish, and a review run where it is not
        # installed (a project's own venv) still writes its report.
        from pt2bot.publish.github import publish_dir
        publish_dir(out_dir)


def _plan_shard(opts: ReviewOptions, selection: select.Selection,
                log: Callable[[str], None]) -> ShardPlan | None:
    """The split of the selection over the matrix (None: not sharded)."""
    if opts.shard is None:
        if opts.costs:
            raise UserError("--costs balances shards: it needs --shard I/N")
        return None
    if opts.publish:   # refused before the runs, not after them
        raise UserError("--publish: a shard's report is partial: publish the output of "
                        "`pt2bot merge DIR... --out DIR` instead")
    plan = plan_shard(selection.selected, opts.shard, opts.costs)
    log(f"shard {plan.spec}: {len(plan.mine)} of {len(selection.selected)} selected model(s)"
        f" ({'balanced by --costs' if plan.balanced else 'round-robin'})"
        f"{': ' + ', '.join(plan.mine) if plan.mine else ': none (an empty partial report)'}")
    return plan


def _mark_shard(results: ResultsFile, plan: ShardPlan) -> ResultsFile:
    """A shard's results say which shard wrote them (the merge checks and joins them)."""
    return results.with_(shard=plan.spec) if results.models else results


def _load_baseline(path: str, base_sha: str,
                   log: Callable[[str], None]) -> ResultsFile | None:
    baseline = load_results_file(path, what="--baseline")
    if baseline.commit and baseline.commit != base_sha:
        log(f"baseline {path} is for {baseline.commit[:12]}, not the merge-base "
            f"{base_sha[:12]}: running base instead")
        return None
    return baseline


def _smoke_both(config: Config, opts: ReviewOptions, selected: tuple[str, ...],
                head_root: str, base_root: str, baseline: ResultsFile | None,
                log: Callable[[str], None],
                claimed: set[str] | None = None,
                gate: latency_gate.CodeChanges | None = None,
                watch: dict[str, list[int]] | None = None) -> tuple[ResultsFile, ResultsFile]:
    """Smoke-run head and base; then latency rounds in alternating order, decided sequentially.

    Latency on a shared machine drifts over minutes, so base and head are measured in
    alternating rounds (A B, B A, ...) in separate processes and their samples pooled: a
    drift then hits both sides alike instead of looking like a regression. From the second
    round on, a model whose interval lies within the threshold band gets no more rounds; a
    change is concluded after the last (compare.latency_decided, pt2bot/stats.py);
    `run.rounds` is the most. A stored baseline's latency is never compared (another run,
    another time): base's latency is measured here, in the same alternating rounds. `gate`: the pull
    request's code changes (pt2bot/latency_gate.py); a model the gate finds unchanged gets
    no latency rounds, and with no changed code at all the first pass times nothing. `watch`:
    head's changed lines, whose operands head's first pass follows (the RUN's `unevaluated`).
    """
    out = os.path.join(opts.out_dir, "smoke")
    # A model whose entry module is not in a tree is not run there (absent on base: "new");
    # the entry is found the way selection finds it (select.entry_file).
    head_models = [n for n in selected if select.entry_file(config, config.model(n), head_root)]
    base_models = [n for n in selected if select.entry_file(config, config.model(n), base_root)]
    rounds = max(config.run.rounds, 1) if config.run.latency else 0
    untimed = tuple(p for p in default_phases(config) if p != "latency")
    # Nothing that runs changed: time nothing until the gate has seen the graphs.
    first = untimed if rounds and gate is not None and not gate.runtime_changed else None

    def run(side: str, root: str, models: list[str], phases: tuple[str, ...] | None,
            rnd: int | str = 0) -> ResultsFile:
        what = {0: "", "locate": " export location"}.get(rnd, f" latency round {rnd}")
        log(f"smoke {side} ({', '.join(models)}){what}")
        # draft_export only where the report needs it: see locate_exports
        return run_models(
            config, repo_root=root, out_dir=os.path.join(out, side, str(rnd)), models=models,
            device=opts.device, phases=phases, side=side, export_locate=rnd == "locate",
            watch=watch if side == "head" and rnd == 0 else None)

    sides = {"head": run("head", head_root, head_models, first) if head_models
             else ResultsFile.empty()}
    base = baseline
    if base is None:
        base = run("base", base_root, base_models, first) if base_models else ResultsFile.empty()
    else:
        # Only the models this review runs: a stored model that was not selected (or that a
        # shard leaves to another) is not "removed" on head, it was just not run here.
        base = base.with_(models=tuple(m.without("latency") for m in base.models
                                       if m.name in base_models))
    if baseline is not None and base_models:
        missing = [n for n in base_models if n not in base.by_name()]
        if missing:  # the stored audit did not run these (new in config since): run them here
            base = base.with_(models=(*base.models, *run("base", base_root, missing,
                                                         untimed).models))
    sides["base"] = base
    sides["head"] = locate_exports(
        sides["head"], base, claimed,
        lambda names: run("head", head_root, names, ("export",), "locate"))

    both = [n for n in head_models if n in base_models]
    if rounds and gate is not None:
        sides["head"] = latency_gate.mark_gates(sides["head"], sides["base"], gate, both)
    timed = [n for n in both if n not in latency_gate.gated(sides["head"])] if rounds else []
    roots = {"head": head_root, "base": base_root}
    done = {"head": int(first is None), "base": int(first is None and baseline is None)}
    rnd = 0
    while timed:
        behind = [s for s in ("head", "base") if done[s] < max(done.values())]
        if not behind and done["head"] >= rounds:
            break
        rnd += 1
        for side in behind or (["head", "base"] if rnd % 2 else ["base", "head"]):
            sides[side] = pool_rounds(sides[side], run(side, roots[side], timed, ("latency",), rnd))
            done[side] += 1
        if done["head"] == done["base"]:
            heads, bases = sides["head"].by_name(), sides["base"].by_name()
            timed = [n for n in timed if not latency_decided(
                bases.get(n), heads.get(n), max_rounds=rounds,
                threshold_pct=config.thresholds.latency_regression_pct)]
    for side in ("head", "base"):   # compile/<model>/<side>/ into the report directory
        copy_compile_reports(os.path.join(out, side, "0"), opts.out_dir, move=True)
    return sides["head"], sides["base"]


def export_claim_paths(findings: list[Finding]) -> set[str]:
    """The files of head findings whose claim an export failure's location can confirm."""
    claims = rule_claims()
    return {f.path for f in findings
            if EXPORT in EVIDENCE_FOR.get(claims.get(f.rule) or "", ())}


def needs_location(head: ModelRun, base: ModelRun | None, claimed: set[str] | None) -> bool:
    """Whether head's export failure, which torch's error did not locate, is worth
    `draft_export` (it re-traces the model, often the costliest step of a model's run): when
    it is new (base exported, or has no such model), when the failure changed (kind or
    message), or when head has a finding with an export claim in a file the model ran
    (`claimed`, None: not known), which the location could confirm. Base is never located:
    the report says where head fails, and only head's results confirm findings."""
    ex = head.export
    if ex is None or ex.ok is not False or ex.path is not None or not head.ok:
        return False
    b = base.export if base is not None else None
    if b is None or b.ok is not False or (b.kind, b.message) != (ex.kind, ex.message):
        return True
    return claimed is None or bool(claimed & set(head.coverage or ()))


def locate_exports(head: ResultsFile, base: ResultsFile, claimed: set[str] | None,
                   run: Callable[[list[str]], ResultsFile]) -> ResultsFile:
    """Head with the export failures that need a location (`needs_location`) located: the
    export phase again, in a worker that may ask `draft_export`."""
    bases = base.by_name()
    names = [m.name for m in head.models
             if isinstance(m.name, str) and needs_location(m, bases.get(m.name), claimed)]
    if not names:
        return head
    located = {m.name: m for m in run(names).models if m.ok and m.export is not None}
    return head.with_(models=tuple(
        m.with_(export=located[m.name].export) if m.name in located else m for m in head.models))


def cli_review(args: argparse.Namespace) -> int:
    opts = ReviewOptions(base=args.base, head=args.head, config_path=args.config,
                         out_dir=args.out, all_models=args.all_models, baseline=args.baseline,
                         smoke=not args.no_smoke, device=args.device, publish=args.publish,
                         shard=getattr(args, "shard", None), costs=getattr(args, "costs", None))

    def log(msg: str) -> None:
        print(f"pt2bot: {msg}", file=sys.stderr, flush=True)

    report = review(opts, log)
    out = opts.out_dir
    print(f"{report['conclusion'].upper()}: {report.get('summary_title', '')}".rstrip(": "))
    for line in terminal_reasons(report.get("reasons") or []):
        print(line)
    for name in ("summary.md", "review.json", "check.json", "results.sarif", "report.json"):
        print(f"  {os.path.join(out, name)}")
    return 1 if report["conclusion"] == "failure" else 0
