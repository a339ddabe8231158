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

import sqlite3

from pt2bot.audit.history_query import HistoryQueries, ModelPoint, StoredRun
from pt2bot.audit.history_schema import SCHEMA_VERSION, connect, shape_key
from pt2bot.audit.history_write import DEFAULT_KEEP_RUNS, HistoryWrites
from pt2bot.errors import UserError

KEEP_ENV = "PT2BOT_HISTORY_KEEP"


class History(HistoryWrites, HistoryQueries):
    """An open history file. Use as a context manager, or call `close()`.

    The parts: opening, validation and migrations (history_schema.py), writes and retention
    (history_write.py), queries (history_query.py).
    """

    def __init__(self, path: str, *, create: bool = True) -> None:
        self.path = path
        self.db: sqlite3.Connection = connect(path, create=create)

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


def open_history(path: str, *, create: bool = True) -> History:
    return History(path, create=create)


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


__all__ = ["History", "StoredRun", "ModelPoint", "open_history", "parse_keep", "shape_key",
           "SCHEMA_VERSION", "DEFAULT_KEEP_RUNS", "KEEP_ENV"]
