"""Base vs head: what the pull request changed, and the verdict on it.

`build_report` joins the static findings and the smoke-run results of both sides into
report.json (schema `pt2bot.report/1`, DESIGN.md + docs/formats.md). Pure: data in, data
out; no git, no torch, no network.

Matching base with head never uses line numbers alone, because any edit above a break moves
it: graph breaks match on GB type + path (renamed through the diff) + enclosing function +
normalised source line; the diff's old→new line map only decides ties (and breaks without a
source line). Static findings match on `Finding.fingerprint()`.

Anything missing or malformed in the results is reported, never a crash: each model is
compared on its own, and an unexpected failure there becomes a visible problem of that model.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable

from pt2bot import __version__
from pt2bot.config import Config
from pt2bot.findings import Finding, fingerprint, normalise_source, sort_key
from pt2bot.stats import compare_samples

SCHEMA = "pt2bot.report/1"

# Conclusion levels of a reason, most severe first.
FAILURE, NEUTRAL, WARNING, NOTICE = "failure", "neutral", "warning", "notice"
FAILED_STATUSES = ("error", "timeout")


def build_report(*, base_results: dict | None, head_results: dict | None,
                 base_findings: list[Finding], head_findings: list[Finding], changeset: Any,
                 config: Config, selection: Any = None, base_sha: str | None,
                 head_sha: str | None) -> dict:
    """report.json: findings new vs pre-existing, per-model deltas, reasons, conclusion.

    `changeset` is a `pt2bot.changes.ChangeSet` (or None: no diff, e.g. the nightly audit);
    `base_results` is None when base was not run (new project, no baseline).
    """
    renames = renamed_paths(changeset)
    line_map = _line_mapper(changeset)
    findings, hidden = compare_findings(base_findings, head_findings, renames=renames,
                                        filter_=config.static.filter)
    models, skipped = compare_models(base_results, head_results, config=config,
                                     selection=selection, renames=renames, line_map=line_map)
    reasons = judge(findings=findings, models=models, head_results=head_results,
                    base_results=base_results, config=config)
    conclusion = conclude(reasons)
    head_env = head_results if isinstance(head_results, dict) else {}
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "pt2bot": __version__,
        "mode": "review" if changeset is not None else "audit",
        "base": base_sha,
        "head": head_sha,
        "conclusion": conclusion,
        "summary_title": summary_title(conclusion, reasons, models, findings),
        "reasons": reasons,
        "torch": head_env.get("torch"),
        "device": head_env.get("device"),
        "device_name": head_env.get("device_name"),
        "backend": head_env.get("backend"),
        "config_digest": config.digest,
        "thresholds": {
            "new_graph_breaks": config.thresholds.new_graph_breaks,
            "new_recompiles": config.thresholds.new_recompiles,
            "latency_regression_pct": config.thresholds.latency_regression_pct,
            "export_regression": config.thresholds.export_regression,
            "accuracy": config.thresholds.accuracy,
            "require_gpu": config.thresholds.require_gpu,
            "fail_on": config.static.fail_on,
            "filter": config.static.filter,
        },
        "findings": findings,
        "findings_hidden": hidden,
        "models": models,
        "skipped": skipped,
        "counts": {
            "findings": len(findings),
            "findings_new": sum(1 for f in findings if f["new"]),
            "new_breaks": sum(len(m["new_breaks"]) for m in models),
            "fixed_breaks": sum(len(m["fixed_breaks"]) for m in models),
            "models_run": sum(1 for m in models if m["status"] != "skipped"),
        },
    }
    return report


# --------------------------------------------------------------------------- changeset

def renamed_paths(changeset: Any) -> dict[str, str]:
    """{base path: head path} for files the diff renamed."""
    out: dict[str, str] = {}
    for path, fc in (getattr(changeset, "files", None) or {}).items():
        old = getattr(fc, "old_path", None)
        if old and old != path and getattr(fc, "status", None) != "deleted":
            out[old] = path
    return out


def _line_mapper(changeset: Any) -> Callable[[str, int | None], int | None]:
    """(head path, base line) -> head line, or None when that line is gone."""
    files = getattr(changeset, "files", None) or {}

    def map_line(path: str, line: int | None) -> int | None:
        if line is None:
            return None
        fc = files.get(path)
        if fc is None:
            return line       # file untouched by the diff (or no diff at all): same line
        if getattr(fc, "status", None) == "deleted":
            return None
        try:
            return fc.map_old_to_new(line)
        except Exception:   # a line map that cannot answer is "unknown", not a crash
            return None

    return map_line


# --------------------------------------------------------------------------- findings

def compare_findings(base: Iterable[Finding], head: Iterable[Finding], *,
                     renames: dict[str, str], filter_: str) -> tuple[list[dict], int]:
    """Head findings as dicts with `new` set, the ones the filter keeps; + count hidden."""
    remaining = Counter(f.with_(path=renames.get(f.path, f.path)).fingerprint() for f in base)
    kept: list[dict] = []
    hidden = 0
    for f in sorted(head, key=sort_key):
        fp = f.fingerprint()
        new = remaining[fp] <= 0      # a multiset: two copies on head, one on base → one new
        if not new:
            remaining[fp] -= 1
        f = f.with_(new=new)
        if not keep(f, filter_):
            hidden += 1
            continue
        kept.append(f.to_dict())
    return kept, hidden


def keep(finding: Finding, filter_: str) -> bool:
    """The diff filter's decision; a finding not compared with a diff is always kept."""
    if finding.diff is None:
        return True
    from pt2bot.changes import keep_finding   # lazily: changes imports git tooling

    return keep_finding(finding, filter_)


