"""The audit history: real SQLite files in tmp dirs, real concurrent processes."""
from __future__ import annotations

import copy
import json
import multiprocessing
import os
import shutil
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pt2bot.errors import UserError
from pt2bot.audit.history import SCHEMA_VERSION, History, parse_keep, shape_key

DATA = Path(__file__).parent / "data" / "audit"
T0 = datetime(2026, 11, 1, 2, 0, tzinfo=timezone.utc)


def load(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_append_stores_every_table_and_round_trips(tmp_path):
    res = load("night1.json")
    findings = [{"rule": "PTC101", "severity": "error", "path": "a.py", "line": 1},
                {"rule": "PTC101", "severity": "error", "path": "b.py", "line": 2},
                {"rule": "PTC301", "severity": "warning", "path": "a.py", "line": 3}]
    with History(str(tmp_path / "h.db")) as h:
        rid = h.append(res, findings, conclusion="success", created=T0)
        run = h.last_run()
        assert run.id == rid and run.commit == res["commit"] and run.torch == res["torch"]
        assert run.results == res and run.findings == findings
        models = {m["name"]: m for m in h.rows("models", rid)}
        assert set(models) == {m["name"] for m in res["models"]}
        gpt = models["tiny_gpt"]
        assert gpt["status"] == "ok" and gpt["graph_breaks"] == 0 and gpt["export_ok"] == 1
        assert gpt["compile_s"] == pytest.approx(1.5)
        lat = h.rows("latency", rid)
        assert {(r["model"], r["shape"], r["kind"]) for r in lat} >= {
            ("tiny_gpt", "batch=1,seq=8", "compiled"), ("tiny_gpt", "batch=4,seq=8", "eager")}
        assert json.loads(lat[0]["samples"])
        assert {(r["rule"], r["count"]) for r in h.rows("findings", rid)} == {
            ("PTC101", 2), ("PTC301", 1)}
        assert h.rows("recompiles", rid)


def test_failing_model_is_recorded_not_dropped(tmp_path):
    res = load("night1.json")
    bad = res["models"][0]
    bad.update(status="error", graph_breaks=[], latency=[], graph_count=None,
               error={"kind": "crash", "message": "Segmentation fault", "path": None, "line": None})
    with History(str(tmp_path / "h.db")) as h:
        rid = h.append(res)
        row = {m["name"]: m for m in h.rows("models", rid)}[bad["name"]]
        assert row["status"] == "error" and row["reason"] == "Segmentation fault"
        assert row["graph_breaks"] is None
        series = h.model_series(bad["name"])
        assert [p.status for p in series] == ["error"]


def test_queries_for_trends(tmp_path):
    base = load("night1.json")
    with History(str(tmp_path / "h.db")) as h:
        for day in range(10):
            r = copy.deepcopy(base)
            r["commit"] = f"{day:040x}"
            for m in r["models"]:
                for case in m["latency"]:
                    case["compiled_ms"]["median"] = 1.0 + day
            h.append(r, created=T0 + timedelta(days=day))
        now = T0 + timedelta(days=9, hours=1)
        assert len(h.runs_since(3, now=now)) == 3
        assert h.last_run().commit == f"{9:040x}"
        assert h.last_run(exclude_commit=f"{9:040x}").commit == f"{8:040x}"
        assert h.last_run(before=now - timedelta(days=7)).commit == f"{2:040x}"
        series = h.model_series("tiny_gpt")
        assert [p.commit for p in series] == [f"{d:040x}" for d in range(10)]
        assert series[-1].compiled_geomean_ms == pytest.approx(10.0)
        assert len(h.model_series("tiny_gpt", limit=4)) == 4
        assert h.model_series("tiny_gpt", limit=4)[0].commit == f"{6:040x}"
        w = h.latency_window("tiny_gpt", "batch=1,seq=8", limit=5)
        assert w == [10.0, 9.0, 8.0, 7.0, 6.0]
        assert h.latency_window("tiny_gpt", "batch=1,seq=8", device="cuda") == []


def test_retention_by_count_and_days(tmp_path):
    base = load("night1.json")
    path = tmp_path / "h.db"
    with History(str(path)) as h:
        for day in range(30):
            r = copy.deepcopy(base)
            r["commit"] = f"{day:040x}"
            h.append(r, created=T0 + timedelta(days=day))
        assert h.prune(keep_runs=20) == 10
        assert h.count_runs() == 20
        # cascades: no orphan rows
        assert h.db.execute("SELECT count(*) FROM latency WHERE run NOT IN "
                            "(SELECT id FROM runs)").fetchone()[0] == 0
        assert h.prune(keep_runs=None, keep_days=5, now=T0 + timedelta(days=29)) == 14
        assert [r.commit for r in h.all_runs()][0] == f"{24:040x}"
        # the newest run survives even an over-eager setting
        assert h.prune(keep_runs=None, keep_days=1, now=T0 + timedelta(days=400)) == 5
        assert h.count_runs() == 1


def test_parse_keep():
    assert parse_keep("400") == (400, None)
    assert parse_keep("90d") == (None, 90)
    assert parse_keep("10, 7d") == (10, 7)
    assert parse_keep(None) == (None, None)
    with pytest.raises(UserError, match="retention"):
        parse_keep("ten")
    with pytest.raises(UserError, match="at least 1"):
        parse_keep("0")


def _history_with_one_run(tmp_path) -> Path:
    path = tmp_path / "h.db"
    with History(str(path)) as h:
        h.append(load("night1.json"))
    return path


def test_truncated_file_is_a_clear_error_and_untouched(tmp_path):
    path = _history_with_one_run(tmp_path)
    data = path.read_bytes()
    assert len(data) > 8192
    path.write_bytes(data[: len(data) // 2])
    before = path.read_bytes()
    with pytest.raises(UserError, match=r"h\.db.*truncated"):
        History(str(path))
    assert path.read_bytes() == before


def test_garbage_and_empty_files_are_refused(tmp_path):
    for content, why in ((b"", "empty"), (b"not a database at all" * 10, "no SQLite header")):
        path = tmp_path / "bad.db"
        path.write_bytes(content)
        with pytest.raises(UserError, match=why):
            History(str(path))
        assert path.read_bytes() == content


def test_corrupt_pages_are_refused_untouched(tmp_path):
    path = _history_with_one_run(tmp_path)
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for i in range(page + 8, min(len(data), 3 * page)):  # scribble over the schema's pages
        data[i] = 0xA5
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match="corrupt|malformed|not a database"):
        History(str(path))
    assert path.read_bytes() == bytes(data)


def test_newer_schema_is_refused_never_downgraded(tmp_path):
    path = _history_with_one_run(tmp_path)
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    with pytest.raises(UserError, match="newer pt2bot"):
        History(str(path))
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION + 1)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    con.close()


def test_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(UserError, match="not a pt2bot history"):
        History(str(path))


def _append_many(path: str, tag: str, n: int) -> None:
    base = json.loads((DATA / "night1.json").read_text())
    with History(path) as h:
        for i in range(n):
            r = copy.deepcopy(base)
            r["commit"] = f"{tag}{i:039x}"
            h.append(r)


def test_two_processes_append_at_once(tmp_path):
    path = str(tmp_path / "h.db")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(path, tag, 15)) for tag in "ab"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    with History(path) as h:
        commits = [r.commit for r in h.all_runs()]
        assert len(commits) == 30 and len(set(commits)) == 30
        n_models = len(load("night1.json")["models"])
        assert h.db.execute("SELECT count(*) FROM models").fetchone()[0] == 30 * n_models
    # closing folded the WAL back: the single file is the whole history
    assert not os.path.exists(path + "-wal") or os.path.getsize(path + "-wal") == 0
    copy_path = tmp_path / "copy.db"
    shutil.copy(path, copy_path)
    with History(str(copy_path)) as h:
        assert h.count_runs() == 30


