"""The per-file cache of `pt2bot check`: each file's summary, keyed by its content.

What is cached is what one file yields on its own (pt2bot/static/files.py): its `FileSummary`
(skeleton, the call edges and candidate findings of the functions walked so far, line info) and
the set of functions walked. One record per file, named by the file's repo-relative path; inside,
the SHA-256 digest of the file's bytes must match, else the record is stale. Records live in a
directory named by everything else the summary depends on: pt2bot's version, a digest of the
analysing code itself (an editable install changes code without changing the version), the
Python version (the AST differs) and the enabled rule codes, so other checkouts/versions never
read each other's records.

Records are stored in pack files, not one file per source file: 2,860 small atomic writes cost
~0.8 s on transformers, one 13 MB pack ~0.02 s. A run buffers the records it computed
(`Cache.store`) and writes them as one new pack at its end (`Cache.flush`), so a one-file change
writes one small pack. On first use a run reads every pack of its directory into an index, by
path, the newest pack winning. When its pack would be one more than `MAX_PACKS`, or superseded
records outweigh live ones, the run writes one merged pack instead (the live records
copied as they are, no re-pickling, its own included) and removes the packs it merged; records
of files outside this run are kept.

Safety:
- Packs are written atomically (pt2bot/jsonio.py `atomic_write_bytes`: a temp file in the same
  directory, then `os.replace`) under a name no other run uses: concurrent runs each add a
  complete pack. A compaction removes only the packs it read, so a pack a concurrent run added
  meanwhile stays; a run whose packs vanish under it (another run merged them) gets misses,
  nothing worse.
- A record is never trusted: a header with the file's digest, its path and a checksum of the
  payload, a restricted unpickler that can build only the summary dataclasses (no other global,
  so loading cannot run code), and a shape check; anything wrong is a miss. A pack whose framing
  is broken (truncated, a wrong length) ends there: the records after the break are misses.
- The cache is never inside the tree it checks. The checksum only catches corruption: it is
  unkeyed, so anyone can recompute it, and a pack that came with the tree (committed by a
  branch, shipped in an sdist or a zip, spelled `.PT2BOT-CACHE` on a case-insensitive file
  system) could relabel a clean file's summary with the digest of a bad one and hide that
  file's findings. So the records live in the user's cache directory (`user_cache_dir`), one
  directory per checkout (named by the hash of its real path), and a `PT2BOT_CACHE_DIR` inside
  the checked tree is refused: no question to git, no name to compare, nothing the tree can
  bring. (A secret key for the checksum would do too, but CI runners start without one: the
  key would have to be cached beside the packs, where it protects nothing.)
- A cache directory that cannot be created or written (read-only checkout, full disk) turns the
  cache off for the run; the check itself goes on.

`pt2bot check --no-cache` skips it; `PT2BOT_CACHE_DIR` puts it elsewhere (the action sets it to
the job's temp directory: a persistent runner keeps the user cache directory between jobs,
and a PR's models run as that user). The directory holds a CACHEDIR.TAG
(and a `.gitignore` of `*`, for a `PT2BOT_CACHE_DIR` in some other repository). A checkout's
directory unused for `STALE_DAYS` is removed when another checkout's is created.
"""
from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import sys
import time
from typing import Iterable, Mapping

import pt2bot
from pt2bot.analysis import model as _model
from pt2bot.analysis.model import Candidate, ClassInfo, FileSummary, FunctionInfo
from pt2bot.configfile import find_git_root
from pt2bot.jsonio import atomic_write_bytes
from pt2bot.static.scan import FileScan

ENV_VAR = "PT2BOT_CACHE_DIR"
_MAGIC = b"pt2bot-cache/1"
_GITIGNORE = "# Created by pt2bot automatically.\n*\n"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by pt2bot.\n"
                 "# For information about cache directory tags, see https://bford.info/cachedir/\n")
_PKG = os.path.dirname(os.path.abspath(pt2bot.__file__))
# The code whose change changes a summary: the engine (kinds, walks, the call graph, the
# summary model), the rules, the driver (the scan, the per-file stage, this codec) and the
# tables in data/ that rules read. Old records die with any change to them.
ANALYSIS_CODE = ("analysis", "rules", "static", "data")
# The text scans of a tree's files (pt2bot/static/scan.py), by path, framed as a record: one
# file beside the packs, replaced whole (a warm check scans only the files that changed).
SCANS = "scans"


def content_digest(data: bytes) -> str:
    """The key of a file's bytes (and a record's checksum): SHA-256, cut to 128 bits. Hardware
    SHA here hashes transformers' 50 MiB in 0.046 s, blake2b in 0.078 s: a warm re-check hashes
    every file."""
    return hashlib.sha256(data).hexdigest()[:32]


