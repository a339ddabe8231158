"""Every sink of pt2bot/report/escape.py under attack, one fragment at a time.

Each hostile fragment goes through each sink, in the context the renderers put that sink's
output in (a paragraph, a table cell, link text, a heading, a `<summary>`, a code span, a
fenced block, a whole re-posted comment), and the Markdown is rendered by cmarkgfm with raw
HTML kept (test_security_publish.render). On the result: no token GitHub links or pings
survives in a text node (test_security_publish.LIVE, text node by text node: emphasis and
strikethrough start a new text node, so `_GH-12_` is `GH-12` at a word boundary to
GitHub), no `$` reaches a text node (GitHub renders `$..$`, `$$..$$` and `` $`..`$ `` as
math, which can style text to look like GitHub's own interface; cmarkgfm does not render
math, so the test is on the `$` itself), no fenced block GitHub renders as math or a
diagram, and no element or link that the fragment brought.

The last part is about time: the publisher escapes up to 4 MiB of artifact text in the job
that holds the write token, so every sink must stay linear on the worst input we can build.
"""
from __future__ import annotations

import re
import time
from typing import Callable

import pytest

from test_security_publish import (MATH_DELIMITER, OUR_ELEMENTS, RENDERED_LANGS,
                                   assert_inert, live_tokens, render)
from pt2bot.report import escape
from pt2bot.report.markdown import details, link, table

PINGS = re.compile(r"@[A-Za-z0-9_-]|#\d|GH-\d", re.I)
GB_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"

# Each fragment is one way of getting a reference, a mention, a link or math through.
REFERENCES = [
    # issue references inside emphasis, strong emphasis and strikethrough: `_` is a word
    # character, so a guard that wants a word boundary before `GH` lets these through
    "_GH-12_", "__GH-34__", "___GH-56___", "_gh-7_", "*GH-8*", "**GH-9**", "~GH-10~",
    "~~GH-11~~", "x_GH-13_", "_x_GH-14_", "[GH-15]", "(GH-16)", "'GH-17'", "\\GH-18",
    "1GH-19", "GH-20", "GH-\u200b21 GH-22",
    "_#12_", "__#34__", "~~#56~~", "_o/r#7_", "__pytorch/pytorch#8__", "o/r#9", "x#10",
    "&#35;11", "&#x23;12", "\\#13",
    "_@alice_", "__@bob__", "~~@carol~~", "*@dave*", "x@eve", "_@org/team_", "@org/team",
    "&#64;frank", "&#x40;grace", "\\@heidi", "o/r@1234567", "_o/r@1234567_",
    "_www.evil.example_", "~~www.evil.example~~", "_https://evil.example_",
    "<https://evil.example>", "[x](https://evil.example)", "![i](https://evil.example/i.png)",
]
MATH = [
    "$\\color{red}{x}$", "$\\href{https://evil.example}{click}$", "_$\\color{red}{x}$_",
    "$$\\color{red}{\\text{Approved}}$$", "$`\\color{red}{x}`$", "$$`x`$$",
    "&#36;\\color{red}{x}&#36;", "&dollar;x&dollar;", "\\$\\color{red}{x}\\$",
    "```math\n\\color{red}{x}\n```", "``` math\nx\n```", "````MATH\nx\n````",
    "~~~math\n\\color{red}{x}\n~~~", "```mermaid\ngraph TD; A-->B\n```",
    "```geojson\n{}\n```", "```topojson\n{}\n```", "```stl\nsolid x\n```",
    "$$\n\\color{red}{x}\n$$",
]
FRAGMENTS = REFERENCES + MATH
EVERYTHING = " ".join(f for f in FRAGMENTS if "\n" not in f)


def _paragraph(s: str) -> str:
    return f"before {s} after"


def _ids(fragments: list[str]) -> list[str]:
    return [f"{i}:" + (re.sub(r"[^A-Za-z0-9@#$_~*&./:-]+", "", f)[:20] or "x")
            for i, f in enumerate(fragments)]


