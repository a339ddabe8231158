"""summary.md: the sticky PR comment (also the job summary and the check-run summary).

Layout, top to bottom: the verdict line; why (the failing reasons, each with the lines it is
located at, the same failure of several models on one line, and where several share fewer
lines, one line saying so); one section per model
(a narrow base → head table, latency per shape with its interval, each new break with its
GB code, code line, explanation and hint, fixed breaks in one line, recompile details);
static findings; skipped models; a footer (torch, device, config digest) and the hidden
marker. Narrow tables and `<details>` keep it readable on a phone.

GitHub rejects bodies over 65,536 characters, so the body is fitted: the LONGEST section
loses its last blocks first (details before the table), each cut says how much was left out
and where the full report is; the verdict and footer always survive. Never raises on size.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from pt2bot import gb as gb_registry
from pt2bot.report import compile_report
from pt2bot.report.metrics import compile_line, coverage_line
from pt2bot.report.shape_advice import advice_markdown, causes_markdown, located_at, with_base_pins
from pt2bot.findings import Finding
from pt2bot.report.escape import log_line
from pt2bot.report.findings_text import unjudged
from pt2bot.report.markdown import (code_block, code_inline, details, escape_inline, link,
                                    marker, message_inline, table, truncate_utf8)
from pt2bot.reportdata import ModelDelta, Report
from pt2bot.results import (VALUE_GUARD_WORDS, ExportOutcome, ModelRun, breaks_unmeasured, shape_label,
                            split_off_frame, user_function, value_guard)
from pt2bot.stats import decided

MAX_CHARS = 65_536
SUMMARY_MARKER = marker("summary")
ICONS = {"success": "✅", "failure": "❌", "neutral": "⚪"}
FULL_REPORT = "the full report is in `report.json` (workflow artifact)"
MAX_LIST = 200      # items rendered per list before the fitter even starts


@dataclass
class Section:
    """A titled run of blocks; the fitter drops blocks from the end."""
    title: str
    blocks: list[str]
    omitted: int = 0
    extra_note: str = ""
    sizes: list[int] = field(default_factory=list)

    def render(self) -> str:
        parts = [self.title, *self.blocks]
        if self.omitted:
            parts.append(f"_… {self.omitted} more item{'s' if self.omitted != 1 else ''} "
                         f"not shown here; {FULL_REPORT}._")
        elif self.extra_note:
            parts.append(self.extra_note)
        return "\n\n".join(p for p in parts if p)


def render_summary(report: Report, *, limit: int = MAX_CHARS,
                   measure: Callable[[str], int] = len, with_marker: bool = True) -> str:
    """The summary comment's Markdown, at most `limit` by `measure` (chars by default)."""
    head = render_header(report)
    sections = [s for s in (*model_sections(report), findings_section(report),
                            fixes_section(report), not_traced_section(report),
                            not_run_section(report), skipped_section(report)) if s is not None]
    foot = render_footer(report) + ("\n" + SUMMARY_MARKER if with_marker else "")
    return fit(head, sections, foot, limit=limit, measure=measure)


# --------------------------------------------------------------------------- fitting

def fit(head: str, sections: list[Section], foot: str, *, limit: int,
        measure: Callable[[str], int] = len) -> str:
    """Join head, sections, foot; while too long, drop the last block of the longest section."""
    sep = "\n\n"
    note_room = measure(f"_… 999999 more items not shown here; {FULL_REPORT}._") + 4
    for s in sections:
        s.sizes = [measure(b) + len(sep) for b in s.blocks]
    sec_len = [measure(s.render()) + len(sep) for s in sections]
    fixed = measure(head) + len(sep) + measure(foot)
    while fixed + sum(sec_len) > limit:
        candidates = [i for i, s in enumerate(sections) if s.blocks]
        if not candidates:
            break
        i = max(candidates, key=lambda k: sec_len[k])
        s = sections[i]
        s.blocks.pop()
        dropped = s.sizes.pop()
        s.omitted += 1
        # Estimate incrementally (re-rendering every step is quadratic on huge reports).
        sec_len[i] = sec_len[i] - dropped + (note_room if s.omitted == 1 else 0)
    body = sep.join([head, *[s.render() for s in sections], foot])
    if measure(body) <= limit:
        return body
    # Last resort (the head alone is too big, or estimates were off): cut, keep the foot.
    note = f"\n\n_… truncated; {FULL_REPORT}._\n\n"
    room = max(0, limit - measure(foot) - measure(note))
    cut = truncate_utf8(body, room) if measure is not len else body[:room]
    while measure(cut) > room:
        cut = cut[:-1]
    # Do not leave a fence or <details> open across the cut: drop the partial tail.
    cut = cut[: cut.rfind("\n\n")] if "\n\n" in cut else ""
    return cut + note + foot


# --------------------------------------------------------------------------- header/footer

def render_header(report: Report) -> str:
    conclusion = report.conclusion or "neutral"
    icon = ICONS.get(conclusion, "⚪")
    title = escape_inline(report.summary_title or conclusion, limit=200)
    lines = [f"### {icon} pt2bot: {title}"]
    mode = "nightly audit" if report.mode == "audit" else "pull request review"
    base, head = _short(report.base), _short(report.head)
    lines.append(f"{conclusion.capitalize()} · {mode} · base {base} → head {head}")
    shown = [r for r in report.reasons if r.get("level") in ("failure", "neutral")]
    warns = [r for r in report.reasons if r.get("level") == "warning"]
    if shown or warns:
        lines.append("")
        items = grouped_reasons(shown + warns)
        for r, models in items[:30]:
            sign = {"failure": "❌", "neutral": "⚪"}.get(r.get("level"), "⚠️")
            who = " at ".join(w for w in (_models(models, code_inline), _at_lines(r)) if w)
            who = f"{who}: " if who else ""
            lines.append(f"- {sign} {who}{escape_inline(r.get('message', ''), limit=400)}")
        if len(items) > 30:
            lines.append(f"- … {len(items) - 30} more; {FULL_REPORT}")
        behind = lines_behind(shown)
        if behind:
            lines += ["", behind]
    return "\n".join(lines)


def grouped_reasons(reasons: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], list[str]]]:
    """The reasons as the header lists them: one line for the same check failing the same way
    on the same lines of several models, with those models ((reason, [model names])). A PR
    that adds one `if` to a function four models run read as thirteen lines, the same break
    and the same export failure once per model. The compile-cost warnings that follow from a
    new break (a figure of each model's own) become one line too, their spread said in it; the
    per-model figures stay in each model's section. Grouped in order of their first line, a
    kind of check together: all the graph-break lines, then all the export lines."""
    groups: dict[object, tuple[dict[str, Any], list[str]]] = {}
    for i, r in enumerate(reasons):
        model = r.get("model")
        follows = r.get("code") == "compile_regression" and r.get("follows_breaks") is True
        # (a reason of no model, a static finding's, stands alone)
        key: object = (r.get("level"), r.get("code"), "follows" if follows else r.get("message"),
                       tuple(_reason_lines(r))) if model else i
        if key in groups:
            groups[key][1].append(str(model))
        else:
            groups[key] = (dict(r), [str(model)] if model else [])
    order = {code: i for i, code in reversed(list(enumerate(r.get("code") for r in reasons)))}
    level = {"failure": 0, "neutral": 0}
    out = sorted(groups.values(), key=lambda g: (level.get(g[0].get("level"), 1), order[g[0].get("code")]))
    for r, models in out:
        if len(models) > 1 and r.get("code") == "compile_regression":
            pcts = [x["change_pct"] for x in reasons if x.get("code") == "compile_regression"
                    and x.get("model") in models and type(x.get("change_pct")) is int]
            if not pcts:
                continue
            lo, hi = min(pcts), max(pcts)
            r["message"] = (f"first compile {lo}% to {hi}% costlier" if lo != hi else
                            f"first compile {lo}% costlier") + \
                ("; it follows from the new breaks: more graphs, while the work compiled is within "
                 "the threshold (each model's figures in its section)")
    return out


