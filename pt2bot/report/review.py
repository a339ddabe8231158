"""review.json: one inline comment per new finding / new graph break on a line of the diff.

GitHub accepts inline comments only on lines that are part of the PR diff; whether a line
is, is the caller's `commentable(path, line)` (pt2bot.changes.is_commentable in the
pipeline), so this module needs no git. Everything else goes into the review `body`.
Each comment ends with `<!-- pt2bot:fp=FINGERPRINT -->`: a re-run skips what is posted.
A new finding whose claim the smoke run refuted (`smoke.status` not_observed: dynamo traced
the line and did not break there) gets no comment; the body counts it.

One problem, one comment: a new static finding that predicts a graph break and a new break
the smoke run found on the same line are the same problem, so they make ONE comment (the
finding's message and suggestion, plus a "Confirmed by the smoke run" line) under the
finding's fingerprint, which is stable across runs. A run where only the break remains posts
the break under its own fingerprint (a different comment); the publisher retires the old one.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

from pt2bot.findings import DIFF_ADDED, DIFF_CONTEXT, Finding, fingerprint
from pt2bot.report.escape import has_controls
from pt2bot.report.markdown import (code_block, code_inline, escape_inline, marker,
                                    message_inline, suggestion_block, verbatim_block)
from pt2bot.report.summary import (FULL_REPORT, MATRIX_ONLY, MAX_CHARS, Pair, Section, caused_line,
                                   confirming_breaks, fit, finding_location, gb_link, location, path_line, reached, severity_icon,
                                   smoke_verdict, when, whole_clauses)
from pt2bot.reportdata import Report
from pt2bot.results import VALUE_GUARD_WORDS, shape_label, value_guard

SCHEMA = "pt2bot.review/1"
Commentable = Callable[[str, int], bool]
_FP = re.compile(r"^[0-9a-f]{8,64}$")
MAX_COMMENTS = 100   # one review; beyond this the body lists the rest
# A fix's title is our recipe's prose around the user's code (`scale by `torch.where(...)`
# without the `if`: head's factor where the test holds, ...`): 245 characters were seen, and
# a cut at 200 ended a verified fix's title mid-word
FIX_TITLE_CAP = 500
# what a proof showed, said in the comment (report.json keeps it whole, up to 4000 characters)
EVIDENCE_CAP = 2000
# a verified edit beyond the PR's lines is given whole in its comment up to this many lines
MAX_BEYOND_LINES = 40


def render_review(report: Report, changeset_commentable: Commentable | None = None) -> dict:
    """review.json for `report`; `changeset_commentable=None` trusts findings' `diff`."""
    comments: dict[str, dict] = {}
    elsewhere: list[str] = []

    def place(at: tuple[object, object, object], body: str, fp: str, where: str,
              suggestion: str | None = None, keys: Sequence[str] = ()) -> None:
        path, line, diff = at
        if fp in comments:
            return
        ok = isinstance(path, str) and isinstance(line, int) and line > 0 and \
            len(comments) < MAX_COMMENTS and _commentable(changeset_commentable, path, line, diff)
        if not ok:
            elsewhere.append(f"- {code_inline(where, limit=160)} {body.splitlines()[0]}")
            return
        text = body
        start: int | None = None
        proven = None
        verified = fixes.verified_for(keys)
        carried = fixes.carried_at(verified)
        if carried is None and verified is not None and id(verified) in homed and \
                not _in_fix(verified, path, line):
            # another comment on the replaced lines will carry the suggestion: this one stays
            # on its own line and points there (a `.item()` finding in a warning's text was
            # moved onto the `if` line its fix rewrites, where no `.item()` is)
            carried = int(verified["start_line"])
        if carried is not None:
            # one fix for several findings (siblings in one statement): its suggestion is
            # posted once, on the first comment; the others point at it
            text += "\n\n" + fixed_by_text(verified, carried)
            verified = None
        elif verified is not None and _fix_placeable(changeset_commentable, path, verified):
            # the comment spans the replaced lines: GitHub's suggestion replaces exactly them
            line, start = verified["end_line"], verified["start_line"]
            start = start if start < line else None
            text += "\n\n" + fix_text(verified)
            fixes.carry(verified, start or line)
        else:
            verified = None
            proven = fixes.setting_for(keys)
            failed = fixes.failed_for(keys)
            described = fixes.described_for(keys)
            if proven is not None:
                text += "\n\n" + setting_text(proven)
                left = sorted(set(fixes.open_exports.get((path, line), ())))
                if left:
                    text += (" The export failure on this line stays (on "
                             + ", ".join(code_inline(m, limit=80) for m in left)
                             + "): `torch.export` does not trace through dynamo, so no dynamo setting "
                             "changes it.")
            elif failed is not None:
                text += "\n\n" + failed_fix_line(failed)
            elif described is not None:
                text += "\n\n" + f"🔧 No verified fix: {message_inline(described, limit=900)}."
            if suggestion is not None:
                text += "\n\n" + suggestion_block(suggestion)
        comments[fp] = {"path": path, "line": line, "side": "RIGHT", "start_line": start,
                        "body": f"{text}\n\n{marker('fp=' + fp)}", "fingerprint": fp}
        if verified is not None:
            comments[fp]["fix"] = {"verified": True, "models": list(verified.get("models") or ()),
                                   "evidence": str(verified.get("evidence") or ""),
                                   **({"caveats": _said_caveats(verified)} if _said_caveats(verified) else {})}
        elif proven is not None:
            comments[fp]["setting"] = {"name": str(proven.get("setting")), "verified": True,
                                       "models": list(proven.get("models") or ()),
                                       "evidence": str(proven.get("evidence") or "")}

    # A claim the smoke run traced and did not see is never posted on the line as if it held
    # (pt2bot/reach.py): the body says how many were held back, the summary lists them.
    refuted = [f for f in report.findings if f.new and f.refuted]
    findings = _unique(f for f in report.findings
                       if f.new and not f.refuted and _FP.match(f.fingerprint()))
    breaks = [(m.name, b) for m in report.models
              for b in m.new_breaks if _FP.match(b.get("fingerprint") or "")]
    confirmed = confirming_breaks(findings, breaks)
    merged = {id(b) for pairs in confirmed.values() for _, b in pairs}
    fixes = ProvenFixes(report.fixes)
    # the verified fixes some comment on their own replaced lines can carry
    homed = {id(v) for f in findings
             if (v := fixes.verified_for([f.fingerprint()] + [str(b.get("fingerprint"))
                                                             for _, b in confirmed.get(f.fingerprint(), [])]))
             is not None and _in_fix(v, f.path, f.line)}
    homed |= {id(v) for _, b in breaks if id(b) not in merged
              and (v := fixes.verified_for([b["fingerprint"]])) is not None
              and _in_fix(v, b.get("path"), b.get("line"))}

    for f in findings:
        fp = f.fingerprint()
        # a fix also belongs to a finding whose confirming break it targets (two findings on
        # one line, `print(x.item())`: the print's fix removes the `.item()`'s break too)
        keys = [fp] + [str(b.get("fingerprint")) for _, b in confirmed.get(fp, [])]
        if f.confirmed and f.smoke is not None and f.smoke.evidence.startswith("torch.export"):
            # confirmed by the export failure on its line (PTC203 under a `.item()`'s `if`): the
            # fix that removes that failure is this finding's too
            keys.append(export_key(f.path, f.line))
        body = finding_body(f, confirmed.get(fp, []),
                            break_hints=fixes.hints_stand(keys))
        place((f.path, f.line, f.diff), body, fp, finding_location(f), f.suggestion, keys=keys)

    on_line: dict[tuple[object, object, object], dict[str, Pair]] = {}
    for model, b in breaks:
        if id(b) not in merged:
            at = _item_at(b)
            reached = b.get("reached_from")
            if isinstance(reached, Mapping) and not (
                    isinstance(at[0], str) and isinstance(at[1], int)
                    and _commentable(changeset_commentable, at[0], at[1], at[2])):
                # the break is in code the PR did not change, reached from a line it added:
                # the comment goes there (pt2bot/compare.py `_mark_reached`)
                at = (reached.get("path"), reached.get("line"), DIFF_ADDED)
            on_line.setdefault(at, {}).setdefault(b["fingerprint"], (model, b))
    for at, by_fp in on_line.items():
        if len(by_fp) == 1:
            [(model, b)] = by_fp.values()
            place(at, break_body(b, model, fixes.hints_stand([b["fingerprint"]])),
                  b["fingerprint"], location(b), keys=[b["fingerprint"]])
            continue
        # several breaks placed on one line (a call into a package that breaks inside it four
        # times, a new user's CutMix: four comments stacked on one line) are one comment
        pairs = list(by_fp.values())
        keys = sorted(by_fp)
        place(at, breaks_body(pairs), fingerprint("new-breaks", str(at[0]), None, " ".join(keys)),
              location(pairs[0][1]), keys=keys)

    # A new recompile on a line of the diff that no comment above covers (a guard in the
    # statement the PR changed, with no static finding there): DINOv2's reverted interpolation
    # recompiled at its `interpolate(` line, and the review said "2 new recompiles · 0 inline
    # comments". One comment per line; the summary has the rest.
    for (path, line), rows in new_recompiles(report).items():
        if _covered(comments, path, line) or not _commentable(changeset_commentable, path, line, None):
            continue
        key = recompile_key(path, line)
        # (keyed by the line's text, not its number, as a finding is: the same comment on the
        # next push, when lines above it moved)
        source = next((str(r["source"]) for _, _, r in rows if r.get("source")), str(line))
        place((path, line, None), recompile_body(rows), fingerprint("new-recompile", path, None, source),
              f"{path}:{line}", keys=[key])

    # An export failure or a newly pinned dim on a line of the diff that no comment above
    # covers (no static finding, no break there): S4's FFT padded to a power of two, `n_fft = 1
    # << (2*L - 1).bit_length()`, failed its review on four models with no inline comment,
    # the line named in the summary only. One comment per line, each message once with its models.
    for (path, line), said in new_export_lines(report).items():
        if _covered(comments, path, line) or not _commentable(changeset_commentable, path, line, None):
            continue
        body = "❌ **Export**: " + ("" if len(said) == 1 else "on this line:\n\n") + "\n".join(
            ("" if len(said) == 1 else "- ") + f"{escape_inline(msg, limit=300)} (on "
            + ", ".join(code_inline(m, limit=100) for m in models) + ")" for msg, models in said.items())
        place((path, line, None), body, fingerprint("new-export", path, None, " | ".join(said)),
              f"{path}:{line}", keys=[export_key(path, line)])

    # models failing alike (the same message and output, placed on the same line) are one
    # comment: DETR's reverted `isinstance` got two identical comments on one line, one a model
    failing: dict[tuple, list[str]] = {}
    for m in report.models:
        for p in m.problems:
            if p.get("kind") in ("fails_only_on_head", "fails_on_head") and p.get("path"):
                at = _item_at(p)
                raised = ""
                reached = p.get("reached_from")
                if isinstance(reached, Mapping) and not (
                        isinstance(at[0], str) and isinstance(at[1], int)
                        and _commentable(changeset_commentable, at[0], at[1], at[2])):
                    # raised in code the PR did not change, through a line it added, or
                    # through a function it changed above the call: the comment goes there,
                    # and says where it raised
                    if isinstance(reached.get("via"), int):
                        raised = (f"\n\nRaised at {code_inline(location(p), limit=160)}, in a call "
                                  f"from line {reached['via']} of "
                                  f"{code_inline(str(reached.get('function') or ''), limit=100)}"
                                  ", a function this pull request changed here.")
                    else:
                        raised = f"\n\nRaised at {code_inline(location(p), limit=160)}, called from this line."
                    at = (reached.get("path"), reached.get("line"), DIFF_ADDED)
                key = (at, str(p.get("message") or ""), str(p.get("detail") or ""), raised, location(p),
                       str(p.get("path")))
                failing.setdefault(key, []).append(m.name)
    for (at, message, detail, raised, where, path), names in failing.items():
        fp = fingerprint("model-failure", ", ".join(names), path, message)
        if len(names) == 1:
            body = f"❌ pt2bot: model {code_inline(names[0], limit=100)} {escape_inline(message, limit=300)}"
        else:
            who = (", ".join(code_inline(n, limit=100) for n in names[:10])
                   + (f" and {len(names) - 10} more" if len(names) > 10 else ""))
            body = (f"❌ pt2bot: models {who} fail {escape_inline(message[len('fails '):], limit=300)}"
                    if message.startswith("fails ") else
                    f"❌ pt2bot: models {who}: {escape_inline(message, limit=300)}")
        if detail:
            body += "\n\n" + code_block(detail, limit=2000)
        place(at, body + raised, fp, where)

    return {"schema": SCHEMA, "head": report.head,
            "body": review_body(report, elsewhere, len(comments), held_back=len(refuted)),
            "comments": list(comments.values())}


