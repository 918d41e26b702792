"""Runs compared by a label a researcher gave them (``run_labels``: ``analyze --label
KEY=VALUE``, ``--labels FILE.csv``, meta.json ``labels``): per value of the label, each
metric's mean over the runs with its 95 % interval, and each other value against a
baseline (the first value, or ``base``) as the difference and the ratio of the means,
each with its 95 % interval. ``mptcp-lab compare`` (report/cli.py) prints them;
labfig/compare.py draws them.

The intervals are the lab's (``findings.stats``): a mean by ``mean`` (the union of the
bootstrap-t and Student's t intervals), a difference by ``mean_diff`` (Welch), a ratio
by ``mean_ratio`` (Welch on the log). Their coverage is checked at n = 5 runs
(tests/test_interval_coverage.py): one resting on fewer runs (``stats.MIN_RUNS``) is
printed all the same, marked, with a warning. Stalled runs (``run_config.usable``
false) are left out and counted, as the findings leave them out.

A run's values come from the derived layer (pipeline/derived.py), never re-derived here
(``METRICS``: where each comes from); a run without a value of a metric is no sample of
it (``n`` counts the runs with one).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl

from . import stats
from .measure import values


class CompareError(Exception):
    """A comparison that cannot be made as asked; the message is one line."""


class BadArgument(CompareError):
    """An argument names what is not there (a metric, a --base value)."""


@dataclass(frozen=True)
class Metric:
    name: str
    title: str  # with its unit: the table's and the figure's
    source: str  # where a run's value comes from
    bounds: tuple[float, float] = (-math.inf, math.inf)  # its range: an interval is cut to it


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("download_time_s", "download time (s)",
           "run_metrics.download_time_s: the main connection's first SYN to its last data packet, client trace"),
    Metric("rtt_ms", "RTT (ms)",
           "run_rtt: the mean of the main connection's RTT samples over every path (sum of rtt_mean_ms x rtt_n "
           "/ sum of rtt_n), server trace"),
    Metric("loss_pct", "loss (%)",
           "dl_subflows of main_connections: 100 x retransmitted / data packets over every subflow, server "
           "trace (run_metrics' loss_<side>_pct, both sides pooled)", (0.0, 100.0)),
    Metric("share_pct", "cellular share (%)",
           "run_metrics.cell_share_pct: payload bytes on the paths not labelled wifi* / all (label paths with "
           "--path)", stats.SHARE_PCT),
    Metric("ofo_ms", "out-of-order delay (ms)",
           "run_metrics.ofo_mean_ms: the mean out-of-order delay of the main connection's packets, client trace"),
    Metric("owd_ms", "one-way delay (ms)",
           "owd_samples: the mean owd_ms of the main connection's download packets (a run folder holding both "
           "ends' traces)"),
)}

# Per run labelled with the key ($1): its value of the label (grp), whether the findings
# would use it (run_config.usable: not stalled) and each metric of METRICS.
RUN_VALUES = """
    WITH m AS (SELECT run_id, download_time_s, cell_share_pct AS share_pct, ofo_mean_ms AS ofo_ms FROM run_metrics),
    rtt AS (SELECT run_id, sum(rtt_mean_ms * rtt_n) / nullif(sum(rtt_n), 0) AS rtt_ms FROM run_rtt GROUP BY run_id),
    loss AS (SELECT s.run_id, 100.0 * sum(s.retransmitted_packets) / nullif(sum(s.data_packets), 0) AS loss_pct
             FROM dl_subflows s JOIN main_connections USING (run_id, trace, vantage, conn_id)
             WHERE s.vantage = 'server' GROUP BY s.run_id),
    owd AS (SELECT o.run_id, avg(o.owd_ms) AS owd_ms FROM owd_samples o
            JOIN main_connections c ON c.run_id = o.run_id AND c.trace = o.trace AND c.conn_id = o.conn_id
            WHERE o.direction = 'down' GROUP BY o.run_id)
    SELECT l.run_id, l."value" AS grp, coalesce(c.usable, TRUE) AS usable,
           m.download_time_s, rtt.rtt_ms, loss.loss_pct, m.share_pct, m.ofo_ms, owd.owd_ms
    FROM run_labels l LEFT JOIN run_config c USING (run_id) LEFT JOIN m USING (run_id)
    LEFT JOIN rtt USING (run_id) LEFT JOIN loss USING (run_id) LEFT JOIN owd USING (run_id)
    WHERE l."key" = $1 ORDER BY l."value", l.run_id"""


def label_keys(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The label keys the database's runs carry."""
    if not _has_labels(con):
        return []
    return [k for (k,) in con.execute('SELECT DISTINCT "key" FROM run_labels ORDER BY 1').fetchall()]


def _has_labels(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'run_labels'")
                .fetchall()[0][0])


def run_values(con: duckdb.DuckDBPyConnection, key: str) -> pl.DataFrame:
    """Per run labelled ``key`` (a connection with the derived layer: ``pipeline.derived.connect``):
    ``run_id``, ``grp`` (its value), ``usable`` and one column per metric."""
    if not _has_labels(con):
        raise CompareError("it holds no labels (no run_labels table: written before labels existed); give runs "
                           "labels with analyze --label KEY=VALUE or --labels FILE.csv")
    return pl.from_arrow(con.sql(RUN_VALUES, params=[key]).to_arrow_table())