def analysis_sources() -> list[str]:
    """The files of ANALYSIS_CODE, in a fixed order."""
    out = []
    for name in ANALYSIS_CODE:
        top = os.path.join(_PKG, name)
        out += sorted(os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs
                      if not f.endswith((".pyc", ".pyo")) and "__pycache__" not in d)
    return out


def analysis_key(codes: Iterable[str]) -> str:
    """The name of the key directory: version, analysing code, Python, rule codes."""
    h = hashlib.blake2b(digest_size=10)
    h.update(f"{pt2bot.__version__}\0{sys.version}\0{','.join(sorted(codes))}\0".encode())
    for p in analysis_sources():
        try:
            with open(p, "rb") as fh:
                h.update(os.path.relpath(p, _PKG).encode() + b"\0" + fh.read() + b"\0")
        except OSError:
            h.update(b"?")
    return f"v{pt2bot.__version__}-{h.hexdigest()}"


def user_cache_dir(env: Mapping[str, str] | None = None) -> str | None:
    """pt2bot's directory in the user's cache: `$XDG_CACHE_HOME/pt2bot` where that is set (an
    absolute path), else the platform's place: `~/Library/Caches/pt2bot` on macOS,
    `%LOCALAPPDATA%\\pt2bot\\Cache` on Windows, `~/.cache/pt2bot` elsewhere. None: no home."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "pt2bot")
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA", "")
        return os.path.join(local, "pt2bot", "Cache") if os.path.isabs(local) else None
    home = os.path.expanduser("~")
    if not os.path.isabs(home):
        return None
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "pt2bot")
    return os.path.join(home, ".cache", "pt2bot")


CHECKOUTS = "check"    # under user_cache_dir(): one directory per checkout


def checkout_dir_name(tree: str) -> str:
    """`<name>-<hash>` for the checkout at `tree`: its real path's hash (two checkouts never
    share one, a symlinked path to the same one does), its name for a reader."""
    real = os.path.realpath(tree)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(real))[:40].lstrip(".") or "root"
    return f"{name}-{hashlib.blake2b(real.encode('utf-8', 'surrogateescape'), digest_size=8).hexdigest()}"


def inside(path: str, tree: str) -> bool:
    """Whether `path` (existing or not) is `tree` or under it, once symlinks are resolved.
    Compared case-folded: on a case-insensitive file system `/Repo/x` is under `/repo`."""
    p = os.path.normcase(os.path.realpath(path)).casefold()
    t = os.path.normcase(os.path.realpath(tree)).casefold().rstrip(os.sep)
    return p == t or p.startswith(t + os.sep)


def resolve_cache_dir(root: str, *, enabled: bool = True, env: dict[str, str] | None = None) -> tuple[str | None, str]:
    """(directory or None, why): `PT2BOT_CACHE_DIR`, else the checkout's directory under
    `user_cache_dir()` (the checkout: the git root above `root`, else `root`). None when
    disabled, when there is no user cache directory, or when the directory is inside the
    checkout (a branch could have committed packs there: see the module docstring)."""
    env = os.environ if env is None else env
    if not enabled:
        return None, "disabled (--no-cache)"
    tree = find_git_root(root) or os.path.abspath(root)
    override = env.get(ENV_VAR)
    if override:
        directory, why = os.path.abspath(override), f"${ENV_VAR}"
    else:
        base = user_cache_dir(env)
        if base is None:
            return None, "no user cache directory (no home directory)"
        directory, why = os.path.join(base, CHECKOUTS, checkout_dir_name(tree)), "default"
    if inside(directory, tree):
        return None, (f"{'$' + ENV_VAR if override else 'the cache directory'} {directory} is inside the checked "
                      f"tree {tree}, where files can come with the tree: not used")
    return directory, why


class _SummaryUnpickler(pickle.Unpickler):
    """Builds only the classes of the summary model (pt2bot/analysis/model.py: plain data) and
    sets: no other global is reachable, so no function can be called while loading."""

    _ALLOWED: dict[tuple[str, str], type] = {
        (_model.__name__, name): obj for name, obj in vars(_model).items()
        if isinstance(obj, type) and obj.__module__ == _model.__name__}
    _ALLOWED[("builtins", "set")] = set
    _ALLOWED[("builtins", "frozenset")] = frozenset

    def find_class(self, module: str, name: str):  # noqa: D102 - pickle API
        try:
            return self._ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache record") from None


class _ScanUnpickler(_SummaryUnpickler):
    """The scans record: `FileScan`s and frozensets, nothing else."""

    _ALLOWED = {(FileScan.__module__, "FileScan"): FileScan, ("builtins", "frozenset"): frozenset}


class Cache:
    """The records of one analysis key under a cache directory (see the module docstring)."""

    def __init__(self, directory: str, codes: Iterable[str], *, checkout: bool = False) -> None:
        """`checkout`: `directory` is one checkout's under `user_cache_dir()` (the default): its
        siblings are other checkouts', the stale ones removed when a new one is created."""
        self.root = directory
        self.checkout = checkout
        self.dir = os.path.join(directory, analysis_key(codes))
        self.writable = True
        self.hits = self.misses = self.writes = 0
        self._ready = False
        self._index: dict[str, bytes] | None = None   # rel -> record, from the packs read
        self._packs: list[str] = []                    # the packs read or written: what a merge replaces
        self._pack_bytes = 0                           # the size of every record in them, live or not
        self._pending: dict[str, bytes] = {}           # stored, not yet written
        self._scans: bytes | None = None               # the scans record to write, if changed

    def read(self, rel: str) -> bytes | None:
        """The raw record for `rel`, or None (no record, unreadable cache)."""
        raw = self._records().get(rel)
        if raw is None:
            self.misses += 1
        return raw

    def load(self, rel: str, raw: bytes | None, digest: str) -> tuple[FileSummary, set[str]] | None:
        """The cached (summary, walked functions) for `rel` with content `digest`, or None."""
        got = _decode(rel, raw, digest)
        if got is None:
            self.misses += 1
        else:
            self.hits += 1
        return got

    def store(self, rel: str, digest: str, summary: FileSummary, walked: set[str]) -> None:
        """Buffer the record of `rel`; `flush` writes what was stored as one pack."""
        if not self.writable:
            return
        record = _frame(rel, digest, (summary, walked))
        self._pending[rel] = record
        self._records()[rel] = record     # a later run on this object (the review's head after base) reads it

    def load_scans(self) -> dict[str, tuple[str, FileScan]]:
        """The cached text scans: path -> (digest of the bytes scanned, scan); {} if none or bad."""
        try:
            with open(os.path.join(self.dir, SCANS), "rb") as fh:
                raw = fh.read()
            payload = _unframe(SCANS, raw, SCANS)
            scans = _ScanUnpickler(io.BytesIO(payload)).load() if payload is not None else None
            if isinstance(scans, dict) and all(type(k) is str and _scan_well_formed(v) for k, v in scans.items()):
                return scans
        except Exception:   # a corrupt record is a miss, never an error
            pass
        return {}

    def store_scans(self, scans: dict[str, tuple[str, FileScan]]) -> None:
        """Written by `flush` (a concurrent run's may replace it: the last one wins)."""
        self._scans = _frame(SCANS, SCANS, scans)

    def flush(self) -> None:
        """Write the stored records as one new pack, or everything live as one merged pack when
        the directory holds too many packs or mostly superseded records."""
        pending, self._pending = self._pending, {}
        scans, self._scans = self._scans, None
        if scans is not None and self.writable:
            try:
                self._prepare()
                _write(os.path.join(self.dir, SCANS), scans)
            except OSError:
                self.writable = False
        if not pending or not self.writable:
            return
        try:
            self._prepare()
            index = self._records()
            live = sum(len(r) for r in index.values())
            new = sum(len(r) for r in pending.values())
            merge = len(self._packs) >= MAX_PACKS or (bool(self._packs) and self._pack_bytes + new - live > live)
            path = os.path.join(self.dir, f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}{PACK_SUFFIX}")
            _write(path, pack_bytes((index if merge else pending).items()))
            self.writes += len(pending)
            if merge:
                for old in self._packs:
                    try:
                        os.unlink(old)
                    except OSError:
                        pass      # a concurrent run merged it first
                self._packs, self._pack_bytes = [path], live
                _sweep_temp(self.dir)
            else:
                self._packs.append(path)
                self._pack_bytes += new
        except OSError:
            self.writable = False    # read-only checkout, full disk...: no cache this run

    def _records(self) -> dict[str, bytes]:
        """The index, read from every pack on first use (oldest first: the newest record wins)."""
        if self._index is not None:
            return self._index
        self._index = {}
        try:
            names = sorted(e.name for e in os.scandir(self.dir)
                           if e.name.endswith(PACK_SUFFIX) and e.is_file(follow_symlinks=False))
        except OSError:
            names = []     # no directory yet, or unreadable: all misses
        if names and self.checkout:
            try:
                os.utime(self.root)     # in use: not stale (see `_prune_checkouts`)
            except OSError:
                pass
        for name in names:
            path = os.path.join(self.dir, name)
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue   # merged away by a concurrent run between the listing and the read
            self._packs.append(path)
            for rel, record in pack_records(data):
                self._index[rel] = record
                self._pack_bytes += len(record)
        return self._index

    def _prepare(self) -> None:
        if self._ready:
            return
        fresh = not os.path.isdir(self.dir)
        new_checkout = self.checkout and not os.path.isdir(self.root)
        os.makedirs(self.dir, exist_ok=True)
        if new_checkout:
            _prune_checkouts(os.path.dirname(self.root), keep=self.root)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            p = os.path.join(self.root, name)
            if not os.path.exists(p):
                _write(p, text.encode())
        if fresh:
            _prune(self.root, keep=self.dir)
        self._ready = True


