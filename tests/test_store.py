"""The DuckDB file is a store: keyed upserts, nothing lost to a failed call or a
concurrent writer, no foreign file overwritten, bad targets refused before any work."""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pcapgen import write
from pipeline import derived, inserts, migrate, schema, store, tables
from test_metrics_synthetic import single_path, two_subflows
from pipeline.frames import frame

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, cwd=cwd, env=env)


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def q(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture
def runs(tmp_path):
    """Two run folders and a loose pcap."""
    a = tmp_path / "run-a"
    a.mkdir()
    write(a / "client.pcap", *two_subflows())
    write(a / "server.pcap", single_path("server"))
    b = tmp_path / "run-b"
    b.mkdir()
    write(b / "client.pcap", single_path("client"))
    loose = write(tmp_path / "loose-server.pcap", single_path("server"))
    return a, b, loose


def counts(db):
    return dict(q(db, "SELECT run_id, count(*) FROM subflows GROUP BY run_id"))


def test_calls_add_up_and_a_run_analysed_again_replaces_only_its_rows(runs, tmp_path):
    a, b, loose = runs
    db = tmp_path / "lab.duckdb"
    for args in ([str(a)], [str(b / "client.pcap")], [str(loose)]):
        r = cli("analyze", "-q", *args, "--db", str(db))
        assert r.returncode == 0, r.stderr
    first = counts(db)
    assert set(first) == {"run-a", "run-b", "loose-server"}
    assert q(db, "SELECT run_id FROM runs") == [("run-a",)]
    # again, the run folder and the loose pcap: same rows, nothing doubled
    r = cli("analyze", "-q", str(a), str(loose), "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert counts(db) == first
    assert q(db, "SELECT count(*) FROM runs") == [(1,)]


def test_the_same_trace_given_twice_counts_once(runs, tmp_path):
    a, b, loose = runs
    db = tmp_path / "lab.duckdb"
    rel = os.path.relpath(loose, tmp_path)
    r = cli("analyze", "-q", str(a), str(a / "client.pcap"), rel, f"./{rel}", str(loose), "--db", "lab.duckdb",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "given twice" in r.stderr and "part of run folder" in r.stderr
    once = counts(db)
    r = cli("analyze", "-q", str(a), "--db", str(db))
    r = cli("analyze", "-q", str(loose), "--db", str(db))  # absolute now, relative before: same file
    assert counts(db) == once


def test_a_call_with_nothing_usable_leaves_the_database_untouched(runs, tmp_path):
    a, _, _ = runs
    db = tmp_path / "lab.duckdb"
    assert cli("analyze", "-q", str(a), "--db", str(db)).returncode == 0
    before = digest(db)
    (tmp_path / "empty.pcap").write_bytes(b"")
    r = cli("analyze", "-q", str(tmp_path / "nope.pcap"), str(tmp_path / "empty.pcap"), "--db", str(db))
    assert r.returncode == 1
    assert "left untouched" in r.stderr
    assert digest(db) == before
    r = cli("analyze", "-q", str(tmp_path / "nope.pcap"), "--db", str(tmp_path / "new.duckdb"))
    assert r.returncode == 1 and not (tmp_path / "new.duckdb").exists()


@pytest.mark.parametrize("target, why", [
    ("input", "not a DuckDB database"),
    ("/dev/null", "character device"),
    ("folder", "is a folder"),
    ("", "empty path"),
    ("readonly", "read-only"),
    ("text", "not a DuckDB database"),
    ("emptyfile", "empty file"),
    ("loop", "symbolic link"),
    ("foreign-runs", "not the lab's"),
])
def test_bad_db_targets_are_refused_before_any_work(runs, tmp_path, target, why):
    a, _, loose = runs
    path = {"input": str(loose), "folder": str(tmp_path), "/dev/null": "/dev/null", "": ""}.get(target)
    if target == "readonly":
        path = str(tmp_path / "ro.duckdb")
        assert cli("analyze", "-q", str(a), "--db", path).returncode == 0
        os.chmod(path, 0o444)
    elif target == "text":
        path = str(tmp_path / "notes.txt")
        Path(path).write_text("my notes\n" * 10)
    elif target == "emptyfile":
        path = str(tmp_path / "zero.duckdb")
        Path(path).write_bytes(b"")
    elif target == "loop":
        path = str(tmp_path / "loop.duckdb")
        os.symlink(path, path)
    elif target == "foreign-runs":
        path = str(tmp_path / "mine.duckdb")
        con = duckdb.connect(path)
        con.execute("CREATE TABLE runs (id INTEGER, note VARCHAR)")
        con.close()
    before = digest(Path(path)) if path and Path(path).is_file() else None
    # A missing input would print its own message: with the target refused first, none.
    r = cli("analyze", "-q", str(tmp_path / "missing.pcap"), "--db", path)
    assert r.returncode == 2
    assert why in r.stderr and "Traceback" not in r.stderr
    assert "missing.pcap" not in r.stderr, "the target is checked before any analysis"
    assert len(r.stderr.strip().splitlines()) == 1
    if before:
        assert digest(Path(path)) == before


def test_user_tables_and_old_schema_rows_are_kept(runs, tmp_path):
    a, b, _ = runs
    db = tmp_path / "lab.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE my_notes (run_id VARCHAR, note VARCHAR)")
    con.execute("INSERT INTO my_notes VALUES ('run-a', 'windy day')")
    # a table as the lab wrote it before the direction column existed
    old = {c: t for c, t in schema.TABLES["subflows"].items() if c != "direction"}
    con.execute("CREATE TABLE subflows (" + ", ".join(f'"{c}" {schema.sql_type(t)}' for c, t in old.items()) + ")")
    con.execute("INSERT INTO subflows (run_id, trace, subflow_id, payload_bytes) VALUES ('old-run', 'x.pcap', 0, 7)")
    con.close()
    assert cli("analyze", "-q", str(a), "--db", str(db)).returncode == 0
    assert q(db, "SELECT * FROM my_notes") == [("run-a", "windy day")]
    assert q(db, "SELECT direction, payload_bytes FROM subflows WHERE run_id = 'old-run'") == [("down", 7)]
    assert counts(db)["run-a"] > 0


def test_concurrent_writers_both_land(runs, tmp_path):
    a, b, loose = runs
    db = tmp_path / "lab.duckdb"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "pipeline", "analyze", "-q", str(x), "--db", str(db)],
                              stderr=subprocess.PIPE, text=True, env=env) for x in (a, b, loose)]
    errs = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errs
    assert set(counts(db)) == {"run-a", "run-b", "loose-server"}