class ProvenFixes:
    """report.json's `fixes` (pt2bot/fixes.py) by the comment they belong to: a candidate by
    the fingerprints of its findings and of the breaks it targets."""

    def __init__(self, fixes: Mapping[str, Any] | None) -> None:
        self.verified: dict[str, Mapping[str, Any]] = {}
        self.failed: dict[str, Mapping[str, Any]] = {}
        self.settings: dict[str, Mapping[str, Any]] = {}    # verified dynamo settings
        self.set_tried: set[str] = set()    # the keys of the settings proven, either way
        self.posted: dict[int, int] = {}    # id() of a verified fix -> the line carrying it
        # a target no candidate was tried for, whose reason writes out the form that would
        # fix it (an early return as `torch.cond(...)`): said in the comment, not only in the
        # summary's folded list, where held-out batch 39's user found it
        self.described: dict[str, str] = {}
        fixes = fixes or {}
        targets = list(fixes.get("targets") or ())
        # export failures left on a line, by the line: a setting verified for the break there
        # does not change them (MAE's user read "⚙️ Verified setting" as covering the export
        # failure the same review reported)
        self.open_exports: dict[tuple[object, object], list[str]] = {}
        for t in targets:
            if isinstance(t, Mapping) and t.get("kind") == "export" and t.get("fixed_by") is None:
                self.open_exports.setdefault((t.get("path"), t.get("line")), []).append(str(t.get("model")))
        cands = list(fixes.get("candidates") or ())
        settings = list(fixes.get("settings") or ())
        # a candidate not needed (another one fixed its targets) is no failed fix to mention
        done = {i for c in cands + settings if c.get("verified") for i in c.get("targets") or ()}
        # (settings after the edits: a refused edit is the hint said before a refused setting)
        for c in cands + settings:
            mine = [i for i in c.get("targets") or ()
                    if isinstance(i, int) and 0 <= i < len(targets)]
            if not c.get("verified") and mine and all(i in done for i in mine):
                continue
            keys = list(c.get("findings") or ())
            keys += [k for i in mine if (k := _target_key(targets[i])) is not None]
            into = (self.failed if not c.get("verified") else
                    self.settings if c.get("setting") else self.verified)
            if c.get("setting"):
                self.set_tried.update(keys)
            for k in keys:
                if into is self.failed and _beyond(c) and not _beyond(into.get(k)):
                    into[k] = c   # a proven edit to apply by hand says more than a refused one
                else:
                    into.setdefault(k, c)
        tried = {i for c in cands + settings for i in c.get("targets") or ()}
        for i, t in enumerate(targets):
            why = t.get("reason") if isinstance(t, Mapping) else None
            key = _target_key(t) if isinstance(t, Mapping) else None
            if i in tried or key is None or not isinstance(why, str) or "`" not in why \
                    or t.get("fixed_by") is not None:
                continue
            self.described.setdefault(key, why)

    def described_for(self, keys: Sequence[str]) -> str | None:
        return next((self.described[k] for k in keys if k in self.described), None)

    def carried_at(self, fix: Mapping[str, Any] | None) -> int | None:
        """The first line of the comment already carrying `fix`'s suggestion, if one does."""
        return None if fix is None else self.posted.get(id(fix))

    def carry(self, fix: Mapping[str, Any], line: int) -> None:
        self.posted[id(fix)] = line

    def verified_for(self, keys: Sequence[str]) -> Mapping[str, Any] | None:
        return next((self.verified[k] for k in keys if k in self.verified), None)

    def hints_stand(self, keys: Sequence[str]) -> bool:
        """Whether torch's own hints for the break still go in the comment: not where a fix is
        verified, nor where its setting was proven either way (for the two kinds of break
        with a setting, torch's hint is that setting: the proof's answer replaces it)."""
        return self.verified_for(keys) is None and not any(k in self.set_tried for k in keys)

    def setting_for(self, keys: Sequence[str]) -> Mapping[str, Any] | None:
        return next((self.settings[k] for k in keys if k in self.settings), None)

    def failed_for(self, keys: Sequence[str]) -> Mapping[str, Any] | None:
        return next((self.failed[k] for k in keys if k in self.failed), None)


