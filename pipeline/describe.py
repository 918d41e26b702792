"""What the lab's tables, views and columns hold: ``python -m pipeline describe [TABLE]``.

Read off a DuckDB catalog's comments (``COMMENT ON``), which the store writes from the
one schema (``schema.TABLE_DOCS``, ``schema.COLUMN_DOCS``; the views' from the derived
layer's documentation): a database file's own (``--db``, opened read-only), or, without
one, an in-memory database made from this version's schema and views. Both answers
come from the same place, so what ``describe`` shows is what a DuckDB client of the file
sees (``SELECT comment FROM duckdb_columns()``).
"""
from __future__ import annotations

import difflib
import os
import re
import textwrap
from dataclasses import dataclass

import duckdb

from . import derived, schema
from .inputs import not_duckdb, not_regular
from .migrate import ensure_schema

SCHEMA = "the lab's schema"  # where the descriptions come from without --db
SUMMARY_CHARS = 200  # a description in the list: its first sentence, at most this long


class DatabaseError(Exception):
    """The --db file cannot be read; the message is one line naming it and why."""


class UnknownTable(Exception):
    """No table or view of that name; the message is one line naming it."""


@dataclass(frozen=True)
class Relation:
    name: str
    kind: str  # "table" or "view"
    comment: str | None


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    comment: str | None


def open_catalog(db: str | None) -> duckdb.DuckDBPyConnection:
    """``db`` read-only, or (None) an in-memory database with every table and view of this
    version, their comments written as the store writes them."""
    config = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    if db is None:
        con = duckdb.connect(":memory:", config=config)
        ensure_schema(con)
        derived.install(con)
        return con
    if not db.strip():
        raise DatabaseError("--db: empty path")
    if not os.path.exists(db):
        raise DatabaseError(f"{db}: no such database (python -m pipeline analyze ... --db {db} makes one)")
    what = not_regular(db)
    if what:
        raise DatabaseError(f"{db}: is {what}, not a database file")
    try:
        with open(db, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise DatabaseError(f"{db}: cannot read it ({e.strerror or e})") from None
    what = not_duckdb(head)  # (DuckDB would fetch an extension from the internet to open an SQLite file)
    if what:
        raise DatabaseError(f"{db}: cannot be read as the lab's database ({what})")
    try:
        return duckdb.connect(db, read_only=True, config=config)
    except duckdb.Error as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise DatabaseError(f"{db}: DuckDB {duckdb.__version__} cannot open it: {first}") from None


def relations(con: duckdb.DuckDBPyConnection) -> list[Relation]:
    """The tables and views of the database's main schema, with their comments: ours first,
    in the schema's (tables) and the derived layer's (views) order, then any others."""
    rows = con.execute(
        "SELECT table_name, 'table', comment FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal UNION ALL "
        "SELECT view_name, 'view', comment FROM duckdb_views() "
        "WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal").fetchall()
    known = [*schema.TABLES, *(d.name for d in derived.definitions({}))]
    order = {n: i for i, n in enumerate(known)}
    return sorted((Relation(n, k, c) for n, k, c in rows),
                  key=lambda r: (r.kind != "table", order.get(r.name, len(known)), r.name))


def columns(con: duckdb.DuckDBPyConnection, name: str) -> list[Column]:
    """A table's or view's columns, in order, with their comments. A ``dl_<table>`` view
    (a table's download rows) shows its table's column comments where it has none."""
    rows = con.execute(
        "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name = ? ORDER BY column_index", [name]).fetchall()
    cols = [Column(*r) for r in rows]
    base = name.removeprefix("dl_")
    if name != base and base in derived.DIRECTED:
        of_base = {c.name: c.comment for c in columns(con, base)}
        cols = [c if c.comment else Column(c.name, c.type, of_base.get(c.name)) for c in cols]
    return cols


# the end of a description's first sentence (not "et al.", "e.g.", "i.e.", "Fig.")
_SENTENCE_END = re.compile(r"(?<! al)(?<!e\.g)(?<!i\.e)(?<!Fig)\.(?=\s)")


def summary(text: str | None) -> str:
    """A description's first sentence (a view's documentation runs to paragraphs)."""
    first = (text or "").strip().split("\n", 1)[0]
    m = _SENTENCE_END.search(first)
    first = first[: m.end()] if m else first
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 3].rstrip() + "..."


def render_list(rels: list[Relation], where: str) -> str:
    """Every table and view, one line each: name and description."""
    width = max((len(r.name) for r in rels), default=0)
    lines = []
    for kind, title in (("table", "tables"), ("view", "views (the derived layer: pipeline/derived.py)")):
        some = [r for r in rels if r.kind == kind]
        if some:
            lines += [f"{title} in {where}:" if not lines else f"\n{title}:"]
            lines += [f"  {r.name:<{width}}  {summary(r.comment)}".rstrip() for r in some]
    if not lines:
        return f"no tables or views in {where}"
    return "\n".join([*lines, "", "python -m pipeline describe TABLE lists a table's or view's columns."])


def render_relation(rel: Relation, cols: list[Column], where: str) -> str:
    """One table or view: its description, then each column's name, type, unit and meaning."""
    head = f"{rel.name} ({rel.kind} in {where})"
    doc = (rel.comment or "").strip()
    wrapped = [textwrap.fill(p, 100, initial_indent="  ", subsequent_indent="  ") for p in doc.split("\n") if p.strip()]
    rows = [(c.name, c.type, schema.unit(c.comment or ""), schema.meaning(c.comment or "")) for c in cols]
    widths = [max(len(r[i]) for r in [("column", "type", "unit", ""), *rows]) for i in range(3)]
    table = [f"  {n:<{widths[0]}}  {t:<{widths[1]}}  {u:<{widths[2]}}  {m}".rstrip()
             for n, t, u, m in [("column", "type", "unit", "description"), *rows]]
    lines = [head, *wrapped, "", *table]
    if cols and not any(c.comment for c in cols) and rel.kind == "table":
        lines += ["", f"  (no column descriptions in {where}"
                      + ("; it was written before the lab stored them: the next analyze or load into it adds "
                         "them, and describe without --db shows this version's)" if rel.name in schema.TABLES
                         else ")")]
    return "\n".join(lines)


def find(rels: list[Relation], name: str, where: str) -> Relation:
    """The table or view called ``name`` (any case), or ``UnknownTable`` naming it."""
    by_name = {r.name: r for r in rels}
    found = by_name.get(name) or next((r for r in rels if r.name.lower() == name.lower()), None)
    if found:
        return found
    near = difflib.get_close_matches(name, list(by_name), n=3)
    hint = f"did you mean {', '.join(near)}?" if near else "python -m pipeline describe lists them"
    raise UnknownTable(f"no table or view {name!r} in {where}; {hint}")


def describe(table: str | None = None, db: str | None = None) -> str:
    """The text ``python -m pipeline describe [TABLE] [--db DB]`` prints."""
    where = db if db is not None else SCHEMA
    con = open_catalog(db)
    try:
        rels = relations(con)
        if table is None:
            return render_list(rels, where)
        rel = find(rels, table, where)
        return render_relation(rel, columns(con, rel.name), where)
    finally:
        con.close()
