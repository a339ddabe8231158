"""The nightly audit's history: one SQLite file, appended to by each `pt2bot audit`.

Why SQLite: one file that `actions/cache` or a data branch can carry between nights, safe
to append from concurrent jobs (WAL journal + busy timeout + `BEGIN IMMEDIATE`), and
queryable for trends without loading every night into memory.

The file is never overwritten or "repaired": a truncated or corrupt file, or one written by
a newer pt2bot, raises `UserError` naming the file, so a bad cache restore cannot silently
wipe months of history. History is bounded by `prune` (keep the last N runs and/or D days).

Each run stores the full results JSON and the static findings (zlib-compressed) so that the
next audit can compare with it exactly (`compare.build_report` needs whole runs), plus
normalised rows (models, breaks, recompiles, latency, findings counts) for trends.
"""
from __future__ import annotations

import json
import os
import sqlite3
import statistics
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Iterator, Sequence

from pt2bot.errors import UserError

SCHEMA_VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 60.0
# Default retention: about a year of nightly runs. Override with `keep_runs` / `keep_days`
# or PT2BOT_HISTORY_KEEP ("400" runs, "90d" days, "400,90d" both).
DEFAULT_KEEP_RUNS = 400
KEEP_ENV = "PT2BOT_HISTORY_KEEP"

_SCHEMA = """
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
"""


@dataclass(frozen=True)
class StoredRun:
    """One audited night, as read back from the history."""

    id: int
    commit: str | None
    created: str
    torch: str | None
    device: str | None
    device_name: str | None
    backend: str | None
    config_digest: str | None
    conclusion: str | None
    clean: bool
    _results: bytes = field(repr=False, compare=False, default=b"")
    _findings: bytes = field(repr=False, compare=False, default=b"")

    @property
    def results(self) -> dict[str, Any]:
        return json.loads(zlib.decompress(self._results))

    @property
    def findings(self) -> list[dict[str, Any]]:
        return json.loads(zlib.decompress(self._findings))


@dataclass(frozen=True)
class ModelPoint:
    """One model on one night: a point of a trend series."""

    run: int
    commit: str | None
    created: str
    status: str
    graph_breaks: int | None
    recompiles: int | None
    export_ok: bool | None
    compiled_ms: dict[str, float]      # shape key -> compiled median (ms)

    @property
    def compiled_geomean_ms(self) -> float | None:
        """One latency number per night: the geometric mean over the shape cases."""
        vals = [v for v in self.compiled_ms.values() if v and v > 0]
        return statistics.geometric_mean(vals) if vals else None


def shape_key(shape: dict[str, Any] | None) -> str:
    """A stable text key for a shape case ({"batch": 4, "seq": 8} -> "batch=4,seq=8")."""
    if not shape:
        return "-"
    return ",".join(f"{k}={shape[k]}" for k in sorted(shape))


