"""Per-run charts: the time-sequence graph of a run's connection (as tcptrace/xplot and
mptcptrace draw it), RTT over time per subflow and throughput per subflow. One
definition, used by ``python -m pipeline plot`` and ``notebooks/explore.py``.

Which trace each chart reads (Chen et al. §3.3, as the tables do): the sequence graph
and the throughput come from the *receiver's* trace (the client for a download, where
the out-of-order delay is measured), the RTT from the *sender's* (where it is
sampled). The run's connection is the one that carried the most payload; its data
direction decides who is receiver and sender. Times are seconds since the
connection's first SYN in that trace.

Charts carry their data inline, so Altair's 5,000-row limit is kept by
pre-aggregating here (``thin``, ``rtt_rows``, ``throughput_rows``): a large run is drawn
from at most ``BUDGET`` rows per chart, and the chart's subtitle says how it was
reduced. The interactive HTML zooms and pans (mouse wheel, drag) through interval
selections bound to the scales.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import duckdb
import polars as pl

from .extras import missing
from .frames import frame
from .show import ShowError, dissect

BUDGET = 4000  # rows per chart data set; Altair refuses more than 5,000 inline
WIDTH, HEIGHT = 640, 260
MARKS = ["new data", "retransmission", "reinjection"]
SHAPES = ["circle", "cross", "triangle-up"]


PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
TOTAL = "all subflows"


def _color(df: pl.DataFrame) -> alt.Color:
    """One colour per subflow, the same in every chart of a run (sorted labels)."""
    labels = sorted(x for x in df["subflow"].unique().to_list() if x is not None and x != TOTAL)
    rng = [PALETTE[i % len(PALETTE)] for i in range(len(labels))]
    if TOTAL in df["subflow"].to_list():
        labels, rng = labels + [TOTAL], rng + ["#555555"]
    return alt.Color("subflow:N", title="subflow (path)", scale=alt.Scale(domain=labels, range=rng),
                     legend=alt.Legend(symbolOpacity=1))


class PlotError(Exception):
    """Nothing to draw, with the reason (unknown run, no data in the database)."""


@dataclass(frozen=True)
class RunView:
    """The connection a run's charts show, in the traces that see it."""

    run_id: str
    direction: str  # of the data: "down" (server -> client) or "up"
    receiver: tuple[str, int, float] | None  # (trace, conn_id, connection start time) in the receiver's trace
    sender: tuple[str, int, float] | None  # the same in the sender's trace
    note: str = ""  # what is missing, said in the charts' subtitle


def runs(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute("SELECT DISTINCT run_id FROM connections ORDER BY run_id").fetchall()]


def run_view(con: duckdb.DuckDBPyConnection, run_id: str, direction: str | None = None,
             conn: int | None = None) -> RunView:
    """The run's main connection (most payload), or connection ``conn`` (its id in the
    receiver's trace, as ``connections.conn_id``), and the traces it is seen in."""
    c = frame(con, """SELECT trace, vantage, conn_id, direction, payload_bytes, start_s, client_addr, server_addr,
                           server_port FROM connections
                    WHERE run_id = ? AND coalesce(payload_bytes, 0) > 0""", [run_id])
    if c.is_empty():
        known = runs(con)
        if run_id not in known:
            hint = ", ".join(known[:8]) + (" ..." if len(known) > 8 else "")
            raise PlotError(f"run {run_id!r} is not in the database (runs: {hint or 'none'})")
        raise PlotError(f"run {run_id!r} has no connection that carried data")
    if direction:
        c = c.filter(pl.col("direction") == direction)
        if c.is_empty():
            raise PlotError(f"run {run_id!r} carried no data in direction {direction!r}")
    if conn is not None:
        return _chosen_view(c, run_id, conn)
    direction = c.sort("payload_bytes", descending=True)["direction"][0]
    c = c.filter(pl.col("direction") == direction)
    recv_v, send_v = _vantages(direction)

    def pick(vantage: str) -> tuple[str, int, float] | None:
        t = c.filter(pl.col("vantage") == vantage).sort(["payload_bytes", "trace"], descending=[True, False])
        return (t["trace"][0], int(t["conn_id"][0]), float(t["start_s"][0])) if t.height else None

    rv, sv = pick(recv_v), pick(send_v)
    return RunView(run_id, direction, rv, sv, _missing(recv_v, rv, send_v, sv))


def _vantages(direction: str) -> tuple[str, str]:
    """(the receiver's vantage, the sender's) of data in ``direction``."""
    return ("client", "server") if direction == "down" else ("server", "client")


def _missing(recv_v: str, rv, send_v: str, sv) -> str:
    return "; ".join(f"no {v} trace (the {r} side's pcap was not analysed)" for v, r, x in
                     ((recv_v, "receiving", rv), (send_v, "sending", sv)) if x is None)