def _beyond(fix: Mapping[str, Any] | None) -> bool:
    """A candidate that passed its proof and reaches past one hunk of the diff."""
    return bool(fix) and bool(fix.get("outside_diff")) and bool(fix.get("passed"))


def _covered(comments: Mapping[str, Mapping[str, Any]], path: str, line: int) -> bool:
    """Whether a comment placed already spans `line` of `path`."""
    return any(c["path"] == path and (c.get("start_line") or c["line"]) <= line <= c["line"]
               for c in comments.values())


def _target_key(t: Mapping[str, Any]) -> str | None:
    """The key a proof target's comment is found by: its break's fingerprint, or the line of
    its export failure or recompile guard; None for a break recorded without a fingerprint."""
    if t.get("fingerprint"):
        return str(t["fingerprint"])
    if t.get("kind") == "export":
        return export_key(t.get("path"), t.get("line"))
    if t.get("kind") == "recompile":
        return recompile_key(t.get("path"), t.get("line"))
    return None


def export_key(path: object, line: object) -> str:
    """The key of an export failure at a line (a target with no break fingerprint)."""
    return f"export@{path}:{line}"


def recompile_key(path: object, line: object) -> str:
    """The key of a new recompile's guard at a line (a target with no fingerprint either)."""
    return f"recompile@{path}:{line}"


