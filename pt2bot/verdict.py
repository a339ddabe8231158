"""The verdict policy: thresholds → reasons → conclusion (and the one-line title).

pt2bot/compare.py says what changed between base and head (the deltas, per model and
finding); this module decides what that means for the pull request: which changes fail the
check under the configured thresholds, which only warn, and when the run itself is broken
so that no verdict on the pull request can be given (neutral). Pure: the report's findings
and model deltas (pt2bot/reportdata.py) in, reasons and a conclusion out.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Sequence

from pt2bot.config import Config
from pt2bot.findings import Finding
from pt2bot.reportdata import Delta, ModelDelta
from pt2bot.results import ResultsFile, first_line, is_failed, value_guard

# Conclusion levels of a reason, most severe first.
FAILURE, NEUTRAL, WARNING, NOTICE = "failure", "neutral", "warning", "notice"


def thresholds_json(config: Config) -> dict:
    """The thresholds the verdict applied, as report.json records them."""
    t = config.thresholds
    return {
        "new_graph_breaks": t.new_graph_breaks,
        "new_recompiles": t.new_recompiles,
        "latency_regression_pct": t.latency_regression_pct,
        "compile_regression_pct": t.compile_regression_pct,
        "export_regression": t.export_regression,
        "accuracy": t.accuracy,
        "require_gpu": t.require_gpu,
        "fail_on": config.static.fail_on,
        "filter": config.static.filter,
    }


def judge(*, findings: Sequence[Finding], models: Sequence[ModelDelta],
          head_results: ResultsFile | None, base_results: ResultsFile | None,
          config: Config) -> list[dict]:
    """Reasons for the conclusion, each `{code, level, model, message, count}`."""
    t = config.thresholds
    reasons: list[dict] = []
    broken = run_broken(head_results, base_results, models)

    def add(code: str, level: str, message: str, model: str | None = None,
            count: int = 1, where: Sequence[tuple[object, object]] = (), **figures: Any) -> None:
        reason = {"code": code, "level": level, "model": model, "message": message,
                  "count": count, **figures}
        lines = _lines(where)
        if lines:
            reason["lines"] = lines
        reasons.append(reason)

    fail_sev = {"error": ("error",), "warning": ("error", "warning")}.get(config.static.fail_on, ())
    # A claim the smoke run traced and did not see (`smoke.status` not_observed, demoted to
    # info by pt2bot/reach.py) never fails the check, whatever its severity says.
    bad = [f for f in findings if f.new and f.severity in fail_sev and not f.refuted]
    if bad:
        add("static_findings", FAILURE, f"{len(bad)} new static finding(s) at or above "
            f"'{config.static.fail_on}'", count=len(bad), where=[(f.path, f.line) for f in bad])

    level_of = {"fail": FAILURE, "warn": WARNING}
    for m in models:
        name, d = m.name, m.delta
        for p in m.problems:
            # When the whole run broke, per-model failures are the environment's, not the PR's.
            level = WARNING if broken and p["kind"] in ("fails_only_on_head", "fails_on_head") \
                else p["level"]
            add(p["kind"], level, p["message"], name)
        if m.status != "ok":
            continue
        # Counted regressions: over the allowance fails, within it warns. Recompiles that
        # follow from a new break (compare.compare_recompiles) are the break's consequence:
        # not in `new_recompiles`, said with the break, so one problem is judged once.
        caused = d.caused_recompiles
        them = "it" if len(m.new_breaks) == 1 else "them"
        follow = (f"; {caused} recompile{'s follow' if caused != 1 else ' follows'} from {them}"
                  if caused else "")
        # base failed to run: "new" is against nothing, and the line says so
        unbased = " (base failed to run: compared with nothing)" if any(
            p["kind"] == "fixed_failure" for p in m.problems) else ""
        follow += unbased
        # a guard on a float's value fails on any input with another value: the matrix's count
        # is a floor (dasp-pytorch's peak normaliser: "2 new recompiles", one per call in a loop)
        valued = sum(1 for _, r in d.new_recompile_reasons() if value_guard(r.get("guard")))
        # (once, where dynamo then traces the number as a symbol; on every new value where the
        # code needs it as a Python number, `math.log10(...)`: measured on 2.13)
        per_value = (f"; {valued} on a float's value, which recompiles on an input that gives another "
                     "value, not only on a new shape" if valued else "")
        extra = {"base_failed": True} if unbased else {}
        for code, n, allowed, what, scope, then, where in (
                ("new_graph_breaks", len(m.new_breaks), t.new_graph_breaks,
                 "new graph break(s)", "", follow,
                 [(b.get("path"), b.get("line")) for b in m.new_breaks]),
                ("new_recompiles", d.new_recompiles, t.new_recompiles,
                 "new recompile(s)", " over the shape matrix", per_value + unbased, _recompile_lines(d))):
            if n > allowed:
                add(code, FAILURE, f"{n} {what}{scope} (allowed: {allowed}){then}", name, n,
                    where, **extra)
            elif n:
                add(code, WARNING, f"{n} {what}, within the threshold{then}", name, n, where, **extra)
        if d.eager_fallback:
            add("eager_fallback", WARNING, "hit the recompile limit: runs eagerly", name)
        if d.export == "broken" and t.export_regression in level_of:
            failed = (m.head or {}).get("export") or {}
            add("export_broken", level_of[t.export_regression], "torch.export newly fails" + unbased, name,
                where=[(failed.get("path"), failed.get("line"))], **extra)
        # Export failing on both sides, or a dim the advice can no longer make dynamic, is
        # not a break of a working export: said, never failed on (a fix of one cause often
        # uncovers the next).
        for c in d.new_export_causes:
            where = f" at {c['path']}:{c['line']}" if c.get("path") else ""
            if c.get("kind") == "static_dim":
                past = c.get("past_failure") if isinstance(c.get("past_failure"), dict) else None
                add("export_new_cause", WARNING, f"{c.get('dim') or 'a dim'} can no longer be "
                    f"dynamic{where} ({c.get('reason') or 'pinned by the code'})"
                    + (f", found past the new export failure at {past.get('path')}:{past.get('line')}, "
                       "which may be what pins it" if past else ""), name,
                    where=[(c.get("path"), c.get("line"))])
            else:
                add("export_new_cause", WARNING, f"torch.export fails for a new reason"
                    f"{where} ({_new_cause(c)})", name, where=[(c.get("path"), c.get("line"))])
        # a dim declared dynamic that head's code pins: `mark_dynamic` on it now raises when the
        # model compiles (MAE's and S4's users met that ConstraintViolationError on the PR's
        # head, where the review had it in a folded line only); a warning, as an export's new
        # cause is, said with the break it follows from
        # (a size with no configured dim pinned where a named one is pinned to the same value is
        # that dim passed on inside forward: gemma's `kv_write_indices`, `input_positions` under
        # another name, read "a dim is declared dynamic" beside "seq is declared dynamic")
        named_at = {(s.get("path"), s.get("line"), s.get("value")) for s in d.new_specialized if s.get("dim")}
        # one line per dim pinned to one value by one break, at every place it is pinned
        # (gemma's sampler pinned batch at three lines of one function: three warnings)
        groups: dict[tuple[Any, ...], list[dict]] = {}
        for s in d.new_specialized:
            if not s.get("dim") and (s.get("path"), s.get("line"), s.get("value")) in named_at:
                continue
            after = s.get("caused_by") if isinstance(s.get("caused_by"), dict) else None
            key = (s.get("dim") or id(s), s.get("value"),
                   (after or {}).get("path"), (after or {}).get("line"))
            groups.setdefault(key, []).append(s)
        for ss in groups.values():
            s = ss[0]
            after = s.get("caused_by") if isinstance(s.get("caused_by"), dict) else None
            places = [f"{x['path']}:{x['line']}" for x in ss if x.get("path") and x.get("line")]
            where = f" at {', '.join(places[:-1])} and {places[-1]}" if len(places) > 1 else \
                (f" at {places[0]}" if places else "")
            add("new_specialized", WARNING, f"{s.get('dim') or 'a dim'} is declared dynamic and now "
                f"specialised to {s.get('value')}{where}: `torch._dynamo.mark_dynamic` on it raises"
                + (f" (follows from the new break at {after.get('path')}:{after.get('line')})" if after else ""),
                name, where=[(x.get("path"), x.get("line")) for x in ss])
        new_bad = [a for a in d.accuracy if a["new"]]
        if new_bad and t.accuracy in level_of:
            add("accuracy_mismatch", level_of[t.accuracy], f"compiled output differs from eager "
                f"on {len(new_bad)} shape(s)", name, len(new_bad))
        if len(new_bad) < len(d.accuracy):
            add("accuracy_mismatch_preexisting", WARNING, "compiled output already differed "
                "from eager on base", name, len(d.accuracy) - len(new_bad))
        slower = [x for x in d.latency if x["significant"] and x["direction"] == "slower"]
        if slower:
            worst = max(x["change_pct"] for x in slower)
            add("latency_regression", FAILURE, f"compiled latency up {worst:.0f}% "
                f"(significant, threshold {t.latency_regression_pct:g}%) on {len(slower)} "
                "shape(s)", name, len(slower))
        cost = m.compile
        if cost and cost.get("regression") and cost.get("follows_breaks") and _small(cost):
            pass    # the break's, said in the model's section (`FOLLOWS_WARN_S`)
        elif cost and cost.get("regression") and cost.get("follows_breaks"):
            b, h = cost.get("base") or {}, cost.get("head") or {}
            # (the work, FX nodes, said apart from the time: "31% costlier ... (within the
            # threshold)" in one clause read as a contradiction)
            key, what = (("fx_ops", "FX operations") if isinstance(b.get("fx_ops"), int)
                         and isinstance(h.get("fx_ops"), int) else ("fx_nodes", "FX nodes"))
            add("compile_regression", WARNING, f"{compile_message(cost)}; it follows from the "
                f"new break{'s' if len(m.new_breaks) != 1 else ''}: graphs {b.get('graphs')} "
                f"→ {h.get('graphs')}, while the work compiled, {what} {b.get(key)} → "
                f"{h.get(key)}, is within the threshold", name,
                follows_breaks=True, change_pct=_change_pct(cost))
        elif cost and cost.get("regression"):
            add("compile_regression", FAILURE, compile_message(cost), name, change_pct=_change_pct(cost))

    if broken:
        add("run_broken", NEUTRAL, "the smoke run itself failed: no model produced a result")
    if t.require_gpu and head_results is not None and head_results.device == "cpu":
        add("no_gpu", NEUTRAL, "a GPU is required (thresholds.require_gpu) but the run was on CPU")
    return reasons


def _new_cause(c: dict) -> str:
    """What differs between head's export failure and base's: the kind; of one kind, torch's
    message; of one message, the line (base's numbers are not head's: its source says it)."""
    base = c.get("base") or {}
    kind, was = c.get("export_kind") or "error", base.get("export_kind") or "error"
    if kind != was:
        return f"{kind}; on base: {was}"
    at = f" at {base['path']}:{base['line']}" if base.get("path") else ""
    if base.get("library"):
        # base's line only reached the failure: it is in a package's code
        at += f" (reaching {base['library']}, in an installed package)"
    if export_message_key(c.get("message")) != export_message_key(base.get("message")):
        return (f"{kind}: {first_line(c.get('message'), 120)}; on base: {was}{at}: "
                f"{first_line(base.get('message'), 120)}")
    return (f"{kind}, the same error now on \"{first_line(c.get('source'), 80)}\"; on base{at}, "
            f"on \"{first_line(base.get('source'), 80)}\"")


_SYMBOL = re.compile(r"\b([us])\d+\b")


def export_message_key(message: object) -> str:
    """The first line of an export error, its symbols unnumbered (`u0`, `s12`: the order
    torch met them in, which an unrelated edit can change)."""
    return _SYMBOL.sub(r"\1", first_line(message, 10**6))


def _lines(where: Sequence[tuple[object, object]]) -> list[dict]:
    """A reason's `lines`: the distinct `{path, line}` it is located at, in file order."""
    seen = sorted({(p, n) for p, n in where if isinstance(p, str) and p
                   and isinstance(n, int) and not isinstance(n, bool) and n > 0})
    return [{"path": p, "line": n} for p, n in seen]


