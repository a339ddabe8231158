"""The per-file stage of `pt2bot check`: parse, skeleton, walks; in worker processes; cached.

Each file is parsed once, its skeleton built (pt2bot/analysis/walk.py), and the functions that
will most likely be compiled code are walked right away: the `forward` of every class with a
base and what it calls in the same file (`_predict`). Then the AST is dropped. Holding the ASTs
of a whole tree until the call graph is done (the earlier design) cost ~1.5 GB on transformers
and page faults worth ~10 % of the parse. When the cross-file graph (pt2bot/analysis/graph.py)
reaches a function that was not walked (a helper in another package, a base class method),
the file is parsed again and only those functions are walked, with the summary's state carried
over (`FileSet.walk`). Candidates of walked functions that the graph does not reach are dropped
at the emit stage, so a wrong prediction costs time, never a finding.

Not every file is opened: a text scan of each (pt2bot/static/scan.py, cached by content) picks
the files that may define an `nn.Module` or call compile, and only those are opened before the
graph starts; `Later` opens any other file whose module the graph names (a helper, a mixin, a
re-exporting package), keeping its AST for the walks that follow. The rest is never parsed.

What a file yields is pure per file: `FileSummary` plus the set of walked functions. That is
what pt2bot/static/cache.py stores, keyed by the file's bytes; a warm check reads entries and
parses only the files that changed (or whose newly reached functions were never walked).
"""
from __future__ import annotations

import ast
import errno
import gc
import os
import re
import stat
import sys
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

from pt2bot.rules import BY_CODE, Rule
from pt2bot.analysis.infer import Rules
from pt2bot.analysis.model import FileSummary, FunctionInfo, module_name
from pt2bot.analysis.walk import LiveModule, skeleton_module
from pt2bot.static.cache import Cache, content_digest
from pt2bot.static.scan import FileScan, files_to_parse, may_hold, may_name_module, scan_file

SMALL_TREE = 150            # below this many files to parse, one process is faster than a pool
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_SKIP_FILE = re.compile(rb"#\s*pt2bot:\s*skip-file\b")

_RULES_CACHE: dict[tuple[str, ...], tuple[Rules, list[Rule]]] = {}


def build_rules(codes: tuple[str, ...]) -> Rules:
    cached = _RULES_CACHE.get(codes)
    if cached:
        return cached[0]
    instances = [BY_CODE[c]() for c in codes]
    handlers: dict[type, list] = {}
    call_keys: list = []
    for r in instances:
        for t in r.node_types:
            handlers.setdefault(t, []).append(r.check)
            if t is ast.Call:
                call_keys.append(r.call_keys)
    rules = Rules(handlers, [r.finish for r in instances], call_keys)
    _RULES_CACHE[codes] = (rules, instances)
    return rules


def may_compile(data: bytes) -> bool:
    """Whether a file may call torch.compile/export (then its module-level code and the functions
    that mention them are walked at once, pt2bot/analysis/walk.py `skeleton_module`). Only the word
    `compile` can name torch.compile (`compiled`, `recompile`, `compiler` cannot), and not as
    `re.compile`: on transformers 139 files instead of 514, and the scan of module-level code was
    ~7 % of a bare parse. (A regex with look-behinds here cost more than the scan it saved.)"""
    if b"_dynamo" in data or (b"export" in data and (b"export(" in data or b"torch.export" in data)):
        return True
    i = data.find(b"compile")
    while i >= 0:
        after = data[i + 7:i + 8]
        before = data[max(0, i - 6):i]
        if before.endswith(b"aot_") or not (after.isalnum() or after == b"_") \
                and not (before[-1:].isalnum() or before[-1:] == b"_") and not before.endswith((b"re.", b"regex.")):
            return True
        i = data.find(b"compile", i + 7)
    return False