def test_writer_waits_for_the_lock_and_cleans_stale_temporaries(runs, tmp_path):
    import fcntl
    a, b, _ = runs
    db = tmp_path / "lab.duckdb"
    assert cli("analyze", "-q", str(a), "--db", str(db)).returncode == 0
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid whose process is gone: its temporaries are a killed writer's
    stale = [tmp_path / f".lab.duckdb.{gone.pid}-deadbeef.tmp", tmp_path / f".lab.duckdb.{gone.pid}-deadbeef.tmp.wal"]
    for f in stale:
        f.write_bytes(b"half a write")
    fd = os.open(tmp_path / ".lab.duckdb.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer holds it
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-m", "pipeline", "analyze", "-q", str(b), "--db", str(db)],
                         stderr=subprocess.PIPE, text=True, env=env)
    first = p.stderr.readline()  # blocks until the writer says it waits
    assert "waiting for another writer" in first
    assert set(counts(db)) == {"run-a"}, "nothing written while the lock is held"
    os.close(fd)
    rest = p.stderr.read()
    assert p.wait(timeout=60) == 0, rest
    assert not any(f.exists() for f in stale)
    assert set(counts(db)) == {"run-a", "run-b"}


def temporaries(folder: Path) -> list[str]:
    return sorted(f.name for f in folder.glob(".*.tmp*"))