def new_recompiles(report: Report) -> dict[tuple[str, int], list[tuple[str, dict, dict]]]:
    """(path, line) -> [(model, shape case row, reason)] for the recompiles head adds, at the
    line of the guard that failed: the proof's recompile targets (pt2bot/fixes.py), wherever
    the line is. A recompile that follows from a new break is that break's comment's, and
    torch's own size-1 compiles are no one's."""
    out: dict[tuple[str, int], list[tuple[str, dict, dict]]] = {}
    for m in report.models:
        for row, r in m.delta.new_recompile_reasons():
            if isinstance(r.get("path"), str) and isinstance(r.get("line"), int) and r.get("kind") != "size_one":
                out.setdefault((r["path"], r["line"]), []).append((m.name, row, r))
    return out


def new_export_lines(report: Report) -> dict[tuple[str, int], dict[str, list[str]]]:
    """(path, line) -> {message: [models]} of the export verdicts the report places on a line:
    an export that newly fails there, a dim that can no longer be dynamic there."""
    out: dict[tuple[str, int], dict[str, list[str]]] = {}
    for r in report.reasons:
        if r.get("code") not in ("export_broken", "export_new_cause"):
            continue
        for at in r.get("lines") or ():
            if isinstance(at, Mapping) and isinstance(at.get("path"), str) and isinstance(at.get("line"), int):
                models = out.setdefault((at["path"], at["line"]), {}).setdefault(str(r.get("message") or ""), [])
                if str(r.get("model")) not in models:
                    models.append(str(r.get("model")))
    return out