class SourceLines(Sequence[str]):
    """A file's lines, decoded and split on first use: only files with candidates (their source
    lines and `# noqa`) or `__init__` flags read them, and on transformers half of the bytes
    are in files that never do (decoding and splitting all of them: ~2 % of a cold check)."""

    __slots__ = ("_data", "_lines")

    def __init__(self, data: bytes) -> None:
        self._data: bytes = data
        self._lines: list[str] | None = None

    def _get(self) -> list[str]:
        if self._lines is None:
            self._lines = self._data.decode("utf-8", "replace").splitlines()
            self._data = b""
        return self._lines

    def __getitem__(self, i):  # noqa: D105 - the Sequence protocol
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self):
        return iter(self._get())


_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_source(root: str, rel: str) -> bytes | OSError:
    """A file's bytes, or why not. Discovery (pt2bot/static/discover.py) passes only regular
    files; the open descriptor is checked again (a file swapped for a FIFO or a device in
    between must not block the open or never end the read: non-blocking, then fstat)."""
    try:
        fd = os.open(os.path.join(root, rel), _READ)
    except OSError as e:
        return e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return OSError(errno.EINVAL, "not a regular file")
        parts, want = [], st.st_size + 1
        while chunk := os.read(fd, want):
            parts.append(chunk)
            want = 1 << 20
        return parts[0] if len(parts) == 1 else b"".join(parts)
    except OSError as e:
        return e
    finally:
        os.close(fd)


def open_file(root: str, rel: str, codes: tuple[str, ...], *, lazy: bool = True,
              data: bytes | OSError | None = None,
              compiles: bool | None = None) -> tuple[FileSummary, LiveModule | None, list[str]]:
    """Parse one file and build its skeleton; problems become a located `error`, never an exception.
    `compiles`: `may_compile(data)` if the caller has it already (the text scan did it)."""
    summary = FileSummary(path=rel, module="")
    if data is None:
        data = read_source(root, rel)
    if not isinstance(data, OSError) and _SKIP_FILE.search(data):
        summary.skip_file = True
        return summary, None, []
    tree = parse_source(data, rel)
    lines = SourceLines(data) if isinstance(data, bytes) else []
    if isinstance(tree, tuple):
        summary.error = tree
        return summary, None, lines
    try:
        summary, live = skeleton_module(rel, tree, lines, build_rules(codes),
                                        scan_module_code=may_compile(data) if compiles is None else compiles)
        if not lazy:
            live.walk(list(live.nodes))
    except RecursionError:
        return FileSummary(path=rel, module="", error=TOO_DEEP), None, lines
    return summary, live, lines


# Where and why a parsed file cannot be analysed: a walk of its AST (recursive, as every walk
# of an AST here is) went deeper than Python's recursion limit. The parser accepts nesting
# about three times deeper than a walk can follow (2,900 terms of `1+1+...` parse).
TOO_DEEP = (1, 0, "cannot analyse: code too deeply nested")


def parse_source(data: bytes | OSError, rel: str) -> ast.Module | tuple[int, int, str]:
    """The AST of a file's bytes, or where and why there is none: (line, col, message). The one
    guard between the user's source and the analysis, for `pt2bot check` (a PTC000 finding)
    and `pt2bot init` (a note, and the file is skipped): an unreadable file, a syntax error,
    null or undecodable bytes, and nesting deeper than the parser goes (`x = 1+1+...` with
    200,000 terms is a RecursionError, `x = ----...1` a MemoryError) end here as a located
    message, never an exception. A walk of the tree may still go too deep: `TOO_DEEP`."""
    if isinstance(data, OSError):
        return (1, 0, f"cannot read file: {data.strerror}")
    try:
        return ast.parse(data, filename=rel)
    except SyntaxError as e:
        msg = (e.msg or "invalid syntax").splitlines()[0]
        return (e.lineno or 1, max((e.offset or 1) - 1, 0), f"cannot parse: {msg}")
    except (ValueError, UnicodeDecodeError) as e:   # null bytes, undecodable bytes
        return (1, 0, f"cannot parse: {str(e).splitlines()[0]}")
    except (RecursionError, MemoryError):
        return (1, 0, "cannot parse: expression too deeply nested")


