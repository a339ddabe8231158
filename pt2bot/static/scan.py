"""Which files a check must parse up front: a text scan of every file, no AST (parsing is
most of what a cold check costs, so a file is parsed only when it may start compiled code or
the call graph reaches it).

Compiled code starts at the `forward` of every `nn.Module` subclass and at the functions given
to torch.compile/export (pt2bot/analysis/graph.py `find_compiled`); everything else it reaches is
found by name and parsed when the call graph asks (`Index.loader`). So only two kinds of files
must be parsed before the graph starts:

- files that may call torch.compile/export (`may_compile`, the same test the skeleton uses);
- files with a `class` whose bases may make it an `nn.Module`.

The second is decided from the text of the class statements of the whole tree, as a closure
over names: a base spelled with a word that names torch (`nn`, `torch`, or any word a file of
the tree imports from a `torch` module), with the name of a class of the tree that is itself
such a class, or with a name bound by `import ... as NAME` to any of those, may make a module
class. A header with a comment or a call in its bases counts as one (the scan cannot read it).
Every way the skeleton resolves a base (imports, re-exports, star imports, aliases:
pt2bot/analysis/walk.py `_declare_top`) spells it with one of those words, so the files the scan leaves out
cannot define an `nn.Module`: a tokenizer, a configuration, a data or training script. On
transformers 5.23.0 the scan picks 959 of 2,860 files (71 % of the bytes); the call graph reads
234 more (package `__init__`s it searches for re-exports, helpers, mixins), and 1,667 files are
never parsed, with the same 2,019 findings as a check that parses every file.

The scan is over-inclusive by design (a word in a comment or string, a class of the same name
elsewhere): a wrong guess costs a parse, never a finding.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# (bytes patterns: `\w` is ASCII there, so the bytes of a non-ASCII identifier count as word bytes)
_CLASS = re.compile(rb"class\s+([\w\x80-\xff]+)\s*\(([^)]*)\)")
_WORD = re.compile(rb"[A-Za-z_\x80-\xff][\w\x80-\xff]*")
_FROM_TORCH = re.compile(rb"from\s+torch\b[\w.]*\s+import\s+(\([^)]*\)|[^\n]*)")
_NAME = re.compile(rb"[\w\x80-\xff]+")
_TORCH_WORDS = frozenset({b"nn", b"torch"})
_OPAQUE = b"\0"     # a header the scan cannot read (a comment or a call among the bases)


@dataclass(frozen=True)
class FileScan:
    classes: tuple[tuple[bytes, frozenset[bytes]], ...]   # (name, words of its bases), bases only
    torch_words: frozenset[bytes]                          # words imported from a torch module
    aliases: tuple[tuple[frozenset[bytes], bytes], ...]    # (words of X, NAME) of `X as NAME`
    compiles: bool                                         # may call torch.compile/export


def scan_file(data: bytes, compiles: bool) -> FileScan:
    classes = []
    for m in _CLASS.finditer(data):
        bases = m.group(2)
        if not bases.strip():
            continue
        words = set(_WORD.findall(bases))
        if b"#" in bases or b"(" in bases:
            words.add(_OPAQUE)
        classes.append((m.group(1), frozenset(words)))
    torch_words: set[bytes] = set()
    for m in _FROM_TORCH.finditer(data):
        torch_words.update(_WORD.findall(m.group(1)))
    aliases = []
    if classes or torch_words:
        # (bytes.find, not a regex: a pattern that starts with a space tries every space)
        i = data.find(b" as ")
        while i >= 0:
            m = _NAME.match(data, i + 4)
            # the token before ` as `: `torch.nn` of `import torch.nn as nn`
            before = data[max(0, i - 120):i].rsplit(None, 1)
            if m is not None and before:
                aliases.append((frozenset(_WORD.findall(before[-1])), m.group()))
            i = data.find(b" as ", i + 4)
    return FileScan(tuple(classes), frozenset(torch_words), tuple(aliases), compiles)


def files_to_parse(scans: dict[str, FileScan]) -> tuple[set[str], frozenset[str]]:
    """The files (keys of `scans`) that may define an `nn.Module` subclass or call compile, and
    the names that may name a module class (`may_name_module`)."""
    names: set[bytes] = set(_TORCH_WORDS) | {_OPAQUE}
    for sc in scans.values():
        names |= sc.torch_words
    # breadth-first over the names: a class or an alias is in once one of its words is
    users: dict[bytes, list[bytes]] = {}           # word -> the names it may make module names
    for sc in scans.values():
        for name, words in sc.classes:
            for w in words:
                users.setdefault(w, []).append(name)
        for words, name in sc.aliases:
            for w in words:
                users.setdefault(w, []).append(name)
    todo = list(names)
    while todo:
        for name in users.get(todo.pop(), ()):
            if name not in names:
                names.add(name)
                todo.append(name)
    files = {rel for rel, sc in scans.items()
             if sc.compiles or any(not words.isdisjoint(names) for _, words in sc.classes)}
    return files, frozenset(n.decode("utf-8", "replace") for n in names)


def may_name_module(dotted: str, names: frozenset[str]) -> bool:
    """Whether a base class as the skeleton resolved it (`pkg.mod.Block`, `torch.nn.Linear`) can
    be an `nn.Module`, given `names` from `files_to_parse`: its last part is one of them (every
    module class of the tree and every name bound to one is), or it is spelled through torch."""
    parts = dotted.split(".")
    return parts[-1] in names or "torch" in parts or "nn" in parts


_STAR = re.compile(rb"import\s+\*")


def may_hold(data: bytes, name: str) -> bool:
    """Whether a module with this source can define or import `name` (or star-import it)."""
    return name.encode() in data or _STAR.search(data) is not None