def recompile_body(rows: Sequence[tuple[str, dict, dict]]) -> str:
    """A new recompile's comment: which models, on which shape cases, which guard failed."""
    carried = all(r.get("carried") or r.get("drawn") for _, _, r in rows)
    lines = [f"❌ **New recompile**: a guard dynamo added for this line fails on "
             f"{'the next call' if carried else 'another input'}, and the model is compiled again "
             "(not on base)."]
    said: dict[tuple[str, str], list[str]] = {}
    for model, row, r in rows:
        said.setdefault((model, str(r.get("guard") or "?")), []).append(shape_label(row.get("shape")))
    for (model, guard), shapes in list(said.items())[:5]:
        shown = ", ".join(code_inline(s, limit=60) for s in list(dict.fromkeys(shapes))[:3])
        more = len(set(shapes)) - 3
        lines.append(f"- model {code_inline(model, limit=100)}, shape case{'s' if len(set(shapes)) > 1 else ''} "
                     f"{shown}{f' and {more} more' if more > 0 else ''}: guard "
                     f"{code_inline(guard, limit=200)}")
    text = lines[0] + "\n\n" + "\n".join(lines[1:])
    if any(value_guard(guard) for _, guard in said) and not all(r.get("drawn") for _, _, r in rows):
        text += f"\n\n💡 The guard holds {VALUE_GUARD_WORDS}. Keep the number a tensor where it is used."
    if any(r.get("carried") for _, _, r in rows):
        # (torchtune's KV cache before its maintainers' fix: `self.size += seq_len`, a Python
        # int dynamo guards on, so every call of a user's process compiles the model again)
        stored = next((r["stored_at"] for _, _, r in rows if isinstance(r.get("stored_at"), Mapping)
                       and isinstance(r["stored_at"].get("line"), int)), None)
        written = (f", written at {code_inline(path_line(stored.get('path'), stored['line']), limit=160)}"
                   + (f": {code_inline(stored['source'], limit=160)}" if stored.get("source") else "")
                   if stored else "")
        text += ("\n\n💡 The guard holds state a call leaves on the module for the next (a cache "
                 f"keyed by a size, a counter){written}: a process calling the model again compiles it "
                 "anew whenever a call leaves another value there, up to the recompile limit. Keep "
                 "such state in a buffer (a tensor), or out of the compiled code.")
    if any(r.get("drawn") for _, _, r in rows):
        text += ("\n\n💡 The guard holds a number drawn anew on every call (numpy's or Python's "
                 "`random`) and passed across a graph break: a process calling the model compiles it "
                 "anew on every call, up to the recompile limit. Draw it with torch's generator and "
                 "keep it a tensor, or draw it outside the compiled code.")
    if any("sym_float(" in guard for _, guard in said):
        # what the guard itself shows: a float made from a size, held to a number
        text += ("\n\n💡 The guard holds a float made from a size (`torch.sym_float`) to its value, so "
                 "each new size compiles again. Integer arithmetic on sizes stays symbolic: `//`, and "
                 "an output `size=` rather than a float `scale_factor`.")
    return text


def _in_fix(fix: Mapping[str, Any], path: object, line: object) -> bool:
    """Whether `line` of `path` is one the fix's suggestion replaces."""
    start, end = fix.get("start_line"), fix.get("end_line")
    return fix.get("path") == path and isinstance(line, int) and isinstance(start, int) \
        and isinstance(end, int) and start <= line <= end