def _models(names: Sequence[str], code: Callable[..., str]) -> str:
    """"`a`, `b`, `c` and 2 more models": a group's models, all four where four (no name
    hidden behind "1 more"), else three by name."""
    shown = names if len(names) <= 4 else names[:3]
    more = f" and {len(names) - 3} more models" if len(names) > 4 else ""
    return ", ".join(code(n, limit=80) for n in shown) + more


# What each located reason is, where the failing checks are grouped by line.
_REASON_WORDS = {"static_findings": "static finding", "new_graph_breaks": "graph break",
                 "new_recompiles": "recompile", "export_broken": "export",
                 "export_new_cause": "export", "new_specialized": "dynamic dim"}
# Reasons measured on the whole model: no line of the code is theirs.
_WHOLE_MODEL = {"latency_regression": "latency", "compile_regression": "compile cost",
                "accuracy_mismatch": "accuracy"}


def _reason_lines(r: Mapping[str, Any]) -> list[tuple[str, int]]:
    return [(x["path"], x["line"]) for x in r.get("lines") or ()
            if isinstance(x, dict) and isinstance(x.get("path"), str)
            and isinstance(x.get("line"), int)]


def _code(text: str) -> str:
    return code_inline(text, limit=120)


def _at_lines(r: Mapping[str, Any], code: Callable[[str], str] = _code) -> str:
    """"`a.py:3`, `a.py:9`": where a reason is located (three at most), "" if nowhere.
    `code`: how a location is written (Markdown code; the terminal's plain text)."""
    at = _reason_lines(r)
    more = f" and {len(at) - 3} more" if len(at) > 3 else ""
    return ", ".join(code(f"{p}:{n}") for p, n in at[:3]) + more


def lines_behind(failing: list[Mapping[str, Any]], code: Callable[[str], str] = _code) -> str:
    """Where several failing checks point at fewer lines, one line that says which lines and
    what each fails: a PR that adds one `.item()` fails a static rule, the break threshold and
    export on the same line, and that is one thing to fix, not three. Latency, compile cost and
    accuracy are the whole model's and have no line; said so when they fail beside them."""
    by_line: dict[tuple[str, int], list[str]] = {}
    located = 0
    # (counted as the header lists them: one line for the same failure of several models)
    for r, _ in grouped_reasons(failing):
        if r.get("level") != "failure" or r.get("code") not in _REASON_WORDS:
            continue
        at = _reason_lines(r)
        located += bool(at)
        for key in at:
            word = _REASON_WORDS[str(r["code"])]
            if word not in by_line.setdefault(key, []):
                by_line[key].append(word)
    if located < 2 or len(by_line) > 5:
        return ""
    whole = [_WHOLE_MODEL[str(r["code"])] for r in failing
             if r.get("level") == "failure" and r.get("code") in _WHOLE_MODEL]
    places = ", ".join(f"{code(f'{p}:{n}')} ({', '.join(words)})"
                       for (p, n), words in sorted(by_line.items()))
    text = (f"📍 These failures are on {len(by_line)} line{'s' if len(by_line) != 1 else ''}: "
            f"{places}.")
    if whole:
        names = sorted(set(whole), key=whole.index)
        one = len(names) == 1
        text += (f" {' and '.join(names).capitalize()} {'is' if one else 'are'} measured on "
                 f"the whole model, with no line of {'its' if one else 'their'} own.")
    return text


def terminal_reasons(reasons: list[Mapping[str, Any]]) -> list[str]:
    """The header's reasons as plain lines for the terminal of `pt2bot review` (the same
    words as summary.md's, locations unquoted); each a safe log line, since a model's name,
    a path and a message can come from a fork's code."""
    shown = [r for r in reasons if r.get("level") in ("failure", "neutral", "warning")]
    out = []
    for r, models in grouped_reasons(shown)[:30]:
        sign = {"failure": "✗", "neutral": "○"}.get(str(r.get("level")), "!")
        who = " at ".join(w for w in (_models(models, lambda n, limit: str(n)),
                                      _at_lines(r, str)) if w)
        out.append(log_line(f"  {sign} {who + ': ' if who else ''}{r.get('message', '')}"))
    behind = lines_behind([r for r in shown if r.get("level") in ("failure", "neutral")], str)
    if behind:
        out.append(log_line("  " + behind.removeprefix("📍 ")))
    return out


def render_footer(report: Report) -> str:
    bits = [f"torch {escape_inline(report.torch or 'n/a', limit=40)}",
            f"device {escape_inline(report.device or 'n/a', limit=20)}"]
    if report.device_name:
        bits[-1] += f" ({escape_inline(report.device_name, limit=60)})"
    bits.append(f"config {escape_inline(report.config_digest or 'n/a', limit=80)}")
    timings = report.timings or {}
    if isinstance(timings.get("total"), (int, float)):
        bits.append(f"took {timings['total']:.0f} s")
    bits.append(f"pt2bot {escape_inline(report.pt2bot or '', limit=20)}")
    return "---\n<sub>" + " · ".join(bits) + "</sub>"


def _short(sha: Any) -> str:
    return code_inline(str(sha)[:10], limit=12) if sha else "—"


# --------------------------------------------------------------------------- models

def model_sections(report: Report) -> list[Section]:
    out = []
    untimed = None    # the first model whose section says what "not measured" means
    for m in report.models:
        if m.status == "skipped" and m.change != "removed":
            continue   # listed under "Skipped models"
        out.append(model_section(m, report, untimed))
        if untimed is None and _untimed(m):
            untimed = m.name
    return out


def model_section(m: ModelDelta, report: Report, untimed: str | None = None) -> Section:
    """`untimed`: a model above whose section already says why counts are no measure of speed
    where latency is off; this one then says so in one line."""
    name = code_inline(m.name, limit=100)
    change = m.change or "unknown"
    status = m.status
    badge = {"new": "🆕 new", "removed": "🗑️ removed", "changed": "changed",
             "unchanged": "unchanged"}.get(change, escape_inline(change, limit=20))
    bad = any(p.get("level") == "failure" for p in m.problems) or \
        any(r.get("model") == m.name and r.get("level") == "failure" for r in report.reasons)
    title = f"#### {'❌' if bad else '✅' if status == 'ok' else '⚪'} {name} — {badge}"
    if change == "removed":
        return Section(title, ["Not in head's results: the model was removed or its entry "
                               "point no longer exists."])
    blocks: list[str] = []
    if status in ("error", "timeout"):
        blocks.append(error_block(m))
    if status == "ok":
        blocks.append(delta_table(m))
        lat = latency_table(m, untimed)
        if lat:
            blocks.append(lat)
        # graph coverage and compile cost, one line each (pt2bot/report/metrics.py)
        blocks += [line for line in (coverage_line(m), compile_line(m), output_shapes_line(m)) if line]
    fixed = m.fixed_breaks
    if fixed:
        where = ", ".join(f"{gb_link(b.get('gb'))} at {code_inline(location(b), limit=120)}"
                          for b in fixed[:5])
        more = f" and {len(fixed) - 5} more" if len(fixed) > 5 else ""
        blocks.append(f"🎉 Fixed {len(fixed)} graph break{'s' if len(fixed) != 1 else ''}: "
                      f"{where}{more}.")
    for p in m.problems:
        if p.get("kind") in ("compare_error", "not_measured", "fixed_failure", "export_frozen"):
            blocks.append(f"⚪ {escape_inline(p.get('message', ''), limit=400)}")
    new = m.new_breaks
    if new:
        blocks.append(f"**{len(new)} new graph break{'s' if len(new) != 1 else ''}:**")
        settled = hints_settled(report.fixes or {})
        inline = hints_settled(report.fixes or {}, edits_only=True)
        blocks += [break_block(b, hint=b.get("fingerprint") not in settled,
                               inline=b.get("fingerprint") in inline) for b in new[:MAX_LIST]]
    rec = recompile_details(m)
    if rec:
        blocks.append(rec)
    where = compile_report.summary_line(m, report.mode)   # the model's tlparse report, if any
    if where:
        blocks.append(where)
    spec = m.delta.new_specialized
    if spec:
        # (a specialisation torch did not place in the repository's code has no place to name:
        # "at `?`: " said nothing; a size no configured dim names is torch's name for it,
        # `x.size()[2]` of a library's argument, where "dim `None` = 4" said nothing)
        items = "\n".join((f"- dim {code_inline(s.get('dim'), limit=40)}" if s.get("dim") else
                           f"- {code_inline(s.get('input') or 'a size', limit=60)} (no configured dim)")
                          + f" = {escape_inline(s.get('value'), limit=20)}"
                          + (f" at {code_inline(location(s), limit=120)}" if s.get("path") else
                             " (torch named no line of the repository)")
                          + (f": {code_inline(s['source'], limit=200)}" if s.get("source") else "")
                          + (f" — follows from the new break at {code_inline(location(s['caused_by']), limit=120)}"
                             if isinstance(s.get("caused_by"), dict) else "")
                          for s in spec[:20])
        # said outside the fold: code that marks such a dim with `mark_dynamic` now fails to
        # compile (MAE's user met the ConstraintViolationError on each PR's head, where the
        # review's folded line named only the dim and an unchanged line)
        n = len(spec)
        blocks.append(f"⚠️ {n} dim{'s' if n != 1 else ''} declared dynamic {'are' if n != 1 else 'is'} "
                      f"newly specialised: `torch._dynamo.mark_dynamic` on {'them' if n != 1 else 'it'} "
                      "now raises a `ConstraintViolationError` when the model compiles (measured with "
                      f"{'them' if n != 1 else 'it'} marked weakly, `maybe_mark_dynamic`).")
        blocks.append(details(f"{n} dynamic dim(s) newly specialised", items))
    blocks += shape_advice_blocks(m)
    section = Section(title, blocks)
    if len(new) > MAX_LIST:
        section.omitted = len(new) - MAX_LIST
    return section