def analyse_file(root: str, rel: str, codes: tuple[str, ...]) -> FileSummary:
    """One file on its own, every function walked (no call graph needed to see all candidates)."""
    summary, _, lines = open_file(root, rel, codes, lazy=False)
    add_line_info(summary, lines, summary.candidates)
    summary.lines = []
    return summary


def add_line_info(summary: FileSummary, lines: list[str], candidates: Iterable) -> None:
    info = summary.line_info
    wanted = [c.line for c in candidates]
    if summary.error:
        wanted.append(summary.error[0])
    for line in wanted:
        if line not in info:
            info[line] = _line_info(lines, line)


def _line_info(lines: list[str], line: int) -> tuple[str, tuple[str, ...] | None]:
    """(stripped source, noqa codes) for a line; codes () means a bare `# noqa`."""
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    m = _NOQA.search(src) if "noqa" in src.lower() else None
    codes: tuple[str, ...] | None = None
    if m:
        codes = tuple(c.upper() for c in re.split(r"[\s,]+", m.group("codes") or "") if c)
    return src.strip(), codes


def _predict(summary: FileSummary, live: LiveModule) -> None:
    """Walk now what the graph will most likely reach, judged from this file alone: the `forward`
    of each class that has a base, functions compiled here, and their callees in this file."""
    mod = summary.module
    local = {f"{mod}.{q}": q for q in summary.functions}
    todo = [c.methods["forward"] for c in summary.classes.values() if c.bases and "forward" in c.methods]
    todo += [q for q, f in summary.functions.items() if f.compiled_root]
    todo += [q for r in summary.roots if (q := local.get(r) or _forward_of(summary, r))]
    todo += list(live.walked)       # skeleton-time walks: follow their calls too

    seen: set[str] = set()
    while todo:
        q = todo.pop()
        if q in seen or q not in live.nodes:
            continue
        seen.add(q)
        live.walk([q])
        info = summary.functions[q]
        for kind, target in info.calls:
            if kind == "name":
                callee = local.get(target)
            elif info.cls is None:
                continue
            elif kind == "self":
                callee = _method(summary, info.cls, target) or _forward_of(summary, _attr(summary, info.cls, target))
            else:
                callee = _forward_of(summary, _attr(summary, info.cls, target))
            if callee and callee not in seen:
                todo.append(callee)


def _method(summary: FileSummary, cls: str, name: str, depth: int = 0) -> str | None:
    """The qualname of method `name` of class `cls` of this file, or of a base class here."""
    c = summary.classes.get(cls)
    if c is None or depth > 10:
        return None
    if name in c.methods:
        return c.methods[name]
    mod = summary.module
    for b in c.bases:
        if b.startswith(mod + ".") and (m := _method(summary, b[len(mod) + 1:], name, depth + 1)):
            return m
    return None


def _attr(summary: FileSummary, cls: str, attr: str) -> str | None:
    c = summary.classes.get(cls)
    return c.attrs.get(attr) if c else None


def _forward_of(summary: FileSummary, dotted_name: str | None) -> str | None:
    if not dotted_name or not dotted_name.startswith(summary.module + "."):
        return None
    c = summary.classes.get(dotted_name[len(summary.module) + 1:])
    return c.methods.get("forward") if c else None


@dataclass
class FileState:
    """One file of the check as the process that analyses it holds it."""
    summary: FileSummary
    walked: set[str]               # functions whose walk is in `summary`
    digest: str | None             # of the bytes analysed; None: not cacheable
    roots: int = 0                 # len(summary.roots) after the first analysis (see `cache_view`)
    dirty: bool = True             # changed since read from the cache: write it back

    def cache_view(self) -> FileSummary:
        # Roots found by later walks are not stored: they were not known when the graph started
        # in this run, so a run from the cache must not start from them either (same findings).
        s = self.summary
        return s if len(s.roots) == self.roots else replace(s, roots=s.roots[:self.roots])