def _fix_placeable(can: Commentable | None, path: str, fix: Mapping[str, Any]) -> bool:
    """A suggestion needs both ends of its range on lines of the diff (pt2bot/fixes.py kept
    only edits inside one hunk); without a predicate, the fix's own check stands."""
    start, end, lines = fix.get("start_line"), fix.get("end_line"), fix.get("lines")
    if fix.get("path") != path or not isinstance(start, int) or not isinstance(end, int) \
            or not 1 <= start <= end or not isinstance(lines, list):
        return False
    # the block must replace the lines exactly: no text it would strip or cannot hold
    if (lines and lines[-1] == "") or not all(
            isinstance(x, str) and "\n" not in x and "\r" not in x and not has_controls(x)
            for x in lines):
        return False
    return can is None or all(_commentable(can, path, n, None) for n in (start, end))


def _evidence(row: Mapping[str, Any]) -> str:
    """What the proof showed, whole where it fits, else cut after its last whole clause: the
    evidence of two models ran past 600 characters and read "on `swin_w7_56`: GB0170 gon…",
    under the button that applies the fix. Its caveats are said before it (`_unlike_head`),
    not again inside it."""
    text = str(row.get("evidence") or "")
    for c in _said_caveats(row):
        text = text.replace(f", but {c}", "").replace(f" ({c})", "").replace(f", {c}", "")
    return message_inline(whole_clauses(text, EVIDENCE_CAP), limit=EVIDENCE_CAP + 10)


def _said_caveats(row: Mapping[str, Any]) -> list[str]:
    return [c for c in row.get("caveats") or () if isinstance(c, str) and c]


def _unlike_head(row: Mapping[str, Any]) -> str:
    """The proof's caveats (report.json's `caveats`: what the edit still does unlike head),
    as the comment's first words: a difference a user must weigh before one click commits
    it, not a clause deep in the evidence."""
    said = _said_caveats(row)
    if not said:
        return ""
    return "⚠️ **Unlike head**: " + message_inline("; ".join(said), limit=EVIDENCE_CAP) + ".\n\n"


def fix_text(fix: Mapping[str, Any]) -> str:
    """The verified fix: what was proven, then the suggestion block replacing exactly the
    lines start_line..end_line (indentation included)."""
    head = (f"{_unlike_head(fix)}✅ **Verified fix** ({message_inline(fix.get('title') or '', limit=FIX_TITLE_CAP)}): "
            f"{_evidence(fix)}.")
    return head + "\n\n" + suggestion_block("\n".join(str(x) for x in fix["lines"]))


def setting_text(row: Mapping[str, Any]) -> str:
    """A dynamo setting the proof verified for the break on this line: text, since it is set
    where the model is compiled and not written on this line (pt2bot/fixes.py SETTINGS)."""
    name = str(row.get("setting") or "")
    return (f"{_unlike_head(row)}⚙️ **Verified setting**, not a change to this line: "
            f"{code_inline(f'torch._dynamo.config.{name} = True', limit=120)}, set before the model "
            f"is compiled: {_evidence(row)}. It applies to "
            "everything dynamo compiles in that process; it was checked on the models named here only.")


def fixed_by_text(fix: Mapping[str, Any], line: int) -> str:
    """A finding whose verified fix is the suggestion of another comment (one edit fixes
    several findings): a pointer to it, never a second suggestion block. `line`: the first
    line of the comment that carries it."""
    end = fix.get("end_line")
    where = f"lines {line}-{end}" if isinstance(end, int) and end > line else f"line {line}"
    return (f"✅ **Verified fix** ({message_inline(fix.get('title') or '', limit=FIX_TITLE_CAP)}): "
            f"the suggestion on {where} fixes this too.")


def failed_fix_line(fix: Mapping[str, Any]) -> str:
    """A candidate the proof rejected: a hint, marked as such, never a suggestion block. A
    setting (torch's own hint for the break, which the comment then leaves out) is named: the
    proof's answer is that the hint does not work here."""
    why = message_inline(fix.get("reason") or "not tried", limit=400)
    if _beyond(fix):
        # proven, but GitHub's suggestion replaces lines of one hunk only: the lines to write,
        # as code to copy (never a suggestion block, nor the comment's `fix`)
        start, end, lines = fix.get("start_line"), fix.get("end_line"), fix.get("lines")
        text = (f"{_unlike_head(fix)}🔧 **Verified edit, beyond the PR's lines** (not a suggestion: it replaces lines "
                f"{start}-{end}, past this hunk of the diff): "
                f"{message_inline(fix.get('title') or '', limit=FIX_TITLE_CAP)}. "
                f"{_evidence(fix)}.")
        if isinstance(lines, list) and len(lines) <= MAX_BEYOND_LINES:
            text += f"\n\nLines {start}-{end} of {code_inline(fix.get('path'), limit=160)} become:\n\n" + \
                verbatim_block("\n".join(str(x) for x in lines))
        return text
    if fix.get("passed") and not fix.get("verified"):
        # an alternative to a posted suggestion, or one proven only beside another: "not
        # verified" would deny the proof it passed
        return (f"🔧 Candidate fix, **passed its proof alone, not posted**: "
                f"{message_inline(fix.get('title') or '', limit=FIX_TITLE_CAP)} ({why})")
    if fix.get("setting"):
        name = str(fix["setting"])
        return (f"⚙️ torch's hint, {code_inline(f'torch._dynamo.config.{name} = True', limit=120)}, "
                f"tried and **not verified**: {why}.")
    text = (f"🔧 Candidate fix, **not verified**: "
            f"{message_inline(fix.get('title') or '', limit=FIX_TITLE_CAP)} ({why})")
    start, end, lines = fix.get("start_line"), fix.get("end_line"), fix.get("lines")
    if fix.get("unexercised") and isinstance(lines, list) and len(lines) <= MAX_BEYOND_LINES:
        # refused only because no input of the models exercised what it changes, not for a
        # difference: its lines, as code to read (held-out batch 40's user got the title and
        # "1 stands in for `scale`" but not the code it described); never a suggestion block
        text += (f"\n\nIts lines {start}-{end}, not verified:\n\n"
                 + verbatim_block("\n".join(str(x) for x in lines)))
    return text