def output_shapes_line(m: ModelDelta) -> str | None:
    """The shape cases on which head's eager outputs have other shapes than base's: the review
    judges compile behaviour, and a model whose outputs changed shape is not "unchanged" (a
    resize fed the wrong dims). Said, not judged: a PR may mean it."""
    changed = [c for c in m.delta.output_shapes if isinstance(c, Mapping)]
    if not changed:
        return None
    acc = (m.head or {}).get("accuracy") if isinstance(m.head, Mapping) else None
    total = sum(1 for a in acc if isinstance(a, Mapping) and a.get("out_shapes") is not None) \
        if isinstance(acc, list) else 0
    first = changed[0]
    of = f" of {total}" if total >= len(changed) else ""
    return (f"ℹ️ Eager outputs change shape on {len(changed)}{of} shape case{'s' if (total or len(changed)) != 1 else ''}: "
            f"on {code_inline(shape_label(first.get('shape')), limit=100)}, "
            f"{code_inline(_shapes_text(first.get('base')), limit=120)} on base, "
            f"{code_inline(_shapes_text(first.get('head')), limit=120)} on head. The review compares "
            "compile behaviour, not what the model computes: check that the PR means this.")


def _shapes_text(shapes: object) -> str:
    """A case's output shapes as Python prints them: `(1, 3, 48, 64)`, several joined by ", "
    (a Python number: `number`), the first four."""
    if not isinstance(shapes, list):
        return "?"
    parts = ["number" if s is None else "(" + ", ".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")"
             if isinstance(s, list) else "?" for s in shapes[:4]]
    return ", ".join(parts) + (", …" if len(shapes) > 4 else "")


def shape_advice_blocks(m: ModelDelta) -> list[str]:
    """What newly keeps export from being dynamic or succeeding, then the shape advice when
    the pull request changes it or the model recompiles over the matrix."""
    out = []
    causes = causes_markdown(m.delta.new_export_causes)
    if causes:
        out.append("**Export, new causes:**\n" + causes)
    sa = m.shape_advice or {}
    head = sa.get("head")
    recompiles = ((m.head or {}).get("recompiles") or {}) if isinstance(m.head, dict) else {}
    recompiling = isinstance(recompiles, dict) and (recompiles.get("count") or 0) > 0
    if not isinstance(head, dict):
        return out
    comp = head.get("compile") if isinstance(head.get("compile"), dict) else {}
    before, after = comp.get("compiles_before"), comp.get("compiles_after")
    # The advice answers recompiles over sizes. Where its own count shows that the dims made
    # dynamic leave the compiles as they are (tad-dftd3: 131 -> 131, its recompiles are guards
    # on dtypes and requires_grad in a helper called several ways), offering it because "the
    # model recompiles" would be advice measured not to help; unless it names a dim the code
    # pins, which is advice of its own (where, and why).
    shapes = (head.get("export") or {}).get("dynamic_shapes") if isinstance(
        head.get("export"), dict) else None
    pinned = isinstance(shapes, dict) and any(
        isinstance(e, dict) and e.get("static") for axes in shapes.values()
        if isinstance(axes, dict) for e in axes.values())
    no_help = isinstance(before, int) and isinstance(after, int) and after >= before \
        and not pinned
    base = sa.get("base") if isinstance(sa.get("base"), dict) else {}
    h_export = head.get("export") if isinstance(head.get("export"), dict) else {}
    b_export = base.get("export") if isinstance(base.get("export"), dict) else {}
    if sa.get("changed") and h_export.get("ok") is False and b_export.get("ok") is True \
            and not (recompiling and not no_help):
        # head's export stops at the pull request's own new failure before it reaches the
        # dims: its "advice" is the dims it was asked for (llama2.c's `seq`, any size, where
        # base's export bounded it by the position table), no change of the advice to offer
        out.append("ℹ️ Shape advice not derived again: head's export stops first"
                   f"{located_at(h_export)}, before it reaches the dims; {_base_dims(b_export)}.")
        return out
    if sa.get("changed") or (recompiling and not no_help):
        why = "changed by this pull request" if sa.get("changed") else "the model recompiles"
        out.append(advice_markdown(with_base_pins(head, sa.get("base_pins")), f"Shape advice ({why})"))
    elif recompiling:
        out.append(_not_sizes_line(recompiles, before, after, comp.get("method"),
                                   reused=bool(comp.get("reused"))))
    return out


def _base_dims(export: Mapping[str, Any]) -> str:
    """What base's advice exported with: torch's suggested Dims of the dims it keeps dynamic,
    and the dims the code pins static. The suggested Dims are what torch was asked to try:
    quoted alone they read as dynamic where the advice pinned them (complextorch's range and
    doppler, a mean that guards on their product)."""
    suggested = [str(s) for s in export.get("suggested") or () if isinstance(s, str)]
    dynamic, static = [], []
    for arg, axes in (export.get("dynamic_shapes") or {}).items():
        for idx, e in (axes.items() if isinstance(axes, Mapping) else ()):
            if isinstance(e, Mapping) and e.get("static"):
                static.append(f"{arg} dim {idx} = {e.get('value')}")
            elif isinstance(e, Mapping) and isinstance(e.get("name"), str):
                dynamic.append(e["name"])
    if dynamic or static:
        suggested = [s for s in suggested if s.split(" = ", 1)[0] in dynamic]
    text = "base's exported" + (": " + ", ".join(code_inline(s, limit=120) for s in suggested[:3])
                                if suggested else "")
    if static:
        text += (f"{';' if suggested else ','} with {len(static)} dim{'s' if len(static) != 1 else ''} "
                 "the code pins static: " + ", ".join(code_inline(x, limit=60) for x in static[:3]))
    return text


def _frame_of(reason: Mapping[str, Any]) -> str:
    """" in `_inverse` (`flowtorch/bijectors/autoregressive.py`, an installed package)": the
    frame a recompile's guard belongs to, so that a package's recompiles read as its own."""
    f = reason.get("frame") if isinstance(reason.get("frame"), dict) else {}
    name, path, line = f.get("function"), f.get("path"), f.get("line")
    if not isinstance(name, str) or not name:
        return ""
    # (a frame dynamo made to resume after a break: the user's function it was cut from, and
    # the line it resumes after)
    name = user_function(name)
    after = reason.get("resumed_after") if isinstance(reason.get("resumed_after"), dict) else {}
    resumed = (f", resumed after line {after['line']}"
               if name != f.get("function") and isinstance(after.get("line"), int) else "")
    line = None if name != f.get("function") else line
    if isinstance(f.get("library"), str):
        where = f" ({code_inline(f['library'], limit=120)}, an installed package{resumed})"
    elif isinstance(path, str):
        at = f"{path}:{line}" if isinstance(line, int) else path
        where = f" ({code_inline(at, limit=120)}{resumed})"
    else:
        where = f" ({resumed[2:]})" if resumed else ""
    return f" in {code_inline(name, limit=80)}{where}"