# (calls per walked function, new candidates, their line info, class attrs, walked functions,
# the file's error if the walk found it too deeply nested, what each walked function returns)
Delta = tuple[dict[str, list], list, dict, dict[str, dict[str, str]], set[str], tuple | None, dict[str, object]]


class FileSet:
    """The files one process analyses. Walking a function of a file whose AST was dropped parses
    it again (the ASTs of those files are then kept: the graph often reaches them again)."""

    def __init__(self, root: str, codes: tuple[str, ...]) -> None:
        self.root, self.codes = root, codes
        self.files: dict[str, FileState] = {}
        self.live: dict[str, tuple[LiveModule, list[str]]] = {}
        self.reopened = 0

    def open(self, rel: str, data: bytes | OSError | None = None, compiles: bool | None = None,
             keep: bool = False, digest: str | None = None) -> FileState:
        """`keep`: hold on to the AST (the graph asked for this file: it will walk some of it).
        `compiles`, `digest`: what the text scan found of these bytes, if it read them."""
        if data is None:
            data, digest = read_source(self.root, rel), None      # (bytes the scan did not see)
        if digest is None and isinstance(data, bytes):
            digest = content_digest(data)
        summary, live, lines = open_file(self.root, rel, self.codes, data=data, compiles=compiles)
        walked: set[str] = set()
        if live is not None:
            try:
                _predict(summary, live)
            except RecursionError:      # as open_file's guard: the file is a located PTC000
                summary, live = FileSummary(path=rel, module="", error=TOO_DEEP), None
        if live is not None:
            walked = set(live.walked)
            if keep:
                self.live[rel] = (live, lines)
        add_line_info(summary, lines, summary.candidates)
        summary.lines = []
        state = self.files[rel] = FileState(summary, walked, digest, len(summary.roots))
        return state

    def adopt(self, rel: str, state: FileState) -> None:
        """A file analysed elsewhere (the cache, the parent process): walk it here when asked."""
        self.files[rel] = state

    def walk(self, requests: dict[str, list[str]]) -> dict[str, Delta]:
        out: dict[str, Delta] = {}
        for rel, quals in requests.items():
            st = self.files.get(rel)
            if st is None:
                continue
            todo = [q for q in quals if q not in st.walked and q in st.summary.functions]
            if not todo:
                continue
            got = self._live(rel, st)
            if got is None:
                st.walked.update(todo)        # nothing to walk (file gone or unparsable now)
                continue
            live, lines = got
            s = st.summary
            before = len(s.candidates)
            s.lines = lines
            error = None
            try:
                live.walk(todo)
            except RecursionError:
                # The graph reached a function nested deeper than the walk can go: the file is a
                # located PTC000 (its candidates are not emitted), as when the first walks hit it.
                # It took part in this run's graph, so it is not cached: a warm run gives the same.
                error = s.error = TOO_DEEP
                del s.candidates[before:]
                st.digest = None
            finally:
                s.lines = []
            st.walked.update(todo)
            st.dirty = True
            new = s.candidates[before:]
            add_line_info(s, lines, new)
            info = {line: s.line_info[line] for line in [c.line for c in new] + ([error[0]] if error else [])}
            out[rel] = ({q: s.functions[q].calls for q in todo}, new, info,
                        {name: c.attrs for name, c in s.classes.items()}, set(todo), error,
                        {q: s.functions[q].returns for q in todo if s.functions[q].returns is not None})
        return out

    def _live(self, rel: str, st: FileState) -> tuple[LiveModule, list[str]] | None:
        hit = self.live.get(rel)
        if hit is not None:
            return hit
        data = read_source(self.root, rel)
        if not isinstance(data, bytes):
            return None
        if content_digest(data) != st.digest:
            st.digest = None                  # changed during the check: do not cache this state
        _, live, lines = open_file(self.root, rel, self.codes, data=data)
        if live is None:
            return None
        self.reopened += 1
        # Carry the state over: the new skeleton's walks land in the summary we already have,
        # with the class attributes earlier walks found (the walk reads them), and nothing that
        # is already walked is walked again (the skeleton's own candidates are discarded).
        s = st.summary
        live.mod.summary = s
        live.mod.imports = s.imports
        live.nodes = {q: (node, s.classes.get(cls.name, cls) if cls is not None else None)
                      for q, (node, cls) in live.nodes.items()}
        live.walked = set(st.walked)
        self.live[rel] = (live, lines)
        return live, lines


