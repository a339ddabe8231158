"""Markdown structure for the renderers: tables, collapsible sections, links, markers.

The escapes of untrusted text (break reasons, exception messages, source lines, paths, model
names, and in the publisher everything in a report artifact) live in one module,
pt2bot/report/escape.py; they are re-exported here for the renderers' convenience. What
this module builds (`table`, `details`, `link`, `marker`) takes cells and labels that are
already escaped.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

# Every escape lives in pt2bot/report/escape.py (one module per sink); re-exported here
# because renderers and the audit's report import them from `markdown`.
from pt2bot.report.escape import (CODE_CAP, INLINE_CAP, MARKER_PREFIX, ZWSP, cap,
                                  code_block, code_inline, defuse, escape_inline,
                                  has_controls, message_inline, neutralise, strip_controls,
                                  suggestion_block, truncate_utf8, utf8_len, verbatim_block)

MESSAGE_CAP = 1_000
_MARKER_NAME = re.compile(r"^[A-Za-z0-9_.:=-]{1,80}$")

# Hosts whose links we render from data (GB documentation, PyTorch docs); anything else
# is shown as text.
SAFE_LINK_HOSTS = ("meta-pytorch.github.io", "pytorch.org", "docs.pytorch.org", "github.com")


def is_safe_url(url: object) -> bool:
    if not isinstance(url, str) or len(url) > 500 or has_controls(url) or " " in url:
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


__all__ = [
    "cap", "strip_controls", "defuse", "neutralise", "escape_inline", "code_inline",
    "code_block", "suggestion_block", "verbatim_block", "is_safe_url", "link", "marker", "details", "table",
    "utf8_len", "truncate_utf8", "MARKER_PREFIX", "ZWSP",
]
