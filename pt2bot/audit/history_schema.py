"""The history file's schema: its tables, how a file is created, validated and migrated.

Opening never writes to a file it has not validated (`check_file` before sqlite touches it,
then `setup`: read-only checks, then the schema brought up to date under the write lock), and
a file from a newer pt2bot is refused. Timestamps are stored in one sortable UTC form (`iso`).
"""
from __future__ import annotations

import json
import os
import sqlite3
import zlib
from datetime import datetime, timezone
from typing import Any, Iterator

from pt2bot.errors import UserError
from pt2bot.results import ModelRun, ResultsFile

SCHEMA_VERSION = 2
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 60.0

# Schema 2: each model's graph coverage and first-compile cost (pt2bot/results.py
# GraphCoverage, CompileCost), one column each, for the trends. Schema 1 files get them by
# `migrate`, filled from the results JSON each run stored whole.
MODEL_COLUMNS = (
    ("captured_ops", "INTEGER"), ("unique_graphs", "INTEGER"), ("largest_share", "REAL"),
    ("aten_in_graphs", "INTEGER"), ("aten_outside", "INTEGER"), ("eager_frames", "INTEGER"),
    ("compile_cpu_s", "REAL"), ("compile_fx_nodes", "INTEGER"), ("compile_guards", "INTEGER"),
    ("compile_graphs", "INTEGER"), ("compile_kernels", "INTEGER"),
    ("compile_kernel_bytes", "INTEGER"), ("compile_cache_hits", "INTEGER"),
    ("compile_cache_misses", "INTEGER"), ("compile_cache", "TEXT"),
)


SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    commit_sha TEXT,
    created TEXT NOT NULL,            -- ISO-8601 UTC, sortable
    torch TEXT, device TEXT, device_name TEXT, backend TEXT,
    config_digest TEXT,
    conclusion TEXT,                  -- success | failure | neutral
    clean INTEGER NOT NULL DEFAULT 1, -- 1: no outstanding problem (the issue may close)
    results BLOB NOT NULL,            -- zlib(JSON): the whole results JSON
    findings BLOB NOT NULL            -- zlib(JSON): list of Finding dicts
);
CREATE INDEX IF NOT EXISTS runs_created ON runs (created);
CREATE TABLE IF NOT EXISTS models (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL, status TEXT NOT NULL, reason TEXT,
    graph_count INTEGER, graph_breaks INTEGER, recompiles INTEGER,
    export_ok INTEGER, export_kind TEXT,
    compile_s REAL, peak_mem_mb REAL,
    {model_columns},
    PRIMARY KEY (run, name)
);
CREATE TABLE IF NOT EXISTS breaks (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL, gb TEXT, gb_type TEXT, path TEXT, line INTEGER,
    function TEXT, count INTEGER
);
CREATE INDEX IF NOT EXISTS breaks_run ON breaks (run);
CREATE TABLE IF NOT EXISTS recompiles (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL, shape TEXT NOT NULL, compiled INTEGER, recompiles INTEGER,
    reasons TEXT
);
CREATE INDEX IF NOT EXISTS recompiles_run ON recompiles (run);
CREATE TABLE IF NOT EXISTS latency (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL, shape TEXT NOT NULL, kind TEXT NOT NULL,   -- eager | compiled
    median REAL, iqr REAL, min REAL, samples TEXT
);
CREATE INDEX IF NOT EXISTS latency_model ON latency (model, shape, kind);
CREATE TABLE IF NOT EXISTS findings (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rule TEXT NOT NULL, severity TEXT NOT NULL, count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS findings_run ON findings (run);
""".replace("{model_columns}", ", ".join(f"{n} {k}" for n, k in MODEL_COLUMNS))


def shape_key(shape: dict[str, Any] | None) -> str:
    """A stable text key for a shape case ({"batch": 4, "seq": 8} -> "batch=4,seq=8")."""
    if not shape:
        return "-"
    return ",".join(f"{k}={shape[k]}" for k in sorted(shape))


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def iso(t: datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def normalise_created(s: str) -> str:
    """Store every timestamp in one sortable UTC form, whatever ISO form the runner wrote."""
    try:
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return iso(utcnow())
    return iso(t)


def check_file(path: str) -> None:
    """Refuse anything that is not a whole SQLite database, before sqlite can touch it."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError as e:
        raise UserError(f"history {path}: cannot read: {e.strerror}") from None
    bad = (f"history {path} is not a pt2bot history database ({{why}}); it was left "
           f"untouched — restore it from a backup, or pass a new --history path")
    if size == 0:
        raise UserError(bad.format(why="the file is empty: truncated?"))
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise UserError(bad.format(why="no SQLite header: truncated or not SQLite"))
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The in-header size is only valid when "version-valid-for" equals the change counter.
    if header[24:28] == header[92:96] and pages and size < page_size * pages:
        raise UserError(bad.format(
            why=f"truncated: {size} bytes, the header says {page_size * pages}"))


def setup(db: sqlite3.Connection, path: str) -> None:
    """Validate an opened history read-only, then bring its schema up to date."""
    db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    # Read-only checks first: nothing is written to a file we have not validated.
    row = db.execute("PRAGMA quick_check").fetchone()
    if not row or row[0] != "ok":
        raise sqlite3.DatabaseError(f"quick_check: {row[0] if row else 'no answer'}")
    check_version(db, path)
    db.execute("PRAGMA foreign_keys = ON")
    mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "wal":
        db.execute("PRAGMA journal_mode = WAL")
    db.execute("BEGIN IMMEDIATE")
    try:
        # Re-check under the write lock, then bring the schema up to date (no-op when
        # current: every statement is IF NOT EXISTS / OR IGNORE).
        check_version(db, path)
        migrate(db)
        create_schema(db)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def check_version(db: sqlite3.Connection, path: str) -> None:
    """Refuse a database that is not a pt2bot history, or one from a newer pt2bot."""
    has_meta = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        tables = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
        if tables:
            raise UserError(f"history {path} is an SQLite database but not a pt2bot "
                            f"history (no meta table); it was left untouched")
        return
    row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None:
        return
    try:
        version = int(row[0])
    except ValueError:
        raise UserError(f"history {path}: unreadable schema version {row[0]!r}") from None
    if version > SCHEMA_VERSION:
        raise UserError(f"history {path} was written by a newer pt2bot (schema "
                        f"version {version}, this pt2bot reads up to {SCHEMA_VERSION}); "
                        f"upgrade pt2bot — the file was left untouched")


def model_columns(run: ModelRun) -> dict[str, Any]:
    """The MODEL_COLUMNS of one model's RUN (`pt2bot.results.ModelRun`): None where unmeasured."""
    cov, cost = run.graph_coverage, run.compile_cost
    frames = {(f.function, f.path, f.line) for f in (cov.eager_frames if cov else ())}
    limit = run.recompiles.limit_frames if run.recompiles is not None else None
    frames |= {(f.function, f.path, f.line) for f in limit or ()}
    out: dict[str, Any] = {
        "captured_ops": cov.captured_ops if cov else None,
        "unique_graphs": cov.unique_graphs if cov else None,
        "largest_share": cov.largest_share if cov else None,
        "aten_in_graphs": cov.aten_in_graphs if cov else None,
        "aten_outside": cov.aten_outside if cov else None,
        "eager_frames": len(frames) if cov is not None or limit is not None else None}
    for key in ("cpu_s", "fx_nodes", "guards", "graphs", "kernels", "kernel_bytes",
                "cache_hits", "cache_misses", "cache"):
        out[f"compile_{key}"] = getattr(cost, key) if cost is not None else None
    return out


def _version(db: sqlite3.Connection) -> int | None:
    row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row is not None else None


def migrate(db: sqlite3.Connection) -> None:
    """Bring an older history up to SCHEMA_VERSION, inside the caller's write transaction.

    1 → 2: the models table gains MODEL_COLUMNS, filled for every stored night from the
    results JSON the run stored whole (a night whose runner did not measure them keeps
    NULL). A new, empty file has no tables yet and is created whole instead.
    """
    has_models = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='models'").fetchone()
    version = _version(db) if has_models else None
    if version is None or version >= SCHEMA_VERSION:
        return
    if version < 2:
        have = {r[1] for r in db.execute("PRAGMA table_info(models)")}
        for name, kind in MODEL_COLUMNS:
            if name not in have:
                db.execute(f"ALTER TABLE models ADD COLUMN {name} {kind}")
        _backfill_models(db)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


def _backfill_models(db: sqlite3.Connection) -> None:
    names = [n for n, _ in MODEL_COLUMNS]
    sets = ", ".join(f"{n} = ?" for n in names)
    for run_id, blob in db.execute("SELECT id, results FROM runs").fetchall():
        try:
            results = ResultsFile.from_json(json.loads(zlib.decompress(blob)))
        except (zlib.error, ValueError, TypeError):
            continue          # a night whose JSON does not read keeps NULL: never fail here
        for m in results.models:
            cols = model_columns(m)
            db.execute(f"UPDATE models SET {sets} WHERE run = ? AND name = ?",
                       (*[cols[n] for n in names], run_id, str(m.name)))


def create_schema(db: sqlite3.Connection) -> None:
    for stmt in statements(SCHEMA_SQL):
        db.execute(stmt)
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
               (str(SCHEMA_VERSION),))
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('created', ?)",
               (iso(utcnow()),))