def parse_keep(text: str | None) -> tuple[int | None, int | None]:
    """Parse a retention spec: "400" (runs), "90d" (days), "400,90d" (both)."""
    runs: int | None = None
    days: int | None = None
    if not text:
        return runs, days
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if part.endswith("d"):
                days = int(part[:-1])
            else:
                runs = int(part)
        except ValueError:
            raise UserError(f"bad history retention {text!r}: expected N (runs), Nd (days) "
                            f"or both, e.g. '400,90d'") from None
        if (days is not None and days < 1) or (runs is not None and runs < 1):
            raise UserError(f"bad history retention {text!r}: must keep at least 1")
    return runs, days


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def _iso(t: datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _pack(obj: Any) -> bytes:
    return zlib.compress(json.dumps(obj, sort_keys=True, default=str).encode("utf-8"), 6)


def _check_file(path: str) -> None:
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


class History:
    """An open history file. Use as a context manager, or call `close()`."""

    def __init__(self, path: str, *, create: bool = True) -> None:
        self.path = path
        if not os.path.exists(path):
            if not create:
                raise UserError(f"history {path} does not exist")
            _create_atomically(path)
        _check_file(path)
        try:
            self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as e:
            raise UserError(f"history {path}: cannot open: {e}") from None
        try:
            self._setup()
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise UserError(f"history {path} is corrupt ({e}); it was left untouched — "
                            f"restore it from a backup, or pass a new --history path") from None
        except BaseException:
            self.db.close()
            raise

    # -- opening -----------------------------------------------------------------------
    def _setup(self) -> None:
        db = self.db
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        # Read-only checks first: nothing is written to a file we have not validated.
        row = db.execute("PRAGMA quick_check").fetchone()
        if not row or row[0] != "ok":
            raise sqlite3.DatabaseError(f"quick_check: {row[0] if row else 'no answer'}")
        self._check_version()
        db.execute("PRAGMA foreign_keys = ON")
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("BEGIN IMMEDIATE")
        try:
            # Re-check under the write lock, then bring the schema up to date (no-op when
            # current: every statement is IF NOT EXISTS / OR IGNORE).
            self._check_version()
            _create_schema(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _check_version(self) -> None:
        has_meta = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if not has_meta:
            tables = self.db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
            if tables:
                raise UserError(f"history {self.path} is an SQLite database but not a pt2bot "
                                f"history (no meta table); it was left untouched")
            return
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            return
        try:
            version = int(row[0])
        except ValueError:
            raise UserError(f"history {self.path}: unreadable schema version {row[0]!r}") from None
        if version > SCHEMA_VERSION:
            raise UserError(f"history {self.path} was written by a newer pt2bot (schema "
                            f"version {version}, this pt2bot reads up to {SCHEMA_VERSION}); "
                            f"upgrade pt2bot — the file was left untouched")

    def close(self) -> None:
        try:
            # Fold the WAL back into the main file so a cache/branch upload of the single
            # file is complete.
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass
        self.db.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self.db.execute(
            "SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])

    # -- writing -----------------------------------------------------------------------
    def append(self, results: dict[str, Any], findings: Sequence[dict[str, Any]] = (), *,
               conclusion: str | None = None, clean: bool = True,
               created: datetime | None = None) -> int:
        """Store one audited night; returns the run id. One transaction: all or nothing."""
        created_s = _iso(created) if created else (results.get("created") or _iso(_utcnow()))
        if created and not isinstance(created, datetime):
            raise TypeError("created must be a datetime")
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            cur = db.execute(
                "INSERT INTO runs (commit_sha, created, torch, device, device_name, backend,"
                " config_digest, conclusion, clean, results, findings)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (results.get("commit"), _normalise_created(created_s), results.get("torch"),
                 results.get("device"), results.get("device_name"), results.get("backend"),
                 results.get("config_digest"), conclusion, int(bool(clean)),
                 _pack(results), _pack(list(findings))))
            run_id = int(cur.lastrowid)
            for m in results.get("models") or []:
                self._insert_model(run_id, m)
            counts: dict[tuple[str, str], int] = {}
            for f in findings:
                k = (str(f.get("rule")), str(f.get("severity")))
                counts[k] = counts.get(k, 0) + 1
            db.executemany("INSERT INTO findings (run, rule, severity, count) VALUES (?,?,?,?)",
                           [(run_id, r, s, n) for (r, s), n in sorted(counts.items())])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return run_id

    def _insert_model(self, run_id: int, m: dict[str, Any]) -> None:
        name = str(m.get("name"))
        breaks = m.get("graph_breaks") or []
        rec = m.get("recompiles") or {}
        export = m.get("export") or {}
        compile_s = m.get("compile_s")
        if isinstance(compile_s, dict):  # {"cold": .., "warm": ..}: the cold compile is the cost
            compile_s = compile_s.get("cold")
        status = m.get("status") or "error"
        reason = m.get("reason") or ((m.get("error") or {}).get("message"))
        self.db.execute(
            "INSERT OR REPLACE INTO models (run, name, status, reason, graph_count, graph_breaks,"
            " recompiles, export_ok, export_kind, compile_s, peak_mem_mb)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, name, status, _text(reason), m.get("graph_count"),
             # break *sites* (not hits): deterministic, and what the report's delta counts
             len(breaks) if status == "ok" or breaks else None,
             rec.get("count") if isinstance(rec, dict) else None,
             None if export.get("ok") is None else int(bool(export.get("ok"))),
             export.get("kind"), compile_s, m.get("peak_mem_mb")))
        self.db.executemany(
            "INSERT INTO breaks (run, model, gb, gb_type, path, line, function, count)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [(run_id, name, b.get("gb"), b.get("gb_type"), b.get("path"), b.get("line"),
              b.get("function"), b.get("count")) for b in breaks])
        if isinstance(rec, dict):
            self.db.executemany(
                "INSERT INTO recompiles (run, model, shape, compiled, recompiles, reasons)"
                " VALUES (?,?,?,?,?,?)",
                [(run_id, name, shape_key(c.get("shape")),
                  None if c.get("compiled") is None else int(bool(c.get("compiled"))),
                  c.get("recompiles"), json.dumps(c.get("reasons") or []))
                 for c in rec.get("cases") or []])
        rows = []
        for case in m.get("latency") or []:
            for kind in ("eager", "compiled"):
                t = case.get(f"{kind}_ms")
                if isinstance(t, dict):
                    rows.append((run_id, name, shape_key(case.get("shape")), kind,
                                 t.get("median"), t.get("iqr"), t.get("min"),
                                 json.dumps(t.get("samples") or [])))
        self.db.executemany(
            "INSERT INTO latency (run, model, shape, kind, median, iqr, min, samples)"
            " VALUES (?,?,?,?,?,?,?,?)", rows)

    def prune(self, *, keep_runs: int | None = DEFAULT_KEEP_RUNS, keep_days: int | None = None,
              now: datetime | None = None) -> int:
        """Drop runs beyond the newest `keep_runs` or older than `keep_days`; returns how many.

        Both limits apply when both are given. The newest run is always kept.
        """
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            doomed: set[int] = set()
            newest = db.execute("SELECT max(id) FROM runs").fetchone()[0]
            if keep_runs is not None:
                doomed.update(r[0] for r in db.execute(
                    "SELECT id FROM runs ORDER BY created DESC, id DESC LIMIT -1 OFFSET ?",
                    (max(1, keep_runs),)))
            if keep_days is not None:
                cutoff = _iso((now or _utcnow()) - timedelta(days=keep_days))
                doomed.update(r[0] for r in db.execute(
                    "SELECT id FROM runs WHERE created < ?", (cutoff,)))
            doomed.discard(newest)
            db.executemany("DELETE FROM runs WHERE id = ?", [(i,) for i in sorted(doomed)])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if doomed:
            db.execute("PRAGMA incremental_vacuum")
        return len(doomed)

    # -- reading -----------------------------------------------------------------------
    _RUN_COLS = ("id, commit_sha, created, torch, device, device_name, backend, config_digest,"
                 " conclusion, clean, results, findings")

    def _runs(self, where: str = "1", params: Iterable[Any] = (), *, order: str = "DESC",
              limit: int | None = None) -> list[StoredRun]:
        sql = (f"SELECT {self._RUN_COLS} FROM runs WHERE {where} "
               f"ORDER BY created {order}, id {order}")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_stored_run(r) for r in self.db.execute(sql, tuple(params))]

    def recent_runs(self, *, device: str | None = None, limit: int = 30) -> list[StoredRun]:
        """The newest `limit` runs (optionally on `device`), oldest first."""
        where, params = _filters(device=device)
        return self._runs(where, params, limit=limit)[::-1]

    def count_runs(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM runs").fetchone()[0])

    def run(self, run_id: int) -> StoredRun | None:
        rows = self._runs("id = ?", (run_id,))
        return rows[0] if rows else None

    def all_runs(self) -> list[StoredRun]:
        """Every stored run, oldest first."""
        return self._runs(order="ASC")

    def last_run(self, *, device: str | None = None, exclude_commit: str | None = None,
                 before: datetime | None = None, exclude_id: int | None = None
                 ) -> StoredRun | None:
        """The newest run (optionally: on `device`, of another commit, created <= `before`)."""
        where, params = _filters(device=device, exclude_commit=exclude_commit,
                                 before=before, exclude_id=exclude_id)
        rows = self._runs(where, params, limit=1)
        return rows[0] if rows else None

    def last_clean_run(self, *, device: str | None = None, exclude_id: int | None = None
                       ) -> StoredRun | None:
        """The newest run with no outstanding problem: the reference a regression is judged by."""
        where, params = _filters(device=device, exclude_id=exclude_id)
        rows = self._runs(f"{where} AND clean = 1", params, limit=1)
        return rows[0] if rows else None

    def runs_since(self, days: float, *, now: datetime | None = None,
                   device: str | None = None) -> list[StoredRun]:
        """Runs created in the last `days` days, oldest first."""
        cutoff = (now or _utcnow()) - timedelta(days=days)
        where, params = _filters(device=device)
        return self._runs(f"{where} AND created >= ?", (*params, _iso(cutoff)), order="ASC")

    def model_series(self, name: str, *, device: str | None = None, limit: int | None = None
                     ) -> list[ModelPoint]:
        """The model's nights, oldest first (the newest `limit` of them)."""
        where, params = _filters(device=device, prefix="r.")
        sql = (f"SELECT r.id, r.commit_sha, r.created, m.status, m.graph_breaks, m.recompiles,"
               f" m.export_ok FROM models m JOIN runs r ON r.id = m.run"
               f" WHERE m.name = ? AND {where} ORDER BY r.created DESC, r.id DESC")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = list(self.db.execute(sql, (name, *params)))[::-1]
        lat: dict[int, dict[str, float]] = {}
        if rows:
            ids = [r[0] for r in rows]
            q = ",".join("?" * len(ids))
            for run, shape, median in self.db.execute(
                    f"SELECT run, shape, median FROM latency WHERE model = ? AND kind = 'compiled'"
                    f" AND run IN ({q}) AND median IS NOT NULL", (name, *ids)):
                lat.setdefault(run, {})[shape] = float(median)
        return [ModelPoint(run=r[0], commit=r[1], created=r[2], status=r[3],
                           graph_breaks=r[4], recompiles=r[5],
                           export_ok=None if r[6] is None else bool(r[6]),
                           compiled_ms=lat.get(r[0], {})) for r in rows]

    def model_names(self, *, device: str | None = None) -> list[str]:
        where, params = _filters(device=device, prefix="r.")
        return [r[0] for r in self.db.execute(
            f"SELECT DISTINCT m.name FROM models m JOIN runs r ON r.id = m.run WHERE {where}"
            f" ORDER BY m.name", tuple(params))]

    def latency_window(self, model: str, shape: str, *, kind: str = "compiled",
                       device: str | None = None, device_name: str | None = None,
                       backend: str | None = None, since: datetime | None = None,
                       exclude_id: int | None = None, limit: int = 14) -> list[float]:
        """Recent medians of one (model, shape case), newest first: the rolling window."""
        where, params = _filters(device=device, device_name=device_name, backend=backend,
                                 exclude_id=exclude_id, prefix="r.")
        if since is not None:
            where += " AND r.created >= ?"
            params = (*params, _iso(since))
        return [float(r[0]) for r in self.db.execute(
            f"SELECT l.median FROM latency l JOIN runs r ON r.id = l.run"
            f" WHERE l.model = ? AND l.shape = ? AND l.kind = ? AND l.median IS NOT NULL"
            f" AND {where} ORDER BY r.created DESC, r.id DESC LIMIT ?",
            (model, shape, kind, *params, int(limit)))]

    def rows(self, table: str, run_id: int) -> list[dict[str, Any]]:
        """The rows of one normalised table for one run (for tests and debugging)."""
        if table not in ("models", "breaks", "recompiles", "latency", "findings"):
            raise ValueError(table)
        cur = self.db.execute(f"SELECT * FROM {table} WHERE run = ?", (run_id,))
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, r)) for r in cur]


