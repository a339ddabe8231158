"""Every escape of untrusted text, one function per sink. Nothing else in pt2bot escapes.

Untrusted text is whatever came from user code or a run of it (break reasons, exception
messages, source lines, paths, model names) and, in the privileged publisher, everything in a
report artifact (a fork's pull request may have written it whole). The sinks:

- **Markdown we render** (`escape_inline`, `code_inline`, `code_block`, `suggestion_block`,
  and `message_inline` for our own messages, which join prose and code spans of the user's
  source): text from the report's fields into the summary comment, review comments, check
  summary.
- **Markdown we re-post** (`clean_text`, `sanitize_markdown`, `inert_markdown`): an
  artifact's already-rendered Markdown. Our own markup (tables, emphasis, code,
  `<details>`/`<summary>`/`<sub>`, GB links built from codes matching `GB[0-9]{4}`) stays,
  and so does a well-formed suggestion block, byte for byte; every other HTML tag, link,
  image, autolink, mention, issue or cross-repository reference, entity, hidden marker and
  math is made inert.
- **Plain text on GitHub** (`plain_text`): check-run titles and annotations (not Markdown).
- **Workflow commands** (`command_data`, `command_property`): `::error file=..::msg`.
- **Log lines** (`log_line`, `log_block`, `quote`): anything printed to the job's log.
- **Terminal** (`terminal_text`): `pt2bot check --format text`.
- **Job summary** (`cap_utf8`): Markdown as above, capped in BYTES (the runner's limit).
- **HTML** (`html_text`): the audit's report.html.

Neutralising inserts a zero-width space (`ZWSP`) where a construct would start: it is
invisible when rendered, in prose and in code alike, so this module never needs to know
whether GitHub will parse a spot as code (a guess that can be wrong is a hole). The one
construct an invisible character cannot stop is math: there a `$` becomes a look-alike
(`DOLLAR`), which reads the same in prose and code. Every escape is idempotent: applying it
twice gives the same text, so publishing twice changes nothing.
"""
from __future__ import annotations

import heapq
import html
import re
from typing import Callable

from pt2bot.gb import url_regex

ZWSP = "\u200b"  # zero-width space: breaks auto-linking and markers, invisible when rendered
MARKER_PREFIX = "<!-- pt2bot:"

# Default caps (characters). A single untrusted item must never dominate a 65,536-char body.
INLINE_CAP = 300
CODE_CAP = 4_000