def _serve(conn, root: str, codes: tuple[str, ...]) -> None:
    """A worker process: analyses its share of the files and walks them when asked."""
    gc.disable()
    files = FileSet(root, codes)
    while True:
        msg = conn.recv()
        if msg[0] == "open":
            out = []
            for rel in msg[1]:
                st = files.open(rel)
                out.append((st.summary, st.walked, st.digest, st.roots))
            conn.send(out)
        elif msg[0] == "walk":
            conn.send(files.walk(msg[1]))
        elif msg[0] == "reopened":
            conn.send(files.reopened)
        else:
            conn.close()
            return


class _Processes:
    """Worker processes, each owning a fixed share of the files for the whole check."""

    def __init__(self, root: str, codes: tuple[str, ...], n: int) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        self.conns, self.procs = [], []
        self.owner: dict[str, int] = {}
        for _ in range(n):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(child, root, codes), daemon=True)
            p.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(p)

    def open(self, rels: Sequence[str], root: str) -> dict[str, FileState]:
        # biggest files first, dealt round-robin: shares of similar total size
        sized = sorted(rels, key=lambda r: -_size(root, r))
        shares: list[list[str]] = [[] for _ in self.conns]
        for i, rel in enumerate(sized):
            shares[i % len(shares)].append(rel)
            self.owner[rel] = i % len(shares)
        for conn, share in zip(self.conns, shares):
            conn.send(("open", share))
        out = {}
        for conn in self.conns:
            for summary, walked, digest, roots in conn.recv():
                out[summary.path] = FileState(summary, walked, digest, roots)
        return out

    def walk(self, requests: dict[str, list[str]]) -> list[dict[str, Delta]]:
        per: list[dict[str, list[str]]] = [{} for _ in self.conns]
        for rel, quals in requests.items():
            per[self.owner[rel]][rel] = quals
        busy = [i for i, r in enumerate(per) if r]
        for i in busy:
            self.conns[i].send(("walk", per[i]))
        return [self.conns[i].recv() for i in busy]

    def reopened(self) -> int:
        n = 0
        for conn in self.conns:
            conn.send(("reopened",))
            n += conn.recv()
        return n

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("exit",))
                conn.close()
            except OSError:
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def _size(root: str, rel: str) -> int:
    try:
        return os.path.getsize(os.path.join(root, rel))
    except OSError:
        return 0


def _merge(st: FileState, delta: Delta) -> None:
    calls, new, info, attrs, walked, error, returns = delta
    s = st.summary
    if error is not None:
        s.error, st.digest = error, None
    for q, c in calls.items():
        s.functions[q].calls = c
    for q, r in returns.items():
        s.functions[q].returns = r
    s.candidates.extend(new)
    s.line_info.update(info)
    for name, a in attrs.items():
        if name in s.classes:
            s.classes[name].attrs = a
    st.walked |= walked
    st.dirty = True


@dataclass
class Stats:
    files: int = 0
    checked: int = 0               # files whose findings are reported (the others: context)
    cached: int = 0                # summaries read from the cache
    parsed: int = 0                # files analysed from source
    reopened: int = 0              # files parsed again to walk functions the graph reached later
    written: int = 0               # cache entries written
    unread: int = 0                # files neither parsed nor read from the cache: nothing needed them