def open_history(path: str, *, create: bool = True) -> History:
    return History(path, create=create)


def _filters(*, device: str | None = None, device_name: str | None = None,
             backend: str | None = None, exclude_commit: str | None = None,
             before: datetime | None = None, exclude_id: int | None = None,
             prefix: str = "") -> tuple[str, tuple[Any, ...]]:
    where = ["1"]
    params: list[Any] = []
    for col, val in (("device", device), ("device_name", device_name), ("backend", backend)):
        if val is not None:
            where.append(f"{prefix}{col} IS ?")
            params.append(val)
    if exclude_commit is not None:
        where.append(f"({prefix}commit_sha IS NULL OR {prefix}commit_sha != ?)")
        params.append(exclude_commit)
    if before is not None:
        where.append(f"{prefix}created <= ?")
        params.append(_iso(before))
    if exclude_id is not None:
        where.append(f"{prefix}id != ?")
        params.append(exclude_id)
    return " AND ".join(where), tuple(params)


def _stored_run(r: Sequence[Any]) -> StoredRun:
    return StoredRun(id=r[0], commit=r[1], created=r[2], torch=r[3], device=r[4],
                     device_name=r[5], backend=r[6], config_digest=r[7], conclusion=r[8],
                     clean=bool(r[9]), _results=r[10], _findings=r[11])


def _create_schema(db: sqlite3.Connection) -> None:
    for stmt in _statements(_SCHEMA):
        db.execute(stmt)
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
               (str(SCHEMA_VERSION),))
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('created', ?)",
               (_iso(_utcnow()),))


def _create_atomically(path: str) -> None:
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
            _create_schema(db)
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


def _statements(script: str) -> Iterator[str]:
    for stmt in script.split(";"):
        lines = [ln.split("--", 1)[0] for ln in stmt.splitlines()]
        text = "\n".join(lines).strip()
        if text:
            yield text


def _normalise_created(s: str) -> str:
    """Store every timestamp in one sortable UTC form, whatever ISO form the runner wrote."""
    try:
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return _iso(_utcnow())
    return _iso(t)


def _text(v: Any, limit: int = 2000) -> str | None:
    if v is None:
        return None
    s = str(v)
    return s if len(s) <= limit else s[:limit] + "…"


__all__ = ["History", "StoredRun", "ModelPoint", "open_history", "parse_keep", "shape_key",
           "SCHEMA_VERSION", "DEFAULT_KEEP_RUNS", "KEEP_ENV"]