# --------------------------------------------------------------------------- models

def compare_models(base_results: dict | None, head_results: dict | None, *, config: Config,
                   selection: Any, renames: dict[str, str],
                   line_map: Callable[[str, int | None], int | None],
                   ) -> tuple[list[dict], list[dict]]:
    base_runs = _runs_by_name(base_results)
    head_runs = _runs_by_name(head_results)
    sel_skipped = dict(getattr(selection, "skipped", None) or {})
    comparable, why_not = latency_comparable(base_results, head_results)

    names: list[str] = [m.name for m in config.models]
    names += [n for n in list(head_runs) + list(base_runs) if n not in names]
    models: list[dict] = []
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
                              base_present=base_results is not None)
        except Exception as e:   # keep every other model's result; show this one's failure
            m = _skipped_model(name, "could not compare")
            m["problems"].append(_problem("compare_error", NEUTRAL,
                                          f"pt2bot could not compare this model: {type(e).__name__}: {e}"))
        if m["status"] == "skipped" and m["change"] != "removed":
            skipped.append({"name": name, "reason": m.get("reason") or "skipped"})
        models.append(m)
    return models, skipped


def latency_comparable(base_results: dict | None, head_results: dict | None
                       ) -> tuple[bool, str | None]:
    """Timings only compare when both sides ran on the same kind of machine and torch."""
    if not isinstance(base_results, dict) or not isinstance(head_results, dict):
        return True, None
    for key in ("device", "device_name", "torch"):
        b, h = base_results.get(key), head_results.get(key)
        if b and h and b != h:
            return False, f"base and head ran with different {key} ({b} vs {h})"
    return True, None


def _runs_by_name(results: dict | None) -> dict[str, dict]:
    out: dict[str, dict] = {}
    if not isinstance(results, dict):
        return out
    for run in results.get("models") or []:
        if isinstance(run, dict) and isinstance(run.get("name"), str):
            out[run["name"]] = run
    return out


def _skipped_model(name: str, reason: str) -> dict:
    return {"name": name, "status": "skipped", "reason": reason, "change": "unknown",
            "base": None, "head": None, "delta": _empty_delta(), "new_breaks": [],
            "fixed_breaks": [], "unchanged_breaks": 0, "problems": []}


def _empty_delta() -> dict:
    return {"graph_breaks": 0, "graph_count": 0, "recompiles": 0, "new_recompiles": 0,
            "recompile_cases": [], "export": "n/a", "accuracy": [], "new_specialized": [],
            "fixed_specialized": [], "latency": []}


def _problem(kind: str, level: str, message: str, **extra: Any) -> dict:
    return {"kind": kind, "level": level, "message": message, **extra}