class Analysis:
    """The files of one check: read from the cache or analysed (here or in worker processes),
    walked further on the graph's request, written back to the cache at the end."""

    def __init__(self, root: str, codes: tuple[str, ...], *, jobs: int = 0, cache: Cache | None = None) -> None:
        self.root, self.codes, self.jobs, self.cache = root, codes, jobs, cache
        self.local = FileSet(root, codes)
        self.procs: _Processes | None = None
        self.states: dict[str, FileState] = {}
        self.stats = Stats()
        self.compiles: dict[str, bool] = {}      # may_compile of the files the text scan read
        self.digests: dict[str, str] = {}        # content_digest of them, where a cache needs it

    def scan(self, data: dict[str, bytes | OSError]) -> dict[str, FileScan]:
        """The text scan of each readable file (pt2bot/static/scan.py), the cache's where the
        file's bytes are the ones it scanned (a warm check scans only what changed)."""
        cached = self.cache.load_scans() if self.cache is not None else {}
        out: dict[str, FileScan] = {}
        fresh = False
        for rel, d in data.items():
            if not isinstance(d, bytes):
                continue
            digest = None
            if self.cache is not None:
                digest = self.digests[rel] = content_digest(d)
                hit = cached.get(rel)
                if hit is not None and hit[0] == digest:
                    out[rel] = sc = hit[1]
                    self.compiles[rel] = sc.compiles
                    continue
            out[rel] = sc = scan_file(d, may_compile(d))
            self.compiles[rel] = sc.compiles
            if digest is not None:
                cached[rel], fresh = (digest, sc), True
        if fresh and self.cache is not None:
            self.cache.store_scans(cached)
        return out

    def open(self, files: Sequence[str], data: dict[str, bytes | OSError] | None = None) -> list[FileSummary]:
        """Summaries of `files` (the cache's, else analysed: in worker processes for many)."""
        data = data or {}
        todo: list[tuple[str, bytes | OSError | None]] = []
        for rel in files:
            got = data.get(rel)
            if not self._from_cache(rel, got):
                todo.append((rel, got))
        self.stats.parsed += len(todo)
        n = self.jobs if self.jobs > 0 else (os.cpu_count() or 1)
        if n > 1 and len(todo) >= 2 and (self.jobs > 0 or len(todo) >= SMALL_TREE):
            self.procs = _Processes(self.root, self.codes, min(n, len(todo)))
            self.states.update(self.procs.open([rel for rel, _ in todo], self.root))
        else:
            for rel, got in todo:
                self.states[rel] = self.local.open(rel, got, self.compiles.get(rel), digest=self.digests.get(rel))
        return [self.states[rel].summary for rel in files]

    def open_one(self, rel: str, data: bytes | OSError | None = None) -> FileSummary:
        """One more file, in this process (the call graph asked for it: `Later`)."""
        if not self._from_cache(rel, data):
            self.stats.parsed += 1
            self.states[rel] = self.local.open(rel, data, self.compiles.get(rel), keep=True,
                                               digest=self.digests.get(rel))
        return self.states[rel].summary

    def _from_cache(self, rel: str, data: bytes | OSError | None) -> bool:
        raw = self.cache.read(rel) if self.cache is not None else None
        if raw is None:
            return False
        if data is None:
            data = read_source(self.root, rel)
        if not isinstance(data, bytes):
            return False
        digest = self.digests.get(rel) or content_digest(data)
        hit = self.cache.load(rel, raw, digest)
        if hit is None:
            return False
        summary, walked = hit
        st = self.states[rel] = FileState(summary, walked, digest, len(summary.roots), dirty=False)
        self.local.adopt(rel, st)
        self.stats.cached += 1
        return True

    def walk(self, level: Iterable[tuple[FileSummary, FunctionInfo]]) -> None:
        """Walk the functions of one level of the graph (pt2bot/analysis/graph.py `find_compiled`)."""
        local: dict[str, list[str]] = {}
        remote: dict[str, list[str]] = {}
        for s, info in level:
            st = self.states.get(s.path)
            if st is None or info.qualname in st.walked:
                continue
            (remote if self.procs is not None and s.path in self.procs.owner else local) \
                .setdefault(s.path, []).append(info.qualname)
        if local:
            self.local.walk(local)
        if remote:
            for deltas in self.procs.walk(remote):
                for rel, delta in deltas.items():
                    _merge(self.states[rel], delta)

    def close(self) -> None:
        """Stop the workers and write back what changed."""
        self.stats.reopened = self.local.reopened
        if self.procs is not None:
            self.stats.reopened += self.procs.reopened()
            self.procs.close()
            self.procs = None
        if self.cache is None:
            return
        for rel, st in self.states.items():
            if st.dirty and st.digest is not None and self.cache.writable:
                self.cache.store(rel, st.digest, st.cache_view(), st.walked)
        self.cache.flush()         # one pack for the whole run (pt2bot/static/cache.py)
        self.stats.written = self.cache.writes