# sink name -> (escape, the Markdown context the renderers put its output in)
Sink = Callable[[str], str]
PROSE: dict[str, Sink] = {
    "escape_inline": lambda t: _paragraph(escape.escape_inline(t)),
    "escape_inline/cell": lambda t: table(["a", "b"], [[escape.escape_inline(t), "x"]]),
    "escape_inline/heading": lambda t: "## " + escape.escape_inline(t),
    "escape_inline/summary": lambda t: details(escape.escape_inline(t), "body"),
    "link/label": lambda t: _paragraph(link(t, GB_URL)),
    # our messages: prose with code spans of the user's source (summary/review finding lines)
    "message_inline": lambda t: _paragraph(escape.message_inline(t)),
}
CODE: dict[str, Sink] = {
    "code_inline": lambda t: _paragraph(escape.code_inline(t)),
    "code_inline/cell": lambda t: table(["a", "b"], [[escape.code_inline(t, table=True), "x"]]),
    "code_block": lambda t: "text\n\n" + escape.code_block(t) + "\n\nafter",
    "code_block/python": lambda t: escape.code_block(t, "python"),
    "code_block/details": lambda t: details("message", escape.code_block(t)),
    "suggestion_block": lambda t: "a\n\n" + escape.suggestion_block(t) + "\n\nb",
}
REPOSTED: dict[str, Sink] = {
    "inert_markdown": escape.inert_markdown,
    "sanitize_markdown": escape.sanitize_markdown,
    "clean_text": escape.clean_text,
    # the same text where the renderer's own markup would put it
    "clean_text/cell": lambda t: escape.clean_text(f"| a | b |\n|---|---|\n| {t} | x |"),
    "clean_text/list": lambda t: escape.clean_text(f"- **PTC201** {t}\n  - {t}"),
    "clean_text/quote": lambda t: escape.clean_text(f"> {t}"),
    "clean_text/details": lambda t: escape.clean_text(
        f"<details><summary>{t}</summary>\n\n{t}\n\n</details>"),
    "clean_text/blank-lines": lambda t: escape.clean_text(f"x\n\n{t}\n\ny"),
}
# prose and code in one line: a message whose spans hold the fragment (its `$` stays code)
MIXED: dict[str, Sink] = {
    "message_inline/spans": lambda t: _paragraph(escape.message_inline(f"`{t}` and {t} `x`")),
}
MARKDOWN_SINKS = {**PROSE, **CODE, **REPOSTED, **MIXED}


@pytest.mark.parametrize("sink", sorted(MARKDOWN_SINKS))
@pytest.mark.parametrize("fragment", FRAGMENTS + [EVERYTHING], ids=_ids(FRAGMENTS + ["ALL"]))
def test_no_reference_mention_link_or_math_survives_any_markdown_sink(sink, fragment):
    assert_inert(MARKDOWN_SINKS[sink](fragment))


@pytest.mark.parametrize("sink", sorted(PROSE) + sorted(REPOSTED))
def test_no_dollar_is_left_in_prose_we_emit(sink):
    # The check on the Markdown itself (cmarkgfm renders no math, so a `$` pair it shows as
    # text proves nothing): outside code, what we emit has no `$` at all, so no pair.
    for fragment in MATH:
        out = MARKDOWN_SINKS[sink](fragment)
        assert MATH_DELIMITER not in out, (fragment, out)


@pytest.mark.parametrize("sink", sorted(CODE))
def test_code_stays_readable_and_dollars_stay_code(sink):
    # GitHub renders no math in code spans and blocks, so a `$` there stays a `$`.
    for fragment in ("echo $HOME", "s = f'${x}'", "$\\color{red}{x}$"):
        out = MARKDOWN_SINKS[sink](fragment)
        assert fragment.replace("\n", " ") in out or fragment in out, out
        r = render(out)
        assert not any(MATH_DELIMITER in node for node in r.text), r.text


