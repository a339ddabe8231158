"""Writing the history: one audited night per transaction, and retention (`prune`).

Each night stores the whole results JSON and findings (zlib) for exact comparison later,
plus normalised rows read from the typed RUN (pt2bot/results.py) for the trend queries.
"""
from __future__ import annotations

import json
import sqlite3
import zlib
from datetime import datetime, timedelta
from typing import Any, Sequence

from pt2bot.audit.history_schema import iso, model_columns, normalise_created, shape_key, utcnow
from pt2bot.results import ModelRun, ResultsFile

# Default retention: about a year of nightly runs. Override with `keep_runs` / `keep_days`
# or PT2BOT_HISTORY_KEEP ("400" runs, "90d" days, "400,90d" both).
DEFAULT_KEEP_RUNS = 400


class HistoryWrites:
    """The writing half of `pt2bot.audit.history.History` (which holds `db`)."""

    db: sqlite3.Connection

    def append(self, results: ResultsFile | dict[str, Any],
               findings: Sequence[dict[str, Any]] = (), *, conclusion: str | None = None,
               clean: bool = True, created: datetime | None = None) -> int:
        """Store one audited night; returns the run id. One transaction: all or nothing."""
        results = ResultsFile.coerce(results)
        created_s = iso(created) if created else (results.created or iso(utcnow()))
        if created and not isinstance(created, datetime):
            raise TypeError("created must be a datetime")
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            cur = db.execute(
                "INSERT INTO runs (commit_sha, created, torch, device, device_name, backend,"
                " config_digest, conclusion, clean, results, findings)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (results.commit, normalise_created(created_s), results.torch, results.device,
                 results.device_name, results.backend, results.config_digest, conclusion,
                 int(bool(clean)), _pack(results.to_json()), _pack(list(findings))))
            run_id = int(cur.lastrowid)
            for m in results.models:
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

    def _insert_model(self, run_id: int, m: ModelRun) -> None:
        """The model's normalised rows (models, breaks, recompiles, latency) for trends."""
        name = str(m.name)
        breaks = m.breaks()
        rec = m.recompiles
        export = m.export
        # {"cold": .., "warm": ..}: the cold compile is the cost (a bare number: as it is)
        compile_s = m.compile_s.cold if m.compile_s is not None else _number(
            m.extra.get("compile_s"))
        status = m.status or "error"
        reason = m.reason or (m.error.message if m.error else None)
        more = model_columns(m)     # graph coverage and compile cost (schema 2)
        self.db.execute(
            "INSERT OR REPLACE INTO models (run, name, status, reason, graph_count, graph_breaks,"
            " recompiles, export_ok, export_kind, compile_s, peak_mem_mb, "
            + ", ".join(more) + ") VALUES (?,?,?,?,?,?,?,?,?,?,?" + ",?" * len(more) + ")",
            (run_id, name, status, _text(reason), m.graph_count,
             # break *sites* (not hits): deterministic, and what the report's delta counts
             len(breaks) if status == "ok" or breaks else None,
             rec.count if rec is not None else None,
             None if export is None or export.ok is None else int(export.ok),
             export.kind if export is not None else None, compile_s, m.peak_mem_mb,
             *more.values()))
        self.db.executemany(
            "INSERT INTO breaks (run, model, gb, gb_type, path, line, function, count)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [(run_id, name, b.gb, b.gb_type, b.path, b.line, b.function, b.count)
             for b in breaks])
        if rec is not None:
            self.db.executemany(
                "INSERT INTO recompiles (run, model, shape, compiled, recompiles, reasons)"
                " VALUES (?,?,?,?,?,?)",
                [(run_id, name, shape_key(c.shape),
                  None if c.compiled is None else int(c.compiled), c.recompiles,
                  json.dumps([r.to_json() for r in c.reasons]))
                 for c in rec.cases])
        rows = []
        for case in m.latency_rows():
            for kind in ("eager", "compiled"):
                t = case.timing(f"{kind}_ms")
                if t is not None:
                    rows.append((run_id, name, shape_key(case.shape), kind,
                                 t.median, t.iqr, t.min, json.dumps(list(t.samples))))
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
                cutoff = iso((now or utcnow()) - timedelta(days=keep_days))
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


def _pack(obj: Any) -> bytes:
    return zlib.compress(json.dumps(obj, sort_keys=True, default=str).encode("utf-8"), 6)


def _number(v: Any) -> float | None:
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _text(v: Any, limit: int = 2000) -> str | None:
    if v is None:
        return None
    s = str(v)
    return s if len(s) <= limit else s[:limit] + "…"


__all__ = ["DEFAULT_KEEP_RUNS", "HistoryWrites"]