def _not_sizes_line(recompiles: Mapping[str, Any], before: int, after: int,
                    method: Any, reused: bool = False) -> str:
    """Why no shape advice is offered for a model that recompiles: with its dims dynamic it
    compiles as often, and the guard that fails most often says what it recompiles on."""
    reasons = [r for c in recompiles.get("cases") or () if isinstance(c, dict)
               for r in c.get("reasons") or () if isinstance(r, dict)
               and r.get("kind") == "guard" and r.get("guard")]
    # (torch's guard text carries its source line and a cut path after two spaces and `#`:
    # `n == 8   ...   # e_atom = ...  # mp/h32repo/mlpot/model.…` was quoted whole)
    said = [(r["guard"].split("  #")[0].strip(), r) for r in reasons]
    guards = Counter(g for g, _ in said)
    top = ""
    if guards:
        g, times = guards.most_common(1)[0]
        # "(1×)" read as a guard failing on every step: the count is of the matrix's cases
        top = (f"; the guard that fails most often: {code_inline(g, limit=160)} (failed "
               f"{'once' if times == 1 else f'{times} times'} in the shape matrix)"
               + _frame_of(next(r for text, r in said if text == g)))
    how = f" ({code_inline(method, limit=40)})" if isinstance(method, str) else ""
    n = recompiles.get("count")
    # every recompile a size change in a frame a graph break split off (not the model's own,
    # frame 0): no declared dim reaches that frame's inputs, so no spec can remove them; the
    # break can
    split = [r for c in recompiles.get("cases") or () if isinstance(c, dict)
             for r in c.get("reasons") or () if isinstance(r, dict) and r.get("kind") != "size_one"]
    apart = bool(split) and all(split_off_frame(r.get("compile_id")) and r.get("kind") == "size_mismatch"
                                for r in split)
    # (not "they go with the break": V-JEPA's 13 such were 3 once its break was fixed, sizes
    # its code pins, which a frame compiled static first hides behind its size mismatches)
    why = (" They are in frames a graph break splits off, whose inputs are what the code computed "
           "before the break, so no declared dim reaches them while the break is there; with it "
           "fixed the dims reach those frames, and only sizes the code itself pins still "
           "recompile." if apart else "")
    # (where the configured dims are the advised ones, nothing was compared: S4's user read
    # "compiles 25 times, against 25 as configured" as a comparison of the config with itself)
    with_dims = (f"The dims are dynamic as configured already{how}: the matrix compiles {after} "
                 f"times" if reused else
                 f"With the dims dynamic{how} the matrix compiles {after} times, against {before} as "
                 "configured")
    return (f"ℹ️ No shape advice: dynamic dims do not remove this model's {n} "
            f"recompile{'s' if n != 1 else ''}. {with_dims}{top}.{why}")


def _num(v: Any) -> str:
    return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else "—"


def _signed(v: int) -> str:
    return f"+{v}" if v > 0 else str(v) if v < 0 else "0"


def _break_count(breaks: list) -> str:
    """A side's break count, saying how many only the matrix's dynamic sizes hit: those are
    not in the `graphs` row's count, which is the one-case break pass's."""
    dynamic = sum(1 for b in breaks if isinstance(b, Mapping) and b.get("matrix_only"))
    return f"{len(breaks)} ({dynamic} only with dynamic sizes)" if dynamic else str(len(breaks))


def delta_table(m: ModelDelta) -> str:
    base, head = m.base or {}, m.head or {}
    d = m.delta
    # (a base that failed to run measured nothing: its cells are "—", not a count of 0 breaks
    # beside "—" for everything else)
    has_base = bool(m.base) and base.get("status") in (None, "ok")
    # a side whose break pass raised measured no break: its count is not a zero
    off = [breaks_unmeasured(ModelRun.coerce(side)) for side in (base, head)]
    known = not off[1] and not (has_base and off[0])
    nb, hb = (("not measured" if o else _break_count(side.get("graph_breaks") or []))
              for o, side in zip(off, (base, head)))
    rows = [["graph breaks", nb if has_base else "—", hb,
             _signed(d.graph_breaks) if known else "—"]]
    # more breaks beside as many graphs: what follows each new break compiles into no graph of
    # its own (a check that raises at the end of `forward`: "graphs 1 → 1" beside "graph
    # breaks 0 → 1" read as a contradiction)
    none_after = known and has_base and d.graph_breaks > 0 and d.graph_count == 0
    rows.append(["graphs", ("not measured" if off[0] else _num(base.get("graph_count")))
                 if has_base else "—",
                 "not measured" if off[1] else _num(head.get("graph_count")),
                 (_signed(d.graph_count) + (" (the new break adds no graph: the code after it compiles "
                                           "into none of its own, or runs eagerly)" if none_after else ""))
                 if known else "—"])
    brc = (base.get("recompiles") or {}) if isinstance(base.get("recompiles"), dict) else {}
    hrc = (head.get("recompiles") or {}) if isinstance(head.get("recompiles"), dict) else {}
    caused, after = d.caused_recompiles, d.after_break_recompiles
    measured = _count_of(hrc) != "not measured" and (not has_base or _count_of(brc) != "not measured")
    # the change in full, then how much of it the breaks explain: "0 (+1 from the new
    # breaks)" beside 2 → 3 read as arithmetic that does not add up
    brk = f"the new break{'s' if _n_breaks(m) != 1 else ''}"
    total = d.recompiles + caused + after
    parts = [(caused, f"from {brk}"), (after, "once, in frames an existing break splits off")]
    parts = [(n, what) for n, what in parts if n > 0]
    if measured and parts:
        change = f"{_signed(total)} ({', '.join(f'{_all_or(n, total)} {what}' for n, what in parts)})"
    else:
        change = _signed(d.recompiles) if measured else "—"
    rows.append(["recompiles", _count_of(brc) if has_base else "—", _count_of(hrc), change])
    exp = d.export
    new_cause = any(c.get("kind") == "export_failure" for c in d.new_export_causes)
    rows.append(["export", _export_cell(base) if has_base else "—", _export_cell(head),
                 "⚠️ new cause" if new_cause else
                 {"broken": "❌ broken", "fixed": "🎉 fixed"}.get(exp, "same" if exp == "same"
                                                                   else "—")])
    acc = d.accuracy
    if acc:
        rows.append(["accuracy", "", f"❌ {len(acc)} shape(s)",
                     f"{sum(1 for a in acc if a.get('new'))} new"])
    return table(["", "base", "head", "Δ"], rows)


def _all_or(n: int, total: int) -> str:
    return "all" if n == total else str(n)


def _count_of(rc: dict) -> str:
    """The recompile count of one side, "not measured" where every shape case raised."""
    cases = [c for c in rc.get("cases") or () if isinstance(c, dict)]
    return "not measured" if cases and all(c.get("error") for c in cases) else _num(rc.get("count"))


def _n_breaks(m: ModelDelta) -> int:
    return len(m.new_breaks)


def caused_recompiles(b: dict) -> int:
    n = b.get("caused_recompiles")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


def caused_line(b: dict, per_model: Sequence[tuple[str, dict]] = ()) -> str:
    """"3 recompiles follow from the new break at `path:line`" (Markdown), or "". With
    `per_model` ((model, its copy of the break) for each model that broke there), one line
    for them all, each model's count named: a comment on a line three models break at read
    "1 recompile follows" and "2 recompiles follow" with no model named."""
    counts = [(m, caused_recompiles(x)) for m, x in per_model if caused_recompiles(x)]
    n = sum(k for _, k in counts) if per_model else caused_recompiles(b)
    if not n:
        return ""
    who = (" (" + ", ".join(f"{k} on {code_inline(m, limit=80)}" for m, k in counts) + ")"
           if len({m for m, _ in per_model}) > 1 else "")
    return (f"↪ {n} recompile{'s follow' if n != 1 else ' follows'} from the new break at "
            f"{code_inline(location(b), limit=160)}{who}: the frames the break splits off are "
            "compiled again for new shapes, or new values passed across the break, and go away "
            "with the break.")


