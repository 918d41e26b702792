"""Every table and column has a description (issue: "every table and column has a DuckDB
comment, from the one schema, shown by `describe`; units consistent in names"): in
pipeline.schema as data, with its unit; in every DuckDB file the store writes, as the
tables', columns' and views' comments; and on the command line, `describe [TABLE]`."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline import derived, describe, migrate, schema, sqltext, store
from pipeline.schema import COLUMN_DOCS, NAME_UNITS, TABLE_DOCS, TABLES, UNITS

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "samples" / "mp2-iperf3-up"
TIMEOUT = 300  # s

# Columns whose unit is one their name's ending would state, yet their name does not
# (kept: many readers select them by name). A new column follows the rule.
UNNAMED_UNITS = {("delivered_1s", "second")}


def cli(*args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache is not None:  # the kept empty store (store._empty_store) goes here, not to the user's cache
        env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)


def catalog(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def column_comments(db: Path, table: str) -> dict[str, str | None]:
    return dict(catalog(db, "SELECT column_name, comment FROM duckdb_columns() WHERE schema_name = 'main' "
                            "AND table_name = ?", [table]))


def table_comments(db: Path) -> dict[str, str | None]:
    return dict(catalog(db, "SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'main'"))


# --- the schema: one description per table and column, each with its unit -----------

def test_every_table_and_column_has_a_description_and_every_description_a_column():
    assert list(TABLE_DOCS) == list(TABLES)
    assert list(COLUMN_DOCS) == list(TABLES)
    for t, cols in TABLES.items():
        assert list(COLUMN_DOCS[t]) == list(cols), f"{t}: COLUMN_DOCS and TABLES name other columns"
        doc = TABLE_DOCS[t]
        assert doc.strip() and "\n" not in doc and doc.endswith("."), t


@pytest.mark.parametrize("table", list(TABLES))
def test_every_column_description_states_its_unit(table):
    for c, doc in COLUMN_DOCS[table].items():
        u = schema.unit(doc)
        assert u in UNITS, f"{table}.{c}: {doc!r} ends with no unit of schema.UNITS ([ms], [count], ...)"
        assert len(schema.meaning(doc).split()) >= 2, f"{table}.{c}: a unit, but no description"
        assert "\n" not in doc, f"{table}.{c}"


@pytest.mark.parametrize("table", list(TABLES))
def test_units_agree_with_column_names(table):
    """A unit in a column's name (``_ms``, ``_s``, ``_bytes``, ``_pct``, ``_mbit``, ...) is
    its description's; a column measured in ms, s, bytes, % or Mbit/s says so in its name."""
    for c, doc in COLUMN_DOCS[table].items():
        u = schema.unit(doc)
        for suffix, units in NAME_UNITS.items():
            if c.endswith(suffix):
                assert u in units, f"{table}.{c}: named {suffix}, described in [{u}]"
        named = [s for s, units in NAME_UNITS.items() if u in units and s not in ("_packets", "_samples")]
        if named and (table, c) not in UNNAMED_UNITS:
            assert any(c.endswith(s) for s in named), f"{table}.{c}: in [{u}], but its name ends with none of {named}"


def test_a_comment_with_quotes_is_one_sql_literal():
    assert sqltext.literal("the client's") == "'the client''s'"
    assert sqltext.comment_on("t", "c", "it's [ms]") == """COMMENT ON COLUMN "t"."c" IS 'it''s [ms]'"""
    assert sqltext.comment_on("v", None, "a 'view'", kind="VIEW") == """COMMENT ON VIEW "v" IS 'a ''view'''"""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (c INTEGER)")
    con.execute(sqltext.comment_on("t", "c", "the sender's trace; 'down' [label]"))
    assert con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 't'").fetchall() == [
        ("the sender's trace; 'down' [label]",)]
    con.close()


def test_the_derived_layer_writes_its_comments_without_polars():
    """The capture imports pipeline.derived (study_of) and no polars: the views' comments
    come from pipeline.sqltext, not from pipeline.schema."""
    code = "import sys, pipeline.derived; assert 'polars' not in sys.modules, 'polars imported'"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr


def test_unit_and_meaning_split_a_description():
    assert schema.unit("configured one-way delay [ms]") == "ms"
    assert schema.meaning("configured one-way delay [ms]") == "configured one-way delay"
    assert schema.unit("when it arrived [Unix s]") == "Unix s"
    assert schema.unit("no unit here") == "" and schema.unit("") == ""


# --- the store: every DuckDB file carries them ---------------------------------------

def assert_commented(db: Path) -> None:
    """Every table and column of ours holds its description; every view of ours its
    documentation."""
    tables = table_comments(db)
    for t in TABLES:
        assert tables.get(t) == TABLE_DOCS[t], t
        got = column_comments(db, t)
        assert got == COLUMN_DOCS[t], f"{t}: {[c for c in got if got[c] != COLUMN_DOCS[t].get(c)]}"
    views = dict(catalog(db, "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal"))
    for d in derived.definitions({}):
        if d.kind == "view":
            assert views.get(d.name) == d.doc, d.name


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    """The pipeline's database of a committed sample run (``analyze``, as a user runs it)."""
    tmp = tmp_path_factory.mktemp("describe")
    db = tmp / "lab.duckdb"
    r = cli("analyze", "-q", str(SAMPLE), "--db", str(db), cache=tmp / "cache")
    assert r.returncode == 0, r.stderr[-3000:]
    return db


