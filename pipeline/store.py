"""Writing tables: per-run Parquet folders and the one DuckDB file, both atomically."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import duckdb
import polars as pl

from . import derived, schema


def write_tables(tables: dict[str, pl.DataFrame], out_dir: str | os.PathLike) -> Path:
    """``out_dir/<table>.parquet`` for every table; the folder appears whole or not at all."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name in schema.TABLES:
            df = tables.get(name, schema.empty(name))
            df.write_parquet(tmp / f"{name}.parquet")
        if out.exists():
            old = out.with_name(f".{out.name}.old.{os.getpid()}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old)
        else:
            tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_tables(table_dir: str | os.PathLike) -> dict[str, pl.DataFrame]:
    d = Path(table_dir)
    return {n: pl.read_parquet(d / f"{n}.parquet") if (d / f"{n}.parquet").exists() else schema.empty(n)
            for n in schema.TABLES}


def write_duckdb(tables: dict[str, pl.DataFrame], db: str | os.PathLike) -> Path:
    """Build the database in a temporary file next to ``db`` and rename it into place."""
    db = Path(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{db.name}.", suffix=".tmp", dir=db.parent)
    os.close(fd)
    os.unlink(tmp_name)  # duckdb wants to create the file itself
    try:
        con = duckdb.connect(tmp_name)
        try:
            for name in schema.TABLES:
                con.execute(schema.ddl(name))
                df = schema.conform(name, tables.get(name, schema.empty(name)))
                if df.height:
                    con.register("_frame", df.to_arrow())
                    con.execute(f'INSERT INTO "{name}" SELECT * FROM _frame')
                    con.unregister("_frame")
            derived.install(con)  # the run-level views a `duckdb lab.duckdb` user selects from
        finally:
            con.close()
        os.replace(tmp_name, db)
    except BaseException:
        for f in (tmp_name, tmp_name + ".wal"):
            if os.path.exists(f):
                os.unlink(f)
        raise
    return db


def load_table_dirs(dirs: list[str | os.PathLike], db: str | os.PathLike) -> Path:
    """One DuckDB file from many per-run Parquet folders."""
    parts = [read_tables(d) for d in dirs]
    merged = {n: pl.concat([p[n] for p in parts]) if parts else schema.empty(n) for n in schema.TABLES}
    return write_duckdb(merged, db)