def _export_cell(run: Mapping[str, Any]) -> str:
    e = run.get("export")
    if not isinstance(e, dict) or not isinstance(e.get("ok"), bool):
        return "—"
    if e["ok"]:
        fails, held = ExportOutcome.coerce(e).failed_cases()
        static = f" ({len(e.get('static_dims') or [])} static dim)" if e.get("static_dims") else ""
        # (not a check mark where the exported program fails on some cases: "✓ (fails on 2
        # of 4 cases)" read as a pass; held-out batch 39)
        if fails:
            return f"⚠️ exports, fails on {fails} of {held} cases{static}"
        # (a program whose random draws were fixed at export: "✓ same" read for a CutMix that
        # mixes every batch alike, held-out batch 44)
        return f"⚠️ exports, its random draws fixed{static}" if e.get("frozen") else f"✓{static}"
    return "✗ " + escape_inline(e.get("kind") or "error", limit=30)


GATED_LATENCY = ("Latency: unchanged: same graphs, same code (not measured: no changed "
                 "statement ran, and the compiled graphs and guards are the same on base and "
                 "head).")


# a changed model whose latency did not run: its counts are no measure of speed (openai/CLIP's
# AttentionPool2d, its query over every position again, 1.7x slower with one FX node fewer)
UNTIMED_LATENCY = ("Latency: not measured (latency is off for this model): graphs, FX nodes and "
                   "ops above count what compiles, not the work each op does, so a slower model "
                   "can show the same counts or fewer.")


def _untimed(m: ModelDelta) -> bool:
    """A changed model whose latency did not run (`UNTIMED_LATENCY`)."""
    return m.latency_gate == "not_measured" and m.change == "changed" and not m.delta.latency


def latency_table(m: ModelDelta, untimed: str | None = None) -> str:
    if m.latency_gate == "unchanged":
        return GATED_LATENCY
    if _untimed(m):
        if untimed:
            return (f"Latency: not measured (latency is off for this model; see "
                    f"{code_inline(untimed, limit=100)} above).")
        return UNTIMED_LATENCY
    rows = []
    for x in m.delta.latency:
        ms = f"{_ms(x.get('base_ms'))} → {_ms(x.get('head_ms'))}"
        if x.get("ratio") is None:
            verdict = escape_inline(x.get("note") or "no comparison", limit=80)
            ratio = "—"
        else:
            ratio = f"{x['ratio']:.2f} [{x['ci_low']:.2f}, {x['ci_high']:.2f}]"
            t = x.get("threshold_pct")
            if x.get("significant"):
                verdict = "🔺 slower" if x.get("direction") == "slower" else "🟢 faster"
            elif isinstance(t, (int, float)) and (x["ci_low"] > 1 or x["ci_high"] < 1):
                # measured apart from 1, but by less than the threshold a change is judged by:
                # "no significant change" would deny what the interval shows
                verdict = f"≈ {'slower' if x['ci_low'] > 1 else 'faster'}, within the {t:g} % threshold"
            elif isinstance(t, (int, float)) and not decided(x):
                # an interval that holds 1 and a change beyond the threshold too (a loaded
                # runner's [0.49, 2.10]) rules out nothing: the test the rounds stop by
                verdict = f"❔ inconclusive: the interval reaches past ±{t:g} %"
            else:
                verdict = "≈ no significant change"
        rows.append([code_inline(shape_label(x.get("shape")), limit=60, table=True), ms, ratio,
                     verdict])
    if not rows:
        return ""
    stat = next((x.get("statistic") for x in m.delta.latency if x.get("statistic")), None)
    what = "medians" if stat == "median" else f"fast-end ({stat}) times" if stat else "times"
    # the sequential rounds' interval is at the level of the look that decided it
    alpha = next((x["alpha"] for x in m.delta.latency
                  if isinstance(x.get("alpha"), float) and 0 < x["alpha"] < 1), 0.05)
    rounds = next((x["rounds"] for x in m.delta.latency if isinstance(x.get("rounds"), int)),
                  None)
    after = f", after {rounds} round{'' if rounds == 1 else 's'}" if rounds else ""
    return (f"Compiled latency, head/base ratio of {escape_inline(what, limit=40)} "
            f"[{100 * (1 - alpha):.3g}% interval{after}]; ms are medians:\n\n"
            + table(["shape", "ms", "ratio", ""], rows))


def _ms(v: Any) -> str:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return "—"
    return f"{v:.3g}"


def gb_link(gb: object) -> str:
    """A GB code (of a break, or the one a finding predicts) linked to its page."""
    if gb_registry.is_code(gb):
        return link(gb, gb_registry.url(gb))
    return "graph break"


def path_line(path: object, line: object) -> str:
    """"path:line" (just the path without a line number)."""
    path = str(path or "?")
    return f"{path}:{line}" if isinstance(line, int) else path


def location(x: Mapping[str, Any]) -> str:
    """Where a break, a problem, an error or a guard is (report.json objects); a break in an
    installed package, by its place there."""
    if not x.get("path") and x.get("library"):
        return str(x["library"])
    return path_line(x.get("path"), x.get("line"))


def finding_location(f: Finding) -> str:
    return path_line(f.path, f.line)


def hints_settled(fixes: Mapping[str, Any], edits_only: bool = False) -> set[str]:
    """The fingerprints of the breaks whose torch hint the proof of fixes answered: a fix
    verified for them, or a setting tried for them either way (for the kinds of break with a
    setting, torch's hint is that setting). The inline comments leave those hints out too.
    `edits_only`: those with a verified edit, which is suggested on the line itself."""
    targets = [t for t in fixes.get("targets") or () if isinstance(t, dict)]
    out: set[str] = set()
    more = [] if edits_only else list(fixes.get("settings") or ())
    for c in list(fixes.get("candidates") or ()) + more:
        if not isinstance(c, dict) or edits_only and c.get("setting"):
            continue
        if c.get("verified") or c.get("setting") and not c.get("skipped"):
            out.update(str(targets[i]["fingerprint"]) for i in c.get("targets") or ()
                       if isinstance(i, int) and 0 <= i < len(targets) and targets[i].get("fingerprint"))
    return out


# a break the smoke run saw only with the matrix's dynamic sizes (results.GraphBreak.matrix_only)
MATRIX_ONLY = ("Only with dynamic sizes: the shape matrix's compiles hit it, the one-case break "
               "pass (its sizes static) does not, so no fix is tried for it.")


def break_block(b: Mapping[str, Any], hint: bool = True, inline: bool = False) -> str:
    """One new break: GB code (linked), type, where; the code line; explanation; torch's hint,
    unless the proof of fixes answered it (`hint` False: Suggested fixes says how)."""
    gb_type = b.get("gb_type") or ""
    func = f" in {code_inline(b['function'], limit=80)}" if b.get("function") else ""
    # how many times dynamo logged the break at this line (a site inside a loop, one each
    # shape case, one per operand of an `or`): "×3" alone was read as three breaks
    count = (f" (dynamo broke here {b['count']} times)"
             if isinstance(b.get("count"), int) and b["count"] > 1 else "")
    outer = b.get("loop_frame") if isinstance(b.get("loop_frame"), Mapping) else None
    loop = ("" if not b.get("in_loop") else
            " — inside a loop: the whole frame runs eagerly" if outer is None else
            f" — inside a loop of {code_inline(outer.get('function') or 'a frame', limit=80)} "
            f"({code_inline(location(outer), limit=160)}): that whole frame runs eagerly")
    where = (f"{code_inline(str(b['library']), limit=160)} of an installed package"
             if not b.get("path") and b.get("library") else code_inline(location(b), limit=160))
    if b.get("path") and isinstance(b.get("inside"), str):
        where += f" (inside {code_inline(b['inside'], limit=160)}, an installed package)"
    lines = [f"- **{gb_link(b.get('gb'))}** {escape_inline(gb_type, limit=160)} at "
             f"{where}{func}{count}{loop}"]
    if b.get("matrix_only"):
        lines.append(f"  {MATRIX_ONLY}")
    if isinstance(b.get("reported_line"), int):
        lines.append(f"  dynamo put it at line {b['reported_line']}, which holds none of that function's "
                     "code: the line is not known, so no comment is posted on one")
    if b.get("source"):
        lines.append(_indent(code_block(b["source"], "python", limit=400)))
    text = b.get("explanation") or b.get("reason")
    if text:
        lines.append(f"  {escape_inline(text, limit=500)}")
    hints = b.get("hints") or []
    if hints and hint:
        lines.append(f"  💡 {escape_inline(hints[0], limit=400)}")
    elif hints:
        # (a verified edit is in the line's own comment; the section only counts it. It is
        # the proof's answer, often a recipe's edit: "torch's hint was tried" read as untrue
        # where the hint's setting never ran)
        # (not inline: the hint's setting was tried, verified or not; "answered this break"
        # read as a fix beside a Suggested fixes that counted none, DETR and dasp-pytorch)
        lines.append("  💡 torch's hint is left out: " + (
            "the proof of fixes answered this break, its verified edit is suggested on the line" if inline else
            "the proof of fixes tried its setting on this break; Suggested fixes says whether it held"))
    if caused_line(b):
        lines.append(f"  {caused_line(b)}")
    return "\n".join(lines)