def _recompile_lines(d: Delta) -> list[tuple[object, object]]:
    """Where the new recompiles' guards are."""
    return [(r.get("path"), r.get("line")) for _, r in d.new_recompile_reasons()]


# A first compile that a new break made costlier by less CPU time than this is said in the
# model's section only: the break already fails the check, and a warning of its own on a tiny
# model's compile (0.61 → 1.46 s, 1.29 → 1.75 s at load 3 to 6) read as noise to two new users.
FOLLOWS_WARN_S = 1.0


def _small(cost: dict) -> bool:
    """Whether a costlier first compile that follows from a new break added under
    `FOLLOWS_WARN_S` of CPU time (False where CPU seconds are not its basis)."""
    b, h = (cost.get("base") or {}).get("cpu_s"), (cost.get("head") or {}).get("cpu_s")
    return cost.get("basis") == "cpu_s" and isinstance(b, (int, float)) and isinstance(h, (int, float)) \
        and h - b < FOLLOWS_WARN_S


def _change_pct(cost: dict) -> int:
    """How much costlier (or bigger) the first compile is, in whole percent, as said."""
    return int(round(((cost.get("ratio") or 0.0) - 1) * 100))


def compile_message(cost: dict) -> str:
    """"first compile 64% costlier (CPU s 0.47 → 0.77; threshold 30%)" (no user text)."""
    b, h = cost.get("base") or {}, cost.get("head") or {}
    on_cpu = cost.get("basis") == "cpu_s"
    key, label = ("cpu_s", "CPU s") if on_cpu else ("fx_nodes", "FX nodes")
    parts = []
    if isinstance(b.get(key), (int, float)) and isinstance(h.get(key), (int, float)):
        parts.append(f"{label} {b[key]:.2f} → {h[key]:.2f}" if on_cpu
                     else f"{label} {b[key]} → {h[key]}")
    pct = cost.get("threshold_pct", 0)
    nb, nh = b.get("fx_nodes"), h.get("fx_nodes")
    if on_cpu and _change_pct(cost) < pct and isinstance(nb, int) and isinstance(nh, int) and nb > 0:
        # a rise under the threshold is a regression only where the work grew past it (FX nodes,
        # the CPU time corroborating): said, or "28% costlier; threshold 30%" reads as a
        # contradiction (a new user's held-out review)
        parts.append(f"FX nodes {nb} → {nh}, {round((nh / nb - 1) * 100)}% more work")
    parts.append(f"threshold {pct:g}%")
    return (f"first compile {_change_pct(cost)}% {'costlier' if on_cpu else 'bigger'} "
            f"({'; '.join(parts)})")