def compare_model(name: str, base_run: dict | None, head_run: dict | None, *,
                  renames: dict[str, str], line_map: Callable[[str, int | None], int | None],
                  threshold_pct: float, latency_ok: bool = True,
                  latency_note: str | None = None, base_present: bool = True) -> dict:
    """One model's entry of report.json."""
    if head_run is None:
        m = _skipped_model(name, "removed: not in head's results")
        m.update(change="removed", base=base_run)
        return m
    head_status = head_run.get("status") or "error"
    base_status = base_run.get("status") if base_run else None
    problems: list[dict] = []
    m: dict[str, Any] = {"name": name, "status": head_status,
                         "reason": head_run.get("reason"), "base": base_run, "head": head_run}
    if head_status == "skipped":
        m.update(change="unknown", delta=_empty_delta(), new_breaks=[], fixed_breaks=[],
                 unchanged_breaks=0, problems=problems)
        m["reason"] = m["reason"] or "skipped by the run"
        return m

    if head_status in FAILED_STATUSES:
        err = head_run.get("error") if isinstance(head_run.get("error"), dict) else {}
        m["error"] = err
        what = f"{head_status}" + (f" ({err.get('kind')})" if err.get("kind") else "")
        if base_status in FAILED_STATUSES:
            problems.append(_problem("fails_on_both", WARNING,
                                     f"fails on base and head: {what}", path=err.get("path"),
                                     line=err.get("line"), detail=err.get("message")))
        elif not base_present:
            problems.append(_problem("fails_on_head", FAILURE,
                                     f"fails (no base run to compare with): {what}",
                                     path=err.get("path"), line=err.get("line"),
                                     detail=err.get("message")))
        else:
            problems.append(_problem("fails_only_on_head", FAILURE,
                                     f"fails on head but not on base: {what}",
                                     path=err.get("path"), line=err.get("line"),
                                     detail=err.get("message")))
    elif base_status in FAILED_STATUSES:
        problems.append(_problem("fixed_failure", NOTICE, "failed on base, runs on head"))

    # A side that errored has no trustworthy breaks/recompiles: compare only ok runs.
    b = base_run if base_status == "ok" else None
    h = head_run if head_status == "ok" else None
    if base_run is not None and b is None and h is not None:
        b = {}    # base failed: everything on head is new relative to an empty baseline
    new_breaks, fixed_breaks, same = (match_breaks(_items(b, "graph_breaks"),
                                                   _items(h, "graph_breaks"),
                                                   renames=renames, line_map=line_map)
                                      if h is not None else ([], [], 0))
    delta = _empty_delta()
    if h is not None:
        delta["graph_breaks"] = len(_items(h, "graph_breaks")) - len(_items(b, "graph_breaks"))
        delta["graph_count"] = _int(h.get("graph_count")) - _int((b or {}).get("graph_count"))
        delta.update(compare_recompiles(b, h))
        delta["new_specialized"], delta["fixed_specialized"] = compare_specialized(b, h, renames)
        delta["export"] = compare_export(b, h)
        delta["accuracy"] = compare_accuracy(b, h)
        delta["latency"] = compare_latency(b, h, threshold_pct=threshold_pct,
                                           comparable=latency_ok, note=latency_note)
    m.update(delta=delta, new_breaks=new_breaks, fixed_breaks=fixed_breaks,
             unchanged_breaks=same, problems=problems)
    if base_run is None and base_present:
        m["change"] = "new"
    elif base_run is None:
        m["change"] = "unknown"     # nothing to compare with (no baseline at all)
    else:
        m["change"] = "changed" if _has_changed(m, base_status) else "unchanged"
    return m


def _has_changed(m: dict, base_status: str | None) -> bool:
    d = m["delta"]
    return bool(
        m["status"] != base_status or m["new_breaks"] or m["fixed_breaks"]
        or d["graph_count"] or any(c["delta"] for c in d["recompile_cases"]) or d["recompiles"]
        or d["export"] in ("broken", "fixed") or any(a["new"] for a in d["accuracy"])
        or d["new_specialized"] or d["fixed_specialized"]
        or any(lat.get("significant") for lat in d["latency"]))


def _items(run: dict | None, key: str) -> list[dict]:
    v = (run or {}).get(key)
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _shape_key(shape: Any) -> tuple:
    if not isinstance(shape, dict):
        return ()
    return tuple(sorted((str(k), v) for k, v in shape.items()))


# --------------------------------------------------------------------------- graph breaks

def break_key(b: dict, renames: dict[str, str]) -> tuple[str, str, str, str]:
    path = str(b.get("path") or "")
    return (str(b.get("gb_type") or b.get("gb") or ""), renames.get(path, path),
            str(b.get("function") or ""), normalise_source(str(b.get("source") or "")))


def break_fingerprint(b: dict, renames: dict[str, str] | None = None) -> str:
    """Stable id of a break site for review de-duplication (no line unless no source)."""
    kind, path, func, src = break_key(b, renames or {})
    return fingerprint("graph-break", kind, path, func, src or f"line {b.get('line')}")


