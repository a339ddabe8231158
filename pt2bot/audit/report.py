"""The audit report: Markdown (with Mermaid trend charts), a self-contained report.html,
report.json, the trend PNGs, and the baseline file of the audited commit.

Every string that came from user code or a run of it (model names, break reasons, paths,
error messages) goes through pt2bot/report/escape.py (`escape_inline`/`code_inline` for Markdown,
`html_text` for HTML); Mermaid text is reduced to a small safe alphabet.
"""
from __future__ import annotations

import base64
import os
import re
from typing import Any

from pt2bot.audit.charts import ChartResult, Trends, render_trend_charts
from pt2bot.jsonio import write_json
from pt2bot.publish.issue import AUDIT_MARKER
from pt2bot.report import markdown as md
from pt2bot.report.escape import html_text
from pt2bot.report.shape_advice import advice_markdown
from pt2bot.report.review import FIX_TITLE_CAP
from pt2bot.report.summary import fix_target_lines, split_fixes

BODY_LIMIT = 65_536            # GitHub issue/comment body, in characters
MERMAID_MAX_MODELS = 10        # per-model Mermaid charts; the PNG/HTML show the rest
MAX_FIXES = 30                 # verified fixes listed in audit.md (all are in report.json)
_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9 _.:/=,+-]")

KIND_LABEL = {"graph_break": "graph break", "recompiles": "recompiles", "export": "export",
              "status": "status", "latency": "latency", "compile": "compile cost", "new_model": "model",
              "removed": "model"}


