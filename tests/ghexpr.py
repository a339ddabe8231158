"""GitHub Actions expressions (`${{ ... }}`), evaluated the way the runner's service does, for
the subset the shipped workflows use: so a test can ask "on this event, which runner does
this job get?" instead of looking for substrings in the YAML.

Supported: string, number, boolean and null literals; contexts with `.name`, `['name']` and
the object filter `.*`; `!`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||` (which return an
operand, not a boolean, as GitHub's do: `cond && 'a' || 'b'`); `contains`, `startsWith`,
`endsWith`, `format`, `fromJSON`. Anything else is a `SyntaxError`, never a guess.
Semantics from GitHub's documentation: string comparison ignores case, operands of different
types are compared as numbers, falsy = false, 0, '', null.
"""
from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(r"""\s*(?:
    (?P<str>'(?:[^']|'')*')
  | (?P<num>-?\d+(?:\.\d+)?)
  | (?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\],.*])
  | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
)""", re.X)
_FUNCTIONS = {"contains", "startswith", "endswith", "format", "fromjson"}


class _Filtered(list):
    """The result of `.*`: further `.name` applies to every element."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise SyntaxError(f"cannot read expression at {text[pos:]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _truthy(v: Any) -> bool:
    return v not in (False, 0, "", None) and v == v    # NaN is falsy too


def _number(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip()) if v.strip() else 0.0
        except ValueError:
            return float("nan")
    return float("nan")


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is type(b) or (a is None and b is None):
        return a == b
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    return _number(a) == _number(b)


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return _equal(a, b)
    if op == "!=":
        return not _equal(a, b)
    if isinstance(a, str) and isinstance(b, str):
        x, y = a.casefold(), b.casefold()
    else:
        x, y = _number(a), _number(b)
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


class _Parser:
    def __init__(self, text: str, context: dict[str, Any]) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.ctx = {k.lower(): v for k, v in context.items()}

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise SyntaxError("unexpected end of expression")
        tok = self.toks[self.i]
        if expected is not None and tok[1] != expected:
            raise SyntaxError(f"expected {expected!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        v = self.or_()
        if self.i != len(self.toks):
            raise SyntaxError(f"unexpected {self.toks[self.i][1]!r}")
        return v

    def or_(self) -> Any:
        v = self.and_()
        while self.peek() == "||":
            self.take()
            rhs = self.and_()
            v = v if _truthy(v) else rhs
        return v

    def and_(self) -> Any:
        v = self.cmp()
        while self.peek() == "&&":
            self.take()
            rhs = self.cmp()
            v = rhs if _truthy(v) else v
        return v

    def cmp(self) -> Any:
        v = self.unary()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            v = _compare(op, v, self.unary())
        return v

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not _truthy(self.unary())
        return self.postfix(self.primary())

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if text == "(":
            v = self.or_()
            self.take(")")
            return v
        if kind != "name":
            raise SyntaxError(f"unexpected {text!r}")
        low = text.lower()
        if low in ("true", "false"):
            return low == "true"
        if low == "null":
            return None
        if self.peek() == "(":
            if low not in _FUNCTIONS:
                raise SyntaxError(f"function {text}() is not supported here")
            self.take("(")
            args = []
            if self.peek() != ")":
                args.append(self.or_())
                while self.peek() == ",":
                    self.take()
                    args.append(self.or_())
            self.take(")")
            return _call(low, args)
        if low not in self.ctx:
            raise SyntaxError(f"unknown context {text!r}")
        return self.ctx[low]

    def postfix(self, v: Any) -> Any:
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                if name == "*":
                    v = _Filtered(_star(v))
                    continue
                if kind != "name":
                    raise SyntaxError(f"expected a property name, got {name!r}")
            else:
                key = self.or_()
                self.take("]")
                name = key if isinstance(key, str) else str(key)
                if isinstance(v, list) and not isinstance(key, str):
                    v = v[int(key)] if 0 <= int(key) < len(v) else None
                    continue
            v = _Filtered(_get(x, name) for x in v) if isinstance(v, _Filtered) else _get(v, name)
        return v


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        for k, val in obj.items():
            if k.lower() == name.lower():
                return val
    return None


def _star(v: Any) -> list[Any]:
    if isinstance(v, _Filtered):
        return [y for x in v for y in _star(x)]
    if isinstance(v, dict):
        return list(v.values())
    if isinstance(v, list):
        return list(v)
    return []


def _call(name: str, args: list[Any]) -> Any:
    if name == "contains":
        hay, needle = args
        if isinstance(hay, list):
            return any(_equal(x, needle) for x in hay)
        return str(needle if needle is not None else "").casefold() in \
            str(hay if hay is not None else "").casefold()
    if name in ("startswith", "endswith"):
        s, p = (str(a if a is not None else "").casefold() for a in args)
        return s.startswith(p) if name == "startswith" else s.endswith(p)
    if name == "format":
        fmt, *rest = args
        return re.sub(r"\{(\d+)\}", lambda m: str(rest[int(m.group(1))]), fmt)
    if name == "fromjson":
        return json.loads(args[0])
    raise SyntaxError(name)


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    """A whole `${{ expr }}` string, or the bare expression of an `if:`."""
    m = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", expression, re.S)
    if m is None and "${{" in expression:
        raise SyntaxError("a string with text around ${{ }} is not supported here")
    return _Parser(m.group(1) if m else expression, context).parse()
