"""`pt2bot audit`: the nightly main-branch audit.

Full smoke run of every model and a `nofilter` static scan of the whole tree → store the
night in the history → compare with the previous audited commit, with a week ago, and with a
rolling window (latency) → render (report.json, audit.md, report.html, charts, baseline) →
optionally keep the tracking issue current.

Three references, three questions:
- the previous audit: what changed since last night (regressions → a comment on the issue);
- the last *clean* audit (the reference): what is still wrong (outstanding → the issue stays
  open; none → it closes);
- the rolling window: is tonight's latency outside the recent nights' spread (median ± k·MAD
  and beyond the threshold)? One noisy night moves a median, not a window.

Outputs in --out DIR: report.json (schema pt2bot.report/1, `base` = previous audited commit or
null, `head` = audited commit, plus an `audit` object), audit.md (also the tracking issue's
body and, under Actions, appended to $GITHUB_STEP_SUMMARY), report.html (self-contained),
charts/*.png, and `baseline-<sha>.json`: the results JSON of the audited commit. A PR whose
merge-base is that commit reuses it instead of re-running base:

    pt2bot review --base origin/main --baseline pt2bot-audit/baseline-<merge-base sha>.json

(pipeline._load_baseline checks the file's `commit` against the merge-base and runs base
itself when they differ; models missing from the baseline are run on base.)

Sharded (`--shard I/N`, one job of a matrix): the job runs its share of the models (split as
pt2bot/shard/partial.py's `plan_shard` says; static checks in shard 1 only) and writes a
partial report directory without touching the history; `pt2bot merge DIR... --history FILE`
joins the shards and ends as the unsharded audit does (`finish_audit`: the night stored once,
compared, rendered, published).

Retention: `--keep` ("400" runs, "90d" days, "400,90d" both), else PT2BOT_HISTORY_KEEP,
else 400 runs. The history file must survive between nights (actions/cache with a rolling key, or a data branch); it is checkpointed into one file
on close.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Sequence

from pt2bot import git
from pt2bot.audit.charts import Trends
from pt2bot.audit.history import (DEFAULT_KEEP_RUNS, KEEP_ENV, History, ModelPoint, StoredRun,
                                  parse_keep, shape_key)
from pt2bot.audit.report import render_audit_dir, render_audit_markdown, render_regression_comment
from pt2bot.compare import build_report
from pt2bot.config import Config
from pt2bot.configfile import load_config
from pt2bot.errors import UserError
from pt2bot.findings import Finding
from pt2bot.fixes import ProofSetting, prove_audit, prove_audit_shard
from pt2bot.jsonio import write_json
from pt2bot.publish.issue import publish_audit
from pt2bot.reach import mark_reached
from pt2bot.report import render_all
from pt2bot.verdict import compile_message
from pt2bot.results import AUDIT_SCHEMA, ModelRun, ResultsFile, is_failed
from pt2bot.select import select_all
from pt2bot.shard.partial import mark_partial, plan_shard, shard_selection, write_partial_inputs
from pt2bot.smoke import run_models
from pt2bot.smoke.compile_report import copy_compile_reports
from pt2bot.static import check_paths, resolve_torch

WINDOW_DAYS = 7.0          # the rolling window for latency, and "a week ago"
WINDOW_MIN_RUNS = 3        # fewer earlier nights: no latency verdict yet
WINDOW_K = 3.0             # how many (scaled) MADs outside the window's median
MAD_FLOOR_PCT = 1.0        # a window of identical numbers still has 1 % spread
TREND_RUNS = 30            # nights shown in the charts

Log = Callable[[str], None]


@dataclass(frozen=True)
class AuditOptions:
    history: str | None                        # None only for a shard (the merge stores)
    out_dir: str = "pt2bot-audit"
    config_path: str | None = None
    device: str | None = None
    publish: bool = False
    repo_dir: str = field(default_factory=os.getcwd)
    keep_runs: int | None = DEFAULT_KEEP_RUNS
    keep_days: int | None = None
    window_days: float = WINDOW_DAYS
    phases: tuple[str, ...] | None = None      # None: every phase the config enables
    now: datetime | None = None                # the audit's time (tests simulate nights)
    shard: str | None = None                   # "I/N": one job of a matrix (partial report)
    costs: str | None = None                   # results file with per-model duration_s


# --------------------------------------------------------------------------- pipeline

def audit(opts: AuditOptions, log: Log = lambda s: None) -> dict[str, Any]:
    """Run the nightly audit end to end; returns report.json's data."""
    root = git.repo_root(opts.repo_dir)
    config = load_config(opts.config_path, required=True, root=root)
    if opts.shard is not None:
        return audit_shard(opts, config, root, log)
    if opts.costs:
        raise UserError("--costs balances shards: it needs --shard I/N")
    if not opts.history:
        raise UserError("audit: --history FILE is required (only a --shard job stores nothing)")
    # Open (and so validate) the history before spending minutes on the smoke run.
    head = git.head_sha(root)
    with History(opts.history) as history:
        log(f"audit {head[:12]}: {len(config.models)} model(s), history {opts.history} "
            f"({history.count_runs()} run(s))")
    results = run_models(config, repo_root=root, out_dir=os.path.join(opts.out_dir, "smoke"),
                         device=opts.device, phases=opts.phases)
    results = results.with_(commit=results.commit or head)
    for m in results.models:
        log(f"  {m.name}: {m.status}")
    paths = list(config.static.paths) or None   # None: the whole tree
    findings = check_paths(root, paths, config.static, torch=resolve_torch(config.static)[0])
    log(f"static (nofilter): {len(findings)} finding(s)")
    findings = mark_reached(findings, results)   # which models ran each line (reach.py)
    copy_compile_reports(os.path.join(opts.out_dir, "smoke"), opts.out_dir, move=True)
    # the proof of fixes for the audit's own findings (a break on a finding's line)
    fixes = prove_audit(results, findings, ProofSetting(
        config=config, changeset=None, root=root, head_sha=None, head_results=results,
        device=results.device or opts.device, log=log))
    return finish_audit(config, results, findings, history=opts.history, out_dir=opts.out_dir,
                        now=opts.now, keep_runs=opts.keep_runs, keep_days=opts.keep_days,
                        window_days=opts.window_days, publish=opts.publish, log=log,
                        fixes=fixes)