def _indent(text: str, pad: str = "  ") -> str:
    return "\n".join(pad + line for line in text.split("\n"))


def error_block(m: ModelDelta) -> str:
    err = m.error or {}
    kind = escape_inline(err.get("kind") or m.status or "error", limit=30)
    where = f" at {code_inline(location(err), limit=160)}" if err.get("path") else ""
    fails = [p for p in m.problems if p.get("kind", "").startswith("fails")]
    lead = escape_inline(fails[0]["message"], limit=200) if fails else f"{kind}"
    out = f"❌ **{lead}**{where}"
    if err.get("message"):
        out += "\n\n" + details("error message", code_block(err["message"], limit=3000))
    return out


def recompile_details(m: ModelDelta) -> str:
    """Per shape case with more recompiles than base: the counts and the first guards; a
    recompile that follows from a new break says so, and one in a frame an existing break
    splits off says that it is that frame's one recompile (compare.compare_recompiles)."""
    cases = [c for c in m.delta.recompile_cases if c.get("delta") or _caused(c) or _after(c)]
    if not cases:
        return ""
    lines = []
    for c in cases[:30]:
        why = ([f"{_caused(c)} follow{'s' if _caused(c) == 1 else ''} from the new "
                f"break{'s' if _n_breaks(m) != 1 else ''}"] if _caused(c) else []) + \
              ([f"{_after(c)} once, in {'a frame' if _after(c) == 1 else 'frames'} an existing "
                "break splits off"] if _after(c) else [])
        after = f" ({'; '.join(why)})" if why else ""
        one = c.get("size_one") if isinstance(c.get("size_one"), dict) else {}
        apart = (f"; torch's own for size 1, not counted: {_num(one.get('base'))} → "
                 f"{_num(one.get('head'))}" if one else "")
        lines.append(f"- {code_inline(shape_label(c.get('shape')), limit=60)}: "
                     f"{_num(c.get('base'))} → {_num(c.get('head'))} recompiles{after}{apart}")
        # the same guard of the same frame, failing again (a frame resumed after each of
        # several breaks), is one line with its count
        said: Counter[str] = Counter()
        for r in c.get("reasons") or []:
            if not isinstance(r, dict):
                continue
            where = f" at {code_inline(location(r), limit=120)}" if r.get("path") else ""
            cause = r.get("caused_by") if isinstance(r.get("caused_by"), dict) else None
            old = r.get("after_break") if isinstance(r.get("after_break"), dict) else None
            said[f"  - guard {code_inline(r.get('guard') or '?', limit=160)}{where}"
                 + (f": {code_inline(r['source'], limit=160)}" if r.get("source") else "")
                 + ("" if r.get("path") else _frame_of(r))
                 + (f" — follows from the new break at "
                    f"{code_inline(location(cause), limit=120)}" if cause else "")
                 + ((f" — a frame the break at {code_inline(location(old), limit=120)} (on base "
                     "too) splits off" if old.get("path") else
                     " — a frame a break on base too splits off (no new break here, and only a "
                     "break makes dynamo compile a function apart from the model's own)")
                    + ": no input of it is marked dynamic, so it is compiled again, dynamic, when "
                    "a size first changes, and not again" if old else "")
                 + (f" — {VALUE_GUARD_WORDS}" if value_guard(r.get("guard")) and not cause and not old
                    and not r.get("carried") and not r.get("drawn") else "")
                 + (f" — {CARRIED_WORDS}" if r.get("carried") else "")
                 + (f" — {DRAWN_WORDS}" if r.get("drawn") else "")
                 + _stored_at(r)] += 1
        lines += [text + (f" (×{k})" if k > 1 else "") for text, k in list(said.items())[:3]]
    n = sum(max(0, c["delta"]) for c in cases if isinstance(c.get("delta"), int))
    k = sum(_caused(c) for c in cases)
    a = sum(_after(c) for c in cases)
    # the whole change first, as in the table: "+0, 3 following" read as none
    parts = ([f"{_all_or(k, n + k + a)} following from new breaks"] if k else []) + \
            ([f"{_all_or(a, n + k + a)} once after an existing break"] if a else [])
    title = f"Recompiles per shape (+{n + k + a}{''.join(', ' + p for p in parts)})"
    return details(title, "\n".join(lines))


# a reason found with the cases run in order, each call keeping what the one before left on
# the module (pt2bot/smoke/matrix.py `_sequence`)
CARRIED_WORDS = ("on state a call left on the module for the next (a cache keyed by a size, a "
                 "counter): a process calling the model again compiles the frame again whenever "
                 "a call leaves another value there, up to the recompile limit")
# a reason found with the cases run in order without the generators seeded before each call
DRAWN_WORDS = ("on a number drawn anew on every call (numpy's or Python's `random`) and passed "
               "across a graph break: a process calling the model compiles the frame again on "
               "every call, up to the recompile limit")


def _stored_at(reason: Mapping[str, Any]) -> str:
    """"; written at `kv_cache.py:102`: `self.size += seq_len`": where the code stores the
    state a carried guard holds (the line to change; the guard's is where dynamo read it)."""
    s = reason.get("stored_at") if reason.get("carried") else None
    if not isinstance(s, Mapping) or not isinstance(s.get("line"), int):
        return ""
    return (f"; written at {code_inline(path_line(s.get('path'), s['line']), limit=160)}"
            + (f": {code_inline(s['source'], limit=160)}" if s.get("source") else ""))


def _caused(case: dict) -> int:
    return caused_recompiles({"caused_recompiles": case.get("caused")})


def _after(case: dict) -> int:
    return caused_recompiles({"caused_recompiles": case.get("after_break")})


# --------------------------------------------------------------------------- findings

def findings_section(report: Report) -> Section | None:
    findings = report.findings
    hidden = report.findings_hidden or 0
    if not findings and not hidden:
        return None
    # A new claim the smoke run traced and did not see is not listed as if it held: it is
    # folded away with what the run did there (pt2bot/reach.py).
    new = [f for f in findings if f.new and not f.refuted]
    refuted = [f for f in findings if f.new and f.refuted]
    old = [f for f in findings if not f.new]
    confirmed = sum(1 for f in findings if f.new and f.confirmed)
    verdicts = ", ".join(x for x in (f"{confirmed} confirmed by the smoke run" if confirmed else "",
                                     f"{len(refuted)} not observed" if refuted else "") if x)
    title = (f"#### Static findings ({len(new) + len(refuted)} new, {len(old)} pre-existing"
             + (f"; {verdicts}" if verdicts else "") + ")")
    # two findings of one rule on one line (`pix.item()` and `freq.item()` in one dict) read
    # the same: one bullet, with their count
    broken = confirming_breaks(new, [(m.name, b) for m in report.models for b in m.new_breaks])
    same: Counter[str] = Counter(finding_line(f, f.fingerprint() in broken) for f in new[:MAX_LIST])
    blocks = [text + (f" · {k} on this line" if k > 1 else "") for text, k in same.items()]
    if refuted:
        blocks.append(details(
            f"{len(refuted)} new not observed by the smoke run (demoted to info: dynamo traced "
            "the line and did not do what the rule claims)",
            "\n".join(finding_line(f) for f in refuted[:50])))
    if old:
        blocks.append(details(f"{len(old)} pre-existing (not introduced by this change)",
                              "\n".join(finding_line(f) for f in old[:50])))
    s = Section(title, blocks)
    s.omitted = max(0, len(new) - MAX_LIST)
    if hidden:
        s.extra_note = (f"_{hidden} more outside the diff filter "
                        f"{code_inline(report.thresholds.get('filter', ''))}._")
    return s