def render_audit_dir(report: dict[str, Any], results: dict[str, Any], trends: Trends,
                     out_dir: str, *, charts: bool = True) -> ChartResult:
    """Write baseline-<sha>.json, charts/*.png, report.json, audit.md and report.html."""
    os.makedirs(out_dir, exist_ok=True)
    a = report["audit"]
    if a.get("baseline"):
        write_json(os.path.join(out_dir, a["baseline"]), results)
    charts = (render_trend_charts(trends, out_dir) if charts else
              ChartResult(files={}, note="PNG charts were turned off for this audit"))
    a["charts"] = {k: os.path.relpath(p, out_dir).replace(os.sep, "/")
                   for k, p in charts.files.items()}
    a["charts_note"] = charts.note
    write_json(os.path.join(out_dir, "report.json"), report)
    with open(os.path.join(out_dir, "audit.md"), "w", encoding="utf-8") as fh:
        fh.write(render_audit_markdown(report))
    with open(os.path.join(out_dir, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(render_audit_html(report, charts))
    return charts


# --------------------------------------------------------------------------- Markdown

def render_audit_markdown(report: dict[str, Any], *, limit: int = BODY_LIMIT) -> str:
    """The audit as Markdown: the tracking issue's body, the job summary, audit.md."""
    a = report["audit"]
    parts = [AUDIT_MARKER, f"## pt2bot nightly audit: {_verdict(report)}", "", _header(report)]
    if a["outstanding"]:
        parts += ["", "### Outstanding problems", "",
                  "Worse than the last clean audit"
                  f"{_ref(a.get('reference'))}; this issue closes when they are gone.", "",
                  _items(a["outstanding"])]
    if a["regressions"]:
        parts += ["", "### New since the last audit", "", _items(a["regressions"])]
    if a["improvements"]:
        parts += ["", "### Better since the last audit", "", _items(a["improvements"])]
    parts += ["", "### Models", "", _model_table(report)]
    advice = _shape_advice_section(report)
    if advice:
        parts += ["", "### Shape advice", "", advice]
    week = a.get("week_ago")
    parts += ["", f"### Since a week ago{_ref(week)}", ""]
    parts.append(_changes_list(a["since_week"]) if week else
                 "_No audit from a week ago in the history yet._")
    if a.get("findings_by_rule"):
        rows = [[md.code_inline(r, table=True), str(n)] for r, n in a["findings_by_rule"].items()]
        parts += ["", "### Static findings (whole tree)", "", md.table(["rule", "count"], rows)]
    fixes = _fixes_section(report)
    if fixes:
        parts += ["", "### Verified fixes", "", fixes]
    parts += ["", _mermaid_section(a)]
    if a.get("charts_note"):
        parts += ["", f"_{md.escape_inline(a['charts_note'])}_"]
    parts += ["", _footer(a)]
    text = "\n".join(parts).rstrip() + "\n"
    if len(text) > limit:
        tail = "\n\n_…truncated; the whole audit is in report.html and report.json._\n"
        text = text[: limit - len(tail)] + tail
    return text


def _fixes_section(report: dict[str, Any]) -> str:
    """The proof of fixes for the audit's own findings (report.json's `fixes`,
    pt2bot/fixes.py `prove_audit`): each verified fix with what was verified and its lines,
    then the breaks left without one. Nothing is posted: a maintainer applies them."""
    proved = _proved(report)
    if proved is None:
        return ""
    verified, open_, summary = proved
    parts = [summary]
    for c in verified[:MAX_FIXES]:
        where = f"{c.get('path')}:{c.get('start_line')}-{c.get('end_line')}"
        lines = [str(x) for x in c.get("lines") or ()]
        parts += ["", f"- {md.code_inline(c.get('rule'), limit=20)} "
                      f"{md.escape_inline(c.get('title'), limit=FIX_TITLE_CAP)} at "
                      f"{md.code_inline(where, limit=160)}: "
                      f"{md.escape_inline(c.get('evidence'), limit=600)}", ""]
        parts.append(md.code_block("\n".join(lines), "python") if lines
                     else "_(deletes the lines)_")
    if len(verified) > MAX_FIXES:
        parts += ["", f"_…and {len(verified) - MAX_FIXES} more in report.json._"]
    if open_:
        parts += ["", md.details(f"{len(open_)} without a verified fix",
                                 fix_target_lines(report.get("fixes") or {}, open_[:MAX_FIXES]))]
    return "\n".join(parts)


def _proved(report: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str] | None:
    """report.json's `fixes` of the audit: (the verified candidates, the targets left
    without one, one sentence counting them; numbers only), None without a proof."""
    fixes = report.get("fixes")
    if not isinstance(fixes, dict):
        return None
    verified, targets, open_ = split_fixes(fixes)
    summary = (f"{len(verified)} verified fix{'es' if len(verified) != 1 else ''} for "
               f"{len(targets) - len(open_)} of {len(targets)} graph break"
               f"{'s' if len(targets) != 1 else ''} on a line a static finding flags: each re-run "
               "on the models before it is listed here "
               f"({_seconds(fixes.get('spent_s'))} of the {_seconds(fixes.get('budget_s'))} "
               "budget).")
    return verified, open_, summary


def _seconds(value: Any) -> str:
    return f"{value:g} s" if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else "? s"


def render_regression_comment(report: dict[str, Any]) -> str:
    """The comment posted on the tracking issue when something regressed tonight."""
    a = report["audit"]
    commit = str(report.get("head") or "")[:12]
    text = "\n".join([md.marker("audit-comment"),
                      f"**Regressed at {md.code_inline(commit)}** "
                      f"since the last audit{_ref(a.get('previous'))}:", "",
                      _items(a["regressions"])]) + "\n"
    return text[:BODY_LIMIT]


def _verdict(report: dict[str, Any]) -> str:
    a = report["audit"]
    if a["outstanding"]:
        return f"{len(a['outstanding'])} outstanding problem(s)"
    return "clean" if report.get("conclusion") != "neutral" else "no verdict"


def _header(report: dict[str, Any]) -> str:
    head = report.get("head") or "?"
    items = [f"commit {md.code_inline(str(head)[:12])}"]
    for key in ("torch", "device"):
        if report.get(key):
            items.append(f"{key} {md.code_inline(report[key])}")
    prev = report["audit"].get("previous")
    items.append(f"previous audit {md.code_inline(str(prev['commit'])[:12])}" if prev
                 else "first audit")
    return " · ".join(items)


def _ref(run: dict[str, Any] | None) -> str:
    if not run:
        return ""
    return f" ({md.code_inline(str(run.get('commit') or '?')[:12])}, {run['created'][:10]})"


def _item(it: dict[str, Any]) -> str:
    where = ""
    if it.get("path"):
        loc = f"{it['path']}:{it.get('line') or '?'}"
        where = f" at {md.code_inline(loc)}"
    what = md.escape_inline(it.get("detail") or "")
    extra = ""
    if it.get("gb_type") or it.get("reason"):
        extra = " — " + md.escape_inline(it.get("gb_type") or it.get("reason"), limit=160)
    if it.get("gb"):
        extra += f" ({md.code_inline(it['gb'])})"
    if it.get("message"):
        extra += " — " + md.escape_inline(it["message"], limit=200)
    return f"- **{md.escape_inline(it.get('model'))}**: {what}{where}{extra}"


def _items(items: list[dict[str, Any]], cap: int = 50) -> str:
    lines = [_item(it) for it in items[:cap]]
    if len(items) > cap:
        lines.append(f"- …and {len(items) - cap} more (report.json)")
    return "\n".join(lines)


def _changes_list(changes: list[dict[str, Any]]) -> str:
    if not changes:
        return "No change in graph breaks, recompiles, export or status."
    rows = []
    for c in changes:
        worse = "; ".join(md.escape_inline(w["detail"]) for w in c["worse"]) or "–"
        better = "; ".join(md.escape_inline(b["detail"]) for b in c["better"]) or "–"
        rows.append([md.escape_inline(c["model"]), worse, better])
    return md.table(["model", "worse", "better"], rows)


def _model_table(report: dict[str, Any]) -> str:
    a = report["audit"]
    last = {c["model"]: c for c in a["since_last"]}
    window: dict[str, list[dict[str, Any]]] = {}
    for w in a["window"]["cases"]:
        window.setdefault(str(w["model"]), []).append(w)
    rows = []
    for m in report.get("models") or []:
        name = str(m.get("name"))
        head = m.get("head") or {}
        status = head.get("status") or m.get("status") or "?"
        breaks = head.get("graph_breaks")
        n_breaks = len(breaks) if isinstance(breaks, list) else "–"
        rec = head.get("recompiles")
        n_rec = rec.get("count") if isinstance(rec, dict) else None
        export = head.get("export") or {}
        exp = "–" if export.get("ok") is None else ("ok" if export["ok"] else
                                                    f"fails ({export.get('kind') or 'error'})")
        lat = _latency_cell(window.get(name, []))
        change = last.get(name)
        delta = "–"
        if change:
            delta = "; ".join([f"⬆ {md.escape_inline(w['detail'])}" for w in change["worse"]] +
                              [f"⬇ {md.escape_inline(b['detail'])}" for b in change["better"]])
        rows.append([md.escape_inline(name), md.escape_inline(status), str(n_breaks),
                     "–" if n_rec is None else str(n_rec), md.escape_inline(exp), lat,
                     _compile_cell(head), delta])
    if not rows:
        return "_No models configured._"
    return md.table(["model", "status", "graph breaks", "recompiles", "export",
                     "compiled latency (vs window)", "first compile", "since last audit"],
                    rows)


def _compile_cell(run: dict[str, Any]) -> str:
    """"1.52 CPU s (cold), 90 FX nodes" from a RUN's `compile_cost`, or "–"."""
    cost = run.get("compile_cost")
    if not isinstance(cost, dict) or not isinstance(cost.get("cpu_s"), (int, float)):
        return "–"
    cache = f" ({cost['cache']})" if cost.get("cache") in ("cold", "warm") else ""
    nodes = (f", {cost['fx_nodes']} FX nodes" if isinstance(cost.get("fx_nodes"), int)
             else "")
    return f"{cost['cpu_s']:.2f} CPU s{cache}{nodes}"


def _shape_advice_section(report: dict[str, Any]) -> str:
    """Every model's shape advice (head's run): what to write so the matrix compiles once
    and exports with dynamic dims."""
    out = []
    for m in report.get("models") or []:
        head = m.get("head") or {}
        advice = head.get("shape_advice") if isinstance(head, dict) else None
        if isinstance(advice, dict):
            out.append(advice_markdown(advice, f"{m.get('name')}"))
    return "\n\n".join(out)


def _latency_cell(cases: list[dict[str, Any]]) -> str:
    if not cases:
        return "–"
    out = []
    for w in cases[:4]:
        s = f"{w['median_ms']:.3g} ms"
        if w["verdict"] == "insufficient":
            s += f" (window {w['n']})"
        else:
            s += f" ({w['change_pct']:+.1f}%{', ' + w['verdict'] if w['verdict'] != 'same' else ''})"
        out.append(f"{md.escape_inline(w['shape_key'])}: {s}")
    if len(cases) > 4:
        out.append(f"+{len(cases) - 4} case(s)")
    return "<br>".join(out)


def _mermaid_section(a: dict[str, Any]) -> str:
    t = a["trends"]
    labels = t["labels"]
    if len(labels) < 2:
        return "### Trends\n\n_Trends appear from the second audit on._"
    blocks = []
    kinds = (("graph_breaks", "graph break sites", "breaks"),
             ("latency_ms", "compiled latency", "ms"),
             ("compile_cpu_s", "first compile", "CPU s"),
             ("captured_ops", "ops captured in graphs", "ops"))
    names = sorted(set().union(*(t.get(key) or {} for key, _, _ in kinds)))
    for name in names[:MERMAID_MAX_MODELS]:
        charts = []
        for key, title, axis in kinds:
            series = (t.get(key) or {}).get(name)
            if series and any(v is not None for v in series):
                charts.append(mermaid_xychart(f"{name}: {title}", axis, labels, series,
                                              integer=key in ("graph_breaks", "captured_ops")))
        if charts:
            blocks.append(md.details(md.escape_inline(name), "\n\n".join(charts),
                                     open_=len(names) == 1))
    if len(names) > MERMAID_MAX_MODELS:
        blocks.append(f"_{len(names) - MERMAID_MAX_MODELS} more model(s) in report.html._")
    return "### Trends\n\n" + "\n\n".join(blocks)


def mermaid_xychart(title: str, axis: str, labels: list[str],
                    values: list[float | None], *, integer: bool = False) -> str:
    """A Mermaid `xychart-beta` line chart; nights without a value are left out."""
    pts = [(lab, v) for lab, v in zip(labels, values) if v is not None]
    xs = ", ".join(f'"{_mermaid_text(lab, 16)}"' for lab, _ in pts)
    ys = ", ".join(str(int(v)) if integer else f"{v:.4g}" for _, v in pts)
    top = max(v for _, v in pts)
    top = max(1, int(top) + 1) if integer else top * 1.2 or 1
    return "\n".join([
        "```mermaid", "xychart-beta",
        f'    title "{_mermaid_text(title, 60)}"',
        f"    x-axis [{xs}]",
        f'    y-axis "{_mermaid_text(axis, 20)}" 0 --> {top if integer else f"{top:.4g}"}',
        f"    line [{ys}]", "```"])


def _mermaid_text(text: str, limit: int) -> str:
    """Mermaid has no escaping that GitHub honours everywhere: keep a safe alphabet."""
    return _MERMAID_UNSAFE.sub("_", str(text))[:limit]


def _footer(a: dict[str, Any]) -> str:
    w = a["window"]
    pruned = f", {a['pruned']} pruned" if a.get("pruned") else ""
    return (f"<sub>Latency is judged against the last {w['days']:g} days of audits "
            f"(median ± {w['k']:g}·MAD, at least {w['min_runs']} nights). "
            f"History: {a['runs_in_history']} run(s){pruned}. "
            f"Baseline for `pt2bot review --baseline`: "
            f"{md.code_inline(a.get('baseline') or 'none')}.</sub>")


# --------------------------------------------------------------------------- HTML

def render_audit_html(report: dict[str, Any], charts: ChartResult) -> str:
    """A single self-contained page: charts as data: URIs, every text html-escaped."""
    e = html_text
    a = report["audit"]
    head = str(report.get("head") or "?")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>pt2bot audit {e(head[:12])}</title>",
           "<style>body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;"
           "padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
           "padding:.3em .6em;text-align:left;vertical-align:top}.worse{color:#b00}"
           ".better{color:#070}img{max-width:100%}</style></head><body>",
           f"<h1>pt2bot nightly audit: {e(_verdict(report))}</h1>",
           f"<p>commit <code>{e(head)}</code> · torch {e(str(report.get('torch') or '?'))}"
           f" · device {e(str(report.get('device') or '?'))} · "
           + (f"previous audit <code>{e(str(a['previous']['commit']))}</code>"
              if a.get("previous") else "first audit") + "</p>"]
    for key, title, cls in (("outstanding", "Outstanding problems", "worse"),
                            ("regressions", "New since the last audit", "worse"),
                            ("improvements", "Better since the last audit", "better")):
        if a[key]:
            out.append(f"<h2>{title}</h2><ul>")
            out += [f'<li class="{cls}">{_html_item(it)}</li>' for it in a[key]]
            out.append("</ul>")
    out.append("<h2>Models</h2><table><tr><th>model</th><th>status</th><th>graph breaks</th>"
               "<th>recompiles</th><th>export</th><th>compiled latency vs window</th></tr>")
    cases: dict[str, list[dict[str, Any]]] = {}
    for w in a["window"]["cases"]:
        cases.setdefault(str(w["model"]), []).append(w)
    for m in report.get("models") or []:
        h = m.get("head") or {}
        breaks = h.get("graph_breaks")
        rec = h.get("recompiles") if isinstance(h.get("recompiles"), dict) else {}
        export = h.get("export") or {}
        lat = "<br>".join(
            f"{e(w['shape_key'])}: {w['median_ms']:.3g} ms"
            + ("" if w["change_pct"] is None else f" ({w['change_pct']:+.1f}%, {e(w['verdict'])})")
            for w in cases.get(str(m.get("name")), []))
        out.append(
            f"<tr><td>{e(str(m.get('name')))}</td><td>{e(str(h.get('status') or m.get('status')))}"
            f"</td><td>{len(breaks) if isinstance(breaks, list) else '–'}</td>"
            f"<td>{e(str(rec.get('count', '–')))}</td>"
            f"<td>{'–' if export.get('ok') is None else ('ok' if export['ok'] else e(str(export.get('kind') or 'fails')))}</td>"
            f"<td>{lat or '–'}</td></tr>")
    out.append("</table>")
    if a["since_week"] or a.get("week_ago"):
        out.append("<h2>Since a week ago</h2><ul>")
        for c in a["since_week"]:
            for w in c["worse"]:
                out.append(f'<li class="worse">{e(c["model"])}: {e(w["detail"])}</li>')
            for b in c["better"]:
                out.append(f'<li class="better">{e(c["model"])}: {e(b["detail"])}</li>')
        out.append("</ul>" if a["since_week"] else "<li>no change</li></ul>")
    out.append("<h2>Trends</h2>")
    for key, path in sorted(charts.files.items()):
        with open(path, "rb") as fh:
            data = base64.b64encode(fh.read()).decode("ascii")
        out.append(f'<p><img alt="{e(key)} trend" src="data:image/png;base64,{data}"></p>')
    if charts.note:
        out.append(f"<p><em>{e(charts.note)}</em></p>")
    if a.get("findings_by_rule"):
        out.append("<h2>Static findings (whole tree)</h2><table><tr><th>rule</th><th>count</th></tr>")
        out += [f"<tr><td>{e(r)}</td><td>{n}</td></tr>" for r, n in a["findings_by_rule"].items()]
        out.append("</table>")
    advice = _shape_advice_section(report)
    if advice:   # its Markdown as text: code to paste, which a reader copies as it stands
        out.append(f"<h2>Shape advice</h2><pre>{e(advice)}</pre>")
    out += _fixes_html(report)
    out.append("</body></html>\n")
    return "\n".join(out)


def _fixes_html(report: dict[str, Any]) -> list[str]:
    """`_fixes_section` for the page: audit.md, when cut to the issue's size, sends the
    reader here for the rest, so the verified fixes must be here too."""
    e = html_text
    proved = _proved(report)
    if proved is None:
        return []
    verified, open_, summary = proved
    out = ["<h2>Verified fixes</h2>", f"<p>{e(summary)}</p>"]
    if verified:
        out.append("<ul>")
        for c in verified:
            where = f"{c.get('path')}:{c.get('start_line')}-{c.get('end_line')}"
            lines = "\n".join(str(x) for x in c.get("lines") or ())
            out.append(f"<li><code>{e(str(c.get('rule')))}</code> {e(str(c.get('title') or ''))} "
                       f"at <code>{e(where)}</code>: {e(str(c.get('evidence') or ''))}"
                       + (f"<pre>{e(lines)}</pre>" if lines else " <em>(deletes the lines)</em>")
                       + "</li>")
        out.append("</ul>")
    if open_:
        out.append(f"<details><summary>{len(open_)} without a verified fix</summary><ul>")
        out += [f"<li>{e(str(t.get('kind') or ''))} {e(str(t.get('gb') or ''))} at "
                f"<code>{e(str(t.get('path')))}:{e(str(t.get('line')))}</code> "
                f"({e(str(t.get('model')))}): no verified fix: {e(str(t.get('reason') or ''))}</li>"
                for t in open_]
        out.append("</ul></details>")
    return out


def _html_item(it: dict[str, Any]) -> str:
    e = html_text
    s = f"<b>{e(str(it.get('model')))}</b>: {e(str(it.get('detail') or ''))}"
    if it.get("path"):
        s += f" at <code>{e(str(it['path']))}:{e(str(it.get('line') or '?'))}</code>"
    if it.get("gb_type") or it.get("reason"):
        s += " — " + e(str(it.get("gb_type") or it.get("reason"))[:300])
    if it.get("gb"):
        s += f" (<code>{e(str(it['gb']))}</code>)"
    if it.get("message"):
        s += " — " + e(str(it["message"])[:300])
    return s


__all__ = ["render_audit_dir", "render_audit_markdown", "render_audit_html",
           "render_regression_comment", "mermaid_xychart", "AUDIT_MARKER"]
