"""Markdown for untrusted text: escaping, fencing, neutralising, capping.

Everything that comes from user code or from a run of it (break reasons, exception messages,
source lines, paths, model names) is untrusted. It must not be able to

- ping people or teams (`@org/team`), or link issues (`#123`) from the bot's comments;
- inject HTML, images or links, or close a code fence early;
- forge the bot's hidden markers (`<!-- pt2bot:... -->`), which the publisher finds by
  substring to edit comments in place and to skip comments already posted.

The GitHub publisher reuses these functions to re-escape text read from a (possibly forged)
report artifact, so they are safe to apply twice: a second pass may escape the first pass's
escapes (ugly) but never re-enables what the first pass disabled.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

ZWSP = "\u200b"  # zero-width space: breaks auto-linking and markers, invisible when rendered
MARKER_PREFIX = "<!-- pt2bot:"

# Default caps (characters). A single untrusted item must never dominate a 65,536-char body.
INLINE_CAP = 300
MESSAGE_CAP = 1_000
CODE_CAP = 4_000

# C0/C1 controls except tab and newline, and bidi overrides/isolates ("trojan source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_ISSUE_REF = re.compile(r"(?<![\w&])#(?=\d)")
_HTML_COMMENT = re.compile(r"<!--")
# Enough to stop emphasis, code, links/images, tables and strikethrough; parentheses
# alone make no link once brackets are escaped, so they stay readable.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# Only at the start of a line do these make lists/headings (`1.` → `1\.`).
_MD_LEADING = re.compile(r"^(\s*)(?:([-+#])|(\d+)\.)")
_BACKTICKS = re.compile(r"`+")
_MARKER_NAME = re.compile(r"^[A-Za-z0-9_.:=-]{1,80}$")

# Hosts whose links we render from data (GB documentation, PyTorch docs); anything else
# is shown as text.
SAFE_LINK_HOSTS = ("meta-pytorch.github.io", "pytorch.org", "docs.pytorch.org", "github.com")


def cap(text: str, limit: int, *, ellipsis: str = "…") -> str:
    """At most `limit` characters; a cut is marked with `ellipsis`."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(ellipsis))] + ellipsis


def strip_controls(text: str) -> str:
    """Drop control characters and bidi overrides; normalise newlines to \\n."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def defuse(text: str) -> str:
    """Break mentions, issue refs and HTML comments without changing how text looks.

    Safe in every context, code included (GitHub renders code literally, but the publisher
    searches raw bodies for markers, so `<!--` must be broken there too).
    """
    text = strip_controls(text)
    text = _HTML_COMMENT.sub("<!" + ZWSP + "--", text)
    text = _MENTION.sub("@" + ZWSP, text)
    return _ISSUE_REF.sub("#" + ZWSP, text)


def neutralise(text: str) -> str:
    """Untrusted text for Markdown prose: mentions, issue links and HTML made inert.

    `<`, `>` and `&` become entities, so no tag (and no `<!--`) survives; markdown
    emphasis is left alone (use `escape_inline` for that as well).
    """
    text = defuse(str(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text


def escape_inline(text: object, *, limit: int = INLINE_CAP) -> str:
    """One line of untrusted prose: neutralised, markdown syntax escaped, capped.

    Safe in a table cell (pipes escaped) and in link text. Newlines become spaces.
    """
    s = cap(strip_controls(str(text)).replace("\n", " ").replace("\t", " "), limit)
    s = _MD_SPECIAL.sub(r"\\\1", s)
    # GitHub autolinks bare URLs and www. names; user text gets no clickable links.
    s = s.replace("://", ":/" + ZWSP + "/").replace("www.", "www" + ZWSP + ".")
    s = _MD_LEADING.sub(lambda m: m.group(1) + ("\\" + m.group(2) if m.group(2)
                                                else m.group(3) + "\\."), s)
    return neutralise(s)


def code_inline(text: object, *, limit: int = INLINE_CAP, table: bool = False) -> str:
    """An inline code span that no backtick run inside can close.

    In a table cell GitHub splits on `|` even inside code spans, unless escaped.
    """
    s = cap(defuse(str(text)).replace("\n", " ").replace("\t", " "), limit)
    if not s.strip():
        return ""
    runs = [len(r) for r in _BACKTICKS.findall(s)]
    fence = "`" * (max(runs, default=0) + 1)
    # A span that starts or ends with a backtick needs padding, or it merges with the fence.
    pad = " " if s.startswith("`") or s.endswith("`") or s.startswith(" ") else ""
    if table:
        s = s.replace("|", "\\|")
    return f"{fence}{pad}{s}{pad}{fence}"


def code_block(text: object, lang: str = "", *, limit: int = CODE_CAP) -> str:
    """A fenced block whose fence is longer than any backtick run inside."""
    s = cap(defuse(str(text)).rstrip("\n"), limit)
    runs = [len(r) for r in _BACKTICKS.findall(s)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    lang = lang if re.fullmatch(r"[A-Za-z0-9_+-]{0,20}", lang) else ""
    return f"{fence}{lang}\n{s}\n{fence}"


def suggestion_block(text: str) -> str:
    """A GitHub ```suggestion block; the text replaces the commented line verbatim.

    Not defused beyond marker-breaking: a suggestion is code that will be committed, and
    zero-width spaces inside it would corrupt it. Mentions do not fire inside code.
    """
    s = strip_controls(str(text)).rstrip("\n")
    s = _HTML_COMMENT.sub("<!" + ZWSP + "--", s) if MARKER_PREFIX in s else s
    runs = [len(r) for r in _BACKTICKS.findall(s)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}suggestion\n{s}\n{fence}"


def is_safe_url(url: object) -> bool:
    if not isinstance(url, str) or len(url) > 500 or _CONTROL.search(url) or " " in url:
        return False
    parts = urlsplit(url)
    return parts.scheme == "https" and parts.hostname in SAFE_LINK_HOSTS


def link(text: object, url: object) -> str:
    """`[text](url)` when the URL is https on an allowed host, else the escaped text."""
    label = escape_inline(text)
    if not is_safe_url(url):
        return label
    safe = str(url).replace("(", "%28").replace(")", "%29")
    return f"[{label}]({safe})"


def marker(name: str) -> str:
    """The bot's own hidden marker. Only the bot makes these; names are restricted."""
    if not _MARKER_NAME.match(name):
        raise ValueError(f"bad marker name: {name!r}")
    return f"{MARKER_PREFIX}{name} -->"


def details(summary: str, body: str, *, open_: bool = False) -> str:
    """A collapsible section; `summary` and `body` must already be safe Markdown."""
    attr = " open" if open_ else ""
    return f"<details{attr}><summary>{summary}</summary>\n\n{body}\n\n</details>"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A GFM table from cells that are already safe Markdown."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def truncate_utf8(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-8 bytes, not splitting a char."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", "ignore")


__all__ = [
    "cap", "strip_controls", "defuse", "neutralise", "escape_inline", "code_inline",
    "code_block", "suggestion_block", "is_safe_url", "link", "marker", "details", "table",
    "utf8_len", "truncate_utf8", "MARKER_PREFIX", "ZWSP",
]