def loose_write(loose: Path):
    t, keys = tables.analyze_pcap(loose)
    return t, store.Keys(traces=keys)


def test_a_prepared_copy_is_used_when_the_database_is_unchanged(runs, tmp_path, monkeypatch):
    a, _, loose = runs
    db = tmp_path / "lab.duckdb"
    assert cli("analyze", "-q", str(a), "--db", str(db)).returncode == 0
    opened = []
    real_open = store._open_copy
    monkeypatch.setattr(store, "_open_copy", lambda *x: opened.append(x) or real_open(*x))
    prepared = store.prepare(db)
    t, keys = loose_write(loose)
    store.upsert(t, db, keys, prepared=prepared)
    assert len(opened) == 1, "the prepared copy was filled, not a second one made"
    assert set(counts(db)) == {"run-a", "loose-server"}
    assert temporaries(tmp_path) == []


def test_a_prepared_copy_of_a_database_changed_meanwhile_is_dropped(runs, tmp_path):
    a, b, loose = runs
    db = tmp_path / "lab.duckdb"
    assert cli("analyze", "-q", str(a), "--db", str(db)).returncode == 0
    prepared = store.prepare(db)  # a copy holding run-a only
    prepared._thread.join()
    assert prepared.tmp.exists()
    # Another process writes meanwhile; it cleans killed writers' temporaries but not
    # the copy of a writer that is alive (this one).
    assert cli("analyze", "-q", str(b), "--db", str(db)).returncode == 0
    assert prepared.tmp.exists()
    t, keys = loose_write(loose)
    store.upsert(t, db, keys, prepared=prepared)
    assert set(counts(db)) == {"run-a", "run-b", "loose-server"}, "run-b, written meanwhile, is kept"
    assert temporaries(tmp_path) == []


def test_a_prepared_copy_never_creates_the_database_or_its_folder(runs, tmp_path):
    _, _, loose = runs
    prepared = store.prepare(tmp_path / "new" / "lab.duckdb")
    prepared._thread.join()
    prepared.discard()
    assert not (tmp_path / "new").exists()
    prepared = store.prepare(tmp_path / "lab.duckdb")
    prepared._thread.join()
    prepared.discard()
    assert temporaries(tmp_path) == [] and not (tmp_path / "lab.duckdb").exists()


def test_an_interrupted_analysis_leaves_no_temporary_file(runs, tmp_path, monkeypatch):
    from pipeline import cli as pipeline_cli

    def interrupted(*_):
        raise KeyboardInterrupt
    monkeypatch.setattr(pipeline_cli.tables, "analyze_run", interrupted)
    # (the command line says so in one line and exits 130, as a shell's Ctrl-C)
    assert pipeline_cli.main(["analyze", "-q", str(runs[0]), "--db", str(tmp_path / "lab.duckdb")]) == 130
    assert temporaries(tmp_path) == [] and not (tmp_path / "lab.duckdb").exists()


def test_load_is_an_upsert_and_reads_tables_written_before_directions(runs, tmp_path):
    a, b, _ = runs
    ta = store.write_tables(tables.analyze_run(a), tmp_path / "t" / "a")
    tb = store.write_tables(tables.analyze_run(b), tmp_path / "t" / "b")
    # b's tables as an older version wrote them: no direction column
    for n in schema.DIRECTION_TABLES:
        pl.read_parquet(tb / f"{n}.parquet").drop("direction").write_parquet(tb / f"{n}.parquet")
    db = tmp_path / "lab.duckdb"
    assert cli("load", str(ta), "--db", str(db)).returncode == 0
    r = cli("load", str(ta), str(tb), "--db", str(db))
    assert r.returncode == 0, r.stderr
    once = counts(db)
    assert set(once) == {"run-a", "run-b"}
    assert cli("load", str(tb), "--db", str(db)).returncode == 0
    assert counts(db) == once
    assert q(db, "SELECT DISTINCT direction FROM subflows WHERE run_id = 'run-b'") == [("down",)]
    r = cli("load", str(ta), "--db", str(a / "client.pcap"))
    assert r.returncode == 2 and "not a DuckDB database" in r.stderr