def match_breaks(base: list[dict], head: list[dict], *, renames: dict[str, str],
                 line_map: Callable[[str, int | None], int | None],
                 ) -> tuple[list[dict], list[dict], int]:
    """(new, fixed, unchanged count). Breaks as report dicts with `fingerprint`."""
    by_key: dict[tuple, tuple[list[dict], list[dict]]] = defaultdict(lambda: ([], []))
    for b in base:
        by_key[break_key(b, renames)][0].append(b)
    for h in head:
        by_key[break_key(h, renames)][1].append(h)
    new: list[dict] = []
    fixed: list[dict] = []
    same = 0
    for key, (bs, hs) in by_key.items():
        path, has_source = key[1], bool(key[3])
        bs, hs = list(bs), list(hs)
        # First pair exact line-map hits (the tie-breaker when a source line repeats) ...
        for b in list(bs):
            target = line_map(path, _line(b))
            hit = next((h for h in hs if target is not None and _line(h) == target), None)
            if hit is not None:
                bs.remove(b)
                hs.remove(hit)
                same += 1
        # ... then, with the same source text, any remaining pair is the same site, moved.
        if has_source:
            n = min(len(bs), len(hs))
            same += n
            bs, hs = bs[n:], hs[n:]
        new += [_break_out(h, renames) for h in hs]
        fixed += [_break_out(b, renames, side="base") for b in bs]
    order = lambda d: (d["path"], d["line"] or 0, d["gb"] or "")   # noqa: E731
    return sorted(new, key=order), sorted(fixed, key=order), same


def _line(b: dict) -> int | None:
    v = b.get("line")
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _break_out(b: dict, renames: dict[str, str], side: str = "head") -> dict:
    path = str(b.get("path") or "")
    return {
        "gb": b.get("gb"), "gb_type": b.get("gb_type"),
        "path": renames.get(path, path) if side == "head" else path,
        "line": _line(b), "function": b.get("function"), "source": b.get("source"),
        "reason": b.get("reason"), "explanation": b.get("explanation"),
        "hints": [str(x) for x in b.get("hints") or [] if x is not None][:5],
        "url": b.get("url"), "count": b.get("count"), "in_loop": bool(b.get("in_loop")),
        "side": side, "fingerprint": break_fingerprint(b, renames),
    }


# --------------------------------------------------------------------------- recompiles & co

def compare_recompiles(base: dict | None, head: dict) -> dict:
    """Per shape case: head recompiles − base recompiles; `new_recompiles` sums increases."""
    brc = (base or {}).get("recompiles") if isinstance((base or {}).get("recompiles"), dict) else {}
    hrc = head.get("recompiles") if isinstance(head.get("recompiles"), dict) else {}
    base_cases = {_shape_key(c.get("shape")): c for c in _items(brc, "cases")}
    cases = []
    for c in _items(hrc, "cases"):
        bc = base_cases.get(_shape_key(c.get("shape")))
        hn, bn = _int(c.get("recompiles")), _int((bc or {}).get("recompiles"))
        cases.append({"shape": c.get("shape") or {}, "base": bn if bc is not None else None,
                      "head": hn, "delta": hn - bn,
                      "reasons": _items(c, "reasons")[:5] if hn > bn else []})
    total = _int(hrc.get("count")) - _int(brc.get("count"))
    increases = sum(max(0, c["delta"]) for c in cases)
    return {"recompiles": total,
            "new_recompiles": increases if cases else max(0, total),
            "recompile_cases": cases,
            "eager_fallback": bool(hrc.get("eager_fallback")) and not brc.get("eager_fallback")}


def compare_specialized(base: dict | None, head: dict, renames: dict[str, str]
                        ) -> tuple[list[dict], list[dict]]:
    def key(s: dict) -> tuple:
        p = str(s.get("path") or "")
        return (s.get("dim"), renames.get(p, p), normalise_source(str(s.get("source") or "")))

    b = Counter(key(s) for s in _items(base, "specialized"))
    h = Counter(key(s) for s in _items(head, "specialized"))
    new = [s for s in _items(head, "specialized") if h[key(s)] > b[key(s)]]
    fixed = [s for s in _items(base, "specialized") if b[key(s)] > h[key(s)]]
    return new, fixed


def _export_ok(run: dict | None) -> bool | None:
    e = (run or {}).get("export")
    if not isinstance(e, dict) or not isinstance(e.get("ok"), bool):
        return None
    return e["ok"]


def compare_export(base: dict | None, head: dict) -> str:
    """same | broken | fixed | n/a (export not run on head). No baseline counts as ok."""
    h = _export_ok(head)
    if h is None:
        return "n/a"
    b = _export_ok(base)
    b = True if b is None else b
    if b and not h:
        return "broken"
    if h and not b:
        return "fixed"
    return "same"