def _item_at(item: Mapping[str, Any]) -> tuple[object, object, object]:
    """(path, line, diff) of a break or a problem (report.json objects; `diff`: none has one)."""
    return item.get("path"), item.get("line"), item.get("diff")


def _commentable(can: Commentable | None, path: str, line: int, diff: object) -> bool:
    """The predicate's answer; without one, the finding's own diff annotation decides."""
    if can is None:
        return diff in (DIFF_ADDED, DIFF_CONTEXT)
    try:
        return bool(can(path, line))
    except Exception:   # a predicate that cannot answer means "not in the diff"
        return False




def _unique(findings) -> list[Finding]:
    """First finding per fingerprint (one comment per fingerprint, so one to merge into)."""
    seen: dict[str, Finding] = {}
    for f in findings:
        seen.setdefault(f.fingerprint(), f)
    return list(seen.values())




def finding_body(f: Finding, confirmed_by: list[Pair] = (), break_hints: bool = True) -> str:
    """The comment on a finding's line; `break_hints=False` (the finding has a verified fix,
    which the comment carries where GitHub can take its lines) leaves dynamo's generic hints
    out: the fix says what to write."""
    rule = escape_inline(f.rule, limit=20)
    sev = "❌" if confirmed_by else severity_icon(f)
    # The condition belongs to the claim: in the first line (also what the review body lists
    # for a finding outside the diff).
    lines = [f"{sev} **{rule}** {message_inline(f.message, limit=600)}{when(f)}"]
    reach = reached(f)
    # (the models the confirmation names ran the line: said once, there)
    said = bool(confirmed_by) and set(f.reached_by or ()) <= {name for name, _ in confirmed_by}
    if reach and not (f.confirmed and not confirmed_by) and not said:
        lines.append(f"Smoke run: {reach}.")
    if f.confirmed and not confirmed_by:
        # what the run recorded on the line (a break base had too, a recompile, an export)
        lines.append(smoke_verdict(f).replace("confirmed", "Confirmed", 1) + ".")
    if confirmed_by:
        lines.append(confirmation_line(confirmed_by))
        # The break's recompiles are this problem's too (one problem, one comment).
        by_site: dict[tuple[object, object], list[Pair]] = {}
        for model, b in confirmed_by:
            by_site.setdefault((b.get("path"), b.get("line")), []).append((model, b))
        lines += [line for pairs in by_site.values() if (line := caused_line(pairs[0][1], pairs))]
    elif f.gb:
        lines.append(f"Predicts a graph break: {gb_link(f.gb)} "
                     f"{escape_inline(f.gb_type or '', limit=160)}")
    hints = list(f.hints[:3])
    for _, b in confirmed_by if break_hints else ():
        hints += [h for h in (b.get("hints") or [])[:2] if h not in hints]
    for h in hints[:5]:   # the rule's hints are our text, like its message; a break's are not
        text = message_inline(h, limit=400) if h in f.hints else escape_inline(h, limit=400)
        lines.append(f"💡 {text}")
    return "\n\n".join(lines)


