"""review.json: one inline comment per new finding / new graph break on a line of the diff.

GitHub accepts inline comments only on lines that are part of the PR diff; whether a line
is, is the caller's `commentable(path, line)` (pt2bot.changes.is_commentable in the
pipeline), so this module needs no git. Everything else goes into the review `body`.
Each comment ends with `<!-- pt2bot:fp=FINGERPRINT -->`: a re-run skips what is posted.
"""
from __future__ import annotations

import re
from typing import Callable

from pt2bot.findings import DIFF_ADDED, DIFF_CONTEXT, fingerprint
from pt2bot.report.markdown import (code_block, code_inline, escape_inline, marker,
                                    suggestion_block)
from pt2bot.report.summary import FULL_REPORT, GB_URL, MAX_CHARS, Section, _gb, _where, fit

SCHEMA = "pt2bot.review/1"
Commentable = Callable[[str, int], bool]
_FP = re.compile(r"^[0-9a-f]{8,64}$")
MAX_COMMENTS = 100   # one review; beyond this the body lists the rest


def render_review(report: dict, changeset_commentable: Commentable | None = None) -> dict:
    """review.json for `report`; `changeset_commentable=None` trusts findings' `diff`."""
    comments: dict[str, dict] = {}
    elsewhere: list[str] = []

    def place(item: dict, body: str, fp: str, where: str, suggestion: str | None = None) -> None:
        path, line = item.get("path"), item.get("line")
        if fp in comments:
            return
        ok = isinstance(path, str) and isinstance(line, int) and line > 0 and \
            len(comments) < MAX_COMMENTS and _commentable(changeset_commentable, item)
        if not ok:
            elsewhere.append(f"- {code_inline(where, limit=160)} {body.splitlines()[0]}")
            return
        text = body
        if suggestion is not None:
            text += "\n\n" + suggestion_block(suggestion)
        comments[fp] = {"path": path, "line": line, "side": "RIGHT", "start_line": None,
                        "body": f"{text}\n\n{marker('fp=' + fp)}", "fingerprint": fp}

    for f in report.get("findings") or []:
        fp = f.get("fingerprint") or ""
        if not f.get("new") or not _FP.match(fp):
            continue
        place(f, finding_body(f), fp, _where(f), f.get("suggestion"))

    for m in report.get("models") or []:
        for b in m.get("new_breaks") or []:
            fp = b.get("fingerprint") or ""
            if _FP.match(fp):
                place(b, break_body(b, m.get("name", "?")), fp, _where(b))
        for p in m.get("problems") or []:
            if p.get("kind") in ("fails_only_on_head", "fails_on_head") and p.get("path"):
                fp = fingerprint("model-failure", m.get("name", ""), str(p.get("path")),
                                 str(p.get("message")))
                body = (f"❌ pt2bot: model {code_inline(m.get('name', '?'), limit=100)} "
                        f"{escape_inline(p.get('message', ''), limit=300)}")
                if p.get("detail"):
                    body += "\n\n" + code_block(p["detail"], limit=2000)
                place(p, body, fp, _where(p))

    return {"schema": SCHEMA, "head": report.get("head"),
            "body": review_body(report, elsewhere, len(comments)),
            "comments": list(comments.values())}


def _commentable(can: Commentable | None, item: dict) -> bool:
    """The predicate's answer; without one, the finding's own diff annotation decides."""
    if can is None:
        return item.get("diff") in (DIFF_ADDED, DIFF_CONTEXT)
    try:
        return bool(can(item["path"], item["line"]))
    except Exception:   # a predicate that cannot answer means "not in the diff"
        return False


def finding_body(f: dict) -> str:
    rule = escape_inline(f.get("rule", "?"), limit=20)
    sev = "❌" if f.get("severity") == "error" else "⚠️"
    lines = [f"{sev} **{rule}** {escape_inline(f.get('message', ''), limit=600)}"]
    if f.get("gb"):
        lines.append(f"Predicts a graph break: {_gb(f)} "
                     f"{escape_inline(f.get('gb_type') or '', limit=160)}")
    for h in (f.get("hints") or [])[:3]:
        lines.append(f"💡 {escape_inline(h, limit=400)}")
    return "\n\n".join(lines)


def break_body(b: dict, model: str) -> str:
    lines = [f"❌ **New graph break** {_gb(b)} "
             f"{escape_inline(b.get('gb_type') or '', limit=160)} "
             f"(model {code_inline(model, limit=100)})"]
    text = b.get("explanation") or b.get("reason")
    if text:
        lines.append(escape_inline(text, limit=600))
    for h in (b.get("hints") or [])[:2]:
        lines.append(f"💡 {escape_inline(h, limit=400)}")
    if b.get("in_loop"):
        lines.append("Inside a loop: dynamo skips the whole frame and runs it eagerly.")
    return "\n\n".join(lines)


def review_body(report: dict, elsewhere: list[str], n_comments: int) -> str:
    title = escape_inline(report.get("summary_title") or report.get("conclusion") or "",
                          limit=200)
    head = f"**pt2bot** · {title} · {n_comments} inline comment{'s' if n_comments != 1 else ''}"
    sections = []
    if elsewhere:
        sections.append(Section(f"{len(elsewhere)} item(s) outside the diff "
                                f"(not commentable inline):", elsewhere))
    foot = f"Details: the pt2bot summary comment; {FULL_REPORT}."
    return fit(head, sections, foot, limit=MAX_CHARS)


__all__ = ["render_review", "finding_body", "break_body", "GB_URL"]
