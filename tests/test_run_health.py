"""Host health of a run (capture/health.py) carried to the tables and the notebooks:
stall summary from linkem's stats, steal and CPU from /proc, the runs table's
columns, older table folders still loading, and the notebooks' stall filter.
No captures here (no root needed)."""
from __future__ import annotations


import duckdb
import polars as pl
import pytest

from capture import health
from pipeline import metadoc, schema, store, tables

from labfig import db as labdb
from labfig.session import open_lab


def lateness(events, late, intervals, worst_ms, at=100.0):
    return {"threshold_ms": 1.0, "events": events, "late_events": late, "intervals": intervals,
            "worst_ms": worst_ms, "worst_at_s": at, "list": [], "list_not_kept": 0}


def linkem_stats(worst_down, worst_up, lag=0.2):
    return {"late_threshold_ms": 1.0,
            "down": {"late": lateness(100, 3, 1, worst_down, 10.0), "reader_lag": lateness(100, 0, 0, lag)},
            "up": {"late": lateness(50, 1, 1, worst_up, 20.0), "reader_lag": lateness(50, 0, 0, lag)},
            "cpu": {"user_s": 0.1, "system_s": 0.2}, "loop": {}}


def test_stall_summary_totals_and_worst():
    s = health.stall_summary({"wifi": linkem_stats(2.0, 7.5), "lte": linkem_stats(0.5, 0.4, lag=1.5)}, 5.0)
    assert s["measured"] and s["stalled"]
    assert (s["late_packets"], s["late_intervals"]) == (8, 4)
    assert (s["worst_late_ms"], s["worst_late_at_s"], s["worst_late_where"]) == (7.5, 20.0, "wifi up")
    assert s["worst_reader_lag_ms"] == 1.5
    assert not health.stall_summary({"wifi": linkem_stats(2.0, 4.9)}, 5.0)["stalled"]
    # tbf paths (no linkem): nothing measured, no verdict
    none = health.stall_summary({"wifi": None}, 5.0)
    assert none["measured"] is False and none["stalled"] is None and none["late_packets"] is None


def test_host_load_and_run_cpu_from_proc():
    a = health.sample()
    x = 0
    for i in range(300_000):  # some CPU in this process between the samples
        x += i * i
    b = health.sample()
    load = health.host_load(a, b)
    assert load["window_s"] > 0 and 0 <= load["steal_pct"] <= 100 and 0 <= load["busy_pct"] <= 100
    cpu = health.run_cpu(a, b)
    assert cpu["cpu_s"] >= 0 and cpu["cpu_s"] == pytest.approx(cpu["user_s"] + cpu["system_s"], abs=1e-3)


META = {"run_id": "r1", "campaign": "chen", "mode": "MP-2", "attempt": 2,
        "stalls": {"stalled": True, "worst_late_ms": 7.5, "late_packets": 8, "late_intervals": 4,
                   "worst_reader_lag_ms": 1.5},
        "host": {"steal_pct": 3.5, "busy_pct": 71.0}, "run_cpu": {"cpu_s": 4.25}}


def test_runs_table_carries_the_health_columns():
    row = tables.runs_row(META, "r1").to_dicts()[0]
    assert (row["stalled"], row["worst_late_ms"], row["late_packets"], row["late_intervals"]) == (True, 7.5, 8, 4)
    assert (row["steal_pct"], row["host_busy_pct"], row["run_cpu_s"], row["attempt"]) == (3.5, 71.0, 4.25, 2)
    assert row["host_others_pct"] is None  # no pct_of_one_core, no cpus: not computable
    old = tables.runs_row({"run_id": "r0", "campaign": "chen"}, "r0").to_dicts()[0]
    assert old["stalled"] is None and old["worst_late_ms"] is None


def test_other_work_is_the_hosts_busy_share_less_the_runs_own():
    """busy_pct counts the run's own emulators and workload: 7.19 % busy on 2 CPUs while
    the run used 11.4 % of one core leaves 1.49 % for everything else (never below 0)."""
    meta = {**META, "host": {"busy_pct": 7.19, "cpus": 2}, "run_cpu": {"cpu_s": 0.62, "pct_of_one_core": 11.4}}
    assert tables.runs_row(meta, "r1").to_dicts()[0]["host_others_pct"] == 1.49
    meta["run_cpu"]["pct_of_one_core"] = 30.0
    assert tables.runs_row(meta, "r1").to_dicts()[0]["host_others_pct"] == 0.0


def test_older_table_folders_load_beside_new_ones(tmp_path):
    new = {"runs": tables.runs_row(META, "r1")}
    store.write_tables(new, tmp_path / "new")
    old_runs = tables.runs_row({"run_id": "r0", "campaign": "chen"}, "r0").drop([*metadoc.health_columns({}), "attempt"])
    store.write_tables({"runs": old_runs}, tmp_path / "old")
    assert "stalled" not in pl.read_parquet(tmp_path / "old" / "runs.parquet").columns
    db = store.load_table_dirs([tmp_path / "old", tmp_path / "new"], tmp_path / "lab.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT run_id, stalled, worst_late_ms FROM runs ORDER BY run_id").fetchall()
    finally:
        con.close()
    assert rows == [("r0", None, None), ("r1", True, 7.5)]


def test_notebooks_can_leave_out_stalled_runs(tmp_path, monkeypatch):
    runs = pl.concat([tables.runs_row(META, "r1"),
                      tables.runs_row({**META, "run_id": "r2", "stalls": {"stalled": False, "worst_late_ms": 0.4}}, "r2"),
                      tables.runs_row({"run_id": "r3", "campaign": "chen"}, "r3")])
    db = store.write_duckdb({"runs": runs}, tmp_path / "lab.duckdb")
    open_lab("chen", db, tmp_path / "figures")
    try:
        ids = lambda sql: sorted(r[0] for r in labdb.query(sql).iter_rows())  # noqa: E731
        assert ids(labdb.runs_of("chen")) == ["r1", "r2", "r3"]
        assert ids(labdb.runs_of("chen", stalled=False)) == ["r2", "r3"]   # unmeasured r3 is kept
        flagged = labdb.stalled_runs("chen")
        assert flagged["run_id"].to_list() == ["r1"] and flagged["worst_late_ms"].to_list() == [7.5]
        assert labdb.stalled_runs()["run_id"].to_list() == ["r1"]
        # the notebooks' selection is the same, and they say what it left out
        assert ids(f"SELECT run_id FROM run_config WHERE {labdb.usable('chen')}") == ["r2", "r3"]
        note = labdb.left_out("chen")
        assert note.startswith("**3 runs** of campaign `chen`; **1 stalled run(s) left out**")
        assert "worst 7.5 ms" in note and "`r1`" in note and "`r2`" not in note
        assert labdb.left_out("ferlin") == "**0 runs** of campaign `ferlin`."
    finally:
        labdb.connect.cache_clear()


def test_schema_documents_the_columns():
    for c in ("stalled", "worst_late_ms", "late_packets", "steal_pct", "run_cpu_s", "attempt"):
        assert c in schema.TABLES["runs"]