def confirmation_line(pairs: list[Pair]) -> str:
    """"Confirmed by the smoke run: model `X` breaks here — GB0124 <type>" (one line)."""
    models = list(dict.fromkeys(model for model, _ in pairs))
    names = ", ".join(code_inline(m, limit=100) for m in models[:5])
    if len(models) > 5:
        names += f" and {len(models) - 5} more"
    who = f"model {names} breaks" if len(models) == 1 else f"models {names} break"
    seen: list[str] = []
    for _, b in pairs:
        gb = f"{gb_link(b.get('gb'))} {escape_inline(b.get('gb_type') or '', limit=160)}".strip()
        if isinstance(b.get("inside"), str):
            gb += f" inside {code_inline(b['inside'], limit=160)} (an installed package)"
        if gb not in seen:
            seen.append(gb)
    looped = [b for _, b in pairs if b.get("in_loop")]
    outer = next((b["loop_frame"] for b in looped if isinstance(b.get("loop_frame"), dict)), None)
    loop = ("" if not looped else
            " (inside a loop: dynamo skips the whole frame and runs it eagerly)" if outer is None else
            f" (inside a loop of {code_inline(outer.get('function') or 'a frame', limit=80)} at "
            f"{code_inline(location(outer), limit=160)}: dynamo "
            "skips that whole frame and runs it eagerly)")
    return f"Confirmed by the smoke run: {who} here — {'; '.join(seen[:3])}{loop}"


def _break_head(b: Mapping[str, Any], model: str) -> str:
    """A break's GB code, dynamo's words for it, its model and, for a break inside an installed
    package on the line that calls into it, the package's place (as the summary names it: a new
    user's four comments on one CutMix call named none of mixup's lines)."""
    inside = (f" inside {code_inline(b['inside'], limit=160)} (an installed package)"
              if isinstance(b.get("inside"), str) else "")
    return (f"{gb_link(b.get('gb'))} {escape_inline(b.get('gb_type') or '', limit=160)} "
            f"(model {code_inline(model, limit=100)}){inside}")


def break_body(b: dict, model: str, hints: bool = True) -> str:
    lines = [f"❌ **New graph break** {_break_head(b, model)}"]
    text = b.get("explanation") or b.get("reason")
    if text:
        lines.append(escape_inline(text, limit=600))
    for h in (b.get("hints") or [])[:2] if hints else ():
        lines.append(f"💡 {escape_inline(h, limit=400)}")
    lines += _break_notes(b)
    if caused_line(b):
        lines.append(caused_line(b))
    return "\n\n".join(lines)


def _break_notes(b: Mapping[str, Any]) -> list[str]:
    """What a break's comment says of where and when it breaks: in a loop, only with dynamic
    sizes, reached from the PR's call into code it did not change."""
    notes = []
    if b.get("in_loop"):
        notes.append("Inside a loop: dynamo skips the whole frame and runs it eagerly.")
    if b.get("matrix_only"):
        notes.append(MATRIX_ONLY)
    reached = b.get("reached_from")
    if isinstance(reached, Mapping):
        site = code_inline(f"{b.get('path')}:{b.get('line')}", limit=200)
        call = code_inline(f"{reached.get('path')}:{reached.get('line')}", limit=200)
        fn = f" in {code_inline(str(b.get('function')), limit=100)}" if b.get("function") else ""
        notes.append(f"The break is at {site}{fn}, code this PR did not change; it is reached from "
                     f"the call on {call}, which the PR added.")
    return notes


def breaks_body(pairs: Sequence[Pair]) -> str:
    """One comment for several new breaks placed on one line: each break's first line (its
    GB code, dynamo's words, where inside a package it is), then what follows from them; the
    hints, dynamo's generic text, are the summary's."""
    models = list(dict.fromkeys(m for m, _ in pairs))
    lines = [f"❌ **{len(pairs)} new graph breaks** on this line (model"
             f"{'s' if len(models) > 1 else ''} {', '.join(code_inline(m, limit=100) for m in models)}):"]
    for model, b in pairs:
        lines.append(f"- {_break_head(b, model)}" + "".join(f" — {note}" for note in _break_notes(b)))
    caused = [caused_line(b) for _, b in pairs if caused_line(b)]
    text = "\n".join(lines)
    return text + ("\n\n" + "\n\n".join(dict.fromkeys(caused)) if caused else "")


def review_body(report: Report, elsewhere: list[str], n_comments: int,
                held_back: int = 0) -> str:
    title = escape_inline(report.summary_title or report.conclusion or "", limit=200)
    head = f"**pt2bot** · {title} · {n_comments} inline comment{'s' if n_comments != 1 else ''}"
    if held_back:
        head += (f"\n\n{held_back} new static finding{'s' if held_back != 1 else ''} not "
                 "posted: the smoke run traced the line and did not see the claimed graph "
                 "break (listed in the summary).")
    sections = []
    if elsewhere:
        sections.append(Section(f"{len(elsewhere)} item(s) outside the diff "
                                f"(not commentable inline):", elsewhere))
    foot = f"Details: the pt2bot summary comment; {FULL_REPORT}."
    return fit(head, sections, foot, limit=MAX_CHARS)


__all__ = ["render_review", "finding_body", "break_body", "breaks_body",
           "confirmation_line", "ProvenFixes", "fix_text", "failed_fix_line"]