def _decode(rel: str, raw: bytes | None, digest: str) -> tuple[FileSummary, set[str]] | None:
    """A record's (summary, walked functions) if it is whole, for `rel` at `digest`, and only
    summary data; else None."""
    try:
        payload = _unframe(rel, raw, digest)
        if payload is None:
            return None
        summary, walked = _SummaryUnpickler(io.BytesIO(payload)).load()
        if not _well_formed(summary, rel) or not isinstance(walked, set) \
                or not all(type(q) is str for q in walked):
            return None
        return summary, walked
    except Exception:   # a corrupt record of any kind is a miss, never an error
        return None


def _frame(rel: str, digest: str, obj: object) -> bytes:
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    header = b" ".join((_MAGIC, digest.encode(), rel.encode("utf-8", "surrogateescape").hex().encode(),
                        content_digest(payload).encode()))
    return header + b"\n" + payload


def _unframe(rel: str, raw: bytes | None, digest: str) -> bytes | None:
    """A record's payload if its header is whole and names `rel` at `digest`, else None."""
    header, _, payload = raw.partition(b"\n") if raw else (b"", b"", b"")
    parts = header.split(b" ")
    if len(parts) != 4 or parts[0] != _MAGIC or parts[1].decode() != digest:
        return None
    if content_digest(payload) != parts[3].decode() \
            or parts[2].decode() != rel.encode("utf-8", "surrogateescape").hex():
        return None
    return payload


