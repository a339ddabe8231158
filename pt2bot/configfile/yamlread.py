"""Read a small YAML file into plain data, keeping the line of every key and value. Bounded.

Nothing here knows pt2bot's schema: it turns a file into `Document` (plain dicts, lists and
scalars, plus line tables) or raises `ConfigErrors` with located problems.

The YAML is composed (not loaded) so that every key and value keeps its line; the node tree is
turned into plain Python by hand, which also lets us see duplicate keys (PyYAML silently keeps
the last one) and refuse tags that would construct arbitrary objects.

The file comes from the pull request under review, so it is hostile input:
- it must be a regular file, checked on the open descriptor before any read (a FIFO would
  block `open()` until a writer comes, `/dev/zero` never ends), and opened non-blocking;
- at most `MAX_BYTES` (256 KiB, ~300x the bundled examples/pt2bot.yml): composing and checking
  are linear but not free (~1.2 s per MiB measured here), and the answer should come in well
  under a second whatever the file;
- valid UTF-8, reported with its line instead of a traceback;
- nested at most `MAX_DEPTH` levels (the reader recurses; libyaml itself stops at 1000);
- aliases may expand to at most `MAX_ALIAS_VALUES` values beyond the first reading of each
  node: the composed tree shares aliased nodes, but plain data copies them, so nested aliases
  (the "billion laughs") grow exponentially. Merge keys (`<<`) count the same way.
"""
from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any

import yaml

from pt2bot.errors import ConfigError, ConfigErrors, Problem

MAX_BYTES = 256 << 10
MAX_DEPTH = 64
MAX_ALIAS_VALUES = 100_000

Path = tuple  # a key path: ("models", 1, "shapes", "batch")

_MERGE = "tag:yaml.org,2002:merge"
# libyaml's parser is ~10x faster and gives the same nodes and marks; PyYAML's is the fallback.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --------------------------------------------------------------------------- formatting

def format_path(path: Path) -> str:
    """`models[1].shapes.batch`; user text in a key is quoted, escaped and cut to 60 characters
    (one long key would otherwise repeat in every message under it)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and len(part) <= 60 and IDENT.fullmatch(part):
            out += f".{part}" if out else part
        else:  # user text (a glob, an odd key): quoted, escaped
            text = str(part)
            out += f"[{json.dumps(text if len(text) <= 60 else text[:57] + '...')}]"
    return out


def show(value: Any) -> str:
    """A value as the user wrote it, short and escaped (it is untrusted text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__} ({json.dumps(str(value)[:40])})"


# --------------------------------------------------------------------------- the file

def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, in words (for a located refusal)."""
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a file"


def _size(n: int) -> str:
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n >> shift} {unit}" if n % (1 << shift) == 0 else f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def read_text(path: str, *, label: str = "the file", max_bytes: int = MAX_BYTES) -> str:
    """The text of a small regular UTF-8 file; `ConfigError` (located) for anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: a FIFO opens at once instead of waiting for a writer
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", file=path) from None
    try:
        st = os.fstat(fd)  # the descriptor we read, not the name (no swap between check and read)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"not a regular file ({file_kind(st.st_mode)})", file=path)
        limit = f"{label} may be at most {_size(max_bytes)}"
        if st.st_size > max_bytes:
            raise ConfigError(f"the file is {_size(st.st_size)}; {limit}", file=path)
        chunks, size = [], 0
        while size <= max_bytes:  # the file may grow after fstat: never read past the cap
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise ConfigError(f"the file is larger than {_size(max_bytes)}; {limit}", file=path)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", file=path) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        raise ConfigError(f"not valid UTF-8 (byte 0x{data[e.start]:02x} at column "
                          f"{e.start - line_start + 1})", file=path,
                          line=data.count(b"\n", 0, e.start) + 1) from None


# --------------------------------------------------------------------------- YAML → plain + lines

@dataclass
class Document:
    """Plain data and where each part of it was written."""
    data: Any
    value_lines: dict[Path, int] = field(default_factory=dict)
    key_lines: dict[Path, int] = field(default_factory=dict)
    bad: set[Path] = field(default_factory=set)      # values already reported; checkers skip them
    problems: list[Problem] = field(default_factory=list)

    def problem(self, line: int | None, path: Path, message: str) -> None:
        self.bad.add(path)
        self.problems.append(Problem(line, format_path(path) or None, message, len(self.problems)))


class _TooManyAliases(Exception):
    def __init__(self, line: int, path: Path) -> None:
        self.line, self.path = line, path


def _tag(tag: str) -> str:
    # Tags may carry %-escaped arbitrary text: quote and escape like any user string.
    return show(tag.replace("tag:yaml.org,2002:", "!!"))