def run_broken(head_results: ResultsFile | None, base_results: ResultsFile | None,
               models: Sequence[ModelDelta]) -> bool:
    """Head results missing, or every model that ran errored on head and none of them ran
    cleanly on base (then it is the environment, not the pull request)."""
    if head_results is None:
        return True
    ran = [m for m in models if m.status != "skipped" and m.change != "removed"]
    if not ran or not all(is_failed(m.status) for m in ran):
        return False
    return not any(p["kind"] == "fails_only_on_head" for m in ran for p in m.problems)


def conclude(reasons: list[dict]) -> str:
    levels = {r["level"] for r in reasons}
    if FAILURE in levels:
        return "failure"
    if NEUTRAL in levels:
        return "neutral"
    return "success"


def summary_title(conclusion: str, reasons: list[dict], models: Sequence[ModelDelta],
                  findings: Sequence[Finding]) -> str:
    """One line for the check run title and the summary's first line (no user text)."""
    labels = {
        "new_graph_breaks": "new graph break", "new_recompiles": "new recompile",
        "export_broken": "export regression", "accuracy_mismatch": "accuracy mismatch",
        "latency_regression": "latency regression", "static_findings": "new static finding",
        "compile_regression": "compile regression",
        "fails_only_on_head": "model failing on head", "run_broken": "run broken",
        "compiled_raises": "compiled model failing",
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
            # one line's break in each of four models is one break to fix, in four models, not
            # "4 new graph breaks" (openai/CLIP's one-line check)
            same = [r for r in reasons if r["level"] == level and r["code"] == code]
            spread = {r.get("model") for r in same}
            where = {(x["path"], x["line"]) for r in same for x in r.get("lines") or ()}
            models = ""
            lines_of = None   # the count is of lines, each broken in one model or more
            if len(spread) > 1 and None not in spread and all(r.get("lines") for r in same) and \
                    len(where) < n:
                n, models = len(where), f" in {len(spread)} models"
                # (several lines: the per-model counts below it add up to more, a new user's
                # "10 new graph breaks in 4 models" above 4 + 4 + 5 + 10)
                lines_of = n if n > 1 else None
            elif code == "static_findings" and where and len(where) < n:
                # two `.item()`s on one line are two findings of one problem: MAE's and S4's
                # users read "2 new static findings" as two
                models = f" on {len(where)} line{'s' if len(where) != 1 else ''}"
            if same and all(r.get("base_failed") for r in same):
                # nothing to be new against: "2 new graph breaks" counted one main has too
                label, models = label.removeprefix("new "), models + " (base failed to run)"
            # (the noun is pluralised, not the phrase: DETR's read "2 model failing on heads")
            noun, failing, rest = label.partition(" failing")
            plural = f"{noun}s failing{rest}" if failing else f"{label}s"
            if code in ("run_broken", "no_gpu"):
                parts.append(label)
            elif lines_of:
                parts.append(f"{plural} on {lines_of} lines{models}")
            else:
                parts.append(f"{n} {label if n == 1 else plural}{models}")
        return ", ".join(parts)
    ran = sum(1 for m in models if m.status != "skipped")
    fixed = sum(len(m.fixed_breaks) for m in models)
    text = f"No regressions ({ran} model{'' if ran == 1 else 's'} run"
    text += f", {fixed} graph break{'' if fixed == 1 else 's'} fixed)" if fixed else ")"
    return text


__all__ = ["FAILURE", "NEUTRAL", "NOTICE", "WARNING", "compile_message", "conclude",
           "export_message_key", "judge", "run_broken", "summary_title",
           "thresholds_json"]