SEVERITY_ICONS = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def severity_icon(f: Finding) -> str:
    return SEVERITY_ICONS.get(f.severity, "⚠️")


def when(f: Finding) -> str:
    """" (when `self.training and ...`)" for a finding under a condition (the guard is the
    user's source: a code span, escaped like every other text), else ""."""
    cond = f.condition
    if not isinstance(cond, str) or not cond.strip():
        return ""
    return f" (on the path where {code_inline(cond, limit=200)})"


def reached(f: Finding) -> str:
    """"reached by `tiny_gpt`" / "not reached by any configured model" when the smoke run's
    coverage is known (`reached_by`), else ""."""
    names = f.reached_by
    if names is None:
        return ""
    names = [n for n in names if isinstance(n, str) and n]
    if not names:
        return "not reached by any configured model"
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return "reached by " + ", ".join(code_inline(n, limit=100) for n in names[:5]) + more + unjudged(f)


def smoke_verdict(f: Finding) -> str:
    """What the smoke run made of the claim (Markdown), or "": "✔️ confirmed by the smoke run
    (`tiny_gpt`): `GB0124 at pkg/m.py:12`" / "not observed by the smoke run (`tiny_gpt`):
    dynamo traced the line ... (error demoted to info)"."""
    check = f.smoke
    if check is None:
        return ""
    names = [n for n in check.models if isinstance(n, str) and n]
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    who = ", ".join(code_inline(n, limit=100) for n in names[:5]) + more
    if check.status == "confirmed":
        return (f"✔️ confirmed by the smoke run ({who}): "
                f"{code_inline(check.evidence, limit=400)}")
    was = f" ({escape_inline(check.severity, limit=10)} demoted to info)" if check.severity else ""
    return (f"not observed by the smoke run ({who}): "
            f"{escape_inline(check.evidence, limit=400)}{was}")


Pair = tuple[str, dict]   # (model name, new graph break)


def confirming_breaks(findings: Sequence[Finding], breaks: list[Pair]
                      ) -> dict[str, list[Pair]]:
    """finding fingerprint -> the new breaks that confirm it.

    A break confirms a finding on its (path, line) that predicts a break: the one predicting
    the same GB id if any, else the first one predicting some break (the static rule's GB id
    is a forecast; the smoke run's is what dynamo said). A finding that predicts no break,
    and a break on a line with no such finding, stay separate comments.
    """
    predicting: dict[tuple[object, object], list[Finding]] = {}
    for f in findings:
        if f.gb and isinstance(f.line, int):
            predicting.setdefault((f.path, f.line), []).append(f)
    out: dict[str, list[Pair]] = {}
    for model, b in breaks:
        line = b.get("line")
        candidates = predicting.get((b.get("path"), line)) if isinstance(line, int) else None
        if not candidates:
            continue
        f = next((c for c in candidates if c.gb == b.get("gb")), candidates[0])
        out.setdefault(f.fingerprint(), []).append((model, b))
    return out


def finding_line(f: Finding, broken: bool = False) -> str:
    """`broken`: a new graph break confirms it (`confirming_breaks`): a failure, as its inline
    comment says (flux's conditional PTC201 read ⚠️ here and ❌ on its line)."""
    # The verdict says which models ran the line; without one, whether any did.
    said = smoke_verdict(f) or reached(f)
    return (f"- {'❌' if broken else severity_icon(f)} **{escape_inline(f.rule, limit=20)}** "
            f"{code_inline(finding_location(f), limit=160)} "
            f"{message_inline(whole_clauses(f.message, 400), limit=400)}{when(f)}"
            + (f" · {said}" if said else ""))


def whole_clauses(text: str, limit: int) -> str:
    """`text` cut at the last "; " that leaves it within `limit`, with "; …" (the inline
    comment has it whole): PTC101's advice cut mid-clause read "torch captures it as …"."""
    if len(text) <= limit:
        return text
    cut = text.rfind("; ", 0, limit - 3)
    return text[:cut] + "; …" if cut > 0 else text


def split_fixes(fixes: Mapping[str, Any]) -> tuple[list[dict], list[dict], list[dict]]:
    """report.json's `fixes` read once for every renderer: (the verified candidates, all
    targets, the targets left without a fix)."""
    cands = [c for c in fixes.get("candidates") or () if isinstance(c, dict)]
    targets = [t for t in fixes.get("targets") or () if isinstance(t, dict)]
    return ([c for c in cands if c.get("verified")], targets,
            [t for t in targets if not t.get("fixed_by")])


def fixes_section(report: Report) -> Section | None:
    """"N verified fixes suggested inline", then each target the proof left unfixed and why
    (from report.json's `fixes`, pt2bot/fixes.py; absent when the proof did not run)."""
    fixes = report.fixes
    if not fixes:
        return None
    verified, targets, open_ = split_fixes(fixes)
    head = (f"🔧 {len(verified)} verified fix{'es' if len(verified) != 1 else ''} suggested "
            f"inline for {len(targets) - len(open_)} of {len(targets)} new problem"
            f"{'s' if len(targets) != 1 else ''} on the PR's lines (each re-run before it was "
            f"posted; {_num(fixes.get('spent_s'))} s of the {_num(fixes.get('budget_s'))} s "
            "budget).")
    unlike = sum(1 for c in verified if c.get("caveats"))
    if unlike:
        who = "It" if len(verified) == 1 else f"{unlike} of them"
        head += (f" ⚠️ {who} {'does' if unlike == 1 else 'do'} something unlike head, said first "
                 f"in {'its' if unlike == 1 else 'their'} inline comment{'s' if unlike > 1 else ''}.")
    beyond = [t for t in open_ if t.get("verified_outside")]
    if beyond:
        head += (f" 🔧 {len(beyond)} more problem{'s' if len(beyond) != 1 else ''} "
                 f"{'have' if len(beyond) != 1 else 'has'} a verified edit that reaches past the PR's "
                 "lines: given in the inline comment as code to apply by hand, not as a suggestion.")
    proven = [s for s in fixes.get("settings") or () if isinstance(s, dict) and s.get("verified")]
    if proven:
        head += (f" ⚙️ {len(proven)} dynamo setting{'s' if len(proven) != 1 else ''} verified for "
                 "problems no edit fixed, said in the inline comments as text (set where the model "
                 "is compiled, not on the PR's lines).")
    items = fix_target_lines(fixes, open_[:MAX_LIST])
    # (a problem with a verified setting has a fix, if not an edit: "without a verified fix"
    # beside "1 dynamo setting verified" read as a contradiction, held-out batch 40 and S4)
    names = setting_names(fixes)
    what = "edit" if any(names.get(str(t.get("setting"))) for t in open_) else "fix"
    blocks = [head] + ([details(f"{len(open_)} without a verified {what}", items)] if open_ else [])
    return Section("#### Suggested fixes", blocks)


def setting_names(fixes: Mapping[str, Any]) -> dict[str, str]:
    """report.json's `fixes.settings`: a verified setting's id -> its name."""
    return {str(s.get("id")): str(s.get("setting")) for s in fixes.get("settings") or ()
            if isinstance(s, dict) and s.get("verified")}