def test_emphasised_references_are_broken_in_the_text_not_only_in_the_html():
    # The two fragments as they were found: inert_markdown rendered them as emphasis around
    # a live `GH-12` / `GH-34`.
    out = escape.inert_markdown("_GH-12_ and __GH-34__")
    assert out == f"_GH{escape.ZWSP}-12_ and __GH{escape.ZWSP}-34__"
    r = render(out)
    assert [t for t, _ in r.elements] == ["p", "em", "strong"] and not live_tokens(r)


def test_math_fences_render_as_code_and_dollars_as_a_look_alike():
    r = render(escape.inert_markdown("```math\n\\color{red}{x}\n```\n\ncosts $5 or $6"))
    assert [t for t, _ in r.elements] == ["pre", "code", "p"]
    assert "costs \uff045 or \uff046" in "".join(r.text)
    assert escape.code_block("x", "math") == "```\nx\n```"   # never a math block of ours


def test_plain_text_sinks_have_no_ping_or_reference():
    # Check-run titles and annotations are shown as plain text: the token itself must not
    # be there (no rendering to split it).
    for fragment in REFERENCES:
        out = escape.plain_text(fragment)
        assert not PINGS.search(out), (fragment, out)


def test_html_text_is_text_on_the_page():
    # report.html (the audit) and no GitHub renderer: what matters is that no element or
    # attribute comes from the text; GitHub never links inside that page.
    for fragment in FRAGMENTS + [EVERYTHING, "<img src=x onerror=alert(1)>\"'"]:
        r = render(f"<p>{escape.html_text(fragment)}</p>")
        assert [t for t, _ in r.elements] == ["p"], fragment


def test_the_oracle_catches_what_it_must():
    # The checks above are only as good as this: each live form is found.
    for md in ("_GH-12_", "__GH-34__", "x _#1_", "~~@alice~~", "$x$", "```math\nx\n```",
               "```mermaid\nx\n```", "www.evil.example", "a@b"):
        assert live_tokens(render(md)), md
    assert set(RENDERED_LANGS) >= {"math", "mermaid"} and {"p", "em"} <= OUR_ELEMENTS


