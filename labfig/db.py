"""Read-only access to the lab's DuckDB file with the derived layer
(``pipeline.derived``: run_config, run_metrics, run_facts, primary_pairs, ...), plus
the SQL snippets for pre-aggregation (quantiles for box plots, thinned CCDF points).
Run-level quantities are never derived here: select them from the derived views."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl

from findings.measure import choose_cc
from pipeline import derived
from pipeline.frames import frame

from .session import lab


@lru_cache(maxsize=None)
def connect(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file read-only, with the derived views (the notebooks never write to it)."""
    return derived.connect(Path(path))


def query(sql: str, params: list | dict | None = None) -> pl.DataFrame:
    """Run SQL on the opened lab's database (derived views included), return a polars DataFrame."""
    # the connection itself, not a cursor: a cursor is a new connection, without the
    # session's temporary derived views
    con = connect(str(lab().db))
    return frame(con, sql, params)


def runs_of(paper: str, stalled: bool = True) -> str:
    """SQL: the run_ids of one paper's campaign (a sub-select for IN (...)), from the
    derived layer's ``run_config`` (``study``: the study its campaign declares).

    ``stalled=False`` leaves out the runs ``run_config.stalled`` flags: the host stalled
    the link emulator during the run (a frame left later than the campaign's stall
    threshold, 5 ms by default, after the repeats the campaign allows; ``runs.stalled``),
    or D-ITG / linkem reported a stall in meta.json, so the path's RTT/delay in that run
    includes the stall. Runs without the measurement (tbf links, captures made before
    stalls were recorded) are kept.
    """
    sql = f"SELECT run_id FROM run_config WHERE study = '{paper}'"
    return sql if stalled else sql + f" AND {USABLE}"


# The runs the host did not stall (unmeasured: kept): run_config.usable, the derived
# layer's one rule, which the findings read too (findings.measure.Facts.of).
USABLE = "usable"


def usable(paper: str, alias: str = "", outages: bool = False) -> str:
    """SQL condition on ``run_config`` / ``run_facts`` (table alias ``alias``): the runs of
    ``paper`` the figures use, the same selection as the findings (``runs_of(paper,
    stalled=False)``, ``findings.measure``): stalled runs left out and, unless
    ``outages``, the handover runs (links taken down on purpose) too."""
    p = f"{alias}." if alias else ""
    cond = f"{p}study = '{paper}' AND {p}usable"  # USABLE with the alias (run_config.usable)
    return cond if outages else f"{cond} AND NOT {p}has_outages"


def left_out(paper: str) -> str:
    """Markdown: how many of ``paper``'s runs there are, how many the figures leave out
    because the host stalled the emulator (with the worst lateness and the run ids) and
    how many are handover runs (shown only where a figure is about outages)."""
    n = query(f"""SELECT count(*) AS runs, count(*) FILTER (WHERE stalled) AS stalled,
                         count(*) FILTER (WHERE has_outages AND {USABLE}) AS outages
                  FROM run_config WHERE study = '{paper}'""").row(0, named=True)
    text = f"**{n['runs']} runs** of campaign `{paper}`"
    if not n["runs"]:
        return text + "."
    if n["stalled"]:
        st = stalled_runs(paper)
        worst = st["worst_late_ms"].drop_nulls()
        ids = ", ".join(f"`{r}`" for r in st["run_id"].head(5).to_list()) + (", ..." if st.height > 5 else "")
        text += (f"; **{n['stalled']} stalled run(s) left out** of every figure and finding (the host "
                 f"stalled the link emulator: a frame left more than the campaign's threshold late"
                 + (f", worst {worst.max():.1f} ms" if worst.len() else "") + f"): {ids}")
    else:
        text += "; no stalled run left out"
    if n["outages"]:
        text += f"; {n['outages']} handover run(s) (outages on purpose) only in the outage figures"
    return text + "."


def stalled_runs(paper: str | None = None) -> pl.DataFrame:
    """The runs flagged as stalled (of one paper, or all), worst first, with what flags
    them: for a notebook's note on what it left out or a findings column."""
    flagged = "SELECT run_id FROM run_config WHERE stalled" + (f" AND study = '{paper}'" if paper else "")
    return query(f"""
        SELECT run_id, campaign, scenario, mode, worst_late_ms, late_packets, late_intervals,
               worst_reader_lag_ms, steal_pct, attempt
        FROM runs WHERE run_id IN ({flagged}) ORDER BY worst_late_ms DESC""")


def mptcp_cc(paper: str, prefer: tuple[str, ...]) -> str | None:
    """The congestion control of the MPTCP runs a paper's claims use: the first of
    ``prefer`` that its runs have (``findings.measure.choose_cc``: the claims' rule)."""
    return choose_cc(set(query(f"SELECT DISTINCT congestion_control AS cc FROM run_facts WHERE study = '{paper}' "
                               f"AND transport = 'MPTCP' AND congestion_control IS NOT NULL")["cc"].to_list()), prefer)


def per_second_sql(source: str) -> str:
    """SQL: ``source``'s rows (run_id, second, path, mbit) with a 0 row for every second of
    a run in which one of its paths delivered nothing (an outage), from 0 to the run's last
    second, so that a step line drops to 0 there instead of bridging the gap (the claims
    count those seconds as 0 too)."""
    return f"""
        WITH d AS (SELECT run_id, second::BIGINT AS second, path, mbit FROM ({source})),
        span AS (SELECT run_id, max(second) AS last FROM d GROUP BY run_id),
        grid AS (SELECT p.run_id, p.path, unnest(range(0, s.last + 1)) AS second
                 FROM (SELECT DISTINCT run_id, path FROM d) p JOIN span s USING (run_id))
        SELECT g.run_id, g.second, g.path, coalesce(d.mbit, 0) AS mbit
        FROM grid g LEFT JOIN d USING (run_id, path, second) ORDER BY ALL"""


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


def _ranked(value: str, source: str, keys: str) -> str:
    """SQL WITH clause ``s``: each non-null sample ``x`` with its rank ``r`` and group size ``n``."""
    return f"""
        WITH s AS (
            SELECT {keys}, {value} AS x,
                   row_number() OVER (PARTITION BY {keys} ORDER BY {value}) AS r,
                   count(*) OVER (PARTITION BY {keys}) AS n
            FROM ({source}) WHERE {value} IS NOT NULL
        )"""


def ccdf_sql(value: str, source: str, by: list[str], points: int = 60) -> str:
    """SQL: thinned CCDF points P(X > x) of ``value`` per group.

    Every sample counts in the denominator (zeros too, e.g. in-order packets in the
    out-of-order delay); the points kept are spaced evenly in rank and, for the
    tail, logarithmically in the number of larger samples, so log-log plots keep
    their tails while each group stays at a few hundred rows.
    """
    keys = ", ".join(by)
    return f"""{_ranked(value, source, keys)}
        SELECT {keys}, x, (n - r)::DOUBLE / n AS ccdf, n
        FROM s
        WHERE r = n OR r = 1
           OR r % greatest(1, n // {points}) = 0
           OR floor(ln(n - r + 1) * 6) <> floor(ln(n - r + 2) * 6)
        ORDER BY {keys}, x"""


def cdf_sql(value: str, source: str, by: list[str], points: int = 100) -> str:
    """SQL: thinned empirical CDF points P(X <= x) per group."""
    keys = ", ".join(by)
    return f"""{_ranked(value, source, keys)}
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
