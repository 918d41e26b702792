"""polars frames to and from DuckDB through the Arrow C stream interface, both ways
with no copy and no pyarrow (a 170 MB package the pipeline needs nowhere else, whose
import alone costs more than writing a trace's tables)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import duckdb


class Arrow:
    """A polars frame as DuckDB scans it (``con.register(name, Arrow(df))``): DuckDB reads
    a polars frame itself only through pyarrow, any object with the stream interface
    without it."""

    def __init__(self, df: pl.DataFrame) -> None:
        self._df = df

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._df.__arrow_c_stream__(requested_schema)


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: list | dict | None = None) -> pl.DataFrame:
    """The result of ``sql`` as a polars frame (DuckDB's ``.pl()`` goes through pyarrow;
    polars reads the relation's own stream)."""
    return pl.DataFrame(con.sql(sql, params=params or None))