# ---------------------------------------------------------------------- linear time
# The worst inputs we know for each escape, by construction. The suggestion-fence scan
# (sanitize_markdown, clean_text) once searched forward from every ```suggestion opener
# (and back to the start for raw HTML), and its opener regex backtracked over a run of
# backticks from every position in it: seconds at 64 KiB, hours at 4 MiB.
def _repeat(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def _nested(n: int) -> str:
    # Openers of falling length after blank lines, each closed by its own fence at the end,
    # after a marker that gets each one rejected only once its whole body has been read.
    longest = 3
    while (longest + 1) * (longest + 15) // 2 + 2 * longest * longest < n // 2:
        longest += 1
    openers = "".join(f"\n\n{'`' * k}suggestion\nx" for k in range(longest, 2, -1))
    closers = "".join(f"\n{'`' * k}" for k in range(3, longest + 1))
    filler = _repeat("line\n", max(0, n - len(openers) - len(closers) - 20))
    return openers + "\n" + filler + MARKER + closers


MARKER = escape.MARKER_PREFIX + "x -->"
FENCE_INPUTS: dict[str, Callable[[int], str]] = {
    "unterminated openers": lambda n: _repeat("\n\n```suggestion\n", n),
    "openers and longer fences": lambda n: _repeat("\n\n```suggestion\n````\n", n),
    "one backtick run": lambda n: "`" * n,
    "well-formed blocks": lambda n: _repeat("\n\n```suggestion\nx @a\n```", n),
    "blocks after raw html": lambda n: "<pre\n" + _repeat("\n\n```suggestion\nx\n```", n),
    "blocks with a marker": lambda n: _repeat(f"\n\n```suggestion\n{MARKER}\n```", n),
    "nested openers": _nested,
}
MIXED_UNITS = ["`", "``", "\n\n```suggestion\n", "````\n", "~~~math\n", "$", "$$", "<", "<pre",
               "&#", "[GB0124](", "](", "www.", "://", "_GH-1_", "#1", "@a", "\\", "|", "\n",
               " ", "*", "<details>", "<!-- pt2bot:"]


def _mixed(n: int) -> str:
    # each unit repeated, one after the other: a part that is quadratic on its own is so here
    part = max(1, n // len(MIXED_UNITS))
    return "".join(_repeat(u, part) for u in MIXED_UNITS)


# What the publisher runs on artifact text of up to 4 MiB (publish/artifact.py MAX_MD_BYTES),
# in the job that holds the write token; the renderers' sinks see less, tested to 1 MiB.
PUBLISHER_SINKS: dict[str, Callable[[str], object]] = {
    "sanitize_markdown": escape.sanitize_markdown, "clean_text": escape.clean_text,
    "suggestion_fences": escape.suggestion_fences, "log_block": escape.log_block,
    "command_data": escape.command_data, "plain_text": escape.plain_text,
}
RENDERER_SINKS: dict[str, Callable[[str], object]] = {
    "inert_markdown": escape.inert_markdown,
    "escape_inline": lambda t: escape.escape_inline(t, limit=len(t)),
    "code_inline": lambda t: escape.code_inline(t, limit=len(t)),
    "message_inline": lambda t: escape.message_inline(t, limit=len(t)),
    "code_block": lambda t: escape.code_block(t, limit=len(t)),
    "suggestion_block": escape.suggestion_block, "neutralise": escape.neutralise,
    "html_text": escape.html_text,
}
SIZES = [2 << 10, 16 << 10, 128 << 10, 1 << 20, 4 << 20]
SLACK = 2.5          # linear code takes at most SLACK x the size ratio; quadratic takes ~8x more
NOISE = 0.1          # CPU seconds: below this, a timing says nothing


def _seconds(fn: Callable[[str], object], text: str) -> float:
    # CPU time of this process, not the wall clock: other jobs on a shared machine slow the
    # wall clock of a step, not the work it does. The best of a few runs all the same.
    best = float("inf")
    for _ in range(3 if len(text) <= 128 << 10 else 2):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return best


def assert_linear(fn: Callable[[str], object], build: Callable[[int], str],
                  sizes: list[int]) -> list[tuple[int, float]]:
    """Time `fn` on `build(n)` for growing n (x8, then x4): each step may take at most SLACK
    times the size ratio times the step before, plus NOISE. Quadratic code takes ~64 times
    longer for 8 times the text, so it fails at the first step that takes measurably long:
    in seconds, not hours."""
    seen: list[tuple[int, float]] = []
    for n in sizes:
        t = _seconds(fn, build(n))
        if seen:
            n0, t0 = seen[-1]
            assert t <= SLACK * (n / n0) * t0 + NOISE, (
                f"{n >> 10} KiB took {t:.3f}s, {n0 >> 10} KiB {t0:.3f}s: not linear")
        seen.append((n, t))
    return seen


@pytest.mark.parametrize("shape", sorted(FENCE_INPUTS))
def test_the_publishers_fence_scan_is_linear_up_to_the_4_mib_cap(shape):
    seen = assert_linear(escape.sanitize_markdown, FENCE_INPUTS[shape], SIZES)
    assert seen[-1][0] == 4 << 20


@pytest.mark.parametrize("sink", sorted(PUBLISHER_SINKS))
def test_the_publishers_sinks_are_linear_on_the_mixed_worst_input(sink):
    assert_linear(PUBLISHER_SINKS[sink], _mixed, SIZES)


@pytest.mark.parametrize("sink", sorted(RENDERER_SINKS))
def test_the_renderers_sinks_are_linear_on_the_mixed_worst_input(sink):
    assert_linear(RENDERER_SINKS[sink], _mixed, SIZES[:-1])