def test_a_database_the_pipeline_builds_carries_every_comment(sample_db):
    assert catalog(sample_db, "SELECT count(*) FROM subflows")[0][0] > 0
    comments = column_comments(sample_db, "subflows")
    assert set(comments) == set(TABLES["subflows"])
    assert all(comments.values()), [c for c, x in comments.items() if not x]
    assert_commented(sample_db)


def test_a_new_database_from_the_kept_empty_store_carries_them_too(tmp_path):
    """The second new database of a version is a copy of the first one's empty store."""
    cache = tmp_path / "cache"
    for name in ("first.duckdb", "second.duckdb"):
        r = cli("analyze", "-q", str(SAMPLE), "--db", str(tmp_path / name), cache=cache)
        assert r.returncode == 0, r.stderr[-3000:]
        assert_commented(tmp_path / name)
    assert list((cache / "mptcp-lab").glob("empty-store-*.duckdb")), "the empty store was kept"


def test_a_store_written_before_comments_gets_them_on_its_next_write(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    old = tmp_path / "old.duckdb"  # tables only, no comments: as earlier versions wrote them
    con = duckdb.connect(str(old))
    for t in TABLES:
        con.execute(schema.ddl(t))
    con.close()
    assert not any(column_comments(old, "subflows").values())
    store.write_duckdb({}, old)
    assert_commented(old)


def test_a_changed_comment_is_written_again_and_an_unchanged_store_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    db = store.write_duckdb({}, tmp_path / "lab.duckdb")
    con = duckdb.connect(str(db))
    con.execute("COMMENT ON COLUMN subflows.loss_rate IS 'an older text [fraction]'")
    con.execute("COMMENT ON TABLE runs IS NULL")
    migrate.ensure_comments(con)
    assert con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'subflows' "
                       "AND column_name = 'loss_rate'").fetchall() == [(COLUMN_DOCS["subflows"]["loss_rate"],)]
    statements: list[str] = []

    class Counting:
        def execute(self, sql, *args):
            statements.append(sql)
            return con.execute(sql, *args)

    migrate.ensure_comments(Counting())  # this version's already: one query, nothing written
    assert len(statements) == 1 and statements[0].lstrip().upper().startswith("SELECT"), statements
    con.execute("CHECKPOINT")
    con.close()
    assert_commented(db)


# --- describe ------------------------------------------------------------------------

def test_describe_lists_every_table_and_view_with_its_description():
    r = cli("describe")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for t in TABLES:
        line = next((x for x in lines if x.split()[:1] == [t]), None)
        assert line is not None, f"{t} not listed"
        assert describe.summary(TABLE_DOCS[t]) in line, t
    for d in derived.definitions({}):
        if d.kind == "view":
            assert any(x.split()[:1] == [d.name] for x in lines), f"view {d.name} not listed"


def test_describe_subflows_lists_every_column_with_type_unit_and_meaning():
    r = cli("describe", "subflows")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("subflows (table")
    rows = {x.split()[0]: x for x in lines if x.startswith("  ") and x.split()}
    for c, dtype in TABLES["subflows"].items():
        assert c in rows, f"column {c} not listed"
        line = rows[c]
        assert schema.sql_type(dtype) in line.split(), line
        assert f"  {schema.unit(COLUMN_DOCS['subflows'][c])}  " in line, line
        assert line.rstrip().endswith(schema.meaning(COLUMN_DOCS["subflows"][c])), line


def test_describe_a_view_shows_its_documentation_and_its_columns():
    text = describe.describe("dl_subflows")
    assert "Subflows, download direction" in text
    # a table's download rows: its columns, described as the table's
    assert schema.meaning(COLUMN_DOCS["subflows"]["loss_rate"]) in text
    text = describe.describe("run_metrics")
    assert "goodput_mbit" in text and "download_time_s" in text


def test_describe_reads_the_database_own_comments(sample_db, tmp_path):
    db = tmp_path / "copy.duckdb"
    db.write_bytes(sample_db.read_bytes())
    con = duckdb.connect(str(db))
    con.execute("COMMENT ON COLUMN subflows.loss_rate IS 'my own note [fraction]'")
    con.execute("CREATE TABLE my_notes (x INTEGER)")
    con.execute("CHECKPOINT")
    con.close()
    r = cli("describe", "subflows", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "my own note" in r.stdout and str(db) in r.stdout
    assert schema.meaning(COLUMN_DOCS["subflows"]["rtt_min_ms"]) in r.stdout
    r = cli("describe", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert any(x.split()[:1] == ["my_notes"] for x in r.stdout.splitlines()), "a user's own table is listed too"
    text = describe.describe("my_notes", str(db))
    assert "no column descriptions" in text


def test_an_unknown_table_is_a_clear_one_line_error():
    r = cli("describe", "subflow")
    assert r.returncode == 1
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "'subflow'" in err[0] and "subflows" in err[0], r.stderr
    assert r.stdout == ""


def test_a_database_that_cannot_be_read_is_a_clear_one_line_error(tmp_path):
    missing = tmp_path / "none.duckdb"
    r = cli("describe", "--db", str(missing))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert str(missing) in r.stderr and "no such database" in r.stderr
    lite = tmp_path / "lab.duckdb"
    con = sqlite3.connect(lite)
    con.execute("CREATE TABLE runs (run_id TEXT)")
    con.commit()
    con.close()
    r = cli("describe", "runs", "--db", str(lite))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "SQLite database" in r.stderr
    r = cli("describe", "--db", str(tmp_path))
    assert r.returncode == 2 and "folder" in r.stderr