class Later:
    """The files of the check not analysed up front, read when the call graph names one of
    their modules (pt2bot/analysis/graph.py `Loader`); `loaded` keeps them for the emit stage."""

    def __init__(self, analysis: Analysis, files: Iterable[str], data: dict[str, bytes | OSError],
                 names: frozenset[str]) -> None:
        self.analysis, self.data, self.names = analysis, data, names
        self.pending: dict[str, str] = {}
        for rel in files:
            self.pending.setdefault(module_name(rel), rel)
        self.loaded: list[FileSummary] = []
        self._lines: dict[str, list[str]] = {}

    def may_hold(self, module: str, name: str) -> bool:
        """False if pending `module` cannot define, import or star-import `name` (its text)."""
        d = self.data.get(self.pending.get(module, ""))
        return not isinstance(d, bytes) or may_hold(d, name)

    def may_name_module(self, dotted: str) -> bool:
        return may_name_module(dotted, self.names)

    def load(self, module: str) -> FileSummary | None:
        rel = self.pending.pop(module, None)
        if rel is None:
            return None
        s = self.analysis.open_one(rel, self.data.pop(rel, None))
        self.loaded.append(s)
        return s

    def line_info(self, rel: str, line: int) -> tuple[str, tuple[str, ...] | None]:
        """(stripped source, noqa codes) of a line the graph stage reports at that no candidate
        of the file's walk holds (PTC403 at a call of a disabled function): read again, rarely."""
        lines = self._lines.get(rel)
        if lines is None:
            data = read_source(self.analysis.root, rel)
            lines = self._lines[rel] = data.decode("utf-8", "replace").splitlines() \
                if isinstance(data, bytes) else []
        return _line_info(lines, line)


def run_analysis(root: str, files: Sequence[str], codes: tuple[str, ...], *, jobs: int, cache: Cache | None,
                 then: Callable[[list[FileSummary], Callable, Later], list],
                 always: Iterable[str] = ()) -> tuple[list, Stats]:
    """Open what `files` must have analysed up front (pt2bot/static/scan.py, plus `always`),
    call `then(summaries, walk, later)` (the graph and the findings), write the cache."""
    analysis = Analysis(root, codes, jobs=jobs, cache=cache)
    analysis.stats.files = len(files)
    data = {rel: read_source(root, rel) for rel in files}
    first, names = files_to_parse(analysis.scan(data))
    first.update(always)
    if "__init__.py" in data:
        # the tree is the inside of a package: its `__init__` casts a vote for the package's
        # name (pt2bot/analysis/graph.py `_root_alias`), and holds what the package re-exports
        first.add("__init__.py")
    first.update(rel for rel, d in data.items() if not isinstance(d, bytes))   # PTC000: cannot read
    now = [rel for rel in files if rel in first]
    later = Later(analysis, (rel for rel in files if rel not in first), data, names)
    try:
        summaries = analysis.open(now, data)
        for rel in now:
            data.pop(rel, None)
        result = then(summaries, analysis.walk, later)
    except BaseException:
        if analysis.procs is not None:
            analysis.procs.close()
        raise
    analysis.close()
    st = analysis.stats
    st.unread = st.files - st.cached - st.parsed
    return result, st