def _scan_well_formed(v: object) -> bool:
    if not (type(v) is tuple and len(v) == 2 and type(v[0]) is str and type(v[1]) is FileScan):
        return False
    sc = v[1]
    return type(sc.classes) is tuple and type(sc.aliases) is tuple and type(sc.compiles) is bool \
        and type(sc.torch_words) is frozenset \
        and all(type(c) is tuple and len(c) == 2 and type(c[0]) is bytes and type(c[1]) is frozenset
                for c in sc.classes) \
        and all(type(a) is tuple and len(a) == 2 and type(a[0]) is frozenset and type(a[1]) is bytes
                for a in sc.aliases)


# A pack: _PACK_MAGIC, then per record its length in decimal, a newline, and the record (its
# header line `_MAGIC digest rel-as-hex checksum`, then the pickled payload).
PACK_SUFFIX = ".pack"
_PACK_MAGIC = b"pt2bot-pack/1\n"
MAX_PACKS = 8      # more: the next run that writes merges them into one


def pack_bytes(records: Iterable[tuple[str, bytes]]) -> bytes:
    parts = [_PACK_MAGIC]
    for _, record in records:
        parts += (str(len(record)).encode(), b"\n", record)
    return b"".join(parts)


def pack_records(data: bytes) -> list[tuple[str, bytes]]:
    """(rel, record) of each framed record of a pack, unchecked (`_decode` checks one when it
    is used). Framing that breaks (a wrong length, a truncated file) ends the pack there; a
    record whose header names no path is skipped."""
    out: list[tuple[str, bytes]] = []
    if not data.startswith(_PACK_MAGIC):
        return out
    pos, end = len(_PACK_MAGIC), len(data)
    while pos < end:
        nl = data.find(b"\n", pos, pos + 12)
        size = data[pos:nl]
        if nl < 0 or not size.isdigit():
            break
        stop = nl + 1 + int(size)
        if stop > end:
            break
        record = data[nl + 1:stop]
        pos = stop
        head = record[:record.find(b"\n")].split(b" ")
        if len(head) == 4 and head[0] == _MAGIC:
            try:
                out.append((bytes.fromhex(head[2].decode()).decode("utf-8", "surrogateescape"), record))
            except ValueError:
                pass
    return out