def compare_accuracy(base: dict | None, head: dict) -> list[dict]:
    """Head's mismatching shapes; `new` unless base mismatched on the same shape too."""
    base_bad = {_shape_key(a.get("shape")) for a in _items(base, "accuracy")
                if a.get("match") is False}
    return [{"shape": a.get("shape") or {}, "max_abs_err": a.get("max_abs_err"),
             "new": _shape_key(a.get("shape")) not in base_bad}
            for a in _items(head, "accuracy") if a.get("match") is False]


def _samples(entry: dict | None, which: str = "compiled_ms") -> list:
    t = (entry or {}).get(which)
    if not isinstance(t, dict):
        return []
    rounds = t.get("rounds")      # optional: per-process groups from alternating rounds
    if isinstance(rounds, list) and rounds and all(isinstance(r, list) for r in rounds):
        return rounds
    s = t.get("samples")
    return s if isinstance(s, list) else []


def _median(entry: dict | None, which: str) -> float | None:
    t = (entry or {}).get(which)
    v = t.get("median") if isinstance(t, dict) else None
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def compare_latency(base: dict | None, head: dict, *, threshold_pct: float,
                    comparable: bool = True, note: str | None = None) -> list[dict]:
    """Per shape: compiled latency head vs base (pt2bot.stats.compare_samples: ratio of the
    p10, per unit of reference-workload time when both sides timed it, + bootstrap interval)."""
    base_lat = {_shape_key(e.get("shape")): e for e in _items(base, "latency")}
    out = []
    for e in _items(head, "latency"):
        be = base_lat.get(_shape_key(e.get("shape")))
        row: dict[str, Any] = {
            "shape": e.get("shape") or {},
            "base_ms": _median(be, "compiled_ms"), "head_ms": _median(e, "compiled_ms"),
            "eager_base_ms": _median(be, "eager_ms"), "eager_head_ms": _median(e, "eager_ms"),
            "ratio": None, "ci_low": None, "ci_high": None, "change_pct": None,
            "significant": False, "direction": "same", "note": None,
            "statistic": None, "median_ratio": None,
        }
        if be is None:
            row["note"] = "no base measurement"
        elif not comparable:
            row["note"] = note
        else:
            # reference_ms: each process's fixed reference workload (pt2bot.smoke._timing),
            # used by the statistic to cancel process-wide slow modes when both sides have it
            st = compare_samples(_samples(be), _samples(e), threshold_pct=threshold_pct,
                                 base_reference=_samples(be, "reference_ms") or None,
                                 head_reference=_samples(e, "reference_ms") or None)
            for k in ("ratio", "ci_low", "ci_high", "change_pct", "significant", "direction",
                      "note", "statistic", "median_ratio"):
                row[k] = st[k]
        out.append(row)
    return out


# --------------------------------------------------------------------------- verdict

