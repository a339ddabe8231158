"""Generic checkers over a `Document`: each returns the checked value or `BAD`, and records a
located problem for every mistake, so that one pass reports the whole file.

Nothing here knows pt2bot's schema (pt2bot/configfile/schema.py composes these). Every
message is bounded whatever the input: at most `MAX_LISTED` choices are listed, and
"did you mean" only looks among a hand-written number of choices, because a file under the
size cap can still declare tens of thousands of names and be wrong about each of them.
"""
from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from pt2bot.configfile.yamlread import Document, Path, format_path, show
from pt2bot.errors import Problem

BAD = object()  # a checker's result for an invalid value: the field keeps its default
MAX_LISTED = 20       # choices named in one message
MAX_SUGGEST_FROM = 200  # more choices than this were not typed by hand: no "did you mean"

Check = Callable[[Any, Path], Any]


def did_you_mean(word: Any, choices: Sequence[str]) -> str:
    if not isinstance(word, str) or len(choices) > MAX_SUGGEST_FROM:
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f'; did you mean "{close[0]}"?' if close else ""


def one_of(choices: Sequence[str]) -> str:
    """The choices for a message, the first `MAX_LISTED` of them when there are more."""
    if not choices:
        return "(none)"
    shown = ", ".join(choices[:MAX_LISTED])
    return shown if len(choices) <= MAX_LISTED else f"{shown}, and {len(choices) - MAX_LISTED} more"


class Checker:
    """Checks plain data against a spec, locating every problem through the document's lines."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.problems = doc.problems

    def line(self, path: Path, *, key: bool = False) -> int | None:
        table = self.doc.key_lines if key else self.doc.value_lines
        p = tuple(path)
        while p:
            if p in table:
                return table[p]
            if p in self.doc.value_lines:
                return self.doc.value_lines[p]
            p = p[:-1]
        return self.doc.value_lines.get((), None)

    def error(self, path: Path, message: str, *, key: bool = False) -> object:
        self.problems.append(Problem(self.line(path, key=key), format_path(path) or None,
                                     message, len(self.problems)))
        return BAD

    def expected(self, path: Path, what: str, value: Any, hint: str = "") -> object:
        return self.error(path, f"expected {what}, got {show(value)}{hint}")

    def mapping(self, value: Any, path: Path, spec: dict[str, Check], what: str,
                required: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """Check a mapping's keys against `spec`; return the valid fields (invalid ones omitted)."""
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.expected(path, what, value)
            return None
        out: dict[str, Any] = {}
        for k, v in value.items():
            if path + (k,) in self.doc.bad:
                continue
            if k not in spec:
                self.error(path + (k,), f"unknown key{did_you_mean(k, list(spec))} "
                                        f"(expected one of: {one_of(list(spec))})", key=True)
                continue
            checked = spec[k](v, path + (k,))
            if checked is not BAD:
                out[k] = checked
        for k in required:
            if k not in value:
                self.error(path, f'missing required key "{k}"')
        return out

    # -- scalar checkers (each returns the value or BAD)

    def boolean(self, v: Any, path: Path) -> Any:
        return v if isinstance(v, bool) else self.expected(path, "true or false", v)

    def integer(self, minimum: int, what: str) -> Check:
        def check(v: Any, path: Path) -> Any:
            if isinstance(v, int) and not isinstance(v, bool) and v >= minimum:
                return v
            return self.expected(path, what, v)
        return check

    def number(self, what: str, *, positive: bool = False) -> Check:
        def check(v: Any, path: Path) -> Any:
            ok = is_finite_number(v) and (v > 0 if positive else v >= 0)
            return float(v) if ok else self.expected(path, what, v)
        return check

    def finite(self, v: Any, path: Path) -> Any:
        return v if is_finite_number(v) else self.expected(path, "a finite number", v)

    def choice(self, choices: tuple[str, ...], aliases: dict[str, str] | None = None) -> Check:
        def check(v: Any, path: Path) -> Any:
            if isinstance(v, str) and v in choices:
                return v
            hint = (f'; did you mean "{aliases[v]}"?' if aliases and isinstance(v, str) and v in aliases
                    else did_you_mean(v, choices))
            return self.expected(path, f"one of {one_of(choices)}", v, hint)
        return check

    def string(self, pattern: re.Pattern[str] | None = None, what: str = "a non-empty string",
               hint: Callable[[str], str] | None = None) -> Check:
        def check(v: Any, path: Path) -> Any:
            if isinstance(v, str) and v and (pattern is None or pattern.fullmatch(v)):
                return v
            return self.expected(path, what, v, hint(v) if hint and isinstance(v, str) else "")
        return check

    def key(self, pattern: re.Pattern[str], what: str) -> Check:
        """A mapping key that must match `pattern` (the problem is located at the key)."""
        def check(k: Any, path: Path) -> Any:
            if isinstance(k, str) and pattern.fullmatch(k):
                return k
            return self.error(path, f"expected {what} as the key, got {show(k)}", key=True)
        return check

    def name_in(self, names: Sequence[str], where: str, what: str) -> Check:
        """A string that must be one of `names` (declared in `where`)."""
        known: Collection[str] = frozenset(names)

        def check(x: Any, p: Path) -> Any:
            if isinstance(x, str) and x in known:
                return x
            if isinstance(x, str):
                return self.error(p, f"{show(x)} is not a {what} in {where}{did_you_mean(x, names)} "
                                     f"(declared: {one_of(names)})")
            return self.expected(p, f"a {what} name", x)
        return check

    @staticmethod
    def nullable(check: Check) -> Check:
        return lambda v, path: None if v is None else check(v, path)

    def list_of(self, item: Check, what: str, *, nonempty: bool = False, unique: bool = False) -> Check:
        def check(v: Any, path: Path) -> Any:
            if not isinstance(v, list) or (nonempty and not v):
                hint = f" (write [{show(v)[1:-1] if isinstance(v, str) else v}])" \
                    if isinstance(v, (str, int)) and not isinstance(v, bool) else ""
                return self.expected(path, what, v, hint)
            out: list[Any] = []
            seen: set[Any] = set()  # `unique` in linear time (a list made it quadratic)
            bad = False
            for i, x in enumerate(v):
                r = item(x, path + (i,))
                if r is BAD:
                    bad = True
                    continue
                if unique:
                    hashable = _hashable(r)
                    if (r in seen) if hashable else (r in out):
                        self.error(path + (i,), f"{show(x)} is listed twice")
                        bad = True
                        continue
                    if hashable:
                        seen.add(r)
                out.append(r)
            return BAD if bad else tuple(out)
        return check

    def map_of(self, key: Check, value: Check, what: str) -> Check:
        def check(v: Any, path: Path) -> Any:
            if v is None:
                return {}
            if not isinstance(v, dict):
                return self.expected(path, what, v)
            out, bad = {}, False
            for k, x in v.items():
                if key(k, path + (k,)) is BAD:
                    bad = True
                    continue
                r = value(x, path + (k,))
                if r is BAD:
                    bad = True
                else:
                    out[k] = r
            return BAD if bad else out
        return check


def is_finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and _finite(x)


def _finite(x: float | int) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # an int too large for a float (a traceback before): not a size or time
        return False


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True