# THE set of characters no sink lets through: C0 controls except tab and newline (CR is
# normalised to a newline first), DEL and C1, line/paragraph separators, bidi embeddings,
# overrides, isolates and marks ("trojan source"), the BOM, and lone surrogates (not
# encodable as UTF-8: one in an annotation used to kill the fallback's print halfway).
CONTROL_CHARS = ("\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                 "\u2066-\u2069\ufeff\ud800-\udfff")
_CONTROL = re.compile(f"[{CONTROL_CHARS}]")
_CONTROL_OR_SPACE = re.compile(f"[{CONTROL_CHARS}\t\n]")

# Things GitHub turns into pings, links or cross-references in rendered text. None of these
# asks for a word boundary before the token: GitHub looks for them in each text node of the
# rendered HTML, and emphasis or strikethrough starts a new node, so in `_GH-12_` (where `_`
# is a word character to a regex) GitHub sees `GH-12` at the start of the <em>. Breaking
# every occurrence costs an invisible character where GitHub would not have linked.
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")                # @user, @org/team, owner/repo@sha
_ISSUE_REF = re.compile(r"#(?=\d)")                         # #1, owner/repo#1, &#64;
_GH_REF = re.compile(r"(?i)(GH)(?=-\d)")                    # GH-789, _GH-789_, 1GH-789
_HTML_COMMENT = re.compile(r"<!--")
_WWW = re.compile(r"(?i)www\.")                           # www.x (https://x: see _autolinks)
# Enough to stop emphasis, code, links/images, tables and strikethrough; parentheses
# alone make no link once brackets are escaped, so they stay readable.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# Only at the start of a line do these make lists/headings (`1.` → `1\.`).
_MD_LEADING = re.compile(r"^(\s*)(?:([-+#])|(\d+)\.)")
_BACKTICKS = re.compile(r"`+")

# Math. GitHub renders `$..$`, `$$..$$` and `` $`..`$ `` in prose as math, which can style
# text to look like GitHub's own interface (\color, \colorbox) or carry a link (\href). An
# invisible character does not stop it the way it stops a mention: an opening `$` only wants
# a character that is not a space after it, and a zero-width space is none. Nor is a
# backslash or an entity known to: GitHub's documentation asks for `<span>$</span>` for a
# literal `$` outside math, which would show as markup inside code. So every `$` that may be
# prose becomes FULLWIDTH DOLLAR SIGN: it reads as a dollar and opens nothing, in prose and
# code alike. `code_inline` and `code_block` keep their `$` (GitHub renders no math in code);
# `inert_markdown`, which cannot tell code from prose, changes them all.
DOLLAR = "\uff04"
# Fenced blocks GitHub renders as something other than code: math, and diagrams, maps and
# 3D models (mermaid, geojson, topojson, stl). A zero-width space before the info string
# makes the language `\u200bmath`, i.e. plain code. Only at the start of a run of three or
# more (the lookbehinds), so a long run costs one attempt, not one per backtick.
_RENDERED_FENCE = re.compile(r"(?i)((?:(?<!`)`{3,}|(?<!~)~{3,})[ \t]*)"
                             r"(?=math|mermaid|geojson|topojson|stl)")
_RENDERED_LANG = re.compile(r"(?i)(?:math|mermaid|geojson|topojson|stl)")

# inert_markdown: our own markup that stays. GB links exactly as summary.py's gb_link builds
# them (pt2bot/gb.py's page URL for the same code); the tags exactly as markdown.details and
# summary.render_footer write them (no attributes but `open`).
_KEPT = re.compile(
    r"\[GB(?P<gb>\d{4})\]\(" + url_regex(r"(?P<gb2>\d{4})") + r"\)"
    r"|</?(?:details|summary|sub)>|<details open>|<br>")
_AMP = re.compile(r"&(?!(?:lt|gt|amp|quot);|" + ZWSP + ")")
_LINK_TAIL = re.compile(r"\](?=[(\[:])")      # ](url)  ][ref]  [ref]: url  (also images)
_TAG_OPEN = re.compile(r"<(?!" + ZWSP + ")")


def strip_controls(text: str) -> str:
    """Drop the control set; normalise newlines to \\n."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def has_controls(text: str, *, allow_whitespace: bool = True) -> bool:
    """Whether `text` holds a character of the control set (or a tab/newline)."""
    return bool((_CONTROL if allow_whitespace else _CONTROL_OR_SPACE).search(text))


def terminal_text(text: str) -> str:
    """For a terminal: each control character becomes U+FFFD (visible, never executed)."""
    return _CONTROL.sub("\ufffd", text)


def defuse(text: str) -> str:
    """Break mentions, issue/cross-repository refs and HTML comments; looks unchanged.

    Safe in every context, code included (GitHub renders code literally, but the publisher
    searches raw bodies for markers, so `<!--` must be broken there too).
    """
    text = strip_controls(text)
    text = _HTML_COMMENT.sub("<!" + ZWSP + "--", text)
    text = _MENTION.sub("@" + ZWSP, text)
    text = _GH_REF.sub(r"\1" + ZWSP, text)
    return _ISSUE_REF.sub("#" + ZWSP, text)


def plain_text(text: object) -> str:
    """Plain text GitHub shows as is (check-run title, annotation title and message)."""
    return defuse(str(text))


def neutralise(text: object) -> str:
    """Untrusted text for Markdown prose: mentions, refs, math and HTML made inert.

    `<`, `>` and `&` become entities, so no tag (and no `<!--`) survives; `$` becomes
    `DOLLAR`; markdown syntax (emphasis, links) and bare URLs are left alone: this is a step
    of `escape_inline`, which escapes those as well.
    """
    text = defuse(str(text)).replace("$", DOLLAR)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def cap(text: str, limit: int, *, ellipsis: str = "…") -> str:
    """At most `limit` characters; a cut is marked with `ellipsis`."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(ellipsis))] + ellipsis


def escape_inline(text: object, *, limit: int = INLINE_CAP) -> str:
    """One line of untrusted prose: neutralised, markdown syntax escaped, capped.

    Safe in a table cell (pipes escaped) and in link text. Newlines become spaces.
    """
    s = cap(strip_controls(str(text)).replace("\n", " ").replace("\t", " "), limit)
    s = _MD_SPECIAL.sub(r"\\\1", s)
    # GitHub autolinks bare URLs and www. names; user text gets no clickable links.
    s = _autolinks(s)
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


def message_inline(text: object, *, limit: int = INLINE_CAP) -> str:
    """One line of OUR message text: a rule's prose with code spans around the user's source
    (`` `{name}` breaks the graph ``). The parts are escaped each for what it is, never the
    joined string: each span through `code_inline` (so it renders as code, whatever the
    source holds), the prose between through `escape_inline`. Escaping the whole message as
    prose showed our spans as literal backticks around entities (\\`range(&lt;size&gt;)\\`).

    Where the spans are is read from the text as CommonMark reads it: a run of backticks
    opens a span that the next run of exactly as many closes. A snippet that itself holds a
    run of backticks can pair them otherwise than the rule meant, and then renders oddly,
    never live: every part is still escaped for its sink.
    """
    s = cap(strip_controls(str(text)).replace("\n", " ").replace("\t", " "), limit)
    out: list[str] = []
    at = 0
    for start, end, code in _code_spans(s):
        if start > at:
            out.append(escape_inline(s[at:start], limit=len(s)))
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]    # CommonMark's padding: `` `a` `` is the code `a`
        out.append(code_inline(code, limit=len(s)))
        at = end
    if at < len(s):
        out.append(escape_inline(s[at:], limit=len(s)))
    return "".join(out)