def test_shape_key_is_order_independent():
    assert shape_key({"seq": 8, "batch": 1}) == shape_key({"batch": 1, "seq": 8}) == "batch=1,seq=8"
    assert shape_key({}) == "-"


# --------------------------------------------------------------------------- schema 2

def test_a_history_written_by_schema_1_is_migrated_and_keeps_everything(tmp_path):
    """history-v1.sqlite was written by pt2bot at 69992df (schema 1, before graph coverage
    and compile cost had columns), from night1.json plus the compile_cost/graph_coverage
    keys of tiny_gpt, which that version kept only inside the stored results JSON."""
    path = tmp_path / "h.db"
    shutil.copyfile(DATA / "history-v1.sqlite", path)
    raw = sqlite3.connect(path)
    v1_cols = {r[1] for r in raw.execute("PRAGMA table_info(models)")}
    v1_rows = {t: raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
               for t in ("runs", "models", "breaks", "recompiles", "latency", "findings")}
    raw.close()
    assert "compile_cpu_s" not in v1_cols and v1_rows["runs"] == 1
    with History(str(path)) as h:
        assert h.schema_version == SCHEMA_VERSION == 2
        (old,) = h.all_runs()
        rows = {m["name"]: m for m in h.rows("models", old.id)}
        gpt = rows["tiny_gpt"]
        # filled from the stored results JSON
        assert (gpt["compile_cpu_s"], gpt["compile_fx_nodes"], gpt["compile_guards"],
                gpt["compile_kernels"], gpt["compile_cache_misses"], gpt["compile_cache"]) == \
            (1.5, 90, 45, 3, 1, "cold")
        assert (gpt["captured_ops"], gpt["largest_share"], gpt["eager_frames"]) == (40, 1.0, 0)
        # a model that did not measure them keeps NULL, and schema 1's columns are untouched
        others = [m for n, m in rows.items() if n != "tiny_gpt"]
        assert others and all(m["compile_cpu_s"] is None and m["captured_ops"] is None
                              for m in others)
        assert gpt["compile_s"] == pytest.approx(1.5) and gpt["graph_breaks"] == 0
        assert old.results["models"][0]["compile_cost"]["fx_nodes"] == 90
        # and the migrated file takes tonight's run with the new columns
        night2 = load("night1.json")
        night2["commit"] = "2" * 40
        night2["models"][0]["compile_cost"] = {"cpu_s": 2.5, "fx_nodes": 180, "guards": 60}
        h.append(night2, created=T0 + timedelta(days=1))
        series = h.model_series("tiny_gpt")
        assert [(p.compile_cpu_s, p.compile_fx_nodes) for p in series] == [(1.5, 90), (2.5, 180)]
    raw = sqlite3.connect(path)
    for t, n in v1_rows.items():
        assert raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0] >= n
    assert raw.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("2",)
    raw.close()
    # opening again is a no-op (already at schema 2)
    with History(str(path)) as h:
        assert h.count_runs() == 2


def test_a_new_history_has_the_schema_2_columns(tmp_path):
    from pt2bot.audit.history_schema import MODEL_COLUMNS
    with History(str(tmp_path / "h.db")) as h:
        cols = {r[1] for r in h.db.execute("PRAGMA table_info(models)")}
        assert {n for n, _ in MODEL_COLUMNS} <= cols and h.schema_version == 2
