"""A candidate's new lines fit to the repository's line length, the way black splits a line.

A suggestion is committed with one click, and the repository's own lint runs on it next: a
`torch.where` of a NaN guard written on one line of 126 characters in a repository whose black
and flake8 allow 99 is a suggestion that fails the author's CI. So where the repository sets a
line length (`line-length` of black or ruff in pyproject.toml, ruff.toml; `max-line-length` of
flake8 or pycodestyle in setup.cfg, tox.ini, .flake8), a new line longer than it is split at its
outermost brackets: their contents on one line indented one level more, or, still too long, one
item per line with a trailing comma. The split is kept only where the lines parse to the same
syntax tree as the one line did, so the edit the proof runs, and the suggestion posted, do
exactly what the unsplit line did. A line that cannot be split so (a comment on it, no brackets,
one item longer than the limit) stays as it is; a repository that sets no length gets no change.
"""
from __future__ import annotations

import ast
import dataclasses
import io
import os
import re
import textwrap
import tokenize

from pt2bot.rules.base import Candidate
from pt2bot.rules.edits import indent_unit

_OPEN, _CLOSE = "([{", ")]}"
# `line-length = 99` (black, ruff), `max-line-length = 99` / `max_line_length: 99` (flake8,
# pycodestyle): a key at the start of a line of the section it belongs to
_TOML_KEY = re.compile(r"^\s*line-length\s*=\s*(\d+)\s*(?:#.*)?$")
_INI_KEY = re.compile(r"^\s*max[-_]line[-_]length\s*[=:]\s*(\d+)\s*(?:[#;].*)?$")
_SECTION = re.compile(r"^\s*\[([^\]]+)\]")
_TOML_SECTIONS = {"tool.black", "tool.ruff"}
_INI_SECTIONS = {"flake8", "pycodestyle", "pep8"}
_MAX_READ = 256 * 1024


def _read(root: str, name: str) -> list[str]:
    path = os.path.join(root, name)
    try:
        if os.path.islink(path) or os.path.getsize(path) > _MAX_READ:
            return []
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return []


def repo_line_length(root: str) -> int | None:
    """The shortest line length the repository's formatter or linter configuration sets, or
    None where none sets one."""
    found: list[int] = []
    for name in ("pyproject.toml", "ruff.toml", ".ruff.toml", "setup.cfg", "tox.ini", ".flake8"):
        toml = name.endswith(".toml")
        # ruff.toml holds ruff's keys at its top level
        section = "tool.ruff" if name in ("ruff.toml", ".ruff.toml") else ""
        for line in _read(root, name):
            m = _SECTION.match(line)
            if m:
                section = m.group(1).strip().strip('"')
                continue
            key = (_TOML_KEY if toml else _INI_KEY).match(line)
            if key and section in (_TOML_SECTIONS if toml else _INI_SECTIONS):
                found.append(int(key.group(1)))
    return min((n for n in found if n >= 40), default=None)   # a typo's 9 is no one's style


def _tokens(text: str) -> list[tokenize.TokenInfo] | None:
    """The tokens of one logical line, or None where it is not one complete line without a
    comment (a split would move or lose the comment)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    body = [t for t in toks if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER,
                                               tokenize.INDENT, tokenize.DEDENT)]
    if any(t.type == tokenize.COMMENT for t in toks) or any(t.start[0] != 1 for t in body):
        return None
    return body


def _outer_pair(toks: list[tokenize.TokenInfo]) -> tuple[int, int] | None:
    """Columns of the depth-0 bracket pair holding the most text, its closing bracket followed
    by at most a few characters (`torch.where(...)`, not the `[0]` after a call)."""
    best: tuple[int, int] | None = None
    stack: list[int] = []
    for t in toks:
        if t.type == tokenize.OP and t.string in _OPEN:
            stack.append(t.start[1])
        elif t.type == tokenize.OP and t.string in _CLOSE and stack:
            start = stack.pop()
            if not stack and (best is None or t.start[1] - start > best[1] - best[0]):
                best = (start, t.start[1])
    return best


def _items(body: str) -> list[str]:
    """`body` split at its depth-0 commas (a trailing comma gives no empty item)."""
    toks = _tokens("(" + body + ")")
    if toks is None:
        return [body]
    cuts, depth = [], 0
    for t in toks[1:-1]:
        if t.type == tokenize.OP and t.string in _OPEN:
            depth += 1
        elif t.type == tokenize.OP and t.string in _CLOSE:
            depth -= 1
        elif t.type == tokenize.OP and t.string == "," and depth == 0:
            cuts.append(t.start[1] - 1)
    out, at = [], 0
    for c in cuts:
        out.append(body[at:c].strip())
        at = c + 1
    if body[at:].strip():
        out.append(body[at:].strip())
    return out


def _split(line: str, limit: int, unit: str) -> list[list[str]]:
    """The ways to split `line` at its outermost brackets, shortest first."""
    indent = line[:len(line) - len(line.lstrip())]
    text = line.strip()
    toks = _tokens(text)
    pair = _outer_pair(toks) if toks else None
    if pair is None:
        return []
    a, b = pair
    head, body, tail = text[:a + 1], text[a + 1:b].strip(), text[b:]
    if not body:
        return []
    inner = indent + unit
    ways = [[indent + head, inner + body, indent + tail]]
    items = _items(body)
    if len(items) > 1 or len(inner + body) > limit:
        ways.append([indent + head, *(inner + i + "," for i in items), indent + tail])
        ways.append([indent + head, *(inner + i + ("," if n < len(items) - 1 else "")
                                      for n, i in enumerate(items)), indent + tail])
    return ways


def _same(old: list[str], new: list[str]) -> bool:
    try:
        a = ast.parse(textwrap.dedent("\n".join(old)))
        b = ast.parse(textwrap.dedent("\n".join(new)))
    except (SyntaxError, ValueError):
        return False
    return ast.dump(a) == ast.dump(b)


def fit_lines(lines: tuple[str, ...], limit: int | None, unit: str = "    ",
              keep: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """`lines` with each line longer than `limit` split at its outermost brackets, where the
    split parses to the same tree; the lines whose text is in `keep` (the author's own lines
    the edit moves) are left as they are."""
    if not limit:
        return lines
    out = list(lines)
    i = 0
    while i < len(out):
        line = out[i]
        if len(line) <= limit or line.strip() in keep:
            i += 1
            continue
        ways = [w for w in _split(line, limit, unit) if _same(out, out[:i] + w + out[i + 1:])]
        fits = [w for w in ways if all(len(x) <= limit for x in w)]
        if fits:
            out[i:i + 1] = fits[0]
        elif any(len(w) > 3 for w in ways):
            # several items, one per line, one of them still too long: it is split in turn
            # below (`torch.nan_to_num(x, nan=0.0, ...)` inside a `torch.where`)
            out[i:i + 1] = next(w for w in ways if len(w) > 3)
        i += 1
    return tuple(out)


def fit_candidate(cand: Candidate, original: str, limit: int | None) -> Candidate:
    """`cand` with its new lines fit to `limit` (the lines it replaces kept as they were)."""
    if not limit or cand.setting or all(len(ln) <= limit for ln in cand.lines):
        return cand
    old = original.splitlines()[cand.start_line - 1:cand.end_line]
    first = next((ln for ln in cand.lines if ln.strip()), "")
    lines = fit_lines(cand.lines, limit, indent_unit(first[:len(first) - len(first.lstrip())]),
                      frozenset(ln.strip() for ln in old))
    return dataclasses.replace(cand, lines=lines) if lines != cand.lines else cand


__all__ = ["fit_candidate", "fit_lines", "repo_line_length"]