def _sweep_temp(directory: str) -> None:
    """Temp files of runs killed mid-write (`atomic_write_bytes` names them `*.tmp`; an hour old:
    no live run still writes them)."""
    try:
        old = time.time() - 3600
        for e in os.scandir(directory):
            if e.name.endswith(".tmp") and e.stat(follow_symlinks=False).st_mtime < old:
                os.unlink(e.path)
    except OSError:
        pass


KEEP_KEYS = 4     # key directories kept: other versions/rule sets in use beside this one


def _prune(root: str, keep: str) -> None:
    """Drop the least recently written key directories beyond KEEP_KEYS (each pt2bot upgrade,
    or each edit of its code in a development install, starts a new one). A concurrent run
    whose directory goes away only loses its cache writes."""
    import shutil

    try:
        dirs = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False) and e.name.startswith("v")
                and e.path != keep]
        dirs.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    except OSError:
        return
    for e in dirs[KEEP_KEYS - 1:]:
        shutil.rmtree(e.path, ignore_errors=True)


STALE_DAYS = 30   # a checkout's cache unused this long is removed (the checkout may be long gone)


def _prune_checkouts(parent: str, keep: str) -> None:
    """Drop the checkouts' directories under `parent` not used for STALE_DAYS (a run that
    reads one touches it)."""
    import shutil

    old = time.time() - STALE_DAYS * 86400
    try:
        stale = [e.path for e in os.scandir(parent) if e.is_dir(follow_symlinks=False) and e.path != keep
                 and e.stat(follow_symlinks=False).st_mtime < old]
    except OSError:
        return
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


def _write(path: str, data: bytes) -> None:
    """The atomic write every file of the cache goes through: readable by all (0644 less the
    umask) like the rest of the working tree."""
    atomic_write_bytes(path, data, mode=0o644)


def _well_formed(s: object, rel: str) -> bool:
    """The shape the rest of the check relies on (types of every container and its items)."""
    if type(s) is not FileSummary or s.path != rel or type(s.module) is not str:
        return False
    for q, f in _items(s.functions):
        if type(q) is not str or type(f) is not FunctionInfo or type(f.qualname) is not str \
                or type(f.line) is not int or not isinstance(f.calls, list) or type(f.opaque) is not bool:
            return False
        r = getattr(f, "returns", None)             # read across files: Candidate.ext
        if r is not None and type(r) is not str and \
                (type(r) is not tuple or not all(type(k) is str for k in r)):
            return False
        for call in f.calls:
            if type(call) is not tuple or len(call) != 2 or type(call[0]) is not str or type(call[1]) is not str:
                return False
        pos = getattr(f.calls, "pos", None)         # where each edge's call (its items: `call_pos`)
        if pos is not None and (type(pos) is not list or len(pos) != len(f.calls)):
            return False
        sizes = getattr(f.calls, "sizes", None)     # size arguments: pt2bot/analysis/sizeargs.py
        if sizes is not None and (type(sizes) is not dict or not all(
                type(i) is int and type(v) is tuple and len(v) == 2 and type(v[0]) is int and type(v[1]) is tuple
                and all(type(a) is tuple and len(a) == 3 and type(a[2]) is str for a in v[1])
                for i, v in sizes.items())):
            return False
    for name, c in _items(s.classes):
        if type(c) is not ClassInfo or type(c.bases) is not list or type(c.methods) is not dict \
                or type(c.attrs) is not dict or type(getattr(c, "registered", set())) is not set:
            return False
    for c in s.candidates if type(s.candidates) is list else [None]:
        if type(c) is not Candidate or type(c.line) is not int or type(c.rule) is not str \
                or type(c.function) is not str or type(c.message) is not str:
            return False
        needs = getattr(c, "needs", None)           # a pending candidate: pt2bot/analysis/sizeargs.py
        if needs is not None and (type(needs) is not tuple or len(needs) != 4 or type(needs[1]) is not str):
            return False
        ext = getattr(c, "ext", None)               # facts of other files: Candidate.ext
        if ext is not None and (type(ext) is not tuple or not all(
                type(n) is tuple and len(n) in (3, 5) and all(type(x) is str for x in n[2:4]) for n in ext)):
            return False
    for line, info in _items(s.line_info):
        if type(line) is not int or type(info) is not tuple or len(info) != 2 or type(info[0]) is not str:
            return False
    return all(type(getattr(s, name)) is dict for name in ("module_names", "imports")) \
        and type(s.roots) is list and (s.error is None or type(s.error) is tuple)


def _items(d: object):
    if type(d) is not dict:
        return [(None, None)]
    return d.items()