def _chosen_view(c: pl.DataFrame, run_id: str, conn: int) -> RunView:
    """Connection ``conn`` of the receiver's trace, and the same connection in the sender's
    (same addresses and server port, the nearest start)."""
    mine = c.filter(pl.col("conn_id") == conn).sort("payload_bytes", descending=True)
    direction = mine["direction"][0] if mine.height else None
    recv_v, send_v = _vantages(direction) if direction else ("client", "server")
    mine = mine.filter(pl.col("vantage") == recv_v) if mine.height else mine
    if mine.is_empty():
        ids = sorted(set(c.filter(pl.col("vantage") == "client")["conn_id"].to_list())
                     or set(c["conn_id"].to_list()))
        raise PlotError(f"run {run_id!r} has no connection {conn} that carried data in the receiver's trace "
                        f"(connections: {', '.join(map(str, ids))})")
    r = mine.row(0, named=True)
    rv = (r["trace"], int(r["conn_id"]), float(r["start_s"]))
    same = c.filter((pl.col("vantage") == send_v) & (pl.col("direction") == direction)
                    & (pl.col("client_addr") == r["client_addr"]) & (pl.col("server_addr") == r["server_addr"])
                    & (pl.col("server_port") == r["server_port"]))
    same = same.with_columns(gap=(pl.col("start_s") - r["start_s"]).abs()).sort("gap")
    sv = (same["trace"][0], int(same["conn_id"][0]), float(same["start_s"][0])) if same.height else None
    return RunView(run_id, direction, rv, sv, _missing(recv_v, rv, send_v, sv))


def _labels(con, run_id: str, trace: str, conn_id: int) -> pl.DataFrame:
    """subflow_id -> 'path (sf N)', the colour key of every chart."""
    s = frame(con, """SELECT DISTINCT subflow_id, path, client_addr FROM subflows
                    WHERE run_id = ? AND trace = ? AND conn_id = ? ORDER BY subflow_id""", [run_id, trace, conn_id])
    return s.unique("subflow_id", keep="first").select(
        pl.col("subflow_id").cast(pl.Int32),
        pl.format("{} (sf {})", pl.coalesce("path", "client_addr", pl.lit("?")), "subflow_id").alias("subflow"),
        pl.coalesce("path", "client_addr").alias("path"),
    )


