"""The store's schema in a DuckDB file: created in a new one, upgraded in one an older
version of the lab wrote (``ensure_schema``).

A file records no version of its own (files written before this module existed record
none either): what an upgrade needs is read off the tables and columns the file has, so
a file of any earlier version upgrades the same way. ``SCHEMA_VERSION`` counts the
upgrades below, newest last:

1. columns added to a table since it was written (``ALTER TABLE ... ADD COLUMN``, null
   in the rows already there; the column lands last in the file, wherever
   ``schema.TABLES`` puts it: inserts name their columns and readers select them, so
   a file's column order is free);
2. ``direction``: rows written before directions existed were downloads;
3. meta.json lifted into columns and tables (``run_paths``, ``run_outages``): a store
   from before them has its runs' ``meta_json`` lifted here;
4. ``runs.study`` (meta.json ``study``): an added column (1), null in older rows;
5. ``run_labels`` (labels a researcher gives runs, ``pipeline.labels``): a store from before
   it has the labels its runs' ``meta_json`` holds lifted into it.

Every table and column also carries its description as a DuckDB comment
(``schema.TABLE_DOCS``, ``schema.COLUMN_DOCS``; ``ensure_comments``): written into a
file that lacks them or holds another version's, left alone otherwise.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import schema
from .frames import frame
from .inserts import insert_one
from .labels import of_runs
from .sqltext import comment_on, in_one_transaction
from .tables import meta_tables_of

if TYPE_CHECKING:
    import duckdb

SCHEMA_VERSION = 5


def columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    rows = con.execute("SELECT table_name, column_name FROM information_schema.columns "
                       "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall()
    out: dict[str, list[str]] = {}
    for t, c in rows:
        out.setdefault(t, []).append(c)
    return out


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create missing tables; add columns a table of an older version lacks."""
    have = columns(con)
    lifted = "run_paths" not in have and "runs" in have  # a store from before meta.json's columns
    unlabelled = "run_labels" not in have and "runs" in have and not lifted  # (lifting gives labels too)
    for t, cols in schema.TABLES.items():
        if t not in have:
            con.execute(schema.ddl(t))
            continue
        for c, dtype in cols.items():
            if c not in have[t]:
                con.execute(f'ALTER TABLE "{t}" ADD COLUMN "{c}" {schema.sql_type(dtype)}')
                if c == "direction" and t in schema.DIRECTION_TABLES:
                    # rows written before directions existed were downloads (schema.legacy_direction)
                    con.execute(f'UPDATE "{t}" SET direction = \'down\'')
    if lifted and con.execute("SELECT count(*) FROM runs").fetchall()[0][0]:
        _lift_meta_json(con)
    if unlabelled:
        runs = frame(con, "SELECT run_id, meta_json FROM runs WHERE meta_json LIKE '%labels%'")
        insert_one(con, "run_labels", of_runs(runs))
    ensure_comments(con)


def comments(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str | None], str | None]:
    """The comments the database's tables (column None) and their columns hold now."""
    rows = con.execute(
        "SELECT table_name, NULL, comment FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = 'main' UNION ALL "
        "SELECT table_name, column_name, comment FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main'").fetchall()
    return {(t, c): text for t, c, text in rows}


def ensure_comments(con: duckdb.DuckDBPyConnection) -> None:
    """Our tables' and columns' descriptions as their comments (``schema.comments``), where
    they differ (a new file, one an older version wrote, a description changed since):
    in one transaction. A file whose comments are this version's costs one query."""
    have = comments(con)
    todo = [comment_on(t, c, text) for t, c, text in schema.comments() if have.get((t, c)) != text]
    if todo:
        con.execute(in_one_transaction(todo))


def _lift_meta_json(con: duckdb.DuckDBPyConnection) -> None:
    """A store from before meta.json's columns: its runs' meta.json lifted into the
    columns and tables the derived layer reads."""
    t = meta_tables_of(frame(con, "SELECT * FROM runs"))
    con.execute("DELETE FROM runs")
    for name, df in t.items():
        insert_one(con, name, df)
