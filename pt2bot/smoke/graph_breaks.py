"""Graph-break text → GB id, type, explanation, hints (torch's own registry).

Dynamo's break messages (the `dynamo_graph_break_reason` trace artifact, `Unsupported`
exceptions) embed a documentation URL `.../gb/gbNNNN.html` per break. In a chained message
("While handling this graph break, another graph break occurred") the first id is the root
cause and a trailing GB7000 means the frame was skipped because the break sat in a loop.
The registry itself is read in one place, `pt2bot/gb.py`; here the smoke run looks ids up
in the registry of the torch it runs on. Older torch lacks the registry and sometimes the
URL: then we degrade to the gb_type text printed in the message.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pt2bot.gb import LOOP_GB, RegistryEntry, is_advice, load_registry, registry_path, types_index, url_regex
from pt2bot.gb import url as gb_url

_URL_RE = re.compile(url_regex(r"(\d{4})", host=False), re.IGNORECASE)
_CHAIN_SEP = "*** While handling this graph break, another graph break occurred: ***"
_HEADER_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$')
_SKIP_PREFIXES = ("Failed to handle graph break gracefully", "Graph Break Reason:")
# A break inside a called function is logged with the caller's instruction as a first line
# ("Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):"), then
# the callee's own message: the cause is that message, not the call.
_NESTED_RE = re.compile(r"^Encountered graph break when attempting to trace \S+: .*:\s*$")
# Where the callee's message is a `UserError` rather than an `Unsupported`, it has no GB id and no
# Explanation line. The commonest on a break path is a guard dynamo could not decide on a value
# that the graph computes (a branch on an `.item()` captured with `capture_scalar_outputs`):
# "Consider annotating your code using torch._check*(). Could not guard on data-dependent
# expression u0 <= 0 (unhinted: ...)", or, for an integer expression (an index, a count),
# "Could not extract specialized integer from data-dependent expression u0". Its type is torch's
# fixed words; the expression, whose symbol names change with every `.item()` before it, goes
# to the explanation, so that one break compares equal between two runs.
_GUARD_RE = re.compile(r"^(?P<hint>Consider annotating your code using torch\._check\*\(\)\.)?\s*"
                       r"(?P<type>Could not (?:guard on|extract specialized integer from) data-dependent "
                       r"expression) (?P<expr>.+?)(?:\s*\(unhinted:.*)?$")
_CAUSE_RE = re.compile(r"^Caused by: (?P<src>.+?)\s+#\s")


@dataclass(frozen=True)
class BreakSection:
    """One break of a (possibly chained) message."""
    gb: str | None
    gb_type: str
    explanation: str
    hints: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str
    source: str = ""


@dataclass(frozen=True)
class ParsedBreak:
    """A whole `dynamo_graph_break_reason` payload, parsed."""
    gb: str | None
    gb_type: str
    explanation: str
    hints: tuple[str, ...]
    url: str | None
    reason: str
    in_loop: bool
    header_file: str | None
    header_line: int | None
    sections: tuple[BreakSection, ...] = ()
    frames: tuple[Frame, ...] = field(default=())
    # dynamo compiled up to the last point it could resume from and ran the rest of the frame
    # eagerly ("Encountered graph break that we cannot resume from ... skipping the rest of
    # the function": a break inside a `for` over a tensor, DINO's multi-crop loop)
    skips_rest: bool = False


def lookup(gb_id: str | None) -> RegistryEntry | None:
    """The registry entry of the torch this process runs on (vendored copy without one)."""
    return load_registry(registry_path(installed=True)).get(gb_id) if gb_id else None


def gb_for_type(gb_type: str) -> str | None:
    return types_index(registry_path(installed=True)).get(gb_type.strip())


def gb_ids(text: str) -> list[str]:
    """Every GB id linked in `text`, in order."""
    return ["GB" + m.group(1) for m in _URL_RE.finditer(text)]


def _unwrapped(lines: list[str]) -> list[str]:
    """`lines` without a nested break's first line, the caller's instruction."""
    for i, ln in enumerate(lines):
        s = ln.strip()
        for pre in _SKIP_PREFIXES:
            if s.startswith(pre):
                s = s[len(pre):].strip()
        if not s:
            continue
        return lines[i + 1:] if _NESTED_RE.match(s) else lines
    return lines


def _guard_section(lines: list[str]) -> tuple[str, str, list[str]] | None:
    """(type, explanation, hints) of a data-dependent guard message, else None."""
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    m = _GUARD_RE.match(first)
    if not m:
        return None
    cause = next((c.group("src") for c in map(_CAUSE_RE.match, (ln.strip() for ln in lines)) if c),
                 "")
    hint = m.group("hint")
    expr = m.group("expr").rstrip(". ")
    what = f"the integer `{expr}`" if "integer" in m.group("type") else f"the guard `{expr}`"
    return (m.group("type"), what + (f" from `{cause}`" if cause else ""),
            [hint[:-1]] if hint else [])


def _parse_section(text: str) -> BreakSection:
    lines = _unwrapped(text.splitlines())
    gb_type = ""
    explanation = ""
    hints: list[str] = []
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith("Explanation:"):
            explanation = s[len("Explanation:"):].strip()
            # the gb_type is the last non-empty line above the explanation
            for prev in reversed(lines[:i]):
                p = prev.strip()
                for pre in _SKIP_PREFIXES:
                    if p.startswith(pre):
                        p = p[len(pre):].strip()
                if p and not p.endswith("Graph break encountered:"):
                    gb_type = p
                    break
        elif s.startswith("Hint:") and is_advice(s[len("Hint:"):].strip()):
            hints.append(s[len("Hint:"):].strip())
    ids = gb_ids(text)
    gb = ids[0] if ids else None
    guard = None if gb_type else _guard_section(lines)
    if guard:
        gb_type, explanation, hints = guard
    if not gb_type:
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        for pre in _SKIP_PREFIXES:
            if first.startswith(pre):
                first = first[len(pre):].strip()
        gb_type = first
    if gb is None and gb_type:
        gb = gb_for_type(gb_type)
    return BreakSection(gb=gb, gb_type=gb_type, explanation=explanation, hints=tuple(hints),
                        text=text.strip())


def parse_frames(text: str) -> list[Frame]:
    """`File "...", line N, in fn` lines (+ the source line under each), in order."""
    frames: list[Frame] = []
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = _FRAME_RE.match(ln)
        if not m:
            continue
        src = ""
        if i + 1 < len(lines):
            nxt = lines[i + 1]
            if nxt.strip() and not _FRAME_RE.match(nxt) and set(nxt.strip()) - set("^~ "):
                src = nxt.strip()
        frames.append(Frame(m.group("file"), int(m.group("line")), m.group("func"), src))
    return frames


def _cut(text: str, *markers: str) -> str:
    """`text` up to the first of `markers` found."""
    ends = [text.find(m) for m in markers]
    ends = [e for e in ends if e >= 0]
    return text[:min(ends)] if ends else text


def parse_break(payload: str) -> ParsedBreak:
    """Parse one graph-break message (trace artifact payload or exception text)."""
    header = _HEADER_RE.search(payload)
    tb_at = payload.find("User code traceback:")
    if tb_at < 0:
        tb_at = payload.find("from user code:")
    tb = _cut(payload[tb_at:], "\nTraceback (most recent call last)") if tb_at >= 0 else ""
    body = payload[header.end():] if header else payload
    body = _cut(body, "Stack variable source attribution:", "User code traceback:",
                "from user code:", "\nTraceback (most recent call last)")
    sections = [_parse_section(s) for s in body.split(_CHAIN_SEP) if s.strip()]
    ids = [s.gb for s in sections if s.gb]
    root = next((s for s in sections if s.gb != LOOP_GB), sections[0] if sections else None)
    gb = root.gb if root else None
    reg = lookup(gb)
    gb_type = (root.gb_type if root and root.gb_type else "") or (reg.gb_type if reg else "")
    explanation = (root.explanation if root and root.explanation else "") or (
        reg.explanation if reg else "")
    hints = (root.hints if root and root.hints else ()) or (reg.hints if reg else ())
    reason = _short_reason(root.text if root else body.strip())
    return ParsedBreak(
        gb=gb, gb_type=gb_type, explanation=explanation, hints=tuple(hints), url=gb_url(gb),
        reason=reason, in_loop=LOOP_GB in ids,
        header_file=header.group("file") if header else None,
        header_line=int(header.group("line")) if header else None,
        sections=tuple(sections), frames=tuple(parse_frames(tb)),
        skips_rest="skipping the rest of the function" in payload,
    )


def _short_reason(section_text: str, limit: int = 2000) -> str:
    """The root break's text without developer context and URL lines, capped."""
    keep = []
    for ln in _unwrapped(section_text.splitlines()):
        s = ln.strip()
        if s.startswith(("Developer debug context:", "For more details about this graph break",
                         "Hint:")):
            continue  # hints are reported separately
        for pre in _SKIP_PREFIXES:
            if s.startswith(pre):
                s = s[len(pre):].strip()
        if s and not s.endswith("Graph break encountered:"):
            keep.append(s)
    text = "\n".join(keep)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def classify_exception(exc: BaseException) -> tuple[str | None, str]:
    """(GB id, gb_type) for an `Unsupported`-like exception: URL, then `.gb_type`, then text."""
    text = str(exc)
    gb_type = getattr(exc, "gb_type", None)
    ids = gb_ids(text)
    if ids:
        root = next((i for i in ids if i != LOOP_GB), ids[0])
        reg = lookup(root)
        return root, (gb_type or (reg.gb_type if reg else text.splitlines()[0] if text else ""))
    if gb_type:
        return gb_for_type(gb_type), gb_type
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return gb_for_type(first), first