class _Reader:
    """Turns composed YAML nodes into plain data, recording the line of every key and value."""

    def __init__(self, loader: Any, doc: Document) -> None:
        self.loader = loader
        self.doc = doc
        self._active: set[int] = set()   # nodes being read (an alias of one is recursive)
        self._seen: set[int] = set()     # nodes read once; reading one again is alias expansion
        self.expanded = 0

    def _expand(self, n: int, line: int, path: Path) -> None:
        self.expanded += n
        if self.expanded > MAX_ALIAS_VALUES:
            raise _TooManyAliases(line, path)

    def read(self, node: yaml.Node, path: Path, depth: int = 0) -> Any:
        line = node.start_mark.line + 1
        self.doc.value_lines.setdefault(path, line)
        if id(node) in self._active:  # `&a [*a]`: a recursive alias
            self.doc.problem(line, path, "recursive YAML alias")
            return None
        if id(node) in self._seen:
            self._expand(1, line, path)
        else:
            self._seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if depth >= MAX_DEPTH:
            self.doc.problem(line, path, f"nested deeper than {MAX_DEPTH} levels")
            return None
        self._active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                if node.tag != "tag:yaml.org,2002:seq":
                    self.doc.problem(line, path, f"unsupported YAML tag {_tag(node.tag)}")
                return [self.read(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
            if node.tag != "tag:yaml.org,2002:map":
                self.doc.problem(line, path, f"unsupported YAML tag {_tag(node.tag)}")
            return self._mapping(node, path, depth)
        finally:
            self._active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: Path) -> Any:
        constructor = yaml.SafeLoader.yaml_constructors.get(node.tag)
        if constructor is None or node.tag == _MERGE:
            self.doc.problem(node.start_mark.line + 1, path, f"unsupported YAML tag {_tag(node.tag)}")
            return None
        try:
            return constructor(self.loader, node)
        except (yaml.YAMLError, ValueError) as e:
            self.doc.problem(node.start_mark.line + 1, path, f"bad YAML value: {e}")
            return None

    def _pairs(self, node: yaml.MappingNode, path: Path, depth: int
               ) -> tuple[list[tuple[yaml.Node, yaml.Node]], list[tuple[yaml.Node, yaml.Node]]]:
        """(explicit pairs, merged pairs) of a mapping; merge sources are flattened first, so a
        source that itself merges (`&b {<<: *a, ...}` then `<<: *b`) brings its merged keys too.
        Earlier pairs win: explicit keys, then the sources in the order written."""
        explicit: list[tuple[yaml.Node, yaml.Node]] = []
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:  # not `<<: *defaults`
                explicit.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for src in sources:
                line = src.start_mark.line + 1
                if not isinstance(src, yaml.MappingNode):
                    self.doc.problem(line, path, "`<<` merges only mappings")
                elif id(src) in self._active or depth >= MAX_DEPTH:
                    self.doc.problem(line, path, "recursive YAML merge" if id(src) in self._active
                                     else f"merges nested deeper than {MAX_DEPTH} levels")
                else:
                    self._active.add(id(src))
                    try:
                        own, inherited = self._pairs(src, path, depth + 1)
                    finally:
                        self._active.discard(id(src))
                    self._expand(len(own) + len(inherited), line, path)  # copies, as aliases are
                    merged += own + inherited
        return explicit, merged

    def _mapping(self, node: yaml.MappingNode, path: Path, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        first_line: dict[Any, int] = {}
        explicit, merged = self._pairs(node, path, depth)
        for key_node, value_node in explicit:
            key = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            kline = key_node.start_mark.line + 1
            if not isinstance(key, str):
                hint = (" (YAML reads on/off/yes/no as booleans: quote the key)"
                        if isinstance(key, bool) else "")
                self.doc.problem(kline, path, f"expected a string key, got {show(key)}{hint}")
                continue
            if key in first_line:
                self.doc.problem(kline, path + (key,),
                                 f"duplicate key (first given at line {first_line[key]}); "
                                 "YAML would silently keep only the last one")
                continue
            first_line[key] = kline
            self.doc.key_lines[path + (key,)] = kline
            out[key] = self.read(value_node, path + (key,), depth + 1)
        for key_node, value_node in merged:  # explicit keys win over merged ones
            key = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            if isinstance(key, str) and key not in out:
                self.doc.key_lines[path + (key,)] = key_node.start_mark.line + 1
                out[key] = self.read(value_node, path + (key,), depth + 1)
        return out


def read_yaml(text: str, file: str) -> Document:
    """Compose one YAML document and return it as plain data with lines; raise `ConfigErrors`
    on syntax errors, an empty document, or a document beyond the bounds above."""
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        what = f"{e.problem or e.context} (column {mark.column + 1})" if mark else str(e.problem)
        if e.context and e.problem and e.context_mark:  # where the unclosed thing began
            what += f", {e.context} that starts at line {e.context_mark.line + 1}"
        lines = text.splitlines()
        if line and mark and line <= len(lines) and lines[line - 1][:mark.column + 1].endswith("\t"):
            what += " (YAML indents with spaces, not tabs)"
        raise ConfigErrors(file, [Problem(line, None, f"YAML syntax error: {what}")]) from None
    except yaml.YAMLError as e:  # e.g. a control character in the file
        raise ConfigErrors(file, [Problem(None, None, f"YAML error: {e}")]) from None
    except RecursionError:  # PyYAML's pure-Python composer recurses per nesting level
        raise ConfigErrors(file, [Problem(None, None, f"nested deeper than {MAX_DEPTH} levels")]) from None
    finally:
        loader.dispose()
    if node is None:
        raise ConfigErrors(file, [Problem(None, None, "the file is empty; expected a mapping "
                                                       "such as `version: 1` then `models:`")])
    doc = Document(None)
    try:
        doc.data = _Reader(loader, doc).read(node, ())
    except _TooManyAliases as e:
        raise ConfigErrors(file, [Problem(e.line, format_path(e.path) or None,
                                          f"YAML aliases expand to more than {MAX_ALIAS_VALUES} values "
                                          "(nested aliases, as in a 'billion laughs'); write the "
                                          "repeated part out or alias less")]) from None
    return doc
