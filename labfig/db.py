"""Read-only access to the lab's DuckDB file, plus the SQL snippets for
pre-aggregation (quantiles for box plots, thinned CCDF points)."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl

# Which runs belong to which paper: a regular expression on runs.campaign.
PAPER_CAMPAIGNS = {
    "chen": r"(?i)chen",
    "cs244": r"(?i)cs244|raiciu",
    "deng": r"(?i)deng",
    "ditg": r"(?i)ditg|cloud|latency",
    "ferlin": r"(?i)ferlin|drepas",
}


def db_path(path: str | os.PathLike | None = None) -> Path:
    p = path or os.environ.get("MPTCP_LAB_DB")
    if not p:
        raise RuntimeError("set MPTCP_LAB_DB to the lab's DuckDB file (results/lab.duckdb)")
    return Path(p)


@lru_cache(maxsize=None)
def connect(path: str | None = None) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file read-only (the notebooks never write to it)."""
    return duckdb.connect(str(db_path(path)), read_only=True)


def query(sql: str, params: list | dict | None = None) -> pl.DataFrame:
    """Run SQL on the lab database, return a polars DataFrame."""
    cur = connect(os.environ.get("MPTCP_LAB_DB")).cursor()
    try:
        return pl.from_arrow(cur.sql(sql, params=params or None).to_arrow_table())
    finally:
        cur.close()


def runs_of(paper: str) -> str:
    """SQL: the run_ids of one paper's campaign (a sub-select for IN (...))."""
    pattern = PAPER_CAMPAIGNS[paper].replace("'", "''")
    return f"SELECT run_id FROM runs WHERE regexp_matches(coalesce(campaign, ''), '{pattern}')"


def quantiles_sql(value: str, source: str, by: list[str]) -> str:
    """SQL: min/q1/median/q3/max/mean/n of ``value`` per group (one row per box)."""
    keys = ", ".join(by)
    return f"""
        SELECT {keys},
               min({value}) AS lo, quantile_cont({value}, 0.25) AS q1,
               median({value}) AS median, quantile_cont({value}, 0.75) AS q3,
               max({value}) AS hi, avg({value}) AS mean, count(*) AS n
        FROM ({source}) WHERE {value} IS NOT NULL
        GROUP BY {keys} ORDER BY {keys}"""


def ccdf_sql(value: str, source: str, by: list[str], points: int = 60) -> str:
    """SQL: thinned CCDF points P(X > x) of ``value`` per group.

    Every sample counts in the denominator (zeros too, e.g. in-order packets in the
    out-of-order delay); the points kept are spaced evenly in rank and, for the
    tail, logarithmically in the number of larger samples, so log-log plots keep
    their tails while each group stays at a few hundred rows.
    """
    keys = ", ".join(by)
    return f"""
        WITH s AS (
            SELECT {keys}, {value} AS x,
                   row_number() OVER (PARTITION BY {keys} ORDER BY {value}) AS r,
                   count(*) OVER (PARTITION BY {keys}) AS n
            FROM ({source}) WHERE {value} IS NOT NULL
        )
        SELECT {keys}, x, (n - r)::DOUBLE / n AS ccdf, n
        FROM s
        WHERE r = n OR r = 1
           OR r % greatest(1, n // {points}) = 0
           OR floor(ln(n - r + 1) * 6) <> floor(ln(n - r + 2) * 6)
        ORDER BY {keys}, x"""


def cdf_sql(value: str, source: str, by: list[str], points: int = 100) -> str:
    """SQL: thinned empirical CDF points P(X <= x) per group."""
    keys = ", ".join(by)
    return f"""
        WITH s AS (
            SELECT {keys}, {value} AS x,
                   row_number() OVER (PARTITION BY {keys} ORDER BY {value}) AS r,
                   count(*) OVER (PARTITION BY {keys}) AS n
            FROM ({source}) WHERE {value} IS NOT NULL
        )
        SELECT {keys}, x, r::DOUBLE / n AS cdf, n FROM s
        WHERE r = 1 OR r = n OR r % greatest(1, n // {points}) = 0
        ORDER BY {keys}, x"""


def mean_se_sql(value: str, source: str, by: list[str]) -> str:
    """SQL: sample mean and standard error (sd / sqrt(n)) per group, as in Chen's tables."""
    keys = ", ".join(by)
    return f"""
        SELECT {keys}, avg({value}) AS mean,
               coalesce(stddev_samp({value}) / sqrt(count({value})), 0) AS se,
               count({value}) AS n
        FROM ({source}) WHERE {value} IS NOT NULL
        GROUP BY {keys} ORDER BY {keys}"""


SIZE_LABEL_SQL = """CASE
    WHEN size_bytes IS NULL THEN NULL
    WHEN size_bytes % 1073741824 = 0 THEN printf('%d GB', size_bytes // 1073741824)
    WHEN size_bytes % 1048576 = 0 THEN printf('%d MB', size_bytes // 1048576)
    WHEN size_bytes % 1000000 = 0 THEN printf('%d MB', size_bytes // 1000000)
    WHEN size_bytes % 1024 = 0 THEN printf('%d KB', size_bytes // 1024)
    WHEN size_bytes % 1000 = 0 THEN printf('%d KB', size_bytes // 1000)
    ELSE printf('%d B', size_bytes) END"""


def path_rtt_sql(path: str) -> str:
    """SQL: the configured RTT (ms) of ``path`` from meta.json (down + up one-way delay)."""
    j = "meta_json"
    return (f"(coalesce(TRY_CAST(json_extract_string({j}, '$.paths.{path}.down.delay_ms') AS DOUBLE), 0)"
            f" + coalesce(TRY_CAST(json_extract_string({j}, '$.paths.{path}.up.delay_ms') AS DOUBLE), 0))")


def path_loss_sql(path: str) -> str:
    """SQL: the configured downstream loss probability of ``path`` from meta.json."""
    j = "meta_json"
    return (f"coalesce(TRY_CAST(json_extract_string({j}, '$.paths.{path}.down.loss') AS DOUBLE),"
            f" TRY_CAST(json_extract_string({j}, '$.paths.{path}.down.loss.p') AS DOUBLE), 0)")


# SQL: the socket buffer size (bytes) a run used: meta.json buffer_bytes, else the
# max of net.ipv4.tcp_rmem / net.core.rmem_max applied, else "<n>k" in the scenario.
BUFFER_SQL = r"""coalesce(
    TRY_CAST(json_extract_string(meta_json, '$.buffer_bytes') AS BIGINT),
    TRY_CAST(split_part(json_extract_string(meta_json, '$.sysctls_applied."net.ipv4.tcp_rmem"'), ' ', 3) AS BIGINT),
    TRY_CAST(json_extract_string(meta_json, '$.sysctls_applied."net.core.rmem_max"') AS BIGINT),
    TRY_CAST(nullif(regexp_extract(scenario, '(\d+)\s*[kK]', 1), '') AS BIGINT) * 1000)"""
