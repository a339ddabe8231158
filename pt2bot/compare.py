"""Base vs head: what the pull request changed (the deltas).

`build_report` joins the static findings and the smoke-run results of both sides into the
typed report (pt2bot/reportdata.py; report.json, schema `pt2bot.report/1`, is its
`to_dict()`, see docs/formats.md); the verdict on those deltas (thresholds →
reasons → conclusion) is pt2bot/verdict.py's. Pure: data in, data out; no git, no torch, no
network. The results come in typed (pt2bot/results.py).

Matching base with head never uses line numbers alone, because any edit above a break moves
it: graph breaks match on GB type + path (renamed through the diff) + enclosing function +
normalised source line; the diff's old→new line map only decides ties (and breaks without a
source line). Static findings match on `Finding.fingerprint()`.

Anything missing or malformed in the results is reported, never a crash: each model is
compared on its own, and an unexpected failure there becomes a visible problem of that model.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

from pt2bot import __version__
from pt2bot.changes import (ChangeSet, FileChange, diff_position, innermost_function, keep_finding,
                            touches_change,
                            mark_new)
from pt2bot.config import Config
from pt2bot.findings import DIFF_ADDED, DIFF_CONTEXT, Finding, fingerprint, normalise_source
from pt2bot.latency_gate import MEASURED, NOT_MEASURED, UNCHANGED, UNCHANGED_NOTE
from pt2bot.reach import Coverage, FileLines
from pt2bot.reportdata import PLACEHOLDER, RUN_SKIPPED, Delta, ModelDelta, Report
from pt2bot.results import (REPORT_SCHEMA, RESUME_RE, CompileCost, GraphBreak, LatencyRow, ModelRun,
                            RecompileCase, RecompileReason, ResultsFile, Samples, ShapeAdvice,
                            at_site, breaks_unmeasured, case_key, first_line, in_package, is_failed, on_break_stack,
                            shape_label, split_off_frame, unmeasured)
from pt2bot.select import Selection
from pt2bot.stats import FIRST_LOOK, compare_samples, decided
from pt2bot.verdict import (FAILURE, NEUTRAL, NOTICE, WARNING, conclude, export_message_key,
                            judge, run_broken, summary_title, thresholds_json)

SCHEMA = REPORT_SCHEMA
LineMap = Callable[[str, "int | None"], "int | None"]


def build_report(*, base_results: ResultsFile | None, head_results: ResultsFile | None,
                 base_findings: list[Finding], head_findings: list[Finding],
                 changeset: ChangeSet | None, config: Config,
                 selection: Selection | None = None, base_sha: str | None,
                 head_sha: str | None) -> Report:
    """The report: findings new vs pre-existing, per-model deltas, reasons, conclusion.

    `changeset` is None when there is no diff (the nightly audit); `base_results` is None
    when base was not run (new project, no baseline), `head_results` when head's run left
    no results at all (a broken run).
    """
    renames = renamed_paths(changeset)
    line_map = _line_mapper(changeset)
    findings, hidden = compare_findings(base_findings, head_findings, renames=renames,
                                        filter_=config.static.filter)
    models, skipped = compare_models(base_results, head_results, config=config,
                                     selection=selection, renames=renames, line_map=line_map,
                                     base_present=base_results is not None)
    if changeset is not None:
        _mark_reached(models, head_results, changeset)
        _mark_failed_from(models, head_results, changeset)
    reasons = judge(findings=findings, models=models, head_results=head_results,
                    base_results=base_results, config=config)
    conclusion = conclude(reasons)
    env = head_results or ResultsFile()
    return Report(
        schema=SCHEMA,
        pt2bot=__version__,
        mode="review" if changeset is not None else "audit",
        base=base_sha,
        head=head_sha,
        conclusion=conclusion,
        summary_title=summary_title(conclusion, reasons, models, findings),
        reasons=tuple(reasons),
        torch=env.torch,
        device=env.device,
        device_name=env.device_name,
        backend=env.backend,
        config_digest=config.digest,
        thresholds=thresholds_json(config),
        findings=tuple(findings),
        findings_hidden=hidden,
        models=tuple(models),
        skipped=tuple(skipped),
        counts={
            "findings": len(findings),
            "findings_new": sum(1 for f in findings if f.new),
            "new_breaks": sum(len(m.new_breaks) for m in models),
            "fixed_breaks": sum(len(m.fixed_breaks) for m in models),
            "models_run": sum(1 for m in models if m.status != "skipped"),
        },
        not_run=not_run_lines(changeset, head_results, config.static.paths),
        not_traced=not_traced_lines(changeset, head_results),
    )


def _mark_reached(models: list[ModelDelta], head_results: ResultsFile | None,
                  changeset: ChangeSet) -> None:
    """A new break on no line of the diff whose stack passes through a line the PR added (a
    new call of an existing helper that breaks: knlp's `self._log_sdpa_backend(q, k, v)` under
    a one-time flag): its report dict gains `reached_from`, the innermost such line, where the
    review comments on it (no comment could go on the break's own line)."""
    runs = head_results.by_name() if head_results is not None else {}
    for m in models:
        head = runs.get(m.name)
        if head is None or not m.new_breaks:
            continue
        for d, stack in _with_stacks(list(m.new_breaks), head):
            if not isinstance(d.get("path"), str) or diff_position(changeset, d["path"], d["line"] or 0) in (
                    DIFF_ADDED, DIFF_CONTEXT):
                continue
            for path, line, function in reversed(stack[:-1]):
                if isinstance(path, str) and isinstance(line, int) and \
                        diff_position(changeset, path, line) == DIFF_ADDED:
                    d["reached_from"] = {"path": path, "line": line, "function": function}
                    break


def _mark_failed_from(models: list[ModelDelta], head_results: ResultsFile | None,
                      changeset: ChangeSet) -> None:
    """A model that fails on head at a line the PR did not touch, whose traceback passes
    through a line it added (guided-diffusion's reverted `ch = mult * model_channels`, the
    float channel count raising inside nn.py's `nn.Conv2d`): its failure problem gains
    `reached_from`, the innermost such line, where the review comments on it.

    Else, where a frame is in a function that the PR changed before the frame's line (DETR's
    reverted `if isinstance(samples, list):`, two lines above the `self.backbone(samples)`
    that raised in backbone.py), `reached_from` is the last changed statement before it, with
    `function` and `via` (the frame's line): the failing call passed through code the PR
    changed, which is what the review can say there. Not that the change caused it."""
    runs = head_results.by_name() if head_results is not None else {}
    for m in models:
        err = getattr(runs.get(m.name), "error", None)
        frames = [f for f in (err.frames if err is not None and err.frames else ())
                  if isinstance(f.path, str) and isinstance(f.line, int)]
        for p in m.problems:
            if p.get("kind") not in ("fails_only_on_head", "fails_on_head") or (
                    isinstance(p.get("path"), str) and isinstance(p.get("line"), int)
                    and diff_position(changeset, p["path"], p["line"]) in (DIFF_ADDED, DIFF_CONTEXT)):
                continue
            added = next((f for f in reversed(frames)
                          if diff_position(changeset, f.path, f.line) == DIFF_ADDED), None)
            if added is not None:
                p["reached_from"] = {"path": added.path, "line": added.line}
                continue
            for f in reversed(frames):
                before = _changed_before(changeset.files.get(f.path), f.line)
                if before is not None:
                    p["reached_from"] = {"path": f.path, "line": before[0], "function": before[1],
                                         "via": f.line}
                    break


def _changed_before(fc: FileChange | None, line: int) -> tuple[int, str] | None:
    """(the first added line of the last changed statement, the function's name) in the
    function holding `line`, above `line`; None when the PR changed none there."""
    if fc is None or not fc.code_spans or not fc.functions:
        return None
    fn = innermost_function(fc.functions, line)
    if fn is None:
        return None
    for first, last in reversed(fc.code_spans):
        if first < line and innermost_function(fc.functions, first) == fn:
            return min(n for n in range(first, last + 1) if n in fc.added_lines), fn[2]
    return None


# --------------------------------------------------------------------------- changeset

def renamed_paths(changeset: ChangeSet | None) -> dict[str, str]:
    """{base path: head path} for files the diff renamed."""
    return changeset.renames() if changeset is not None else {}


def _line_mapper(changeset: ChangeSet | None) -> LineMap:
    """(head path, base line) -> head line, or None when that line is gone."""
    files = changeset.files if changeset is not None else {}

    def map_line(path: str, line: int | None) -> int | None:
        if line is None:
            return None
        fc = files.get(path)
        if fc is None:
            return line       # file untouched by the diff (or no diff at all): same line
        if fc.status == "deleted":
            return None
        try:
            return fc.map_old_to_new(line)
        except Exception:   # a line map that cannot answer is "unknown", not a crash
            return None

    return map_line


# --------------------------------------------------------------------------- changed code

def not_run_lines(changeset: ChangeSet | None, head_results: ResultsFile | None,
                  paths: Sequence[str] = ()) -> tuple[dict, ...] | None:
    """Changed code that no configured model ran on head: `[{path, lines}]`, the added lines
    of each changed statement (`FileChange.code_spans`) whose lines no model's line coverage
    holds. Test files and, when `static.paths` is set, files outside it are left out: no
    model is meant to run them. None when nothing is known: no diff, no model with coverage
    (no smoke run, or every model failed), or no statement spans computed.

    `unevaluated` (absent when none): the operands of changed lines that ran, holding part of
    what the PR changed there, that no model evaluated (`has_pykeops and <changed>` with
    `has_pykeops` False on every call): the line reads as run while the change never was."""
    cov = Coverage.from_results(head_results)
    if changeset is None or not cov.known:
        return None
    computed = False
    out = []
    skipped = _unevaluated(changeset, head_results)
    for path, fc in sorted(changeset.files.items()):
        if fc.code_spans is None:
            continue
        computed = True
        if _is_test_file(path) or not _under(path, paths):
            continue
        missed = [(first, last) for first, last in fc.code_spans
                  if not cov.reached_by(path, first, last)]
        lines = sorted({n for first, last in missed for n in range(first, last + 1)
                        if n in fc.added_lines})
        operands = skipped.get(path, [])
        if operands and not lines:
            out.append({"path": path, "lines": [], "unevaluated": operands})
        elif lines:
            # a branch no input took: the `if` whose test ran, its body or `else` not (which
            # input would run the lines is the user's to add to the shape matrix)
            guards = dict(fc.branch_of)
            untaken: dict[int, list[int]] = {}
            for first, last in missed:
                g = guards.get(first)
                if g is not None and cov.reached_by(path, g, g):
                    untaken.setdefault(g, []).extend(n for n in range(first, last + 1)
                                                     if n in fc.added_lines)
            out.append({"path": path, "lines": lines, **({"branches": [
                {"line": g, "lines": sorted(set(ns))} for g, ns in sorted(untaken.items()) if ns]}
                if any(untaken.values()) else {}), **({"unevaluated": operands} if operands else {})})
    return tuple(out) if computed else None


def _unevaluated(changeset: ChangeSet, head_results: ResultsFile | None) -> dict[str, list[dict]]:
    """path -> the changed operands no model evaluated (`not_run_lines`): each model that ran
    the operand's line recorded it as unevaluated (a model that ran the line without a record
    of its operands leaves the question open, so nothing is said)."""
    runs = [run for run in (head_results.models if head_results is not None else ())
            if run.status == "ok" and isinstance(run.coverage, Mapping)]
    records: list[tuple[ModelRun, set[tuple] | None]] = []
    said: dict[tuple, Mapping] = {}
    for run in runs:
        if not isinstance(run.unevaluated, Mapping):
            records.append((run, None))
            continue
        mine = set()
        for path, items in run.unevaluated.items():
            for o in items if isinstance(items, list) else ():
                if isinstance(o, Mapping) and all(isinstance(o.get(k), int) for k in
                                                  ("line", "col", "end_line", "end_col")):
                    key = (path, o["line"], o["col"], o["end_line"], o["end_col"])
                    mine.add(key)
                    said.setdefault(key, o)
        records.append((run, mine))
    out: dict[str, list[dict]] = {}
    for key, o in sorted(said.items()):
        path, line, col, end_line, end_col = key
        fc = changeset.files.get(path)
        if fc is None:
            continue
        ran_it = [mine for run, mine in records
                  if FileLines.parse((run.coverage or {}).get(path)).hits(line, line)]
        if not all(mine is not None and key in mine for mine in ran_it):
            continue
        if not touches_change(fc, line, col, end_col if end_line == line else 1 << 30):
            continue
        out.setdefault(path, []).append({
            "line": line, "code": str(o.get("code") or ""), "guard": str(o.get("guard") or ""),
            "kind": str(o.get("kind") or "")})
    return out


def not_traced_lines(changeset: ChangeSet | None, head_results: ResultsFile | None
                     ) -> tuple[dict, ...] | None:
    """Changed code a model ran only eagerly because dynamo gave up on the frame holding it:
    `[{path, lines, model, function, line, reason}]`, the added lines of each changed statement
    inside a frame of the graph-break pass's `eager_frames` (from its first line to
    `end_line`), or after a break dynamo could not resume from (to `eager_rest_end`), that the
    model ran but dynamo never traced. No compile check saw those lines:
    a new user's `if t >= 2 and not z.any(): break` in a step loop was in a `forward` that a
    library's break in the same loop already sent to eager, so the review said nothing of it.
    None when nothing is known (no diff, or no model with both coverage and traced lines)."""
    if changeset is None or head_results is None:
        return None
    known = False
    out = []
    for run in head_results.models:
        gc = run.graph_coverage
        if run.status != "ok" or not isinstance(run.coverage, Mapping) or \
                not isinstance(run.traced_lines, Mapping) or gc is None:
            continue
        known = True
        # (path, from, to, function, reason): code below `from` up to `to` that ran eagerly
        regions = [(fr.path, fr.line, fr.end_line, fr.function, fr.reason) for fr in gc.eager_frames]
        # and the rest of a frame after a break dynamo could not resume from (DINO's multi-crop
        # loop: its `.item()` at the loop's first line left the lines after it to eager)
        regions += [(b.user_stack[0].path, b.user_stack[0].line, b.eager_rest_end,
                     b.user_stack[0].function,
                     f"a graph break it cannot resume from ({b.gb or b.gb_type}), so the rest of "
                     "the function ran eagerly")
                    for b in run.graph_breaks or () if b.eager_rest_end and b.user_stack]
        for path, start, end, function, reason in regions:
            fc = changeset.files.get(path or "")
            if fc is None or not fc.code_spans or not start or not end:
                continue
            ran = FileLines.parse(run.coverage.get(path))
            traced = FileLines.parse(run.traced_lines.get(path))
            lines = sorted({n for first, last in fc.code_spans
                            if start < first and last <= end and ran.hits(first, last)
                            and not traced.hits(first, last)
                            for n in range(first, last + 1) if n in fc.added_lines})
            if lines:
                out.append({"path": path, "lines": lines, "model": run.name,
                            "function": function, "line": start, "reason": reason})
    return tuple(out) if known else None


def _is_test_file(path: str) -> bool:
    *dirs, name = path.split("/")
    return (any(d in ("tests", "test") for d in dirs) or name == "conftest.py"
            or name.startswith("test_") or name.endswith("_test.py"))


def _under(path: str, paths: Sequence[str]) -> bool:
    tops = [p.strip("/") for p in paths]
    return not tops or any(t in ("", ".") or path == t or path.startswith(t + "/") for t in tops)


# --------------------------------------------------------------------------- findings

def compare_findings(base: Iterable[Finding], head: Iterable[Finding], *,
                     renames: dict[str, str], filter_: str) -> tuple[list[Finding], int]:
    """Head findings with `new` set (changes.mark_new, which `pt2bot check --base` uses
    too), the ones the filter keeps; + count hidden."""
    kept: list[Finding] = []
    hidden = 0
    for f in mark_new(head, base, renames=renames):
        if not keep(f, filter_):
            hidden += 1
            continue
        kept.append(f)
    return kept, hidden


def keep(finding: Finding, filter_: str) -> bool:
    """The diff filter's decision; a finding not compared with a diff is always kept."""
    return finding.diff is None or keep_finding(finding, filter_)


# --------------------------------------------------------------------------- models

def compare_models(base_results: ResultsFile | None, head_results: ResultsFile | None, *,
                   config: Config, selection: Selection | None, renames: dict[str, str],
                   line_map: LineMap, base_present: bool | None = None,
                   ) -> tuple[list[ModelDelta], list[dict]]:
    base_runs = base_results.by_name() if base_results is not None else {}
    head_runs = head_results.by_name() if head_results is not None else {}
    sel_skipped = dict(selection.skipped) if selection is not None else {}
    comparable, why_not = latency_comparable(base_results, head_results)
    if base_present is None:
        base_present = base_results is not None

    names: list[str] = [m.name for m in config.models]
    # Models in the results but not in the config, once each (most are on both sides).
    names += [n for n in dict.fromkeys([*head_runs, *base_runs]) if n not in names]
    models: list[ModelDelta] = []
    skipped: list[dict] = []
    for name in names:
        base_run, head_run = base_runs.get(name), head_runs.get(name)
        if base_run is None and head_run is None:
            reason = sel_skipped.get(name) or "not run"
            skipped.append({"name": name, "reason": str(reason)})
            models.append(_skipped_model(name, str(reason)))
            continue
        try:
            m = compare_model(name, base_run, head_run, renames=renames, line_map=line_map,
                              threshold_pct=config.thresholds.latency_regression_pct,
                              latency_ok=comparable, latency_note=why_not,
                              base_present=base_present,
                              compile_pct=config.thresholds.compile_regression_pct)
        except Exception as e:   # keep every other model's result; show this one's failure
            m = _skipped_model(name, "could not compare").with_(problems=(_problem(
                "compare_error", NEUTRAL,
                f"pt2bot could not compare this model: {type(e).__name__}: {e}"),))
        if m.status == "skipped" and m.change != "removed":
            skipped.append({"name": name, "reason": m.reason or "skipped"})
        models.append(m)
    return models, skipped


def latency_comparable(base_results: ResultsFile | None, head_results: ResultsFile | None
                       ) -> tuple[bool, str | None]:
    """Timings only compare when both sides ran on the same kind of machine and torch."""
    if base_results is None or head_results is None:
        return True, None
    for key in ("device", "device_name", "torch"):
        b, h = getattr(base_results, key), getattr(head_results, key)
        if b and h and b != h:
            return False, f"base and head ran with different {key} ({b} vs {h})"
    return True, None


def _skipped_model(name: str, reason: str) -> ModelDelta:
    """The entry of a model with no head run to compare (nothing else known about it)."""
    return ModelDelta(name=name, status="skipped", reason=reason, change="unknown",
                      layout=PLACEHOLDER)


def _newly_raised(base_run: ModelRun, head_run: ModelRun) -> str | None:
    """What the shape matrix's compiled runs raise on head on cases whose compiled runs on base
    did not, where they all ran on base. recurrentgemma's PR turning its jaxtyping/typeguard
    checks back on: with the dims pt2bot.yml declares dynamic marked, every compiled call raised
    TypeCheckError, and the review said only "not measured on head"."""
    hc = head_run.recompiles.cases if head_run.recompiles is not None else ()
    bc = {case_key(c.shape): c for c in (base_run.recompiles.cases if base_run.recompiles is not None else ())}
    raised = [c for c in hc if c.error and (b := bc.get(case_key(c.shape))) is not None and not b.error]
    if not raised:
        return None
    first = raised[0]
    which = (f"every shape case ({len(hc)})" if len(raised) == len(hc) else
             f"{len(raised)} of {len(hc)} shape cases ({', '.join(shape_label(c.shape) for c in raised[:3])}"
             f"{', ...' if len(raised) > 3 else ''})")
    return (f"compiled, the model newly raises on {which}: {first_line(first.error)}"
            f"{at_site(first.error_at)}{in_package(first.error)}; base's compiled runs of them did "
            "not (the shape matrix compiles with the dims pt2bot.yml declares dynamic marked)")


def _problem(kind: str, level: str, message: str, **extra: Any) -> dict:
    return {"kind": kind, "level": level, "message": message, **extra}


def compare_model(name: str, base_run: ModelRun | None, head_run: ModelRun | None, *,
                  renames: dict[str, str], line_map: LineMap, threshold_pct: float,
                  latency_ok: bool = True, latency_note: str | None = None,
                  base_present: bool = True, compile_pct: float | None = None) -> ModelDelta:
    """One model's entry of the report."""
    if head_run is None:
        return _skipped_model(name, "removed: not in head's results").with_(
            change="removed", base=base_run.to_json() if base_run else None)
    head_status = head_run.status or "error"
    base_status = base_run.status if base_run else None
    base_json = base_run.to_json() if base_run else None
    if head_status == "skipped":
        return ModelDelta(name=name, status=head_status,
                          reason=head_run.reason or "skipped by the run", base=base_json,
                          head=head_run.to_json(), change="unknown", layout=RUN_SKIPPED)

    problems: list[dict] = []
    error: dict | None = None
    if is_failed(head_status):
        err = head_run.error
        error = err.to_json() if err else {}
        kind = err.kind if err else None
        where = {"path": err.path if err else None, "line": err.line if err else None,
                 "detail": err.message if err else None}
        what = f"{head_status}" + (f" ({kind})" if kind else "")
        if is_failed(base_status):
            problems.append(_problem("fails_on_both", WARNING,
                                     f"fails on base and head: {what}", **where))
        elif not base_present:
            problems.append(_problem("fails_on_head", FAILURE,
                                     f"fails (no base run to compare with): {what}", **where))
        else:
            problems.append(_problem("fails_only_on_head", FAILURE,
                                     f"fails on head but not on base: {what}", **where))
    elif is_failed(base_status):
        # said with why base failed: its breaks, recompiles and export are counted as new
        # against nothing (a PR that adds an input and its pt2bot.yml entry together runs
        # base's code with head's inputs; a new user read "2 new graph breaks" as measured)
        err = base_run.error if base_run is not None else None
        said = " ".join(err.message.split()) if err is not None and err.message else ""
        why = f" ({said[:200] + '…' if len(said) > 200 else said})" if said else ""
        problems.append(_problem("fixed_failure", NOTICE, f"failed on base{why}, runs on head: what head "
                                 "has is compared with nothing, each break, recompile and export "
                                 "failure counted as new"))
    newly = (_newly_raised(base_run, head_run) if head_status == "ok" and base_status == "ok"
             and base_run is not None else None)
    if newly:
        problems.append(_problem("compiled_raises", FAILURE, newly))
    frozen = head_run.export.frozen if head_status == "ok" and head_run.export is not None else None
    if frozen:
        # an export check mark that holds for one seed only (the cell says "⚠️"; this says why)
        was = base_status == "ok" and base_run is not None and base_run.export is not None and \
            bool(base_run.export.frozen)
        problems.append(_problem("export_frozen", NOTICE, f"torch.export: the program exports, but {frozen}"
                                 + (" (on base too)" if was else "")))
    if head_status == "ok":
        lost = unmeasured(head_run, matrix=not newly)
        if lost:
            both = base_status == "ok" and base_run is not None and bool(unmeasured(base_run))
            problems.append(_problem("not_measured", NOTICE, "not measured on head"
                                     + (", nor on base" if both else "") + ": " + "; ".join(lost)))

    # A side that errored has no trustworthy breaks/recompiles: compare only ok runs.
    b = base_run if base_status == "ok" else None
    h = head_run if head_status == "ok" else None
    if base_run is not None and b is None and h is not None:
        b = ModelRun()   # base failed: everything on head is new relative to an empty baseline
    # (where either side's break pass raised, no break is new or fixed)
    breaks_known = not (breaks_unmeasured(h) or breaks_unmeasured(b))
    new_breaks, fixed_breaks, same = (match_breaks(b.breaks() if b else (), h.breaks(),
                                                   renames=renames, line_map=line_map)
                                      if h is not None and breaks_known else ([], [], 0))
    delta = Delta()
    cost = None
    if h is not None:
        rec = compare_recompiles(b, h, new_breaks=_with_stacks(new_breaks, h),
                                 old_breaks=_old_breaks(h, new_breaks),
                                 base_breaks=_old_breaks(b, []), line_map=line_map)
        new_specialized, fixed_specialized = compare_specialized(b, h, renames,
                                                                 _with_stacks(new_breaks, h))
        delta = Delta(
            graph_breaks=len(h.breaks()) - len(b.breaks() if b else ()) if breaks_known else 0,
            graph_count=((h.graph_count or 0) - ((b.graph_count if b else None) or 0)
                         if breaks_known else 0),
            recompiles=rec["recompiles"], new_recompiles=rec["new_recompiles"],
            caused_recompiles=rec["caused_recompiles"],
            after_break_recompiles=rec["after_break_recompiles"],
            recompile_cases=tuple(rec["recompile_cases"]), export=compare_export(b, h),
            accuracy=tuple(compare_accuracy(b, h)), new_specialized=tuple(new_specialized),
            fixed_specialized=tuple(fixed_specialized),
            latency=tuple(gated_latency(h) if _gated(h) else compare_latency(
                b, h, threshold_pct=threshold_pct, comparable=latency_ok, note=latency_note)),
            eager_fallback=rec["eager_fallback"], coverage=compare_coverage(b, h),
            new_export_causes=tuple(new_export_causes(b, h, renames, line_map)),
            output_shapes=tuple(compare_output_shapes(b, h)))
        cost = compare_compile(b if base_run is not None else None, h,
                               threshold_pct=compile_pct, new_breaks=bool(new_breaks),
                               fixed_breaks=bool(fixed_breaks))
    advice = compare_shape_advice(b if base_run is not None else None, h, renames, line_map)
    if base_run is None and base_present:
        change = "new"
    elif base_run is None:
        change = "unknown"     # nothing to compare with (no baseline at all)
    else:
        changed = _has_changed(head_status, base_status, delta, new_breaks, fixed_breaks)
        changed = changed or bool(advice and advice["changed"])
        change = "changed" if changed else "unchanged"
    gate = head_run.latency_gate
    return ModelDelta(name=name, status=head_status, reason=head_run.reason, base=base_json,
                      head=head_run.to_json(), error=error, delta=delta,
                      new_breaks=tuple(new_breaks), fixed_breaks=tuple(fixed_breaks),
                      unchanged_breaks=same, problems=tuple(problems), change=change,
                      compile=cost, shape_advice=advice,
                      latency_gate=UNCHANGED if _gated(h) else MEASURED if h is not None
                      and "latency" in (h.phases or ()) else NOT_MEASURED,
                      latency_gate_note=gate.note if gate is not None else None)


def _has_changed(status: str, base_status: str | None, d: Delta, new_breaks: list[dict],
                 fixed_breaks: list[dict]) -> bool:
    return bool(
        status != base_status or new_breaks or fixed_breaks
        or d.graph_count or any(c["delta"] for c in d.recompile_cases) or d.recompiles
        or d.export in ("broken", "fixed") or any(a["new"] for a in d.accuracy)
        or d.new_specialized or d.fixed_specialized or d.new_export_causes or d.output_shapes
        or any(lat.get("significant") for lat in d.latency)
        or bool(d.coverage and d.coverage.get("changes")))


# --------------------------------------------------------------------------- graph breaks

def break_key(b: GraphBreak, renames: dict[str, str]) -> tuple[str, str, str, str]:
    path = b.path or ""
    return (b.gb_type or b.gb or "", renames.get(path, path), b.function or "",
            normalise_source(b.source or ""))


def break_fingerprint(b: GraphBreak, renames: dict[str, str] | None = None) -> str:
    """Stable id of a break site for review de-duplication (no line unless no source)."""
    kind, path, func, src = break_key(b, renames or {})
    return fingerprint("graph-break", kind, path, func, src or b.library or f"line {b.line}")


def match_breaks(base: Sequence[GraphBreak], head: Sequence[GraphBreak], *,
                 renames: dict[str, str], line_map: LineMap
                 ) -> tuple[list[dict], list[dict], int]:
    """(new, fixed, unchanged count). Breaks as report dicts with `fingerprint`."""
    by_key: dict[tuple, tuple[list[GraphBreak], list[GraphBreak]]] = defaultdict(
        lambda: ([], []))
    for b in base:
        by_key[break_key(b, renames)][0].append(b)
    for h in head:
        by_key[break_key(h, renames)][1].append(h)
    left: tuple[list[GraphBreak], list[GraphBreak]] = ([], [])    # unpaired by key
    same = 0
    for key, (bs, hs) in by_key.items():
        path, has_source = key[1], bool(key[3])
        bs, hs = list(bs), list(hs)
        # First pair exact line-map hits (the tie-breaker when a source line repeats) ...
        for b in list(bs):
            target = line_map(path, b.line)
            hit = next((h for h in hs if target is not None and h.line == target), None)
            if hit is not None:
                bs.remove(b)
                hs.remove(hit)
                same += 1
        # ... then, with the same source text, any remaining pair is the same site, moved.
        if has_source:
            n = min(len(bs), len(hs))
            same += n
            bs, hs = bs[n:], hs[n:]
        # ... and a break with no line in the repository (in an installed package, reached from
        # a frame dynamo started there) is the same site where its place in the package is: the
        # PR cannot have moved it. Unpaired, norse's `state.v.requires_grad = True` in its
        # cells was "new" and "fixed" at once in every review of a model using them.
        for b in [b for b in bs if b.line is None]:
            hit = next((h for h in hs if h.line is None and h.library == b.library), None)
            if hit is not None:
                bs.remove(b)
                hs.remove(hit)
                same += 1
        left[0].extend(bs)
        left[1].extend(hs)
    # ... and last, across source texts: a line the PR rewrote in place whose break is of the
    # same kind, in the same function, where base's line now is (a new user's PR made `return
    # -self.flow.log_prob(z)` into `score = -self.flow.log_prob(z)`, and the review failed on
    # "2 new graph breaks" beside "🎉 Fixed" for the one break the library call always had)
    bs, hs = left
    for b in list(bs):
        path = renames.get(b.path or "", b.path or "")
        at = rewritten_line(path, b.line, line_map)
        hit = next((h for h in hs if at is not None and h.line == at and h.path == path
                    and (h.gb_type or h.gb) == (b.gb_type or b.gb) and h.function == b.function),
                   None)
        if hit is not None:
            bs.remove(b)
            hs.remove(hit)
            same += 1
    new = [_break_out(h, renames) for h in hs]
    fixed = [_break_out(b, renames, side="base") for b in bs]
    order = lambda d: (d["path"], d["line"] or 0, d["gb"] or "")   # noqa: E731
    return sorted(new, key=order), sorted(fixed, key=order), same


REWRITE_REACH = 200   # lines above an edited line searched for one the diff left as it was


def rewritten_line(path: str, line: int | None, line_map: LineMap) -> int | None:
    """Where base's `line` is in head when the PR edited that line in place: None when the
    diff keeps it (its own map says where) or it cannot tell; else the line at the same
    distance below the nearest line above it that the diff kept (or the same number where no
    line above was kept)."""
    if line is None or line_map(path, line) is not None:
        return None
    for k in range(line - 1, max(0, line - REWRITE_REACH), -1):
        mapped = line_map(path, k)
        if mapped is not None:
            return mapped + (line - k)
    return line


def _break_out(b: GraphBreak, renames: dict[str, str], side: str = "head") -> dict:
    path = b.path or ""
    out = {
        "gb": b.gb, "gb_type": b.gb_type,
        "path": renames.get(path, path) if side == "head" else path,
        "line": b.line, "function": b.function, "source": b.source,
        "reason": b.reason, "explanation": b.explanation, "hints": list(b.hints[:5]),
        "url": b.url, "count": b.count, "in_loop": bool(b.in_loop),
        "side": side, "fingerprint": break_fingerprint(b, renames),
    }
    if b.reported_line is not None:
        out["reported_line"] = b.reported_line
    if b.library is not None:
        out["library"] = b.library
    if b.matrix_only:
        out["matrix_only"] = True
    if b.inside:
        out["inside"] = b.inside
    outer = b.loop_frame or (b.user_stack[0] if b.user_stack else None)
    if b.in_loop and outer is not None and outer.path and (outer.path, outer.line) != (b.path, b.line):
        # the frame whose loop dynamo gave up on, as the worker found it (`loop_frame`: the
        # outermost frame whose line is in a loop), not the function the break is in (DINO's
        # attention broke inside `VisionTransformer.forward`'s loop over its blocks, and "in
        # `forward` — inside a loop" read as the attention's); older results: the outermost
        out["loop_frame"] = {"path": renames.get(outer.path, outer.path) if side == "head" else outer.path,
                             "line": outer.line, "function": outer.function}
    return out


# --------------------------------------------------------------------------- recompiles & co

# A new graph break with the stack it was found at (to tie recompiles to it).
NewBreak = tuple[dict, tuple[tuple[str | None, int | None, str | None], ...]]


def _with_stacks(new_breaks: list[dict], head: ModelRun | None) -> list[NewBreak]:
    """Each new break's report dict with its user stack ((path, line, function) outermost
    first) from head's results, once per stack it was reached by (`call_sites`); a break
    recorded without a stack has its own site only."""
    if head is None:
        return []
    stacks: dict[tuple, list[tuple]] = {}
    for b in head.breaks():
        key = (b.gb, b.path, b.line, b.function, b.source)
        stacks.setdefault(key, [s for s in b.stacks() if s])
    out = []
    for d in new_breaks:
        # (one entry per stack the site was reached by: each is the break's)
        for stack in stacks.get((d["gb"], d["path"], d["line"], d["function"], d["source"])) or [()]:
            out.append((d, stack or ((d["path"], d["line"], d["function"]),)))
    return out


def _old_breaks(head: ModelRun | None, new_breaks: Sequence[dict]) -> list[NewBreak]:
    """A side's breaks that are not new (head's: base breaks there too), each as
    `{gb, path, line}` with its user stack, to tie recompiles to them as `cause_of` ties
    them to new ones."""
    if head is None:
        return []
    new = {(d["gb"], d["path"], d["line"], d["function"], d["source"]) for d in new_breaks}
    out: list[NewBreak] = []
    for b in head.breaks():
        if (b.gb, b.path, b.line, b.function, b.source) in new:
            continue
        d = {"gb": b.gb, "path": b.path, "line": b.line}
        if b.inside:
            d["inside"] = b.inside
        for stack in [s for s in b.stacks() if s] or [()]:
            out.append((d, stack or ((b.path, b.line, b.function),)))
    return out


def cause_of(reason: RecompileReason, new_breaks: Sequence[NewBreak]) -> dict | None:
    """The new break a recompile follows from, or None.

    A break makes dynamo compile frames that did not exist without it (pt2bot/smoke/matrix.py
    records which frame each recompile was for): the resume function after the break
    (`resumed_after` = the break's own line) or after a call on the break's stack (the line of
    that call in the caller), and each function the break's stack passes through below the
    root frame, which dynamo inlined before and now enters as a frame of its own, or the
    stack's root itself where that is not the model's own frame (a break recorded with the
    inner frame's stack alone, its caller stopped at the call). Those frames then recompile
    for new shapes as the root frame would not. The model's own frame's recompiles never
    follow from a break (it was compiled before the break too).

    A frame of an installed package is on no user stack (its path is null): it is tied to a
    break dynamo reported inside that same package (`inside`, unfoldNd's `int(numpy.prod(...))`
    under its `forward`), whose frames on the way there it split off."""
    ra, fr = reason.resumed_after, reason.frame
    at = (ra.path, ra.line) if ra is not None and ra.path and ra.line is not None else None
    fn = (fr.path, fr.function) if at is None and fr is not None and fr.path and fr.function else None
    lib = _package(fr.library) if fr is not None and not fr.path and fr.library else None
    if at is None and fn is None and lib is None:
        return None
    # (resumed after a break's own line: that break, before one whose stack runs through it)
    own = next((d for d, _ in new_breaks if at is not None and (d["path"], d["line"]) == at), None)
    # a frame other than the model's own (frame 0) that is the function the break is in, where
    # the break's stack starts: that function was inlined into its caller before, and the break
    # made the caller stop at the call and run it as a frame of its own (guided-diffusion's
    # `SuperResModel.forward` calling `super().forward`, whose new NaN check broke; dynamo
    # records the break with the inner frame's stack alone)
    split = fn is not None and split_off_frame(reason.compile_id)
    return own or next((d for d, stack in new_breaks
                        if on_break_stack(stack, (d["path"], d["line"]), at, fn)
                        or (split and bool(stack) and (stack[0][0], stack[0][2]) == fn)
                        or (lib is not None and _package(d.get("inside")) == lib)), None)


def _sole_break(reason: RecompileReason, new_breaks: Sequence[NewBreak],
                old_breaks: Sequence[NewBreak]) -> dict | None:
    """The one new break, for a frame that a break split off, where head has that break and no
    other: the package's function the breaking line called runs as a frame of its own
    (torch-complex's `ComplexTensor.__mul__` under a PR's `y = x * mask`, which dynamo cannot
    proxy), or a function of the repository the frame run in eager calls after the break
    (recurrentgemma's `decode`, called by `Griffin.forward` once a break inside its block loop
    made dynamo give up on it), and no user stack ties it to the line. With more breaks it is
    not said which."""
    fr = reason.frame
    ours = {id(d): d for d, _ in new_breaks}
    if fr is None or not (fr.path or fr.library) or old_breaks or len(ours) != 1 \
            or not split_off_frame(reason.compile_id):
        return None
    return next(iter(ours.values()))


def _package(place: object) -> str | None:
    """The installed package of a file ("unfoldNd/unfold.py", "unfoldNd/utils.py:32"; a
    one-module library is its file)."""
    return re.sub(r":\d+$", "", place).split("/", 1)[0] or None if isinstance(place, str) else None


# What a frame split off by a break does on its own: compiled static first, it recompiles when
# a size it saw changes (automatic dynamic, "size mismatch") or a dim becomes 1. A guard the
# user's code made (`(h.size()[1] // 16) != 1` from a hard-coded reshape, with its own line) is
# a problem of its own even inside such a frame: the break did not create it, and it stays
# after the break is fixed.
_FOLLOWS_KINDS = frozenset({"size_mismatch", "size_one"})

# A frame resumed after a break takes the values live at the break as its arguments: the
# stack (`___stack2`) and the locals (`T`, `B` of `B, T, C = x.size()`). A Python number among
# them is guarded by value, `___stack2 == -1.9169241189956665` (a `.item()` passed to the
# `print` that broke) or `T == 16`, so the frame recompiles for each new value or size. Without
# the break there is no such argument: the guard is the break's. A guard on an expression
# (`(h.size()[1] // 16) != 1`) is the user's code and stays the frame's own problem. A list on the
# stack is guarded by its length the same way (`len(___stack1) == 2`: kornia's per-image
# `torch.stack([... for i in range(len(factor))])` resumed after the PR's break).
_ARGUMENT_VALUE_GUARD = re.compile(r"\s*(?:[A-Za-z_]\w*|len\(___stack\d+\))\s*==\s*"
                                   r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*(?:#|$)"
                                   # the value the break produced, tested on the line that broke
                                   # (black-forest-labs/flux: `if t.max().item() <= 1.0:` guarded
                                   # as `___stack0 <= 1.0` in the frame resumed after it): only
                                   # the stack's, a local's test is the user's own code
                                   r"|\s*___stack\d+\s*(?:<=|>=|<|>|!=)\s*"
                                   r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*(?:#|$)")


# A frame a break made its own (a helper dynamo inlined before) is called from code that now
# runs in eager, once per caller: a shared wrapper (perceiver-pytorch's `PreNorm(fn)`, around an
# attention block and a feed-forward block) gets another module each time, and its guard on
# that module's type fails (`___check_type_id(self._modules['fn'], ...)`); an argument that is a
# tensor on one call and None on another, or requires grad on one call only, fails its guard
# the same way. Inlined, each was a constant of the one graph. These guards are on what the
# frame was passed, not on an expression of the user's code.
_ARGUMENT_KIND_GUARD = re.compile(r"^\s*(?:___check_type_id\(|___check_obj_id\(|[\w.'\[\]]+ is (?:not )?None\b)"
                                  r"|requires_grad mismatch|expected type of '[^']+' to be a tensor type")


# And a frame a break split off that one class's instances share (two Swin blocks, one
# shifted and one not, each calling the attention that now breaks: the rest of the block after
# the call is one resume function for both) fails its guard on a setting the instance holds,
# `self.shift_size == 0`; inlined, each instance's setting was a constant of the one graph.
_SELF_VALUE_GUARD = re.compile(r"^\s*self(?:\.\w+|\[[^\]]*\])+\s*==\s*"
                               r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|True|False|'[^']*')\s*(?:#|$)")


# A value passed across a break and guarded on a line that adds it to the module's state
# (`self.atoms_seen += n_real`, a counter of the real atoms seen): the state changes on every
# call, and its guard, `self.atoms_seen == 9`, recompiles with or without the break, so it is
# no break's (a new user read "1 recompile follows from it ... go away with the break" beside
# a counter that recompiled on every call and hit the limit). A plain write that reads no
# state back (S4's `self.dt_range = (dt.min().item(), dt.max().item())`, kept for a log) is
# the break's: its frame compiles again once, on the first new value, measured on 2.13.
_STATE_WRITE = re.compile(r"^\s*(self(?:\.\w+)+)\s*(?:(?:[-+*/%@&|^]|//|\*\*|<<|>>)=(?!=)|=(?!=).*\1\b)")


def _follows(r: RecompileReason) -> bool:
    if r.carried or r.drawn:
        # state a call left on the module, failing its guard on the next call: the module's
        # own, with or without a break (ESM-2's cached sequence length); and a number drawn
        # anew on every call, which a user's process compiles for on every call
        return False
    # (a value guard of a frame a break split off whole, not resumed: a number it is passed,
    # `n == 10` in otloss's `uniform_weights(batch, n, ...)`, called for the 10 predicted points
    # and then the 6 targets from a loss whose loop now runs in eager; inlined, each call's
    # number was a constant of the one graph)
    passed = r.resumed_after is not None or split_off_frame(r.compile_id)
    return r.kind in _FOLLOWS_KINDS or (
        r.kind == "guard" and (_ARGUMENT_KIND_GUARD.search(r.guard or "") is not None
                               or _SELF_VALUE_GUARD.match(r.guard or "") is not None)) or (
        passed and r.kind == "guard"
        and _ARGUMENT_VALUE_GUARD.match(r.guard or "") is not None
        and not _STATE_WRITE.match(r.source or ""))


def _follows_shapes(group: Sequence[RecompileReason]) -> bool:
    return all(_follows(r) for r in group)


def _compiles(reasons: Sequence[RecompileReason]) -> list[list[RecompileReason]]:
    """A case's reasons grouped per compile (one compile can fail several guards); reasons
    recorded without a compile id (older results) are one compile each."""
    groups: dict[object, list[RecompileReason]] = {}
    for i, r in enumerate(reasons):
        groups.setdefault(r.compile_id if r.compile_id is not None else ("#", i), []).append(r)
    return list(groups.values())


def compare_recompiles(base: ModelRun | None, head: ModelRun,
                       new_breaks: Sequence[NewBreak] = (),
                       old_breaks: Sequence[NewBreak] = (),
                       base_breaks: Sequence[NewBreak] = (),
                       line_map: LineMap | None = None) -> dict:
    """Per shape case: head recompiles − base recompiles; `new_recompiles` sums increases.

    Every figure is in the unit of `recompiles.count`: a compile whose every failed guard is
    torch's own 0/1 specialisation of a size-1 dim is left out (the case's `size_one` says
    how many there were), so the cases add up to the table's total and a size-1 compile never
    counts against the PR.

    Recompiles that follow from a new break (`cause_of`) are that break's consequence, not a
    problem of their own: such a reason carries `caused_by` {gb, path, line}, the case counts
    them in `caused`, and `delta`, `recompiles` and `new_recompiles` count only the others;
    each new break's `caused_recompiles` (and the delta's) says how many followed from it.
    Only head's excess over base is attributed, so a frame that recompiled on base as well
    is never explained away. Results without frames (older files) attribute nothing.

    A frame that a break base has too (`old_breaks`) splits off gets no dynamic mark: its
    inputs are what the code computed before the break (a library's output), not the
    inputs the matrix marks. New code in it (a PR's lines after a library call that breaks)
    is compiled static first and again, dynamic, when a size first changes: automatic
    dynamic's one recompile per frame, which a plain `torch.compile` makes on base too. Such
    a compile, every failed guard a size change, in a frame on an old break's stack (or, with
    no new break on head, in any frame but the model's own: `_split_off`), is
    counted in `after_break` (the case), `after_break_recompiles` (the total) and its
    reasons' `after_break` {gb, path, line}, and left out of `delta` and `new_recompiles`
    like the new breaks' ones; only as many as head has more of them than base has in the
    frames of its own breaks (`base_breaks`). Any other guard there (a value the PR's code
    passes across the break, `n == 1.0`) is the PR's and stays a new recompile.
    """
    brc = base.recompiles if base is not None else None
    hrc = head.recompiles
    base_cases = {case_key(c.shape): c for c in (brc.cases if brc else ())}
    cases = []
    caused_total = after_total = 0
    for d, _ in new_breaks:
        d["caused_recompiles"] = 0
    for c in (hrc.cases if hrc else ()):
        bc = base_cases.get(case_key(c.shape))
        h_one, b_one = _size_one_compiles(c), (_size_one_compiles(bc) if bc else 0)
        hn = max(0, (c.recompiles or 0) - h_one)
        bn = max(0, ((bc.recompiles if bc else None) or 0) - b_one)
        causes: dict[int, dict] = {}    # id(reason) -> its new break
        n_caused = 0
        if new_breaks and hn > bn:
            matched = [(g, d) for g in _compiles(c.reasons)
                       if not _all_size_one(g) and _follows_shapes(g)
                       and (d := cause_of(g[0], new_breaks)
                            or _sole_break(g[0], new_breaks, old_breaks)) is not None]
            # Resume frames are the surest sign; then frames entered because of the break.
            matched.sort(key=lambda gd: gd[0][0].resumed_after is None)
            for group, d in matched[:hn - bn]:
                n_caused += 1
                d["caused_recompiles"] += 1
                causes.update((id(r), d) for r in group)
        caused_total += n_caused
        after: dict[int, dict] = {}     # id(reason) -> the old break whose frame it is in
        n_after = 0
        base_guards = {_frame_guard(r, line_map) for r in (bc.reasons if bc else ())}
        if old_breaks and hn > bn + n_caused:
            matched = [(g, d) for g in _compiles(c.reasons)
                       if not any(id(r) in causes for r in g)
                       and (d := _split_off(g, old_breaks, not new_breaks)) is not None]
            # only head's excess over base's own such compiles in its breaks' frames is
            # explained (base's lines may differ, so they are counted, not matched), the
            # frames base did not recompile the same way first
            # (counted by the rule head's are matched by: base's frames of an installed
            # package count only where head's do, or a new break's PR would explain none)
            on_base = [g for g in _compiles(bc.reasons if bc else ())
                       if _split_off(g, base_breaks, not new_breaks) is not None]
            matched.sort(key=lambda gd: (_frame_guard(gd[0][0]) in base_guards,
                                         gd[0][0].resumed_after is None))
            for group, d in matched[:min(hn - bn - n_caused, len(matched) - len(on_base))]:
                n_after += 1
                after.update((id(r), d) for r in group)
        after_total += n_after
        # the unexplained first, then those a break explains, then those base failed the same
        # way in the same frame (its own recompiles: listed first, they read as the PR's),
        # torch's size-1 ones last
        reasons = sorted(c.reasons, key=lambda r: (r.kind == "size_one", _frame_guard(r) in base_guards,
                                                   id(r) in causes or id(r) in after))
        out = []
        for r in reasons[:5] if hn > bn else ():
            j = r.to_json()
            for key, got in (("caused_by", causes), ("after_break", after)):
                if id(r) in got:
                    d = got[id(r)]
                    j[key] = {"gb": d["gb"], "path": d["path"], "line": d["line"]}
            out.append(j)
        row = {"shape": dict(c.shape), "base": bn if bc is not None else None,
               "head": hn, "delta": hn - n_caused - n_after - bn, "reasons": out}
        if n_caused:
            row["caused"] = n_caused
        if n_after:
            row["after_break"] = n_after
        if h_one or b_one:
            row["size_one"] = {"base": b_one if bc is not None else None, "head": h_one}
        cases.append(row)
    total = ((hrc.count if hrc else None) or 0) - ((brc.count if brc else None) or 0)
    total -= caused_total + after_total
    increases = sum(max(0, c["delta"]) for c in cases)
    return {"recompiles": total,
            "new_recompiles": increases if cases else max(0, total),
            "caused_recompiles": caused_total,
            "after_break_recompiles": after_total,
            "recompile_cases": cases,
            "eager_fallback": bool(hrc and hrc.eager_fallback)
            and not (brc and brc.eager_fallback)}


# Dynamo compiles the model's own `forward` as frame 0 ("0/1": frame 0's second compile); any
# other frame exists because a break sent the code around it to eager (a resume function, or
# a function called from there). A frame in an installed package carries no user stack to tie
# it to one break (the break's stack holds the repository's frames only).
_UNTIED = {"gb": None, "path": None, "line": None}


def _split_off(group: Sequence[RecompileReason], breaks: Sequence[NewBreak],
               untied: bool) -> dict | None:
    """The break whose frame a compile of sizes only is in (`cause_of`), or, with `untied`
    (every break of the side is one of `breaks`), `_UNTIED` for any frame but the model's own;
    None for another compile."""
    if not breaks or _all_size_one(group) or not all(r.kind in _FOLLOWS_KINDS for r in group):
        return None
    d = cause_of(group[0], breaks)
    if d is None and untied and split_off_frame(group[0].compile_id):
        return _UNTIED
    return d


def _frame_guard(r: RecompileReason, line_map: LineMap | None = None) -> tuple[Any, ...]:
    """A compile's frame and guard, to tell the frames base recompiled the same way: for a
    base reason, `line_map` (base line -> head line) moves its frame's line (and a resume
    frame's `_at_<line>`) to where head has it, and the guard is compared without torch's
    trailing source comment, which names the line (lines the PR added above shift them)."""
    guard = (r.guard or "").split("  #")[0].strip()
    f = r.frame
    if f is None:
        return (None, None, None, guard)
    line, function = f.line, f.function
    if line_map is not None and f.path is not None:
        line = line_map(f.path, line)
        resumed = RESUME_RE.match(function or "")
        if resumed:
            function = f"torch_dynamo_resume_in_{resumed['inner']}_at_{line_map(f.path, int(resumed['line']))}"
    return (f.path, function, line, guard)


def _all_size_one(group: Sequence[RecompileReason]) -> bool:
    return all(r.kind == "size_one" for r in group)


def _size_one_compiles(case: RecompileCase) -> int:
    """How many of a case's recompiles were torch's 0/1 specialisation only: the compiles
    `recompiles.count` leaves out (pt2bot/smoke/matrix.py counts them the same way)."""
    return sum(1 for g in _compiles(case.reasons) if _all_size_one(g))


def compare_specialized(base: ModelRun | None, head: ModelRun, renames: dict[str, str],
                        new_breaks: Sequence[NewBreak] = ()) -> tuple[list[dict], list[dict]]:
    """Head's specialisations base did not make, and base's head no longer makes. A new one
    made in a frame a new break splits off (`cause_of`, as for recompiles) carries
    `caused_by` {gb, path, line}: held-out batch 38's user read "dim `batch` = 2 at
    model.py:50", an unchanged line, pinned only because the frame resumed after the PR's
    `.item()` two lines up took a tensor computed before it, with no dynamic mark."""
    def key(s: Any) -> tuple:
        p = s.path or ""
        return (s.dim, renames.get(p, p), normalise_source(s.source or ""))

    def said(s: Any) -> dict:
        j = s.to_json()
        d = cause_of(RecompileReason(frame=s.frame, compile_id=s.compile_id,
                                     resumed_after=s.resumed_after), new_breaks) \
            if new_breaks and (s.frame is not None or s.resumed_after is not None) else None
        if d is not None:
            j["caused_by"] = {"gb": d["gb"], "path": d["path"], "line": d["line"]}
        return j

    base_s = (base.specialized if base is not None else None) or ()
    head_s = head.specialized or ()
    b = Counter(key(s) for s in base_s)
    h = Counter(key(s) for s in head_s)
    new = [said(s) for s in head_s if h[key(s)] > b[key(s)]]
    fixed = [s.to_json() for s in base_s if b[key(s)] > h[key(s)]]
    return new, fixed


def compare_export(base: ModelRun | None, head: ModelRun) -> str:
    """same | broken | fixed | n/a (export not run on head). No baseline counts as ok."""
    h = head.export.ok if head.export is not None else None
    if h is None:
        return "n/a"
    b = base.export.ok if base is not None and base.export is not None else None
    b = True if b is None else b
    if b and not h:
        return "broken"
    if h and not b:
        return "fixed"
    return "same"


# --------------------------------------------------------------------------- shape advice

def _advice_dims(advice: ShapeAdvice | None) -> dict[tuple[str, str], dict]:
    """(input, axis) -> the advice's entry for it, for entries that are objects."""
    out = {}
    for inp, axes in (advice.dims() if advice is not None else {}).items():
        if isinstance(axes, dict):
            out.update({(inp, ax): e for ax, e in axes.items() if isinstance(e, dict)})
    return out


def _advice_key(e: dict) -> tuple:
    if e.get("static"):
        return ("static",)
    return (e.get("name"), e.get("min"), e.get("max"), e.get("multiple_of"))


_BOUNDS = ("min", "max", "multiple_of")


def compare_shape_advice(base: ModelRun | None, head: ModelRun | None,
                         renames: dict[str, str] | None = None,
                         line_map: LineMap | None = None) -> dict | None:
    """report.json's `shape_advice` of a model: `{"head", "base", "changed"}`; `changed` when
    a dim's advice differs (a new bound or divisibility, a dim static on one side). None
    when head has no advice.

    Where head's export failed before the dims (its advice is the dims it was asked for) and
    base's found a dim pinned that head's lists as dynamic, also `base_pins`: `[{input, axis,
    entry}]`, base's entry with its place in head's file (`line` null where the PR changed
    that line): what the summary says of that dim, and leaves out of the YAML to paste; and
    for a dim dynamic on both sides that base's export bounded where head's has no bound,
    head's entry with base's bounds."""
    h = head.shape_advice if head is not None else None
    if h is None:
        return None
    b = base.shape_advice if base is not None else None
    changed = False
    out: dict[str, Any] = {"head": h.to_json(), "base": b.to_json() if b is not None else None,
                           "changed": False}
    if b is not None:
        hd, bd = _advice_dims(h), _advice_dims(b)
        changed = {k: _advice_key(e) for k, e in hd.items()} != \
            {k: _advice_key(e) for k, e in bd.items()}
        if (h.export or {}).get("ok") is False:
            pins = []
            for (inp, ax), e in sorted(hd.items()):
                was = bd.get((inp, ax))
                if was is not None and was.get("static") and not e.get("static"):
                    path = (renames or {}).get(was.get("path"), was.get("path"))
                    line = line_map(path, was.get("line")) if line_map and path else was.get("line")
                    pins.append({"input": inp, "axis": ax, "entry": {**was, "path": path, "line": line}})
                elif was is not None and not was.get("static") and not e.get("static") and \
                        all(e.get(k) is None for k in _BOUNDS) and any(was.get(k) is not None for k in _BOUNDS):
                    # a bound base's export needed (held-out batch 39's `size >= 4`, an image
                    # halved then pooled), which head's, stopped before, never reached
                    pins.append({"input": inp, "axis": ax,
                                 "entry": {**e, **{k: was.get(k) for k in _BOUNDS}}})
            if pins:
                out["base_pins"] = pins
    out["changed"] = changed
    return {k: out[k] for k in ("head", "base", "changed", "base_pins") if k in out}


def new_export_causes(base: ModelRun | None, head: ModelRun, renames: dict[str, str],
                      line_map: LineMap) -> list[dict]:
    """What newly keeps export from being dynamic or from succeeding, one entry each:
    - `kind: "static_dim"`: a dim base's advice could make dynamic and head's cannot (`input`,
      `axis`, `dim`, `value`, `reason`, `path`, `line`, `source` from head's advice);
    - `kind: "export_failure"`: export fails on both sides, and head's failure has another
      cause (kind) or another place (path and source line, or the line through the diff's
      line map when no source is known) than base's: head's `export_kind`, `message`,
      `path`, `line`, `source`, and `base` {export_kind, path, line, source}.
    Empty without a base run."""
    if base is None:
        return []
    out: list[dict] = []
    bd, hd = _advice_dims(base.shape_advice), _advice_dims(head.shape_advice)
    be, he = base.export, head.export
    # where head's export newly fails, a dim pinned past that failure was found by tracing on
    # past it (draft_export): it may be the failure's doing (S4's PR: "seq can no longer be
    # dynamic" at an unchanged line after its new `if`, and with the verified fix of that `if`
    # seq exported dynamic)
    past = ({"path": he.path, "line": he.line} if he is not None and he.ok is False and he.path
            and isinstance(he.line, int) and (be is None or be.ok is not False) else None)
    for (inp, ax), e in sorted(hd.items()):
        was = bd.get((inp, ax))
        if e.get("static") and was is not None and not was.get("static"):
            out.append({"kind": "static_dim", "input": inp, "axis": int(ax) if ax.isdigit()
                        else ax, "dim": was.get("name"), "value": e.get("value"),
                        "reason": e.get("reason"), "path": e.get("path"), "line": e.get("line"),
                        "source": e.get("source"),
                        **({"past_failure": past} if past and (past["path"], past["line"]) !=
                           (e.get("path"), e.get("line")) else {})})
    if be is not None and he is not None and be.ok is False and he.ok is False \
            and _export_cause(be, renames, line_map) != _export_cause(he, {}, None) \
            and not _same_failure(be, he, renames, line_map):
        out.append({"kind": "export_failure", "export_kind": he.kind, "message": he.message,
                    "path": he.path, "line": he.line, "source": he.source,
                    **({"library": he.library} if he.library else {}),
                    "base": {"export_kind": be.kind, "message": be.message, "path": be.path,
                             "line": be.line, "source": be.source,
                             **({"library": be.library} if be.library else {})}})
    return out


def _same_failure(be: Any, he: Any, renames: dict[str, str], line_map: LineMap) -> bool:
    """Whether head's export fails as base's did on a line the PR only rewrote: the same kind,
    file and first line of torch's message, on base's line (mapped through the diff where the
    line is unchanged; `rewritten_line` where the PR edited it). A new user's PR turned
    `return -self.flow.log_prob(z)` into `score = -self.flow.log_prob(z)`, and the review
    said export "fails for a new reason (data_dependent; on base: data_dependent)"."""
    if be.kind == he.kind and export_message_key(be.message) == export_message_key(he.message) \
            and (be.line is None or he.line is None):
        # one side unlocated (a review locates head's failure, and base's only where it needs
        # to): the same kind and message is all that can be compared, and it is the same.
        # DINO's PR that touched no model code was told "fails for a new reason ...; on base,
        # on \"\"" of the very constraint violation base had
        return True
    path = renames.get(be.path or "", be.path or "")
    if not (be.kind == he.kind and be.path and path == he.path and be.line is not None
            and he.line is not None
            and export_message_key(be.message) == export_message_key(he.message)):
        return False
    return he.line in (line_map(path, be.line), rewritten_line(path, be.line, line_map))


def _export_cause(e: Any, renames: dict[str, str], line_map: LineMap | None) -> tuple:
    """What identifies an export failure across a diff: its kind and place (the renamed path
    and the normalised source line, else the line mapped to head), else its first line."""
    path = renames.get(e.path or "", e.path or "")
    if e.path and e.source:
        return (e.kind, path, normalise_source(e.source))
    if e.path and e.line is not None:
        return (e.kind, path, line_map(path, e.line) if line_map else e.line)
    return (e.kind, None, (e.message or "").split("\n", 1)[0])


def compare_accuracy(base: ModelRun | None, head: ModelRun) -> list[dict]:
    """Head's mismatching shapes; `new` unless base mismatched on the same shape too."""
    base_bad = {case_key(a.shape) for a in (base.accuracy if base is not None else None) or ()
                if a.match is False}
    return [{"shape": dict(a.shape), "max_abs_err": a.max_abs_err,
             "new": case_key(a.shape) not in base_bad}
            for a in head.accuracy or () if a.match is False]


def compare_output_shapes(base: ModelRun | None, head: ModelRun) -> list[dict]:
    """The shape cases on which head's eager outputs have other shapes than base's ({shape,
    base, head}). The review compares compile behaviour; a model whose outputs all changed
    shape (a resize fed the wrong dims) is still not "unchanged". Only cases both sides
    recorded."""
    base_shapes = {case_key(a.shape): a.out_shapes for a in (base.accuracy if base is not None else None) or ()
                   if a.out_shapes is not None}
    out = []
    for a in head.accuracy or ():
        before = base_shapes.get(case_key(a.shape))
        if before is not None and a.out_shapes is not None and list(before) != list(a.out_shapes):
            out.append({"shape": dict(a.shape), "base": list(before), "head": list(a.out_shapes)})
    return out


def _median(t: Samples | None) -> float | None:
    v = t.median if t is not None else None
    return float(v) if v is not None and math.isfinite(v) else None


def _grouped(t: Samples | None) -> list:
    return t.grouped() if t is not None else []


def compare_latency(base: ModelRun | None, head: ModelRun, *, threshold_pct: float,
                    comparable: bool = True, note: str | None = None) -> list[dict]:
    """Per shape: compiled latency head vs base (pt2bot.stats.compare_samples: ratio of the
    p10, per unit of reference-workload time when both sides timed it, + bootstrap interval)."""
    base_lat: dict[tuple, LatencyRow] = {
        case_key(e.shape): e for e in (base.latency_rows() if base is not None else ())}
    out = []
    for e in head.latency_rows():
        be = base_lat.get(case_key(e.shape))
        row: dict[str, Any] = {
            "shape": dict(e.shape),
            "base_ms": _median(be.compiled_ms if be else None),
            "head_ms": _median(e.compiled_ms),
            "eager_base_ms": _median(be.eager_ms if be else None),
            "eager_head_ms": _median(e.eager_ms),
            "ratio": None, "ci_low": None, "ci_high": None, "change_pct": None,
            "significant": False, "direction": "same", "note": None,
            "statistic": None, "median_ratio": None, "rounds": None, "alpha": None,
            "threshold_pct": threshold_pct,
        }
        if be is None:
            row["note"] = "no base measurement"
        elif not comparable:
            row["note"] = note
        else:
            # reference_ms: each process's fixed reference workload (pt2bot/smoke/timing.py),
            # used by the statistic to cancel process-wide slow modes when both sides have it
            st = compare_samples(_grouped(be.compiled_ms), _grouped(e.compiled_ms),
                                 threshold_pct=threshold_pct,
                                 base_reference=_grouped(be.reference_ms) or None,
                                 head_reference=_grouped(e.reference_ms) or None)
            for k in ("ratio", "ci_low", "ci_high", "change_pct", "significant", "direction",
                      "note", "statistic", "median_ratio", "rounds", "alpha"):
                row[k] = st[k]
        out.append(row)
    return out


# --------------------------------------------------------------------------- compile cost

DEFAULT_COMPILE_PCT = 30.0
# Below this CPU difference a compile is not called costlier, whatever the ratio: a tiny
# model's compile (0.1 s with aot_eager) moves by more than its own size in relative terms.
MIN_COMPILE_DELTA_S = 0.05
# The measures that do not move with machine load (pt2bot/smoke/compile_cost.py).
WORK_KEYS = ("fx_nodes", "guards", "graphs", "kernels", "kernel_bytes")
COST_KEYS = ("cpu_s", "fx_nodes", "guards", "graphs", "kernels", "cache_hits", "cache_misses")


def cost_json(cost: CompileCost | None) -> dict[str, Any]:
    """A side of report.json's `models[i].compile`: the contract's keys (null where
    unmeasured), then the size of the generated code and the cache state."""
    out = {k: getattr(cost, k) if cost is not None else None for k in COST_KEYS}
    out["kernel_bytes"] = cost.kernel_bytes if cost is not None else None
    out["fx_ops"] = cost.fx_ops if cost is not None else None
    out["cache"] = cost.cache if cost is not None else None
    return out


def _ratio(b: float | int | None, h: float | int | None) -> float | None:
    if not isinstance(b, (int, float)) or not isinstance(h, (int, float)) or b <= 0:
        return None
    return h / b


def compare_compile(base: ModelRun | None, head: ModelRun, *,
                    threshold_pct: float | None = None,
                    new_breaks: bool = False, fixed_breaks: bool = False) -> dict[str, Any] | None:
    """report.json's `models[i].compile`: each side's first-compile cost, and whether head's
    is a regression (`regression`, `ratio`, `basis`, `note`). None when neither side has it.

    The CPU seconds are the cost; whether a rise is real is decided by the deterministic
    measures (FX nodes, guards, graphs, kernels, generated code): a compile that did no more
    work than base's is not costlier, whatever a loaded machine made its CPU time (that
    is what keeps an unchanged model from ever being called slower). So: `ratio` is head's
    CPU seconds over base's, and a regression is a ratio of at least 1 + pct/100 (and
    `MIN_COMPILE_DELTA_S` more) with at least one deterministic measure larger on head.
    A compile whose FX nodes grew past the threshold is also a regression when its CPU
    seconds rose by half the threshold (load on a shared machine makes a single CPU figure
    read low). When the CPU seconds do not compare (one side loaded its graphs from the
    on-disk cache and the other compiled them, or a side has none), `ratio` is that of the
    FX nodes (`basis: "fx_nodes"`) and decides alone.

    With `new_breaks` (head has breaks base has not), a regression whose graphs grew while its
    FX operations (`fx_ops`; where a side lacks them, its FX nodes, which a split grows by the new
    graphs' inputs and outputs) grew less than the threshold is the breaks' (`follows_breaks`): a break splits the
    model into more graphs, each compiled on its own (inductor's code generation and C++ build
    per graph), so the first compile costs more for no more work; the break is judged once, as
    a break (its recompiles likewise).

    A measure of work counts as grown only by half the threshold or more: FX nodes 42 → 45
    and guards 193 → 218 beside CPU seconds 0.12 → 0.30 on a loaded machine failed a review as
    "150% costlier". With `fixed_breaks` (base has breaks head has not) and no more graphs on
    head, more work is not a regression either: it is code base ran eagerly, now compiled
    (whisper's decoder, which dynamo gave up on at a break, compiled whole once the break was
    fixed: FX nodes 97 → 220, graphs 2 → 1, "303% costlier").
    """
    hc = head.compile_cost
    bc = base.compile_cost if base is not None else None
    if hc is None and bc is None:
        return None
    pct = DEFAULT_COMPILE_PCT if threshold_pct is None else float(threshold_pct)
    out: dict[str, Any] = {"base": cost_json(bc) if base is not None else None,
                           "head": cost_json(hc), "regression": False, "ratio": None,
                           "basis": None, "note": None, "threshold_pct": pct}
    if hc is None or bc is None:
        out["note"] = "not measured on " + ("head" if hc is None else "base")
        return out
    cut = [side for side, c in (("base", bc), ("head", hc)) if c.retried]
    if cut:
        whose = "base's and head's first compiled calls" if len(cut) == 2 else f"{cut[0]}'s first compiled call"
        out["note"] = (f"not compared: {whose} raised (a dim declared dynamic that the code pins) "
                       f"and {'were' if len(cut) == 2 else 'was'} run again with the dims marked "
                       "weakly, reusing what had compiled, so the figures are not one compile's")
        return out
    if bc.backend and hc.backend and bc.backend != hc.backend:
        out["note"] = f"base and head compiled with different backends ({bc.backend}, {hc.backend})"
        return out
    limit = 1.0 + pct / 100.0
    grew = [k for k in WORK_KEYS
            if isinstance(getattr(bc, k), int) and isinstance(getattr(hc, k), int)
            and getattr(hc, k) > getattr(bc, k)
            and (getattr(bc, k) == 0 or getattr(hc, k) / getattr(bc, k) >= 1.0 + pct / 200.0)]
    compiled_more = (fixed_breaks and isinstance(bc.graphs, int) and isinstance(hc.graphs, int)
                     and hc.graphs <= bc.graphs)
    cpu = _ratio(bc.cpu_s, hc.cpu_s)
    nodes = _ratio(bc.fx_nodes, hc.fx_nodes)
    # the work alone, where both sides have it: the operations (a split adds inputs and outputs)
    ops = _ratio(bc.fx_ops, hc.fx_ops)
    if cpu is not None and bc.cache == hc.cache:
        out.update(ratio=round(cpu, 4), basis="cpu_s")
        more_s = (hc.cpu_s or 0) - (bc.cpu_s or 0) >= MIN_COMPILE_DELTA_S
        # Load on a shared machine slows the side measured in a busy moment: a compile twice
        # as big measured 1.29× once. When the work itself grew past the threshold (FX
        # nodes), CPU time that rose by half the threshold corroborates it.
        corroborated = (nodes is not None and nodes >= limit
                        and cpu >= 1.0 + pct / 200.0)
        work = ", ".join(f"{k.replace('_', ' ')} {getattr(bc, k)} → {getattr(hc, k)}"
                         for k in grew)
        if more_s and grew and (cpu >= limit or corroborated) and compiled_more:
            out["note"] = (f"more of the model compiled, not a regression: code base ran eagerly "
                           f"is in the graph once its break is fixed ({work}; graphs {bc.graphs} → "
                           f"{hc.graphs})")
        elif more_s and grew and (cpu >= limit or corroborated):
            out["regression"] = True
            # (more graphs alone is the model split, not more work: MAE's "the compile does
            # more work: graphs 1 → 2" beside FX nodes 171 → 121 read as a contradiction)
            out["note"] = (f"the compile does more work: {work}" if grew != ["graphs"] else
                           f"the compile is split into more graphs, each traced and compiled on its "
                           f"own: {work}")
            work_ratio = ops if ops is not None else nodes
            if new_breaks and "graphs" in grew and work_ratio is not None and work_ratio < limit:
                out["follows_breaks"] = True
        elif cpu >= limit and more_s:
            out["note"] = ("CPU time up, but FX nodes, guards, graphs and kernels did not "
                           f"grow by {pct / 2:g} % or more: about the same work on a busier "
                           "machine, not counted")
        return out
    why = (f"base {bc.cache}, head {hc.cache}" if cpu is not None else "CPU time missing")
    if nodes is None:
        out["note"] = f"CPU seconds do not compare ({why}) and FX nodes are missing"
        return out
    out.update(ratio=round(nodes, 4), basis="fx_nodes", regression=nodes >= limit and not compiled_more,
               note=f"CPU seconds do not compare ({why}): judged on FX nodes"
                    + ("; more of the model compiled, its break fixed: not a regression"
                       if nodes >= limit and compiled_more else ""))
    return out


# --------------------------------------------------------------------------- graph coverage

def coverage_side(run: ModelRun | None) -> dict[str, Any] | None:
    """One side of `delta.coverage`: the graph-break pass's coverage and the frames that run
    eagerly (those it skipped, and those that hit the recompile limit over the matrix)."""
    cov = run.graph_coverage if run is not None else None
    if cov is None:
        return None
    frames = {(f.function, f.path, f.line) for f in cov.eager_frames}
    limit = run.recompiles.limit_frames if run.recompiles is not None else None
    at_limit = {(f.function, f.path, f.line) for f in limit or ()}
    return {"captured_ops": cov.captured_ops, "unique_graphs": cov.unique_graphs,
            "largest_share": cov.largest_share, "aten_in_graphs": cov.aten_in_graphs,
            "aten_outside": cov.aten_outside, "eager_frames": len(frames | at_limit),
            "recompile_limit_frames": len(at_limit)}


def _pct(v: Any) -> str:
    return f"{v * 100:.0f} %" if isinstance(v, (int, float)) else "?"


def _moved_ops(base: ModelRun | None, head: ModelRun, most: int = 4) -> str:
    """Which operators the change in ops outside graphs is made of, most changed first: " (+2
    aten.view, +1 aten.addmm)"; empty where a side did not count them by operator."""
    sides = [r.graph_coverage.aten_outside_ops if r is not None and r.graph_coverage else None
             for r in (base, head)]
    if not all(isinstance(s, Mapping) for s in sides):
        return ""
    def n(side: Mapping[str, Any], k: str) -> int:
        v = side.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0
    b, h = sides
    moved = sorted(((n(h, k) - n(b, k), str(k)) for k in set(b) | set(h)),
                   key=lambda d: (-abs(d[0]), d[1]))
    moved = [(d, k) for d, k in moved if d]
    words = [f"{d:+d} {k}" for d, k in moved[:most]]
    if len(moved) > most:
        words.append(f"{len(moved) - most} more")
    return f" ({', '.join(words)})" if words else ""


def compare_coverage(base: ModelRun | None, head: ModelRun) -> dict[str, Any] | None:
    """`delta.coverage`: both sides, and what changed in words ("captured ops 412 → 380",
    "largest graph 100 % → 61 %"); None when head has no coverage."""
    h = coverage_side(head)
    if h is None:
        return None
    b = coverage_side(base)
    changes: list[str] = []
    if b is not None:
        for key, label, fmt in (("captured_ops", "captured ops", str),
                                ("aten_outside", "ops outside graphs", str),
                                ("unique_graphs", "graphs", str),
                                ("largest_share", "largest graph", _pct),
                                ("eager_frames", "frames run eagerly", str)):
            bv, hv = b.get(key), h.get(key)
            if bv is None or hv is None or fmt(bv) == fmt(hv):
                continue
            text = f"{label} {fmt(bv)} → {fmt(hv)}"
            if key == "aten_outside":
                text += _moved_ops(base, head)
            if key == "eager_frames" and h["recompile_limit_frames"]:
                text += f" ({h['recompile_limit_frames']} at the recompile limit)"
            changes.append(text)
    return {"base": b, "head": h, "changes": changes}
def _gated(run: ModelRun | None) -> bool:
    gate = run.latency_gate if run is not None else None
    return gate is not None and gate.gate == UNCHANGED


def gated_latency(head: ModelRun) -> list[dict]:
    """The latency rows of a model the gate left unmeasured (pt2bot/latency_gate.py): one per
    shape case, no ratio, no interval, no verdict. The cases are head's latency rows when a
    first pass timed them, else those of its shape matrix or accuracy check."""
    shapes = ([e.shape for e in head.latency_rows()]
              or [c.shape for c in (head.recompiles.cases if head.recompiles else ())]
              or [a.shape for a in head.accuracy or ()] or [{}])
    note = head.latency_gate.note if head.latency_gate is not None else None
    return [{"shape": dict(shape), "base_ms": None, "head_ms": None, "eager_base_ms": None,
             "eager_head_ms": None, "ratio": None, "ci_low": None, "ci_high": None,
             "change_pct": None, "significant": False, "direction": "same",
             "note": note or UNCHANGED_NOTE, "statistic": None, "median_ratio": None,
             "rounds": None, "alpha": None}
            for shape in shapes]


def latency_decided(base: ModelRun | None, head: ModelRun | None, *, threshold_pct: float,
                    max_rounds: int) -> bool:
    """Whether a model's latency needs no more rounds (pipeline.py's sequential rounds):
    every shape's interval lies within the threshold band (pt2bot.stats.decided: a change is
    only concluded at the last look), or the last look was made; before the first look
    (FIRST_LOOK rounds) nothing is decided. A side with no latency to compare is decided:
    more rounds would not give it one."""
    if base is None or head is None or not base.ok or not head.ok:
        return True
    rows = compare_latency(base, head, threshold_pct=threshold_pct)
    if any(r["rounds"] is not None and r["rounds"] < min(FIRST_LOOK, max_rounds) for r in rows):
        return False
    return all((r["rounds"] or 0) >= max_rounds
               or (decided({**r, "threshold_pct": threshold_pct}) if r["ratio"] is not None
                   else not (r["note"] or "").startswith("too few samples")) for r in rows)


# --------------------------------------------------------------------------- latency rounds
# A side's latency is measured in several rounds (pt2bot/pipeline.py alternates base and
# head, one worker process per side and round); the rounds are pooled into one side's
# results before `compare_latency`, each process's samples kept as a group of their own
# because the statistic (pt2bot/stats.py) resamples processes first.

def pool_rounds(results: ResultsFile, extra: ResultsFile) -> ResultsFile:
    """`results` with the latency samples of a later round added, per model and shape case.

    Each process's samples stay a group (`rounds`): the verdict resamples rounds first, so
    one process that ran in a slow phase cannot decide it alone. Only ok runs are pooled.
    """
    more = {m.name: m for m in extra.models if m.ok}
    models = []
    for target in results.models:
        m = more.get(target.name)
        if m is not None and target.ok and target.latency:
            target = target.with_(latency=tuple(_pool_case(case, m) for case in target.latency))
        elif m is not None and target.ok and m.latency:
            # the first timed round (a first pass without latency, a stored baseline's run)
            target = target.with_(latency=m.latency)
        models.append(target)
    return results.with_(models=tuple(models))


def _pool_case(into: LatencyRow, run: ModelRun) -> LatencyRow:
    case = next((c for c in run.latency_rows() if case_key(c.shape) == case_key(into.shape)),
                None)
    if case is None:
        return into
    pooled = {}
    for key in ("eager_ms", "compiled_ms", "reference_ms"):
        new, prev = case.timing(key), into.timing(key)
        if new is not None and new.samples and prev is not None and prev.to_json():
            pooled[key] = prev.pooled(new.samples)
    return into.with_(**pooled) if pooled else into


def pool_latency(results: dict[str, Any], extra: dict[str, Any]) -> None:
    """`pool_rounds` on results JSON, in place (benchmarks/bench_latency_verdict.py)."""
    pooled = pool_rounds(ResultsFile.from_json(results), ResultsFile.from_json(extra)).to_json()
    results.clear()
    results.update(pooled)


__all__ = ["build_report", "compare_findings", "not_run_lines", "compare_models",
           "compare_model", "match_breaks", "break_fingerprint", "compare_recompiles", "cause_of",
           "compare_export", "compare_compile", "compare_coverage", "compare_shape_advice",
           "new_export_causes", "compare_output_shapes",
           "compare_accuracy", "compare_latency", "gated_latency", "keep", "latency_decided",
           "pool_rounds", "pool_latency", "judge",
           "conclude", "run_broken", "renamed_paths", "SCHEMA"]