def create_atomically(path: str) -> None:
    """Make a new, complete history file at `path` unless one appears there meanwhile.

    sqlite creates an empty file first and writes the schema later; a concurrent job would
    see that empty file and (rightly) refuse it as truncated. So the database is built
    under a private name and hard-linked into place: the link either creates a whole file
    or fails because another job won the race, and never replaces anything.
    """
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.{os.getpid()}.{id(path):x}.new")
    try:
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            # auto_vacuum must precede the first table; lets `prune` give pages back.
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            db.execute("BEGIN")
            create_schema(db)
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode = WAL")  # persistent: stored in the file header
        finally:
            db.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another job created it first: use theirs
        except OSError:
            # No hard links on this file system: O_EXCL-free fallback, still never replaces.
            if not os.path.exists(path):
                os.replace(tmp, path)
    finally:
        for p in (tmp, tmp + "-wal", tmp + "-shm"):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass


def statements(script: str) -> Iterator[str]:
    for stmt in script.split(";"):
        lines = [ln.split("--", 1)[0] for ln in stmt.splitlines()]
        text = "\n".join(lines).strip()
        if text:
            yield text


def connect(path: str, *, create: bool = True) -> sqlite3.Connection:
    """Open (creating when allowed) and validate the history at `path`; UserError if unusable."""
    if not os.path.exists(path):
        if not create:
            raise UserError(f"history {path} does not exist")
        create_atomically(path)
    check_file(path)
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as e:
        raise UserError(f"history {path}: cannot open: {e}") from None
    try:
        setup(db, path)
    except sqlite3.DatabaseError as e:
        db.close()
        raise UserError(f"history {path} is corrupt ({e}); it was left untouched — "
                        f"restore it from a backup, or pass a new --history path") from None
    except BaseException:
        db.close()
        raise
    return db


__all__ = ["BUSY_TIMEOUT_S", "MODEL_COLUMNS", "SCHEMA_SQL", "SCHEMA_VERSION", "check_file",
           "check_version", "connect", "create_atomically", "create_schema", "iso", "migrate",
           "model_columns", "normalise_created",
           "setup", "shape_key", "utcnow"]