def _code_spans(s: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each code span of `s`, left to right; linear in the runs."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(s)]
    by_length: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(k)
    seen = {n: 0 for n in by_length}        # per length: the runs already passed
    spans = []
    k = 0
    while k < len(runs):
        a, b = runs[k]
        same = by_length[b - a]
        while seen[b - a] < len(same) and same[seen[b - a]] <= k:
            seen[b - a] += 1
        if seen[b - a] == len(same):
            k += 1                           # no closer: literal backticks (prose)
            continue
        close = same[seen[b - a]]
        c, d = runs[close]
        spans.append((a, d, s[b:c]))
        k = close + 1
    return spans


def code_block(text: object, lang: str = "", *, limit: int = CODE_CAP) -> str:
    """A fenced block whose fence is longer than any backtick run inside."""
    s = cap(defuse(str(text)).rstrip("\n"), limit)
    runs = [len(r) for r in _BACKTICKS.findall(s)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    # A language GitHub renders (math, diagrams) would make the block something else than code.
    lang = lang if (re.fullmatch(r"[A-Za-z0-9_+-]{0,20}", lang)
                    and not _RENDERED_LANG.match(lang)) else ""
    return f"{fence}{lang}\n{s}\n{fence}"


def suggestion_block(text: str) -> str:
    """A GitHub ```suggestion block; the text replaces the commented line verbatim.

    Not defused beyond marker-breaking: a suggestion is code that will be committed, and
    zero-width spaces inside it would corrupt it. Mentions do not fire inside code.
    """
    return verbatim_block(text, "suggestion")


def verbatim_block(text: str, info: str = "python") -> str:
    """A fenced block of code meant to be copied into a file as it is (a suggestion's, or a
    verified edit's lines to apply by hand): control characters stripped and a marker broken,
    nothing else (`defuse`'s zero-width space after an `@` would land in a decorator)."""
    s = strip_controls(str(text)).rstrip("\n")
    s = _HTML_COMMENT.sub("<!" + ZWSP + "--", s) if MARKER_PREFIX in s else s
    runs = [len(r) for r in _BACKTICKS.findall(s)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    if not s:   # an empty block deletes the lines (one with an empty line would keep one)
        return f"{fence}{info}\n{fence}"
    return f"{fence}{info}\n{s}\n{fence}"


def inert_markdown(text: str) -> str:
    """An artifact's Markdown, re-posted: only our own markup stays live.

    Kept: Markdown structure (headings, lists, tables, emphasis, code), the tags
    `<details>`/`<details open>`/`<summary>`/`<sub>`/`<br>` without other attributes, and
    `[GBnnnn](<that code's page>)`. Made inert with a zero-width space: every other `<`
    (tags, autolinks `<http://..>`, `<!--` markers), every `&` that is not `&lt;`/`&gt;`/
    `&amp;`/`&quot;` (so `&#64;user` stays text), link and image targets (`](`, `][`, and
    reference definitions `]:`), bare URLs (`://`, `www.`), mentions, `#123`,
    `owner/repo#1` and `GH-789`, math (every `$` becomes `DOLLAR`, and fences GitHub renders
    as math or diagrams become plain code). `sanitize_markdown` calls this around the
    well-formed suggestion blocks it keeps verbatim.
    """
    out: list[str] = []
    at = 0
    for m in _KEPT.finditer(text):
        if m.group("gb") is not None and (m.group("gb") != m.group("gb2")
                                          or text[max(0, m.start() - 1):m.start()] in ("!", "\\")):
            continue   # another code's page, an image, or escaped brackets: not ours
        out.append(_inert(text[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(_inert(text[at:]))
    return "".join(out)


def _inert(text: str) -> str:
    s = defuse(text)
    s = _TAG_OPEN.sub("<" + ZWSP, s)
    s = _AMP.sub("&" + ZWSP, s)
    s = _LINK_TAIL.sub("]" + ZWSP, s)
    s = _RENDERED_FENCE.sub(r"\1" + ZWSP, s).replace("$", DOLLAR)
    return _autolinks(s)


def _autolinks(s: str) -> str:
    # GitHub autolinks bare URLs and www. names (GFM "autolink" extension).
    return _WWW.sub("www" + ZWSP + ".", s.replace("://", ":/" + ZWSP + "/"))


# --------------------------------------------------------------------------- Markdown we re-post
# An artifact's Markdown as the publisher posts it: `inert_markdown` around the suggestion
# blocks a reviewer commits with one click (kept byte for byte), the renderer's own markers
# stripped first (the publisher re-adds them from validated fingerprints).

def sanitize_markdown(text: str) -> str:
    """THE one re-escaping step for artifact text that we post.

    The text is already-rendered Markdown, so Markdown syntax stays; what is made inert is
    what could act on people or on the bot: @mentions and #refs (no pings, no cross-links),
    links, math, control and bidi characters, and every `<!--` (so no forged
    `<!-- pt2bot:... -->` marker survives; the publisher appends its own markers afterwards).

    Except inside a well-formed ```` ```suggestion ```` block (`suggestion_fences`): that is
    code a reviewer commits with one click, so a zero-width space in `@torch.compile` or
    `x @ w` would corrupt it. Such a block is code on GitHub (no pings there) and can hold no
    marker, so it is kept byte for byte; everything around it is defused.
    """
    out: list[str] = []
    at = 0
    for start, end in suggestion_fences(text):
        out.append(inert_markdown(text[at:start]))
        out.append(text[start:end])
        at = end
    out.append(inert_markdown(text[at:]))
    return "".join(out)


# An opener is at column 0 after a blank line or at the start (the lookbehind): a run at any
# other place is never tried, so a long run of backticks costs one attempt, not one per
# backtick (the greedy run backtracked over the rest of the run from each of them).
_SUGGESTION_OPEN = re.compile(r"(?:\A|(?<=\n\n))(`{3,})suggestion\n")
_FENCE_RUN = re.compile(r"`{3,}")        # from the start of a run: finditer takes each whole
# A line that could close a fenced block (CommonMark: at most three spaces, three or more
# backticks or tildes, then only spaces or tabs). Only at line starts, so linear.
_CLOSING_LINE = re.compile(r"(?m)^ {0,3}(?:`{3,}|~{3,})[ \t]*$")
# Line starts of HTML blocks that run across blank lines (CommonMark types 1-5: <script,
# <pre, <style, <textarea, <!--, <?, <!X, <![CDATA[): a fence after one is raw HTML, not
# code, so its text would be live. The renderer never writes these raw (it writes &lt;).
_OPEN_HTML_BLOCK = re.compile(r"(?i)<(?:\?|!(?:--|[A-Za-z]|\[)|(?:script|pre|style|textarea)"
                              r"(?=[\s/>]|$))")


def suggestion_fences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each ```` ```suggestion ```` block kept verbatim, as the renderer's
    `suggestion_block` writes it after a blank line. Anything else (unterminated, indented,
    nested, an inner backtick run that could close it early, an inner line that could close
    another fence, a marker or control character inside, raw HTML before it that could
    swallow it) is not a block here and gets defused.

    Kept text must be code to GitHub too. The opener is at column 0 after a blank line (or at
    the start), so it is not inside a paragraph, list item, quote or HTML block of types 6-7;
    no raw HTML that opens a type 1-5 block comes before it; inner lines have no run of
    backticks as long as the fence, so the first line equal to the fence is where CommonMark
    closes it too. The opener has an info string, so it cannot be the closing line of an
    earlier fence: either it opens the block, or an earlier fence is still open and it is
    code in that one. In that case no inner line may close the earlier fence (which would
    turn the rest of the "code" into prose), hence no inner line that could close any fence.

    Linear in the text (the publisher runs it on up to 4 MiB in the job that holds the write
    token): one pass finds for every opener the first run of backticks at least as long as
    its fence (a heap of the openers still waiting, by fence length); the checks of a body
    read each part of the text at most once (`_first_from`), and the raw HTML check is the
    first such tag in the whole text.
    """
    openers = [(m.start(), m.end(), len(m.group(1))) for m in _SUGGESTION_OPEN.finditer(text)]
    if not openers:
        return []
    closes = _first_runs(text, openers)
    html = _OPEN_HTML_BLOCK.search(text)
    html_at = html.start() if html else len(text)
    marker_at = _first_from(lambda at: _substring_at(text, MARKER_PREFIX, at))
    control_at = _first_from(lambda at: _match_at(_CONTROL, text, at))
    closing_line_at = _first_from(lambda at: _match_at(_CLOSING_LINE, text, at))
    spans: list[tuple[int, int]] = []
    pos = 0
    for (start, body, fence), run in zip(openers, closes):
        if start < pos or run is None:
            continue   # inside a kept block, or unterminated: defused like all text around
        close, length = run
        end = close + length
        # The first run at least as long as the fence must be a line equal to the fence,
        # which closes the block; anything else (a longer run, a run inside a line) is a run
        # CommonMark may close it with, or one inside the code that could.
        if (length != fence or text[close - 1] != "\n"
                or (end < len(text) and text[end] != "\n")):
            continue
        if (html_at < start or marker_at(body) + len(MARKER_PREFIX) <= close
                or control_at(body) < close or closing_line_at(body) < close):
            continue
        spans.append((start, end))
        pos = end
    return spans


def _first_runs(text: str,
                openers: list[tuple[int, int, int]]) -> list[tuple[int, int] | None]:
    """For each opener (start, body, fence length): (start, length) of the first run of at
    least `fence` backticks after its opening line, or None. One pass over the runs: an
    opener waits in a heap (by fence length) from its own run on, and leaves it at the first
    run as long as its fence."""
    closes: list[tuple[int, int] | None] = [None] * len(openers)
    waiting: list[tuple[int, int]] = []
    next_opener = 0
    for m in _FENCE_RUN.finditer(text, openers[0][0]):
        at, length = m.start(), m.end() - m.start()
        while waiting and waiting[0][0] <= length:
            closes[heapq.heappop(waiting)[1]] = (at, length)
        while next_opener < len(openers) and openers[next_opener][0] <= at:
            heapq.heappush(waiting, (openers[next_opener][2], next_opener))
            next_opener += 1
        if not waiting and next_opener == len(openers):
            break
    return closes


def _substring_at(text: str, sub: str, at: int) -> int:
    i = text.find(sub, at)
    return len(text) if i == -1 else i


def _match_at(pattern: re.Pattern[str], text: str, at: int) -> int:
    m = pattern.search(text, at)
    return len(text) if m is None else m.start()


def _first_from(find: Callable[[int], int]) -> Callable[[int], int]:
    """`find(at)` (the first match at or after `at`) for non-decreasing `at`, remembered: a
    new search starts only past the last match, so all searches together read the text
    once."""
    since, found = -1, -1

    def first(at: int) -> int:
        nonlocal since, found
        if not since <= at <= found:
            since, found = at, find(at)
        return found
    return first


def strip_markers(text: str) -> str:
    """Remove the renderer's own hidden markers before defusing (they are re-added)."""
    return re.sub(r"<!-- pt2bot:[A-Za-z0-9_.:=-]{1,80} -->", "", text)


def clean_text(text: str) -> str:
    """An artifact's Markdown field as the publisher posts it: markers stripped, inert."""
    return sanitize_markdown(strip_markers(text)).strip()



# --------------------------------------------------------------------------- the job's log
# The runner executes `::command::` at the start of a line and the legacy `##[command]`
# anywhere in one (actions/runner src/Runner.Worker/ActionCommandManager.cs). Escaping per
# the toolkit (https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts)
# plus a zero-width space in every `##[`.
_LEGACY = re.compile(r"##\[")


def command_data(text: object) -> str:
    """The message of a workflow command (`::error ...::MESSAGE`)."""
    s = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    s = _CONTROL.sub("", s)
    return _LEGACY.sub("##" + ZWSP + "[", s)


def command_property(text: object) -> str:
    """A property value of a workflow command (`file=`, `title=`)."""
    return command_data(text).replace(":", "%3A").replace(",", "%2C")


def log_line(text: object) -> str:
    """One line of log: controls dropped, newlines shown as `\\n`, no command can start."""
    s = strip_controls(str(text)).replace("\n", "\\n")
    s = _LEGACY.sub("##" + ZWSP + "[", s)
    return ZWSP + s if s.lstrip().startswith("::") else s


def log_block(text: object) -> str:
    """Several lines of log (e.g. the summary when there is no job summary file)."""
    return "\n".join(log_line(line) for line in strip_controls(str(text)).split("\n"))


def quote(value: object, limit: int = 80) -> str:
    """A value quoted in a log or error message (like repr, and safe to print)."""
    s = value if isinstance(value, str) else repr(value)
    return log_line(repr(s[:limit]) + ("…" if len(s) > limit else ""))


# --------------------------------------------------------------------------- sizes, HTML
def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def truncate_utf8(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-8 bytes, not splitting a char."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", "ignore")


def cap_utf8(text: str, limit: int, note: str) -> str:
    """At most `limit` UTF-8 bytes; a cut ends with `note` (for the job summary's 1 MiB)."""
    if utf8_len(text) <= limit:
        return text
    return truncate_utf8(text, max(0, limit - utf8_len(note))) + note


def html_text(text: object) -> str:
    """Text for an HTML page (attributes included): controls dropped, all of <>&\"' escaped."""
    return html.escape(strip_controls(str(text)), quote=True)


__all__ = [
    "ZWSP", "DOLLAR", "MARKER_PREFIX", "CONTROL_CHARS", "strip_controls", "has_controls",
    "terminal_text", "defuse", "plain_text", "neutralise", "cap", "escape_inline",
    "code_inline", "code_block", "suggestion_block", "verbatim_block", "inert_markdown", "sanitize_markdown",
    "suggestion_fences", "strip_markers", "clean_text", "command_data",
    "command_property", "log_line", "log_block", "quote", "utf8_len", "truncate_utf8",
    "cap_utf8", "html_text",
]