def test_tables_out_refuses_a_folder_that_is_not_ours(runs, tmp_path):
    a, _, _ = runs
    mine = tmp_path / "my-folder"
    mine.mkdir()
    (mine / "thesis.tex").write_text("do not lose me")
    r = cli("tables", str(a), "--out", str(mine))
    assert r.returncode == 2 and "not pipeline tables" in r.stderr
    assert (mine / "thesis.tex").read_text() == "do not lose me"
    out = tmp_path / "tables"
    assert cli("tables", str(a), "--out", str(out)).returncode == 0
    assert cli("tables", str(a), "--out", str(out)).returncode == 0  # ours: replaced


def test_help_states_the_store_semantics():
    out = cli("analyze", "--help").stdout
    for words in ("store", "replaces that run's rows", "untouched", "lock", "refused"):
        assert words in out, words
    assert "replaces its own rows" in cli("load", "--help").stdout


def test_a_database_checked_once_is_checked_again_when_it_changes(runs, tmp_path):
    a, _, _ = runs
    db = tmp_path / "lab.duckdb"
    assert cli("analyze", "-q", str(a), "--db", str(db)).returncode == 0
    assert store.check_db_target(db) == db  # ours: remembered with the file's identity
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE runs (name VARCHAR, score DOUBLE)")
    con.close()
    os.replace(foreign, db)  # someone else's database under the same name
    with pytest.raises(store.StoreError, match="not the lab's"):
        store.check_db_target(db)


def test_new_databases_start_from_the_kept_empty_store_or_without_one(runs, tmp_path, monkeypatch):
    a, _, _ = runs
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first, second = tmp_path / "one.duckdb", tmp_path / "two.duckdb"
    store.write_duckdb(tables.analyze_run(a), first)
    kept = list((tmp_path / "cache" / "mptcp-lab").glob("empty-store-*.duckdb"))
    assert len(kept) == 1 and q(kept[0], "SELECT count(*) FROM runs") == [(0,)]
    store.write_duckdb(tables.analyze_run(a), second)  # from the kept copy
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(Path, "home", lambda: (_ for _ in ()).throw(RuntimeError("no home")))
    third = store.write_duckdb(tables.analyze_run(a), tmp_path / "three.duckdb")  # none kept: made here
    for db in (second, third):
        assert counts(db) == counts(first)
        assert q(db, f"SELECT {derived.VERSION_MACRO}()") == q(first, f"SELECT {derived.VERSION_MACRO}()")


def test_a_table_over_a_spill_goes_in_whole_whatever_its_traces_and_batches(tmp_path, monkeypatch):
    # A LazyFrame (a streamed trace's rows) goes in batch by batch, one INSERT per run of
    # batches sharing run_id/trace (inserted as constants): runs that switch mid-stream,
    # switch back, or hold two values in one batch must all land, row for row.
    monkeypatch.setattr(inserts, "_BATCH_ROWS", 7)
    n = 100
    rows = pl.DataFrame({
        "run_id": ["a"] * 30 + ["b"] * 33 + ["a"] * 37,
        "trace": ["x.pcap"] * 30 + ["y.pcap"] * 33 + ["x.pcap"] * 30 + ["z.pcap"] * 7,
        "conn_id": [0] * n, "subflow_id": [i % 3 for i in range(n)],
        "direction": ["down", "up"] * (n // 2), "rtt_ms": [float(i) for i in range(n)],
        "frame": list(range(n)), "sent_s": [1.0 + i for i in range(n)],
    })
    spilled = tmp_path / "rows.arrow"
    rows.write_ipc(spilled)
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    migrate.ensure_schema(con)
    inserts.insert(con, {"rtt_samples": pl.scan_ipc(spilled)})
    got = frame(con, "SELECT * FROM rtt_samples ORDER BY frame")
    want = schema.conform("rtt_samples", rows)
    assert got.select(want.columns).equals(want)