def thin(df: pl.DataFrame, keys: list[str], time: str, values: list[str], budget: int) -> tuple[pl.DataFrame, str]:
    """At most ``budget`` rows of ``df``: all of them when they fit, else per group of
    ``keys`` and time bin the rows holding each of ``values``' minimum and maximum (the
    envelope a time-sequence graph shows at any zoom the bins allow). A bin with no more
    rows than the envelope would keep is kept whole: a sparse stretch (a slow subflow, a
    few retransmissions) keeps every packet, so its points are not joined into a line."""
    if df.height <= budget:
        return df, ""
    span = (df[time].max() - df[time].min()) or 1.0
    groups = max(1, df.select(keys).n_unique())
    per_bin = 2 * len(values)
    nbins = max(1, budget // (groups * per_bin))
    while True:
        d = df.with_row_index("_i").with_columns(
            _bin=((pl.col(time) - df[time].min()) / span * nbins).floor().clip(0, nbins - 1).cast(pl.Int32))
        d = d.with_columns(_n=pl.len().over(keys + ["_bin"]))
        picks = [d.filter(pl.col("_n") <= per_bin)["_i"]]
        dense = d.filter(pl.col("_n") > per_bin)
        for v in values:
            g = dense.filter(pl.col(v).is_not_null()).group_by(keys + ["_bin"]).agg(
                pl.col("_i").sort_by(v).first().alias("a"), pl.col("_i").sort_by(v).last().alias("b"))
            picks += [g["a"], g["b"]]
        idx = pl.concat(picks).unique()
        out = d.filter(pl.col("_i").is_in(idx.implode())).drop("_i", "_bin", "_n")
        if out.height <= budget or nbins == 1:
            width = span / nbins
            return out, (f"pre-aggregated: {df.height:,} rows drawn as {out.height:,} (per subflow and "
                         f"{_fmt_s(width)} bin, the lowest and highest; bins of ≤ {per_bin} rows whole)")
        nbins = max(1, int(nbins * budget / out.height * 0.9))


def _fmt_s(s: float) -> str:
    return f"{s * 1000:.3g} ms" if s < 1 else f"{s:.3g} s"


# ---------------------------------------------------------------- time-sequence graph

def seq_rows(con, view: RunView, budget: int = BUDGET) -> tuple[pl.DataFrame, str]:
    """The time-sequence graph's rows at the receiver: one per data packet (``kind``
    'data': ``dsn``, ``ssn``, ``mark``, ``ofo_end_s`` when it waited for earlier data) and
    one per ACK that moved its subflow's cumulative ACK (``kind`` 'ack': ``ack``) or the
    connection's DATA_ACK (``data_ack``)."""
    if view.receiver is None:
        raise PlotError(f"run {view.run_id!r}: {view.note}")
    trace, conn, t0 = view.receiver
    d = frame(con, """
        SELECT s.subflow_id, s.frame, s.time_s - ? AS t_s, s.dsn_rel AS dsn, s.ssn_rel AS ssn, s.ack_rel AS ack,
               s.data_ack_rel AS data_ack, s.payload_bytes, s.retransmission, s.reinjection, o.ofo_delay_ms
        FROM seq_packets s LEFT JOIN ofo_samples o
          ON o.run_id = s.run_id AND o.trace = s.trace AND o.frame = s.frame AND s.ssn_rel IS NOT NULL
        WHERE s.run_id = ? AND s.trace = ? AND s.conn_id = ? AND s.direction = ?
        ORDER BY s.time_s, s.frame""", [t0, view.run_id, trace, conn, view.direction])
    if d.is_empty():
        raise PlotError(f"run {view.run_id!r}: no seq_packets rows for {trace} (analysed before the table "
                        f"existed? analyse the run again)")
    d = d.join(_labels(con, view.run_id, trace, conn), on="subflow_id", how="left").with_columns(
        kind=pl.when(pl.col("ssn").is_not_null()).then(pl.lit("data")).otherwise(pl.lit("ack")),
        mark=pl.when(pl.col("ssn").is_null()).then(None)
        .when(pl.col("reinjection")).then(pl.lit("reinjection"))
        .when(pl.col("retransmission")).then(pl.lit("retransmission"))
        .otherwise(pl.lit("new data")),
        ofo_end_s=pl.when(pl.col("ofo_delay_ms") > 0).then(pl.col("t_s") + pl.col("ofo_delay_ms") / 1000),
    ).select("subflow", "subflow_id", "path", "kind", "frame", "t_s", "dsn", "ssn", "ack", "data_ack", "payload_bytes",
             "mark", "ofo_delay_ms", "ofo_end_s")
    # marked packets are few and are what a reader looks for: keep them whole when they fit
    marked = d.filter(pl.col("mark").is_in(["retransmission", "reinjection"]))
    rest = d.filter(~pl.col("mark").is_in(["retransmission", "reinjection"]) | pl.col("mark").is_null())
    if marked.height > budget // 4:
        marked, _ = thin(marked, ["subflow", "mark"], "t_s", ["dsn", "ssn"], budget // 4)
    rest, note = thin(rest, ["subflow", "kind"], "t_s", ["dsn", "ssn", "ack", "data_ack", "ofo_delay_ms"],
                      budget - marked.height)
    return pl.concat([rest, marked]).sort("t_s", "frame"), note


def _subtitle(view: RunView, trace_role: str, *extra: str) -> list[str]:
    trace = {"receiver": view.receiver, "sender": view.sender}[trace_role]
    name = Path(trace[0]).name if trace else "?"
    lines = [f"run {view.run_id}, {'download' if view.direction == 'down' else 'upload'} "
             f"({view.direction}), connection {trace[1] if trace else '?'} in {name} (the {trace_role}'s trace)"]
    return lines + [x for x in (view.note, *extra) if x]


def seq_chart(df: pl.DataFrame, title: str, subtitle: list[str]) -> alt.VConcatChart:
    x = alt.X("t_s:Q", title="time since the connection's first SYN (s)")
    color = _color(df)
    # the legend lists the marks this run has (no "reinjection" entry when there is none)
    present = [m for m in MARKS if m in set(df["mark"].drop_nulls().to_list())] or MARKS[:1]
    shape = alt.Shape("mark:N", title="packet",
                      scale=alt.Scale(domain=present, range=[SHAPES[MARKS.index(m)] for m in present]))
    tip = ["subflow:N", "frame:Q", alt.Tooltip("t_s:Q", format=".6f", title="time (s)"), "dsn:Q", "ssn:Q",
           "payload_bytes:Q", "mark:N", alt.Tooltip("ofo_delay_ms:Q", format=".3f", title="OFO delay (ms)")]
    base = alt.Chart(df)
    data = base.transform_filter("datum.kind == 'data'")
    size = alt.condition("datum.mark == 'new data'", alt.value(14), alt.value(70))
    zoom_dsn = alt.selection_interval(bind="scales", name="zoom_dsn")
    zoom_ssn = alt.selection_interval(bind="scales", name="zoom_ssn")
    ofo = data.transform_filter("isValid(datum.ofo_end_s)").mark_rule(opacity=0.25, strokeWidth=1).encode(
        x=x, x2="ofo_end_s:Q", y="dsn:Q", color=color)
    dsn_pts = data.transform_filter("isValid(datum.dsn)").mark_point(filled=True, opacity=0.8).encode(
        x=x, y=alt.Y("dsn:Q", title="data sequence number (bytes; first byte = 1)", axis=alt.Axis(format="~s")),
        color=color, shape=shape, size=size, tooltip=tip)
    # the connection-level ACK: one line for the connection (the subflow it rode on does not matter)
    dack = base.transform_filter("datum.kind == 'ack' && isValid(datum.data_ack)").mark_line(
        interpolate="step-after", strokeWidth=1.5, color="#333333").encode(
        x=x, y="data_ack:Q",
        tooltip=["subflow:N", "frame:Q", alt.Tooltip("t_s:Q", format=".6f", title="time (s)"),
                 alt.Tooltip("data_ack:Q", title="DATA_ACK")])
    has_dack = "data_ack" in df.columns and df["data_ack"].is_not_null().any()
    top = alt.layer(ofo, *([dack] if has_dack else []), dsn_pts).add_params(zoom_dsn).properties(
        width=WIDTH, height=HEIGHT,
        title=alt.Title("Data sequence numbers at the receiver",
                        subtitle="horizontal line: out-of-order delay (arrival -> in-order time)"
                                 + ("; dark step line: the receiver's DATA_ACK (next data byte expected)"
                                    if has_dack else "")))
    ssn_pts = data.mark_point(filled=True, opacity=0.8).encode(
        x=x, y=alt.Y("ssn:Q", title="subflow sequence number (bytes; first byte = 1)", axis=alt.Axis(format="~s")),
        color=color, shape=shape, size=size, tooltip=tip)
    acks = base.transform_filter("datum.kind == 'ack' && isValid(datum.ack)").mark_line(interpolate="step-after", strokeWidth=1.2,
                                                                    strokeDash=[4, 2]).encode(
        x=x, y="ack:Q", color=color, detail="subflow:N",
        tooltip=["subflow:N", "frame:Q", alt.Tooltip("t_s:Q", format=".6f", title="time (s)"),
                 alt.Tooltip("ack:Q", title="cumulative ACK")])
    bottom = alt.layer(acks, ssn_pts).add_params(zoom_ssn).properties(
        width=WIDTH, height=HEIGHT,
        title=alt.Title("Each subflow's sequence numbers", subtitle="dashed step line: the subflow's cumulative ACK"))
    return alt.vconcat(top, bottom).resolve_scale(color="shared", shape="shared").properties(
        title=alt.Title(title, subtitle=subtitle, anchor="start"))


def plot_seq(con, run_id: str, direction: str | None = None, budget: int = BUDGET,
             conn: int | None = None) -> tuple[alt.TopLevelMixin, pl.DataFrame]:
    view = run_view(con, run_id, direction, conn)
    df, note = seq_rows(con, view, budget)
    return seq_chart(df, f"Time-sequence graph: {run_id}", _subtitle(view, "receiver", note)), df


# ---------------------------------------------------------------- RTT over time

def configured_paths(con, run_id: str, direction: str) -> pl.DataFrame:
    """Per path, what the emulator was configured with (run_paths, from meta.json):
    round-trip delay (down + up one-way delay), the data direction's rate and one-way delay."""
    return frame(con, """SELECT path,
                              CASE WHEN count(delay_ms) > 0 THEN sum(coalesce(delay_ms, 0)) END AS rtt_ms,
                              max(rate_mbit) FILTER (WHERE direction = ?) AS rate_mbit,
                              max(delay_ms) FILTER (WHERE direction = ?) AS delay_ms
                       FROM run_paths WHERE run_id = ? GROUP BY path ORDER BY path""",
               [direction, direction, run_id]).select(pl.col("path").cast(pl.Utf8), pl.col("rtt_ms").cast(pl.Float64),
                                                      pl.col("rate_mbit").cast(pl.Float64),
                                                      pl.col("delay_ms").cast(pl.Float64))


def stalls(con, run_id: str, t0: float) -> pl.DataFrame:
    """Recorded stalls as time intervals: the emulator's outage drops (link_truth reason
    'outage'), merged per path when less than 100 ms apart."""
    d = frame(con, """SELECT path, arrival_s - ? AS t_s FROM link_truth
                    WHERE run_id = ? AND reason = 'outage' ORDER BY path, arrival_s""", [t0, run_id])
    if d.is_empty():
        return pl.DataFrame(schema={"path": pl.Utf8, "start_s": pl.Float64, "end_s": pl.Float64,
                                    "what": pl.Utf8})
    return (d.with_columns(g=(pl.col("t_s").diff().over("path").fill_null(1.0) > 0.1).cum_sum().over("path"))
            .group_by("path", "g").agg(start_s=pl.col("t_s").min(), end_s=pl.col("t_s").max())
            .with_columns(what=pl.format("outage on {}", "path")).drop("g").sort("start_s"))


def rtt_rows(con, view: RunView, budget: int = BUDGET) -> tuple[pl.DataFrame, str]:
    """RTT samples of the sender's trace (``t_s``, ``rtt_ms``, ``frame``), or per subflow
    and time bin their minimum, median and maximum when they do not fit ``budget``."""
    return _sample_rows(con, view, "rtt_samples", "rtt_ms", budget)


def _sample_rows(con, view: RunView, table: str, value: str, budget: int) -> tuple[pl.DataFrame, str]:
    """Per-packet samples (``table``'s ``value``) of the sender's trace over time, thinned
    to per-bin median and min-max when they do not fit ``budget``."""
    if view.sender is None:
        raise PlotError(f"run {view.run_id!r}: {view.note}")
    trace, conn, t0 = view.sender
    d = frame(con, f"""SELECT subflow_id, frame, sent_s - ? AS t_s, {value} FROM {table}
                    WHERE run_id = ? AND trace = ? AND conn_id = ? AND direction = ? AND {value} IS NOT NULL
                    ORDER BY sent_s""",
            [t0, view.run_id, trace, conn, view.direction])
    d = d.join(_labels(con, view.run_id, trace, conn), on="subflow_id", how="left")
    if d.height <= budget:
        return d.with_columns(lo=pl.col(value), hi=pl.col(value), n=pl.lit(1)), ""
    groups = d["subflow"].n_unique()
    nbins = max(1, budget // groups)
    span = (d["t_s"].max() - d["t_s"].min()) or 1.0
    agg = (d.with_columns(_bin=((pl.col("t_s") - d["t_s"].min()) / span * nbins).floor().clip(0, nbins - 1))
           .group_by("subflow", "subflow_id", "path", "_bin")
           .agg(t_s=pl.col("t_s").mean(), **{value: pl.col(value).median()}, lo=pl.col(value).min(),
                hi=pl.col(value).max(), n=pl.len(), frame=pl.col("frame").sort_by(value).last())
           .drop("_bin").sort("subflow", "t_s"))
    return agg, (f"pre-aggregated: {d.height:,} samples as median (line) and min-max (band) per "
                 f"{_fmt_s(span / nbins)} bin")


def rtt_chart(df: pl.DataFrame, ref: pl.DataFrame, stall: pl.DataFrame, title: str,
              subtitle: list[str], value: str = "rtt_ms", label: str = "round-trip time (ms)",
              ref_label: str = "configured RTT (ms)") -> alt.LayerChart:
    """Samples over time per subflow (RTT, or ``value``: one-way delay) with the
    configured value per path as dashed rules (``ref``'s ``value`` column)."""
    x = alt.X("t_s:Q", title="time since the connection's first SYN at the sender (s)")
    color = _color(df)
    aggregated = df.height and df["n"].max() > 1
    zoom = alt.selection_interval(bind="scales", name="zoom_rtt")
    tip = ["subflow:N", "frame:Q", alt.Tooltip("t_s:Q", format=".4f", title="time (s)"),
           alt.Tooltip(f"{value}:Q", format=".2f", title=label)]
    y = alt.Y(f"{value}:Q", title=label)
    if aggregated:
        samples = alt.layer(
            alt.Chart(df).mark_area(opacity=0.25).encode(x=x, y="lo:Q", y2="hi:Q", color=color),
            alt.Chart(df).mark_line().encode(x=x, y=y, color=color, tooltip=tip + ["n:Q"]))
    else:
        samples = alt.Chart(df).mark_point(filled=True, size=14, opacity=0.7).encode(x=x, y=y, color=color,
                                                                                     tooltip=tip)
    layers = []
    if stall.height:
        layers.append(alt.Chart(stall).mark_rect(color="#d62728", opacity=0.15).encode(
            x="start_s:Q", x2="end_s:Q", tooltip=["what:N", "start_s:Q", "end_s:Q"]))
    layers.append(samples.add_params(zoom) if not aggregated else samples)
    ref = ref.filter(pl.col(value).is_not_null())
    if ref.height:
        refd = ref.join(df.select("subflow", "path").unique(), on="path", how="inner")
        layers.append(alt.Chart(refd).mark_rule(strokeDash=[6, 3], strokeWidth=1.5).encode(
            y=f"{value}:Q", color=color,
            tooltip=["path:N", alt.Tooltip(f"{value}:Q", title=ref_label)]))
    chart = alt.layer(*layers)
    if aggregated:
        chart = chart.add_params(zoom)
    return chart.properties(width=WIDTH, height=HEIGHT, title=alt.Title(title, subtitle=subtitle, anchor="start"))


def plot_rtt(con, run_id: str, direction: str | None = None, budget: int = BUDGET,
             conn: int | None = None) -> tuple[alt.TopLevelMixin, pl.DataFrame]:
    view = run_view(con, run_id, direction, conn)
    df, note = rtt_rows(con, view, budget)
    ref = configured_paths(con, run_id, view.direction)
    st = stalls(con, run_id, view.sender[2])
    extra = ["dashed: the emulator's configured RTT per path (meta.json: down + up delay)" if
             ref["rtt_ms"].is_not_null().any() else "no configured delay recorded (meta.json paths)",
             f"shaded: {st.height} recorded outage(s) (link_truth)" if st.height else "", note]
    if _stalled(con, run_id):
        extra.append("the run is marked stalled (run_config.stalled)")
    if df.is_empty():
        extra.append("no RTT samples in the sender's trace")
    return rtt_chart(df, ref, st, f"RTT over time: {run_id}", _subtitle(view, "sender", *extra)), df


def plot_owd(con, run_id: str, direction: str | None = None, budget: int = BUDGET,
             conn: int | None = None) -> tuple[alt.TopLevelMixin, pl.DataFrame]:
    """One-way delay per data packet found in both ends' traces (owd_samples), by the
    sender's time, with each path's configured one-way delay of that direction."""
    view = run_view(con, run_id, direction, conn)
    clock = con.execute("SELECT any_value(clock), any_value(clock_offset_ms), count(*) FROM owd_samples "
                        "WHERE run_id = ? AND direction = ?", [run_id, view.direction]).fetchall()[0]
    if not clock[2]:
        raise PlotError(f"run {run_id!r}: no one-way delay samples (they need both the client's and the "
                        "server's trace of the run, analysed together: `pipeline tables RUN_FOLDER`)")
    if clock[1] is None:
        raise PlotError(f"run {run_id!r}: the two traces' clock offset is unknown ({clock[0]}); "
                        "owd_samples.raw_ms holds the uncorrected differences")
    df, note = _sample_rows(con, view, "owd_samples", "owd_ms", budget)
    ref = configured_paths(con, run_id, view.direction).select("path", owd_ms="delay_ms")
    st = stalls(con, run_id, view.sender[2])
    offset = ("clocks: one host" if clock[0] == "one host" else
              f"clock offset {clock[1]:+.3f} ms (client minus server), {clock[0]}")
    extra = ["dashed: the emulator's configured one-way delay per path (meta.json)" if
             ref["owd_ms"].is_not_null().any() else "no configured delay recorded (meta.json paths)",
             offset, f"shaded: {st.height} recorded outage(s) (link_truth)" if st.height else "", note]
    return rtt_chart(df, ref, st, f"One-way delay over time: {run_id}", _subtitle(view, "sender", *extra),
                     value="owd_ms", label="one-way delay (ms)", ref_label="configured one-way delay (ms)"), df


def _stalled(con, run_id: str) -> bool:
    try:
        r = next(iter(con.execute("SELECT stalled FROM run_config WHERE run_id = ?", [run_id]).fetchall()), None)
    except duckdb.Error:
        return False
    return bool(r and r[0])


# ---------------------------------------------------------------- throughput

BIN_STEPS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60]


def throughput_rows(con, view: RunView, max_bins: int = 60) -> tuple[pl.DataFrame, float]:
    """Bytes received per subflow (and all together) per time bin, as Mbit/s, at the
    receiver; retransmitted bytes count (throughput, not goodput). Empty bins are 0."""
    if view.receiver is None:
        raise PlotError(f"run {view.run_id!r}: {view.note}")
    trace, conn, t0 = view.receiver
    d = frame(con, """SELECT subflow_id, time_s - ? AS t_s, payload_bytes FROM seq_packets
                    WHERE run_id = ? AND trace = ? AND conn_id = ? AND direction = ? AND ssn_rel IS NOT NULL""",
            [t0, view.run_id, trace, conn, view.direction])
    if d.is_empty():
        raise PlotError(f"run {view.run_id!r}: no data packets in seq_packets for {trace}")
    d = d.join(_labels(con, view.run_id, trace, conn), on="subflow_id", how="left")
    span = max(d["t_s"].max(), 1e-3)
    w = next((s for s in BIN_STEPS if span / s <= max_bins), BIN_STEPS[-1])
    n = int(span // w) + 1
    per = d.with_columns(b=(pl.col("t_s") // w).cast(pl.Int64)).group_by("subflow", "b").agg(
        bytes=pl.col("payload_bytes").sum())
    total = per.group_by("b").agg(pl.col("bytes").sum()).with_columns(subflow=pl.lit(TOTAL))
    grid = pl.DataFrame({"subflow": per["subflow"].unique().to_list() + [TOTAL]}).join(
        pl.DataFrame({"b": range(n)}, schema={"b": pl.Int64}), how="cross")
    out = (grid.join(pl.concat([per, total.select(per.columns)]), on=["subflow", "b"], how="left")
           .with_columns(bytes=pl.col("bytes").fill_null(0))
           .with_columns(t_s=pl.col("b") * w, mbit_s=pl.col("bytes") * 8 / w / 1e6).drop("b").sort("subflow", "t_s"))
    return out, w


def throughput_chart(df: pl.DataFrame, ref: pl.DataFrame, w: float, title: str, subtitle: list[str]) -> alt.LayerChart:
    x = alt.X("t_s:Q", title="time since the connection's first SYN (s)")
    color = _color(df)
    zoom = alt.selection_interval(bind="scales", name="zoom_tput", encodings=["x"])
    ref = ref.filter(pl.col("rate_mbit").is_not_null())
    refd = pl.DataFrame()
    if ref.height:
        labels = df.filter(pl.col("subflow") != TOTAL).select("subflow").unique().with_columns(
            path=pl.col("subflow").str.replace(r" \(sf \d+\)$", ""))
        refd = ref.join(labels, on="path", how="inner").with_columns(
            label=pl.format("{} configured: {} Mbit/s", "path", pl.col("rate_mbit").round(3)))
    # head room above the highest line and configured rate, so a rate line is never the chart's border
    top = max([v for v in [df["mbit_s"].max(), refd["rate_mbit"].max() if refd.height else None] if v is not None]
              or [1.0]) * 1.15
    y = alt.Y("mbit_s:Q", title=f"throughput (Mbit/s, {_fmt_s(w)} bins)", scale=alt.Scale(domain=[0, top]))
    lines = alt.Chart(df).mark_line(interpolate="step-after").encode(
        x=x, y=y, color=color,
        strokeDash=alt.condition(f"datum.subflow == '{TOTAL}'", alt.value([5, 3]), alt.value([1, 0])),
        tooltip=["subflow:N", alt.Tooltip("t_s:Q", title="bin start (s)"), "bytes:Q",
                 alt.Tooltip("mbit_s:Q", format=".2f", title="Mbit/s")]).add_params(zoom)
    layers = [lines]
    if refd.height:
        rule = alt.Chart(refd)
        layers += [rule.mark_rule(strokeDash=[2, 2], opacity=0.8).encode(
                       y=alt.Y("rate_mbit:Q", scale=alt.Scale(domain=[0, top])), color=color,
                       tooltip=["path:N", alt.Tooltip("rate_mbit:Q", title="configured Mbit/s")]),
                   rule.mark_text(align="right", baseline="bottom", dy=-2, fontSize=10).encode(
                       x=alt.value(WIDTH - 2), y=alt.Y("rate_mbit:Q", scale=alt.Scale(domain=[0, top])),
                       text="label:N", color=color)]
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT,
                                         title=alt.Title(title, subtitle=subtitle, anchor="start"))


def plot_throughput(con, run_id: str, direction: str | None = None,
                    conn: int | None = None) -> tuple[alt.TopLevelMixin, pl.DataFrame]:
    view = run_view(con, run_id, direction, conn)
    df, w = throughput_rows(con, view)
    ref = configured_paths(con, run_id, view.direction)
    extra = ["dotted: the emulator's configured rate per path (meta.json)" if ref["rate_mbit"].is_not_null().any()
             else "", "all payload bytes received, retransmissions included"]
    return throughput_chart(df, ref, w, f"Throughput per subflow: {run_id}", _subtitle(view, "receiver", *extra)), df


PLOTS = {"seq": plot_seq, "rtt": plot_rtt, "throughput": plot_throughput, "owd": plot_owd}


# ---------------------------------------------------------------- outliers and saving

def outliers(con, run_id: str, direction: str | None = None, n: int = 5) -> pl.DataFrame:
    """The largest OFO delays (receiver's trace) and RTTs (sender's trace) of the run's
    connection, each with its frame number and the ``pipeline show`` command that
    prints that packet's dissection."""
    view = run_view(con, run_id, direction)
    parts = []
    if view.receiver:
        trace, conn, t0 = view.receiver
        parts.append(frame(con, """SELECT 'OFO delay (ms)' AS metric, ofo_delay_ms AS value, trace, frame,
                                        arrival_s - ? AS t_s, subflow_id FROM ofo_samples
                                 WHERE run_id = ? AND trace = ? AND conn_id = ? AND direction = ? AND ofo_delay_ms > 0
                                 ORDER BY ofo_delay_ms DESC LIMIT ?""", [t0, run_id, trace, conn, view.direction, n]))
    if view.sender:
        trace, conn, t0 = view.sender
        parts.append(frame(con, """SELECT 'RTT (ms)' AS metric, rtt_ms AS value, trace, frame, sent_s - ? AS t_s,
                                        subflow_id FROM rtt_samples
                                 WHERE run_id = ? AND trace = ? AND conn_id = ? AND direction = ?
                                 ORDER BY rtt_ms DESC LIMIT ?""", [t0, run_id, trace, conn, view.direction, n]))
    out = pl.concat(parts) if parts else pl.DataFrame()
    if out.is_empty():
        return out
    return out.with_columns(show=pl.format("python -m pipeline show {} {}", "trace", "frame"))


FORMATS = {".svg": "svg", ".png": "png", ".html": "html", ".json": "json"}
# Every file `plot` writes carries this mark, and an existing file is replaced only when it
# has it: a user's own SVG, PNG or page of the same name is never overwritten.
MARK = "written by mptcp-lab plot"
_HEAD = f"<!-- {MARK} -->\n".encode()


def _our_json(b: bytes) -> bool:
    """A Vega-Lite spec whose usermeta names us as its generator (not any JSON that
    merely contains the words)."""
    try:
        spec = json.loads(b)
    except (ValueError, UnicodeDecodeError):
        return False
    return (isinstance(spec, dict) and isinstance(spec.get("usermeta"), dict)
            and spec["usermeta"].get("generator") == MARK and "vega-lite" in str(spec.get("$schema", "")))


# what `save` wrote (``_mark``): an existing file is replaced only when it is one of these
_OURS = {"svg": lambda b: b.startswith(_HEAD), "html": lambda b: b.startswith(_HEAD),
         "png": lambda b: b.startswith(b"\x89PNG") and b"Software\x00" + MARK.encode() in b[:512],
         "json": _our_json}


def _png_text(png: bytes, key: str, text: str) -> bytes:
    """``png`` with a tEXt chunk (``key``: ``text``) right after its header chunk."""
    import struct
    import zlib

    body = key.encode("latin-1") + b"\x00" + text.encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    end_ihdr = 8 + 8 + 13 + 4  # signature, IHDR length/type, IHDR data, CRC
    return png[:end_ihdr] + chunk + png[end_ihdr:]


def _mark(tmp: Path, fmt: str) -> None:
    if fmt in ("svg", "html"):
        tmp.write_bytes(_HEAD + tmp.read_bytes())
    elif fmt == "png":
        tmp.write_bytes(_png_text(tmp.read_bytes(), "Software", MARK))


# The font of a chart written to a file. Vega sizes a chart (legends, labels, the image's
# width) with the font it measures, and the SVG names that font for the browser to draw
# with. vl-convert measures with the Liberation Sans it carries; under Vega's default
# name ("sans-serif") Chromium drew DejaVu Sans, wider, and text ran past the image's
# edge ("subflow (path" cut). Liberation Sans has Arial's and Helvetica's metrics, so a
# browser without it draws at the measured widths too.
FONT = "Liberation Sans, Arial, Helvetica, sans-serif"


def in_file_font(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """``chart`` with ``FONT`` for all its text, its other settings kept (Altair's
    ``configure`` would replace them all)."""
    copy = chart.copy(deep=["config"])
    if copy.config is alt.Undefined:
        copy.config = alt.Config()
    copy.config["font"] = FONT
    return copy


def _is_text(chart: object) -> bool:
    """A layer that only writes text (a label, or a label with its halo)."""
    if isinstance(chart, alt.LayerChart):
        return all(_is_text(c) for c in chart.layer)
    mark = getattr(chart, "mark", alt.Undefined)
    return (mark if isinstance(mark, str) else getattr(mark, "type", None)) == "text"


def labels_on_top(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """``chart`` with each layer's text drawn after its points, lines, rules and bars (in
    the order the layers had among themselves): a label written first is drawn under
    whatever data crosses it ("paper: > 2?% wait"), one written last stays readable."""
    if isinstance(chart, alt.LayerChart):
        layers = [labels_on_top(c) for c in chart.layer]
        copy = chart.copy(deep=False)
        copy.layer = [c for c in layers if not _is_text(c)] + [c for c in layers if _is_text(c)]
        return copy
    for key in ("hconcat", "vconcat", "concat"):
        if isinstance(getattr(chart, key, None), list):
            copy = chart.copy(deep=False)
            setattr(copy, key, [labels_on_top(c) for c in getattr(chart, key)])
            return copy
    if isinstance(chart, alt.FacetChart) and isinstance(chart.spec, alt.LayerChart):
        copy = chart.copy(deep=False)
        copy.spec = labels_on_top(chart.spec)
        return copy
    return chart


def as_written(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """A chart as the lab writes it to a file (``save``, the notebooks' figures): its
    labels on top, in ``FONT``."""
    return in_file_font(labels_on_top(chart))


class OutputError(Exception):
    pass


def save(chart: alt.TopLevelMixin, out: str | os.PathLike) -> Path:
    """Write ``chart`` to ``out`` (format from the suffix) atomically; an existing file is
    replaced only when it is a chart file of the same format (never someone's other file)."""
    out = Path(out)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise OutputError(f"{out}: unknown output format {out.suffix!r} (use {', '.join(FORMATS)})")
    if out.is_dir():
        raise OutputError(f"{out}: is a folder")
    if out.exists() and not _OURS[fmt](out.read_bytes()):
        raise OutputError(f"{out}: exists and was not written by `pipeline plot`; refusing to overwrite it "
                          "(remove it or choose another -o)")
    if not out.parent.is_dir():
        raise OutputError(f"{out}: folder {out.parent} does not exist")
    if fmt != "json" and (need := missing("vl_convert", "figures", f"{out}: writing {fmt.upper()}")):
        raise OutputError(f"{need} (or -o {out.with_suffix('.json')}: the chart's Vega-Lite spec)")
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}{out.suffix}")
    chart = as_written(chart)
    try:
        if fmt == "json":
            spec = chart.to_dict()
            spec["usermeta"] = {**spec.get("usermeta", {}), "generator": MARK}
            tmp.write_text(json.dumps(spec, indent=1))
        elif fmt == "html":
            chart.save(str(tmp), format="html", inline=True)
        elif fmt == "png":
            chart.save(str(tmp), format="png", scale_factor=2)
        else:
            chart.save(str(tmp), format=fmt)
        _mark(tmp, fmt)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def show(pcap: str | os.PathLike, *frames: int) -> None:
    """Print tshark's dissection of ``frames`` of ``pcap`` (``python -m pipeline show``)."""
    try:
        print("\n".join(dissect(pcap, list(frames))))
    except ShowError as e:
        print(f"cannot show: {e}")