def finish_audit(config: Config, results: ResultsFile, findings: Sequence[Finding], *,
                 history: str, out_dir: str, now: datetime | None = None,
                 keep_runs: int | None = DEFAULT_KEEP_RUNS, keep_days: int | None = None,
                 window_days: float = WINDOW_DAYS, publish: bool = False,
                 log: Log = lambda s: None,
                 fixes: dict[str, Any] | None = None) -> dict[str, Any]:
    """The end of a night, whether its models ran here or in the shards of a matrix
    (`pt2bot merge`): store it in the history file and compare (`audit_results`), render the
    directory, then (publish) keep the tracking issue current. The history is closed, and so
    folded into its one file, before anything is posted. `fixes`: the proof of fixes for
    the night's findings (`fixes.prove_audit`)."""
    with History(history) as h:
        report = audit_results(config, results, findings, history=h, out_dir=out_dir, now=now,
                               keep_runs=keep_runs, keep_days=keep_days,
                               window_days=window_days, fixes=fixes)
    if publish:   # the audit renders; publish only posts
        url = publish_audit(report, body=render_audit_markdown(report),
                            comment=render_regression_comment(report))
        log(f"tracking issue: {url or 'nothing to do (clean, no open issue)'}")
    return report


def audit_shard(opts: AuditOptions, config: Config, root: str, log: Log) -> dict[str, Any]:
    """One shard of a sharded audit: its models, a partial report directory, no history."""
    t0 = time.perf_counter()
    head = git.head_sha(root)
    selection = select_all(config, "nightly audit: every model runs")
    plan = plan_shard(selection.selected, opts.shard or "1/1", opts.costs)
    log(f"audit {head[:12]}, shard {plan.spec}: {len(plan.mine)} of {len(selection.selected)} "
        f"model(s){': ' + ', '.join(plan.mine) if plan.mine else ' (an empty partial report)'}")
    stages: dict[str, float] = {}
    results = ResultsFile.empty()
    if plan.mine:
        t = time.perf_counter()
        results = run_models(
            config, repo_root=root, out_dir=os.path.join(opts.out_dir, "smoke"),
            models=list(plan.mine), device=opts.device, phases=opts.phases)
        results = results.with_(commit=results.commit or head, shard=plan.spec)
        stages["smoke"] = round(time.perf_counter() - t, 3)
        for m in results.models:
            log(f"  {m.name}: {m.status}")
    findings: list[Finding] = []

    def static(tree: str) -> list[Finding]:
        return check_paths(tree, list(config.static.paths) or None, config.static,
                           torch=resolve_torch(config.static)[0])

    if plan.runs_static:          # once per night, not once per shard
        t = time.perf_counter()
        findings = static(root)
        stages["static"] = round(time.perf_counter() - t, 3)
        log(f"static (nofilter): {len(findings)} finding(s)")
        findings = mark_reached(findings, results)  # this shard's models (merge: all of them)
    # the proof of fixes on this shard's models (the merge decides); the other shards run
    # the static checks for it when one of their models has a graph break
    t = time.perf_counter()
    fixes = prove_audit_shard(results, findings if plan.runs_static else None, static,
                              ProofSetting(config=config, changeset=None, root=root,
                                           head_sha=None, head_results=results,
                                           device=results.device or opts.device, log=log))
    stages["fixes"] = round(time.perf_counter() - t, 3)
    copy_compile_reports(os.path.join(opts.out_dir, "smoke"), opts.out_dir)
    report = build_report(base_results=None, head_results=results, base_findings=[],
                          head_findings=findings, changeset=None, config=config,
                          selection=shard_selection(selection, plan), base_sha=None,
                          head_sha=head)
    stages["total"] = round(time.perf_counter() - t0, 3)
    report = report.with_(timings=stages)
    report = mark_partial(report, plan, config, selection)
    os.makedirs(opts.out_dir, exist_ok=True)
    if results.models:
        write_json(os.path.join(opts.out_dir, "head.json"), results.to_json())
    write_partial_inputs(opts.out_dir, mode="audit", plan=plan, config=config,
                         selection=selection, base_sha=None, head_sha=head,
                         results=(results,), head_findings=findings, base_findings=[],
                         changeset=None, timings=stages, fixes=fixes)
    render_all(report, opts.out_dir)
    return report.to_dict()


