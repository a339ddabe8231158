"""Reading the history: stored nights, per-model series, the latency window.

Every query filters by device (and, for latency, device name and backend) so a night on a
GPU never sits in a CPU trend; results come back oldest first unless a method says otherwise.
"""
from __future__ import annotations

import json
import sqlite3
import statistics
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Iterable, Sequence

from pt2bot.audit.history_schema import iso, utcnow


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
    # the first compile's CPU seconds and FX nodes, the graph-break pass's captured ops
    # (None: not measured that night, or a night before history schema 2)
    compile_cpu_s: float | None = None
    compile_fx_nodes: int | None = None
    captured_ops: int | None = None
    largest_share: float | None = None

    @property
    def compiled_geomean_ms(self) -> float | None:
        """One latency number per night: the geometric mean over the shape cases."""
        vals = [v for v in self.compiled_ms.values() if v and v > 0]
        return statistics.geometric_mean(vals) if vals else None


class HistoryQueries:
    """The reading half of `pt2bot.audit.history.History` (which holds `db`)."""

    db: sqlite3.Connection

    _RUN_COLS = ("id, commit_sha, created, torch, device, device_name, backend, config_digest,"
                 " conclusion, clean, results, findings")

    def _runs(self, where: str = "1", params: Iterable[Any] = (), *, order: str = "DESC",
              limit: int | None = None) -> list[StoredRun]:
        sql = (f"SELECT {self._RUN_COLS} FROM runs WHERE {where} "
               f"ORDER BY created {order}, id {order}")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [stored_run(r) for r in self.db.execute(sql, tuple(params))]

    def recent_runs(self, *, device: str | None = None, limit: int = 30) -> list[StoredRun]:
        """The newest `limit` runs (optionally on `device`), oldest first."""
        where, params = filters(device=device)
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
        where, params = filters(device=device, exclude_commit=exclude_commit,
                                 before=before, exclude_id=exclude_id)
        rows = self._runs(where, params, limit=1)
        return rows[0] if rows else None

    def last_clean_run(self, *, device: str | None = None, exclude_id: int | None = None
                       ) -> StoredRun | None:
        """The newest run with no outstanding problem: the reference a regression is judged by."""
        where, params = filters(device=device, exclude_id=exclude_id)
        rows = self._runs(f"{where} AND clean = 1", params, limit=1)
        return rows[0] if rows else None

    def runs_since(self, days: float, *, now: datetime | None = None,
                   device: str | None = None) -> list[StoredRun]:
        """Runs created in the last `days` days, oldest first."""
        cutoff = (now or utcnow()) - timedelta(days=days)
        where, params = filters(device=device)
        return self._runs(f"{where} AND created >= ?", (*params, iso(cutoff)), order="ASC")

    def model_series(self, name: str, *, device: str | None = None, limit: int | None = None
                     ) -> list[ModelPoint]:
        """The model's nights, oldest first (the newest `limit` of them)."""
        where, params = filters(device=device, prefix="r.")
        sql = (f"SELECT r.id, r.commit_sha, r.created, m.status, m.graph_breaks, m.recompiles,"
               f" m.export_ok, m.compile_cpu_s, m.compile_fx_nodes, m.captured_ops,"
               f" m.largest_share FROM models m JOIN runs r ON r.id = m.run"
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
                           compiled_ms=lat.get(r[0], {}), compile_cpu_s=r[7],
                           compile_fx_nodes=r[8], captured_ops=r[9], largest_share=r[10])
                for r in rows]

    def model_names(self, *, device: str | None = None) -> list[str]:
        where, params = filters(device=device, prefix="r.")
        return [r[0] for r in self.db.execute(
            f"SELECT DISTINCT m.name FROM models m JOIN runs r ON r.id = m.run WHERE {where}"
            f" ORDER BY m.name", tuple(params))]

    def latency_window(self, model: str, shape: str, *, kind: str = "compiled",
                       device: str | None = None, device_name: str | None = None,
                       backend: str | None = None, since: datetime | None = None,
                       exclude_id: int | None = None, limit: int = 14) -> list[float]:
        """Recent medians of one (model, shape case), newest first: the rolling window."""
        where, params = filters(device=device, device_name=device_name, backend=backend,
                                 exclude_id=exclude_id, prefix="r.")
        if since is not None:
            where += " AND r.created >= ?"
            params = (*params, iso(since))
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


def filters(*, device: str | None = None, device_name: str | None = None,
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
        params.append(iso(before))
    if exclude_id is not None:
        where.append(f"{prefix}id != ?")
        params.append(exclude_id)
    return " AND ".join(where), tuple(params)


def stored_run(r: Sequence[Any]) -> StoredRun:
    return StoredRun(id=r[0], commit=r[1], created=r[2], torch=r[3], device=r[4],
                     device_name=r[5], backend=r[6], config_digest=r[7], conclusion=r[8],
                     clean=bool(r[9]), _results=r[10], _findings=r[11])


__all__ = ["HistoryQueries", "ModelPoint", "StoredRun", "filters"]
