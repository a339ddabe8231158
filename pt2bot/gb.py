"""GB codes: torch's graph-break registry, read in one place and without importing torch.

`torch/_dynamo/graph_break_registry.json` maps stable ids (`GB0124`) to `{Gb_type, Context,
Explanation, Hints}`, as a list (history, newest first; some ids were renamed). Each id has a
documentation page. A copy from the development torch is vendored as package data
(`pt2bot/data/graph_break_registry.json`, written by `tools/vendor_gb_registry.py`) so that
`pt2bot check` and the renderers never need torch. The smoke run prefers the registry of the
torch it runs on (`registry(installed=True)`): that is the torch whose messages it parses.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
from dataclasses import dataclass
from typing import Any

PAGE_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{slug}.html"
LOOP_GB = "GB7000"   # "graph break in loop": the frame was skipped and ran eagerly
VENDORED = os.path.join(os.path.dirname(__file__), "data", "graph_break_registry.json")

_CODE_RE = re.compile(r"^GB[0-9]{4}$")


@dataclass(frozen=True)
class RegistryEntry:
    gb: str
    gb_type: str
    explanation: str
    hints: tuple[str, ...]


# torch's boilerplate under a data-dependent branch and the other breaks it deems fundamental:
# no advice, and untrue where a rewrite traces (a NaN check kept as `torch._assert_async`, an
# `if` as `torch.where`); two new users read it, under advice that works, as "give up"
_FUNDAMENTAL = "This graph break is fundamental"


def is_advice(hint: str) -> bool:
    """Whether one of torch's hints for a break says something to do (not the boilerplate
    that a break is fundamental)."""
    return not hint.startswith(_FUNDAMENTAL)


def is_code(gb: object) -> bool:
    """A well-formed GB id (`GB` and four digits): the only kind we build links for."""
    return isinstance(gb, str) and bool(_CODE_RE.match(gb))


def url(gb: str | None) -> str | None:
    """The documentation page of a GB id; None for anything that is not a GB id."""
    return PAGE_URL.format(slug=gb.lower()) if is_code(gb) else None


def url_regex(digits: str, *, host: bool = True) -> str:
    """A regular expression for the page URL of a GB id, `digits` (a pattern such as
    `(\\d{4})`, usually a group) standing for the id's four digits.

    `host=False` matches from the path on (`compile-graph-break-site/gb/gbNNNN.html`): how the
    smoke run finds ids in dynamo's messages, whichever host the torch at hand links to. The
    renderer's own links (`[GBnnnn](url)`) are matched whole.
    """
    head, tail = PAGE_URL.split("{slug}")
    if not host:
        head = head.split("://", 1)[1].split("/", 1)[1]
    return re.escape(head) + "gb" + digits + re.escape(tail)


def installed_registry_path() -> str | None:
    """Where the installed torch keeps its registry, without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        p = os.path.join(base, "_dynamo", "graph_break_registry.json")
        if os.path.isfile(p):
            return p
    return None


@functools.lru_cache(maxsize=8)
def _raw(path: str | None) -> dict[str, Any]:
    """A registry file as JSON (the vendored file wraps it with the torch version); `{}` if unreadable."""
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError):
        return {}
    if isinstance(raw, dict) and isinstance(raw.get("registry"), dict):
        raw = raw["registry"]
    return raw if isinstance(raw, dict) else {}


def registry_path(installed: bool = False) -> str:
    """The file read: the installed torch's when asked for and present, else the vendored copy."""
    return (installed and installed_registry_path()) or VENDORED


@functools.lru_cache(maxsize=8)
def load_registry(path: str | None = None) -> dict[str, RegistryEntry]:
    """GB id → newest registry entry (vendored copy unless `path` is given)."""
    out: dict[str, RegistryEntry] = {}
    for gb, versions in _raw(path or VENDORED).items():
        entry = versions[0] if isinstance(versions, list) and versions else versions
        if not isinstance(entry, dict):
            continue
        out[gb] = RegistryEntry(
            gb=gb,
            gb_type=str(entry.get("Gb_type", "")),
            explanation=str(entry.get("Explanation", "")),
            hints=tuple(h for h in (str(h).strip() for h in entry.get("Hints") or ()) if is_advice(h)),
        )
    return out


@functools.lru_cache(maxsize=8)
def types_index(path: str | None = None) -> dict[str, str]:
    """gb_type → GB id over every historical name (renamed ids keep their old names)."""
    idx: dict[str, str] = {}
    for gb, versions in _raw(path or VENDORED).items():
        for entry in versions if isinstance(versions, list) else [versions]:
            t = str(entry.get("Gb_type", "")).strip() if isinstance(entry, dict) else ""
            if t:
                idx.setdefault(t, gb)
    return idx


def gb_type(gb: str | None, path: str | None = None) -> str | None:
    """The newest gb_type of an id, or None when the registry does not know it."""
    entry = load_registry(path).get(gb) if gb else None
    return entry.gb_type if entry else None