def audit_results(config: Config, results: ResultsFile | dict[str, Any],
                  findings: Sequence[Finding], *,
                  history: History, out_dir: str, now: datetime | None = None,
                  keep_runs: int | None = DEFAULT_KEEP_RUNS, keep_days: int | None = None,
                  window_days: float = WINDOW_DAYS, charts: bool = True,
                  fixes: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything after the runs: compare with history, store tonight, render the directory
    (with `fixes`, the proof of fixes, in report.json and audit.md)."""
    results = ResultsFile.coerce(results)
    now = now or datetime.now(timezone.utc)
    head_sha = str(results.commit or "")
    device = results.device
    head_findings = list(findings)
    selection = select_all(config, "nightly audit: every model runs")

    def compare_with(run: StoredRun | None) -> dict[str, Any]:
        return build_report(
            base_results=ResultsFile.from_json(run.results) if run else None,
            head_results=results,
            base_findings=[Finding.from_dict(f) for f in run.findings] if run else [],
            head_findings=head_findings, changeset=None, config=config, selection=selection,
            base_sha=run.commit if run else None, head_sha=head_sha).to_dict()

    previous = history.last_run(device=device, exclude_commit=head_sha)
    week_ago = history.last_run(device=device, before=now - timedelta(days=window_days))
    reference = history.last_clean_run(device=device)

    report = compare_with(previous)
    since_last = model_changes(report) if previous else []
    since_week = model_changes(compare_with(week_ago)) if week_ago else []
    vs_reference = model_changes(compare_with(reference)) if reference else []
    window = latency_window_verdicts(history, results, now=now, days=window_days,
                                     threshold_pct=config.thresholds.latency_regression_pct)

    regressions = [dict(c, since="last audit") for c in _worse(since_last)]
    regressions += [w for w in _window_items(window, "slower")]
    outstanding = [dict(c, since="reference") for c in _worse(vs_reference)]
    outstanding += _failures(results, already=outstanding)
    outstanding += [w for w in _window_items(window, "slower")]
    improvements = [dict(c, since="last audit") for c in _better(since_last)]
    improvements += [w for w in _window_items(window, "faster")]
    clean = not outstanding
    compare_conclusion = report.get("conclusion")
    report["conclusion"] = ("failure" if not clean
                            else "neutral" if compare_conclusion == "neutral" else "success")
    report["summary_title"] = _title(report["conclusion"], regressions, outstanding)
    if fixes is not None:
        report["fixes"] = fixes
        report["counts"]["fixes_verified"] = sum(1 for c in fixes["candidates"]
                                                 if c["verified"])

    run_id = history.append(results, [f.to_dict() for f in head_findings],
                            conclusion=report["conclusion"], clean=clean, created=now)
    pruned = history.prune(keep_runs=keep_runs, keep_days=keep_days, now=now)

    trends = collect_trends(history, device=device)
    report["audit"] = {
        "schema": AUDIT_SCHEMA,
        "run_id": run_id, "created": now.astimezone(timezone.utc).isoformat(timespec="seconds"),
        "runs_in_history": history.count_runs(), "pruned": pruned,
        "previous": _run_ref(previous), "week_ago": _run_ref(week_ago),
        "reference": _run_ref(reference),
        "compare_conclusion": compare_conclusion,
        "since_last": since_last, "since_week": since_week,
        "window": {"days": window_days, "k": WINDOW_K, "min_runs": WINDOW_MIN_RUNS,
                   "cases": window},
        "regressions": regressions, "outstanding": outstanding, "improvements": improvements,
        "clean": clean,
        "findings_by_rule": _count_rules(head_findings),
        "trends": {"labels": list(trends.labels),
                   "graph_breaks": {k: list(v) for k, v in trends.graph_breaks.items()},
                   "latency_ms": {k: list(v) for k, v in trends.latency_ms.items()},
                   "compile_cpu_s": {k: list(v) for k, v in trends.compile_cpu_s.items()},
                   "captured_ops": {k: list(v) for k, v in trends.captured_ops.items()}},
        "baseline": f"baseline-{head_sha}.json" if head_sha else None,
    }
    render_audit_dir(report, results.to_json(), trends, out_dir, charts=charts)
    return report


# --------------------------------------------------------------------------- comparisons

def model_changes(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per model, what got worse and what got better in a base→head report.

    Latency is left out on purpose: one night against another is noise on shared runners;
    latency is judged against the rolling window instead (`latency_window_verdicts`).
    """
    out: list[dict[str, Any]] = []
    for m in report.get("models") or []:
        name = str(m.get("name"))
        worse: list[dict[str, Any]] = []
        better: list[dict[str, Any]] = []
        base = ModelRun.coerce(m.get("base") or {})
        head = ModelRun.coerce(m.get("head") or {})
        b_status, h_status = base.status, head.status or m.get("status")
        change = m.get("change")
        if change == "new":
            better.append({"kind": "new_model", "detail": "new model"})
        elif change == "removed":
            worse.append({"kind": "removed", "detail": "no longer run"})
        if is_failed(h_status) and m.get("base") and not is_failed(b_status):
            worse.append({"kind": "status", "detail": f"now fails ({h_status})",
                          "message": _error_message(head)})
        elif is_failed(b_status) and h_status == "ok":
            better.append({"kind": "status", "detail": f"runs again (was {b_status})"})
        delta = m.get("delta") or {}
        # After a failed night every break would look "new": nothing to compare with.
        comparable = not is_failed(b_status)
        if comparable:
            for b in m.get("new_breaks") or []:
                worse.append({"kind": "graph_break", "detail": "new graph break", **_brk(b)})
        for b in m.get("fixed_breaks") or []:
            better.append({"kind": "graph_break", "detail": "graph break fixed", **_brk(b)})
        rec_up = _int(delta.get("new_recompiles"))
        rec_total = _int(delta.get("recompiles"))
        if comparable and rec_up > 0:
            worse.append({"kind": "recompiles", "detail": f"recompiles +{rec_up}"})
        elif rec_total < 0:
            better.append({"kind": "recompiles", "detail": f"recompiles {rec_total:+d}"})
        cost = m.get("compile")
        if comparable and isinstance(cost, dict) and cost.get("regression"):
            worse.append({"kind": "compile", "detail": compile_message(cost)})
        export = delta.get("export")
        if export == "broken":
            worse.append({"kind": "export", "detail": "export broke",
                          "message": head.export.message if head.export else None})
        elif export == "fixed":
            better.append({"kind": "export", "detail": "export works again"})
        if worse or better:
            out.append({"model": name, "worse": worse, "better": better})
    return out


def latency_window_verdicts(history: History, results: ResultsFile | dict[str, Any], *,
                            now: datetime,
                            days: float = WINDOW_DAYS, threshold_pct: float = 10.0,
                            k: float = WINDOW_K, min_runs: int = WINDOW_MIN_RUNS
                            ) -> list[dict[str, Any]]:
    """Tonight's compiled medians against the window of earlier nights, per shape case.

    slower/faster only when tonight lies outside median ± k·MAD (scaled to σ, floored at
    MAD_FLOOR_PCT of the median) AND the change exceeds `threshold_pct`.
    """
    results = ResultsFile.coerce(results)
    out: list[dict[str, Any]] = []
    since = now - timedelta(days=days)
    for m in results.models:
        if not m.ok:
            continue
        for case in m.latency_rows():
            tonight = case.compiled_ms.median if case.compiled_ms else None
            if tonight is None:
                continue
            key = shape_key(case.shape)
            window = history.latency_window(
                str(m.name), key, device=results.device, device_name=results.device_name,
                backend=results.backend, since=since)
            item: dict[str, Any] = {"model": m.name, "shape": dict(case.shape),
                                    "shape_key": key, "median_ms": tonight, "n": len(window),
                                    "window_median_ms": None, "window_mad_ms": None,
                                    "change_pct": None, "verdict": "insufficient"}
            if len(window) >= min_runs:
                center = statistics.median(window)
                mad = 1.4826 * statistics.median(abs(x - center) for x in window)
                mad = max(mad, center * MAD_FLOOR_PCT / 100.0)
                change = (tonight / center - 1.0) * 100.0 if center > 0 else 0.0
                verdict = "same"
                if abs(tonight - center) > k * mad and abs(change) > threshold_pct:
                    verdict = "slower" if tonight > center else "faster"
                item.update(window_median_ms=round(center, 6), window_mad_ms=round(mad, 6),
                            change_pct=round(change, 2), verdict=verdict)
            out.append(item)
    return out


def collect_trends(history: History, *, device: str | None, runs: int = TREND_RUNS) -> Trends:
    """The last `runs` nights on this device as chart series (one value per night)."""
    nights = history.recent_runs(device=device, limit=runs)
    ids = [r.id for r in nights]
    labels = tuple(f"{r.created[5:10]} {(r.commit or '-------')[:7]}" for r in nights)
    breaks: dict[str, tuple[float | None, ...]] = {}
    latency: dict[str, tuple[float | None, ...]] = {}
    cpu: dict[str, tuple[float | None, ...]] = {}
    captured: dict[str, tuple[float | None, ...]] = {}
    for name in history.model_names(device=device):
        points: dict[int, ModelPoint] = {
            p.run: p for p in history.model_series(name, device=device, limit=runs)}
        if not any(i in points for i in ids):
            continue
        breaks[name] = tuple(
            points[i].graph_breaks if i in points and points[i].status == "ok" else None
            for i in ids)
        lat = tuple(points[i].compiled_geomean_ms if i in points else None for i in ids)
        if any(v is not None for v in lat):
            latency[name] = tuple(None if v is None else round(v, 6) for v in lat)
        for into, attr in ((cpu, "compile_cpu_s"), (captured, "captured_ops")):
            values = tuple(getattr(points[i], attr) if i in points and points[i].status == "ok"
                           else None for i in ids)
            if any(v is not None for v in values):
                into[name] = values
    return Trends(labels=labels, graph_breaks=breaks, latency_ms=latency,
                  compile_cpu_s=cpu, captured_ops=captured)


def _worse(changes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(w, model=c["model"]) for c in changes for w in c["worse"]]


def _better(changes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(b, model=c["model"]) for c in changes for b in c["better"]]


def _window_items(window: list[dict[str, Any]], verdict: str) -> list[dict[str, Any]]:
    return [{"model": w["model"], "kind": "latency", "since": "window",
             "detail": f"compiled latency {w['change_pct']:+.1f}% vs the {w['n']}-night "
                       f"window ({w['shape_key']})", "shape": w["shape"]}
            for w in window if w["verdict"] == verdict]


def _failures(results: ResultsFile, already: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A model that fails tonight is a problem whatever the reference said."""
    seen = {(o["model"], o["kind"]) for o in already}
    return [{"model": m.name, "kind": "status", "since": "tonight",
             "detail": f"fails ({m.status})", "message": _error_message(m)}
            for m in results.models if m.failed and (m.name, "status") not in seen]


def _error_message(run: ModelRun) -> str | None:
    msg = (run.error.message if run.error else None) or run.reason
    return None if msg is None else str(msg)[-1000:]


def _brk(b: dict[str, Any]) -> dict[str, Any]:
    return {k: b.get(k) for k in ("gb", "gb_type", "path", "line", "reason") if k in b}


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def _run_ref(run: StoredRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {"run_id": run.id, "commit": run.commit, "created": run.created,
            "conclusion": run.conclusion, "torch": run.torch}


def _count_rules(findings: Iterable[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    return dict(sorted(counts.items()))


def _title(conclusion: str, regressions: list[Any], outstanding: list[Any]) -> str:
    if outstanding:
        return (f"{len(outstanding)} outstanding problem(s), "
                f"{len(regressions)} new since the last audit")
    return "clean: nothing got worse" if conclusion != "neutral" else "no verdict"


# --------------------------------------------------------------------------- CLI

def retention_from(args: argparse.Namespace, env: dict[str, str] | os._Environ[str]
                   ) -> tuple[int | None, int | None]:
    """--keep, else $PT2BOT_HISTORY_KEEP, else the default."""
    spec = getattr(args, "keep", None) or env.get(KEEP_ENV)
    if not spec:
        return DEFAULT_KEEP_RUNS, None
    return parse_keep(str(spec))


def cli_audit(args: argparse.Namespace) -> int:
    keep_runs, keep_days = retention_from(args, os.environ)
    shard = getattr(args, "shard", None)
    if shard is not None and args.publish:
        raise UserError("--publish: a shard's audit is partial: `pt2bot merge DIR... --history "
                        "FILE --publish` posts the night")
    opts = AuditOptions(history=None if shard else args.history, out_dir=args.out,
                        config_path=args.config, device=args.device, publish=args.publish,
                        keep_runs=keep_runs, keep_days=keep_days, shard=shard,
                        costs=getattr(args, "costs", None))

    def log(msg: str) -> None:
        print(f"pt2bot: {msg}", file=sys.stderr, flush=True)

    report = audit(opts, log)
    if "partial" in report:
        print(f"PARTIAL (shard {report['partial']['shard']}): merge the shards with "
              f"`pt2bot merge DIR... --history FILE`")
        print(f"  {os.path.join(opts.out_dir, 'report.json')}")
        return 0
    a = report["audit"]
    print(f"{report['conclusion'].upper()}: {report.get('summary_title', '')}")
    for name in ("audit.md", "report.html", "report.json", a.get("baseline") or ""):
        if name:
            print(f"  {os.path.join(opts.out_dir, name)}")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(os.path.join(opts.out_dir, "audit.md"), encoding="utf-8") as src, \
                open(summary, "a", encoding="utf-8") as dst:
            dst.write(src.read())
    return 1 if report["conclusion"] == "failure" else 0