def judge(*, findings: list[dict], models: list[dict], head_results: dict | None,
          base_results: dict | None, config: Config) -> list[dict]:
    """Reasons for the conclusion, each `{code, level, model, message, count}`."""
    t = config.thresholds
    reasons: list[dict] = []
    broken = run_broken(head_results, base_results, models)

    def add(code: str, level: str, message: str, model: str | None = None,
            count: int = 1) -> None:
        reasons.append({"code": code, "level": level, "model": model, "message": message,
                        "count": count})

    fail_sev = {"error": ("error",), "warning": ("error", "warning")}.get(config.static.fail_on, ())
    bad = [f for f in findings if f["new"] and f["severity"] in fail_sev]
    if bad:
        add("static_findings", FAILURE, f"{len(bad)} new static finding(s) at or above "
            f"'{config.static.fail_on}'", count=len(bad))

    level_of = {"fail": FAILURE, "warn": WARNING}
    for m in models:
        name, d = m["name"], m["delta"]
        for p in m["problems"]:
            # When the whole run broke, per-model failures are the environment's, not the PR's.
            level = WARNING if broken and p["kind"] in ("fails_only_on_head", "fails_on_head") \
                else p["level"]
            add(p["kind"], level, p["message"], name)
        if m["status"] != "ok":
            continue
        nb = len(m["new_breaks"])
        if nb > t.new_graph_breaks:
            add("new_graph_breaks", FAILURE, f"{nb} new graph break(s) (allowed: "
                f"{t.new_graph_breaks})", name, nb)
        elif nb:
            add("new_graph_breaks", WARNING, f"{nb} new graph break(s), within the threshold",
                name, nb)
        nr = d["new_recompiles"]
        if nr > t.new_recompiles:
            add("new_recompiles", FAILURE, f"{nr} new recompile(s) over the shape matrix "
                f"(allowed: {t.new_recompiles})", name, nr)
        elif nr:
            add("new_recompiles", WARNING, f"{nr} new recompile(s), within the threshold",
                name, nr)
        if d.get("eager_fallback"):
            add("eager_fallback", WARNING, "hit the recompile limit: runs eagerly", name)
        if d["export"] == "broken" and t.export_regression in level_of:
            add("export_broken", level_of[t.export_regression], "torch.export newly fails", name)
        new_bad = [a for a in d["accuracy"] if a["new"]]
        if new_bad and t.accuracy in level_of:
            add("accuracy_mismatch", level_of[t.accuracy], f"compiled output differs from eager "
                f"on {len(new_bad)} shape(s)", name, len(new_bad))
        if len(new_bad) < len(d["accuracy"]):
            add("accuracy_mismatch_preexisting", WARNING, "compiled output already differed "
                "from eager on base", name, len(d["accuracy"]) - len(new_bad))
        slower = [x for x in d["latency"] if x["significant"] and x["direction"] == "slower"]
        if slower:
            worst = max(x["change_pct"] for x in slower)
            add("latency_regression", FAILURE, f"compiled latency up {worst:.0f}% "
                f"(significant, threshold {t.latency_regression_pct:g}%) on {len(slower)} "
                "shape(s)", name, len(slower))

    if broken:
        add("run_broken", NEUTRAL, "the smoke run itself failed: no model produced a result")
    if t.require_gpu and isinstance(head_results, dict) and head_results.get("device") == "cpu":
        add("no_gpu", NEUTRAL, "a GPU is required (thresholds.require_gpu) but the run was on CPU")
    return reasons


def run_broken(head_results: dict | None, base_results: dict | None,
               models: list[dict]) -> bool:
    """Head results missing, or every model that ran errored on head and none of them ran
    cleanly on base (then it is the environment, not the pull request)."""
    if not isinstance(head_results, dict):
        return True
    ran = [m for m in models if m["status"] != "skipped" and m.get("change") != "removed"]
    if not ran or not all(m["status"] in FAILED_STATUSES for m in ran):
        return False
    return not any(p["kind"] == "fails_only_on_head" for m in ran for p in m["problems"])


def conclude(reasons: list[dict]) -> str:
    levels = {r["level"] for r in reasons}
    if FAILURE in levels:
        return "failure"
    if NEUTRAL in levels:
        return "neutral"
    return "success"


def summary_title(conclusion: str, reasons: list[dict], models: list[dict],
                  findings: list[dict]) -> str:
    """One line for the check run title and the summary's first line (no user text)."""
    labels = {
        "new_graph_breaks": "new graph break", "new_recompiles": "new recompile",
        "export_broken": "export regression", "accuracy_mismatch": "accuracy mismatch",
        "latency_regression": "latency regression", "static_findings": "new static finding",
        "fails_only_on_head": "model failing on head", "run_broken": "run broken",
        "no_gpu": "no GPU", "compare_error": "comparison error",
    }
    level = FAILURE if conclusion == "failure" else NEUTRAL if conclusion == "neutral" else None
    counts: Counter = Counter()
    for r in reasons:
        if r["level"] == level and r["code"] in labels:
            counts[r["code"]] += r["count"] if r["code"] not in ("run_broken", "no_gpu") else 1
    if counts:
        parts = []
        for code, n in counts.items():
            label = labels[code]
            parts.append(label if code in ("run_broken", "no_gpu")
                         else f"{n} {label}{'' if n == 1 else 's'}")
        return ", ".join(parts)
    ran = sum(1 for m in models if m["status"] != "skipped")
    fixed = sum(len(m["fixed_breaks"]) for m in models)
    text = f"No regressions ({ran} model{'' if ran == 1 else 's'} run"
    text += f", {fixed} graph break{'' if fixed == 1 else 's'} fixed)" if fixed else ")"
    return text


__all__ = ["build_report", "compare_findings", "compare_models", "compare_model",
           "match_breaks", "break_fingerprint", "compare_recompiles", "compare_export",
           "compare_accuracy", "compare_latency", "judge", "conclude", "run_broken",
           "renamed_paths", "SCHEMA"]