@dataclass(frozen=True)
class Line:
    """One estimate: a group's mean, or a group against the baseline (difference, ratio)."""

    metric: str
    kind: str  # "mean" | "difference" | "ratio"
    group: str  # the label's value (against the baseline: the group compared with it)
    n: tuple[int, ...]  # runs with a value: (n,), or (n of the group, n of the baseline)
    value: float
    lo: float = math.nan  # the 95 % interval (nan: fewer than 2 runs, or no interval by the method)
    hi: float = math.nan

    @property
    def few(self) -> bool:
        """Fewer runs than the lab checks its intervals' coverage at."""
        return min(self.n) < stats.MIN_RUNS


@dataclass
class Comparison:
    key: str
    groups: list[str]  # the label's values, in order
    base: str  # the baseline group
    runs: dict[str, int]  # usable runs per group
    lines: list[Line]
    stalled: int = 0  # runs left out


def _order(value: str) -> tuple:
    """Numbers by their value (2 before 10), then text."""
    try:
        x = float(value)
    except ValueError:
        return (1, 0.0, value)
    return (0, x, value) if math.isfinite(x) else (1, 0.0, value)


def compare(df: pl.DataFrame, key: str, metrics: list[str] | None = None, base: str | None = None) -> Comparison:
    """The estimates of ``run_values``' rows: per metric, each group's mean, then each
    other group against ``base`` (default: the first value)."""
    metrics = list(dict.fromkeys(metrics or METRICS))
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise BadArgument(f"--metric {unknown[0]!r}: not a metric of compare ({', '.join(METRICS)})")
    usable = df.filter(pl.col("usable"))
    groups = sorted(set(usable["grp"].to_list()), key=_order)
    if not groups:
        raise CompareError(f"no usable run is labelled {key!r} ({df.height} stalled)")
    base = groups[0] if base is None else base
    if base not in groups:
        raise BadArgument(f"--base {base!r}: no usable run has {key} = {base!r} (values: {', '.join(groups)})")
    lines: list[Line] = []
    for m in metrics:
        v = {g: values(usable.filter(pl.col("grp") == g), m) for g in groups}
        lines += [_mean(key, m, g, v[g]) for g in groups]
        lines += [_against(key, m, kind, g, v[g], base, v[base]) for g in groups if g != base
                  for kind in ("difference", "ratio")]
    runs = {g: usable.filter(pl.col("grp") == g).height for g in groups}
    return Comparison(key, groups, base, runs, lines, stalled=df.height - usable.height)


def _mean(key: str, metric: str, group: str, v: np.ndarray) -> Line:
    if len(v) < 2:
        return Line(metric, "mean", group, (len(v),), float(v[0]) if len(v) else math.nan)
    e = stats.estimate({"x": v}, stats.mean("x", bounds=METRICS[metric].bounds),
                       stats.seed_of("compare", key, metric, group))
    return Line(metric, "mean", group, (e.n,), e.value, e.lo, e.hi)


def _against(key: str, metric: str, kind: str, group: str, v: np.ndarray, base: str, w: np.ndarray) -> Line:
    """``group`` against ``base``: the difference or the ratio of their means."""
    n = (len(v), len(w))
    if min(n) == 0:
        return Line(metric, kind, group, n, math.nan)
    stat = stats.mean_diff("a", "b") if kind == "difference" else stats.mean_ratio("a", "b")
    samples = {"a": v, "b": w}
    if min(n) < 2:
        return Line(metric, kind, group, n, stat.value(samples))
    e = stats.estimate(samples, stat, stats.seed_of("compare", key, metric, kind, group, base))
    return Line(metric, kind, group, n, e.value, e.lo, e.hi)


# --------------------------------------------------------------- as text


def number(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else "n/a"


def _interval(line: Line) -> str:
    if min(line.n) < 2:
        return "n/a (fewer than 2 runs)"
    if not (math.isfinite(line.lo) and math.isfinite(line.hi)):
        return "n/a"
    return f"[{number(line.lo)}, {number(line.hi)}]" + (" *" if line.few else "")


def _what(c: Comparison, line: Line) -> str:
    if line.kind == "mean":
        return f"{c.key} = {line.group}"
    return f"{line.group} {'-' if line.kind == 'difference' else '/'} {c.base}"


def table(c: Comparison) -> str:
    """The comparison as a text table: a heading, then per metric its lines."""
    groups = ", ".join(f"{g} ({c.runs[g]} run{'s' * (c.runs[g] != 1)})" for g in c.groups)
    head = [f"runs by {c.key}: {groups}" + (f"; {c.stalled} stalled run(s) left out" if c.stalled else ""),
            f"means with their 95% intervals; each other value against {c.key} = {c.base}: the difference "
            "and the ratio of the means (findings/stats.py: mean, mean_diff, mean_ratio)", ""]
    rows = [("metric", "compared", "runs", "estimate", "95% interval")]
    seen: set[str] = set()
    for line in c.lines:
        title = "" if line.metric in seen else METRICS[line.metric].title
        seen.add(line.metric)
        rows.append((title, _what(c, line), " vs ".join(map(str, line.n)), f"{line.kind} {number(line.value)}",
                     _interval(line)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(head + ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows])


def warnings(c: Comparison) -> list[str]:
    """What the reader must know beside the table (one line each)."""
    out = []
    if any(line.few and min(line.n) >= 2 for line in c.lines):
        out.append(f"warning: an interval marked * rests on fewer than {stats.MIN_RUNS} runs: it is printed, but "
                   f"the lab checks its intervals' coverage at n >= {stats.MIN_RUNS} runs per group "
                   "(findings/stats.py MIN_RUNS, tests/test_interval_coverage.py)")
    if len(c.groups) == 1:
        out.append(f"note: every usable run has {c.key} = {c.groups[0]}: no other value to compare it with")
    return out