def fix_target_lines(fixes: Mapping[str, Any], open_: list[dict[str, Any]]) -> str:
    """The list of targets left without a verified fix (a review's summary, and the audit's
    Markdown), each with the settings tried for it and refused: a target's own reason is its
    recipe's, and the setting the inline comment says was tried is the same attempt."""
    targets = [t for t in fixes.get("targets") or () if isinstance(t, dict)]
    refused: dict[int, list[tuple[str, str]]] = {}
    for s in fixes.get("settings") or ():
        if isinstance(s, dict) and not s.get("verified") and not s.get("skipped") and s.get("reason"):
            for i in s.get("targets") or ():
                refused.setdefault(i, []).append((str(s.get("setting")), str(s["reason"])))
    index = {id(t): i for i, t in enumerate(targets)}
    # a break and the export failure on the same line, with the same reason, are one item
    # ("break GB0170 and export at ..."): held-out batch 39's user read the same recipe text
    # twice, word for word
    # (and the same on several models is one item naming them all: MAE's six items were one
    # line's break and export on three models, each with the same reason)
    said: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for t in open_:
        label, where, model, why = _target_parts(t, setting_names(fixes), refused.get(index.get(id(t), -1), ()))
        labels, models = said.setdefault((where, why), ([], []))
        labels.append(label)
        models.append(model)
    return "\n".join(f"- {' and '.join(dict.fromkeys(labels))} at {where} ({', '.join(dict.fromkeys(models))}): {why}"
                     for (where, why), (labels, models) in said.items())


def fix_target_line(t: dict[str, Any], settings: Mapping[str, str] | None = None,
                    refused: Sequence[tuple[str, str]] = ()) -> str:
    """A list item: one target of the proof of fixes left without a verified fix, and why;
    `settings` (`setting_names`) names the verified setting a target has, `refused` the
    settings tried for it that failed, with why."""
    label, where, model, why = _target_parts(t, settings, refused)
    return f"- {label} at {where} ({model}): {why}"


def _target_parts(t: dict[str, Any], settings: Mapping[str, str] | None = None,
                  refused: Sequence[tuple[str, str]] = ()) -> tuple[str, str, str, str]:
    """`fix_target_line`'s item as (what, where, which model, why): "break GB0170",
    "`m.py:39`", "`net`", "no verified fix: ..."."""
    name = (settings or {}).get(str(t.get("setting"))) if t.get("setting") else None
    tried = "".join(f"; {code_inline(f'torch._dynamo.config.{n} = True', limit=120)} tried, not "
                    f"verified: {message_inline(why, limit=300)}" for n, why in refused[:2])
    # with a verified setting, that comes first and the rest is about an edit: "no verified
    # fix: ...; verified with ... set" read as a contradiction
    # (a refusal names frames, a guard and counts: cut at 300 characters, a new user's ended
    # mid-word, "(on `volum…")
    why = message_inline(t.get('reason') or '', limit=900)
    outcome = (f"verified with {code_inline(f'torch._dynamo.config.{name} = True', limit=120)} "
               f"set; no verified edit: {why}" if name else
               f"an edit beyond the PR's lines, {why}" if t.get("verified_outside") else
               f"no verified fix: {why}")
    return (f"{escape_inline(t.get('kind', ''), limit=20)}"
            f"{' ' + gb_link(t.get('gb')) if gb_registry.is_code(t.get('gb')) else ''}",
            code_inline(location(t), limit=120), code_inline(t.get("model"), limit=100), outcome + tried)


def not_run_section(report: Report) -> Section | None:
    """"N changed lines in these files were run by no configured model: `a.py` (lines 3, 9-12)"
    from report.json's `not_run` (absent without a smoke run: nothing is said then)."""
    items = [x for x in report.not_run or () if isinstance(x.get("path"), str)]
    if not items:
        return None
    blocks = []
    missed = [x for x in items if x.get("lines")]
    if missed:
        n = sum(len(x.get("lines") or ()) for x in missed)
        files = ", ".join(f"{code_inline(x['path'], limit=160)} (lines {_ranges(x.get('lines'))}"
                          f"{_untaken(x.get('branches'))})" for x in missed[:20])
        more = f" and {len(missed) - 20} more files" if len(missed) > 20 else ""
        blocks.append(f"{n} changed line{'s' if n != 1 else ''} in these files "
                      f"{'were' if n != 1 else 'was'} run by no configured model: {files}{more}.")
    skipped = [(x["path"], o) for x in items for o in x.get("unevaluated") or ()
               if isinstance(o, dict) and isinstance(o.get("line"), int)]
    if skipped:
        # the line ran, so it is not in the list above; the change on it never did (S4's
        # `has_pykeops and <renamed attribute>` read as exercised while pykeops was absent)
        said = [f"- {code_inline(path_line(path, o['line']), limit=170)}: "
                f"{code_inline(o.get('code'), limit=120)} {_skipped_by(o)}" for path, o in skipped[:20]]
        more = [f"- …and {len(skipped) - 20} more in report.json"] if len(skipped) > 20 else []
        blocks.append("These changed lines ran, but the changed part of each was evaluated by "
                      "no configured model on any call:\n" + "\n".join(said + more))
    return Section("#### Changed code no model ran", blocks)


def _skipped_by(o: dict) -> str:
    """What kept an operand from running: "after `flag and`", "(the value when `c` holds)"."""
    guard, kind = str(o.get("guard") or ""), o.get("kind")
    if kind in ("and", "or"):
        return (f"after {code_inline(f'{guard} {kind}', limit=120)}, which was "
                f"{'false' if kind == 'and' else 'true'} on every call")
    if kind in ("if", "else"):
        return (f"(the value when {code_inline(guard, limit=120)} is "
                f"{'true' if kind == 'if' else 'false'}, which it never was)")
    return ""


def _untaken(branches: Any) -> str:
    """"; 27-28 in a branch of the `if` at line 25 that no shape case took": the `if` ran, its
    branch did not; an input that takes it is what the shape matrix lacks."""
    said = [f"; {_ranges(b.get('lines'))} in a branch of the `if` at line {b['line']} that no "
            "shape case took" for b in branches or () if isinstance(b, dict)
            and isinstance(b.get("line"), int) and b.get("lines")]
    return "".join(said[:5])


def not_traced_section(report: Report) -> Section | None:
    """"`m` ran `a.py` lines 23-24 only eagerly: dynamo gave up on `forward` ..." from
    report.json's `not_traced`: changed code no compile check saw, so the review's silence on
    it is no verdict."""
    items = [x for x in report.not_traced or () if isinstance(x.get("path"), str)]
    if not items:
        return None
    lines = []
    for x in items[:20]:
        fn = code_inline(x["function"], limit=100) if isinstance(x.get("function"), str) else "a frame"
        why = f": {escape_inline(x['reason'], limit=300)}" if isinstance(x.get("reason"), str) else ""
        lines.append(f"- {code_inline(x.get('model'), limit=100)} ran {code_inline(x['path'], limit=160)} "
                     f"line{'s' if len(x.get('lines') or ()) != 1 else ''} {_ranges(x.get('lines'))} "
                     f"only eagerly: dynamo gave up on {fn} "
                     f"({code_inline(path_line(x['path'], x.get('line')), limit=160)}){why}")
    more = [f"- …and {len(items) - 20} more in report.json"] if len(items) > 20 else []
    return Section("#### Changed code the compiler did not see", [
        "No compile check saw these lines: the frame holding them runs eagerly, so a graph "
        "break, recompile or export failure on them shows only once the frame compiles.",
        "\n".join(lines + more)])


def _ranges(lines: Any) -> str:
    """[3, 9, 10, 11] → "3, 9-11" (at most 10 ranges, then "…")."""
    nums = sorted({n for n in lines or () if isinstance(n, int)})
    out: list[tuple[int, int]] = []
    for n in nums:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    text = [str(a) if a == b else f"{a}-{b}" for a, b in out[:10]]
    return ", ".join(text) + (", …" if len(out) > 10 else "")


def skipped_section(report: Report) -> Section | None:
    skipped = report.skipped
    if not skipped:
        return None
    lines = [f"- {code_inline(s.get('name', '?'), limit=100)}: "
             f"{escape_inline(s.get('reason', ''), limit=300)}" for s in skipped[:MAX_LIST]]
    body = "\n".join(lines)
    title = f"#### Skipped models ({len(skipped)})"
    if len(skipped) > 5:
        return Section(title, [details("why each was not run", body)])
    return Section(title, [body])


__all__ = ["render_summary", "fit", "fix_target_line", "fix_target_lines", "setting_names", "split_fixes", "fixes_section", "Section", "SUMMARY_MARKER", "MAX_CHARS", "confirming_breaks", "Pair"]
