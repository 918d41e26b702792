"""Rows into an open DuckDB store: the tables of one write, as fast as DuckDB takes
them (the two per-packet tables in threads of their own, a spilled trace's tables
batch by batch with DuckDB's memory bounded). ``store`` decides what is replaced and
where the file goes; this only inserts.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import polars as pl

from . import schema
from .frames import Arrow

if TYPE_CHECKING:
    import duckdb


# Columns that one trace's rows share: inserted as constants when they hold one value.
_CONSTANT_CANDIDATES = ("run_id", "trace", "vantage")
# The two tables with a row per packet or sample: each inserted by its own DuckDB
# connection, in parallel with the rest (most of a write's time is DuckDB compressing
# and writing these two).
_BIG_TABLES = ("seq_packets", "rtt_samples")


# Rows per batch of a table over a spill (a streamed trace's), each its own INSERT: at 10M
# packets 2^18 rows took 17.2 s and peaked at 481 MB, 2^16 and 2^17 21.4 and 21.3 s at
# 470 MB (one INSERT over a pyarrow reader of 2^16-row batches had taken 18.5 s, 474 MB).
_BATCH_ROWS = 1 << 18


def _constants(df: pl.DataFrame) -> dict[str, object]:
    """The columns of ``_CONSTANT_CANDIDATES`` that hold one value in ``df``: inserted as
    SQL constants, since exported to Arrow they would be repeated on each of millions
    of rows. (Asked through select: a trace's constant is a scalar column there, not
    made row by row.)"""
    candidates = [c for c in _CONSTANT_CANDIDATES if c in df.columns]
    one = df.select((pl.col(c).null_count() == 0) & (pl.col(c).n_unique() == 1)
                    for c in candidates).row(0) if candidates else ()
    return {c: df[c][0] for c, single in zip(candidates, one) if single}


def _insert_from(con: duckdb.DuckDBPyConnection, name: str, cols: list[str], consts: dict[str, object],
                 source: object) -> None:
    """INSERT ``source`` (anything DuckDB scans: a frame with the Arrow C stream
    interface) with its ``cols`` and ``consts``."""
    frame = f"_frame_{name}"
    con.register(frame, source)
    names = ", ".join(f'"{c}"' for c in [*cols, *consts])
    values = ", ".join([*(f'"{c}"' for c in cols), *("?" for _ in consts)])
    try:
        con.execute(f'INSERT INTO "{name}" ({names}) SELECT {values} FROM {frame}', list(consts.values()))
    finally:
        con.unregister(frame)


def insert_one(con: duckdb.DuckDBPyConnection, name: str, df: pl.DataFrame | pl.LazyFrame) -> None:
    """``df``'s rows into table ``name``. A LazyFrame (a table over a spill) goes batch by
    batch, one INSERT each: one transaction over all of them kept every row in DuckDB's
    memory until the commit (964 MB at 10M packets against 481), and a single INSERT over
    a stream of batches needs pyarrow's RecordBatchReader, which the pipeline no longer
    installs."""
    df = schema.conform(name, df)
    frames = df.collect_batches(chunk_size=_BATCH_ROWS) if isinstance(df, pl.LazyFrame) else [df]
    for frame in frames:
        if frame.height:
            consts = _constants(frame)
            cols = [c for c in frame.columns if c not in consts]
            _insert_from(con, name, cols, consts, Arrow(frame.select(cols)))


# DuckDB's memory while a streamed trace's tables go in: it would otherwise hold
# hundreds of MB of row groups it compresses, on top of the rows being inserted
# (at 10M packets, 64 MB took as long as 1 GB, and peaked 50 MB lower than 128 MB).
_STREAMED_MEMORY_LIMIT = "64MB"


def insert(con: duckdb.DuckDBPyConnection, tables: dict[str, pl.DataFrame | pl.LazyFrame]) -> None:
    if any(isinstance(df, pl.LazyFrame) for df in tables.values()):
        # over a spill: kept out of memory, so one table after another, DuckDB's memory
        # bounded; in any row order (the rows of a streamed trace come as they settle,
        # and every reader orders them), so that both threads write row groups
        con.execute(f"SET memory_limit = '{_STREAMED_MEMORY_LIMIT}'")
        con.execute("SET preserve_insertion_order = false")
        for name in schema.TABLES:
            insert_one(con, name, tables.get(name, schema.empty(name)))
        return
    big = [n for n in _BIG_TABLES if n in tables and schema.rows(tables[n])]
    errors: list[BaseException] = []

    def insert_big(name: str) -> None:
        try:
            with con.cursor() as cur:
                insert_one(cur, name, tables[name])
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=insert_big, args=(n,), name=f"insert {n}") for n in big]
    for t in threads:
        t.start()
    try:
        con.execute("BEGIN TRANSACTION")  # one commit for the small tables, not one each
        for name in schema.TABLES:
            if name not in big:
                insert_one(con, name, tables.get(name, schema.empty(name)))
        con.execute("COMMIT")
    finally:
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
