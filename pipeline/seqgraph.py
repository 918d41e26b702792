"""The rows of a time-sequence graph (``seq_packets``): what tcptrace/xplot and
mptcptrace draw, one row per data packet and per ACK that moved a subflow's
cumulative acknowledgement forward, in each trace.

A data row has the packet's subflow sequence number (``ssn_rel``, first data byte =
1, as Wireshark's relative numbers), its data sequence number (``dsn_rel``, relative
to the sender's IDSN, first data byte = 1; null without a DSS mapping), and two marks:

* ``retransmission``: it starts below the highest sequence number its subflow had
  already carried that way (``metrics.retransmissions``, the loss-rate definition);
* ``reinjection``: some of its data bytes were already carried, earlier in this
  trace, by *another* subflow of the connection. In the sender's trace that is an
  MPTCP reinjection as sent; in the receiver's it is the copy that arrived second
  (tshark's ``mptcp.reinjection_of`` marks the same packet).

An ACK row (``ssn_rel`` null) is a packet whose cumulative ACK of the subflow's data
in ``direction`` was higher than any before it (``ack_rel``: the ACK line), or whose
DATA_ACK of the connection's data was (``data_ack_rel``, in ``dsn_rel``'s numbering:
the connection-level ACK line mptcptrace draws); the other of the two is null when it
did not move.
Only subflows and directions that carried data get ACK rows, which keeps the table
near one and a half rows per data packet per trace.

The out-of-order delay of a data row at the receiver is not repeated here: it is
``ofo_samples`` (same run, trace and frame).
"""
from __future__ import annotations

from bisect import bisect_right

import polars as pl


def seq_packets(p: pl.DataFrame, data: pl.DataFrame) -> pl.DataFrame:
    """``seq_packets`` rows (without run_id/trace) of one annotated trace.

    ``p``: ``flows.build_trace``'s packets; ``data``: ``metrics.retransmissions(p)``.
    """
    native = _seq_packets_native(p, data)
    if native is not None:
        return native
    d = data.sort("frame").select(
        "frame", "stream", "conn_id", "direction", "time_s",
        pl.col("rel_seq").alias("ssn_rel"), "payload_bytes", "dsn_rel",
        pl.col("retx").alias("retransmission"),
    )
    d = d.with_columns(reinjection=_reinjections(d))
    # (stream or connection, direction) as one integer: a lookup per ACK, not a join of
    # every ACK row with a few keys (1.5 s of a 5M-packet trace)
    def keys(up: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
        up = up.cast(pl.Int64)
        return pl.col("stream").cast(pl.Int64) * 2 + up, pl.col("conn_id").cast(pl.Int64) * 2 + up

    sub_key, conn_key = keys(pl.col("direction") == "up")
    carried = d.select(sub_key.unique()).to_series().implode()
    conns = d.select(conn_key.unique().drop_nulls()).to_series().implode()  # a null connection matches none
    # An ACK travelling down acknowledges the up direction's data, and vice versa (a null
    # ``down`` is "up", as ``direction`` says): kept as a flag, spelt out only for the rows kept.
    ack_sub, ack_conn = keys(pl.col("_up"))
    acks = (
        p.lazy().filter(pl.col("rel_ack").is_not_null() | pl.col("dack_rel").is_not_null())
        .sort("frame")
        .select("frame", "stream", "conn_id", "time_s", "rel_ack", "dack_rel", _up=pl.col("down").fill_null(False))
        # the subflow's ACK counts on the subflows that carried data that way; the DATA_ACK
        # (connection level) on any subflow of a connection whose data went that way
        .with_columns(sub=ack_sub.is_in(carried).fill_null(False), conn=ack_conn.is_in(conns).fill_null(False))
        .filter(pl.col("sub") | pl.col("conn"))
        .with_columns(
            before=pl.col("rel_ack").cum_max().forward_fill().shift(1).over("stream", "_up"),
            dbefore=pl.col("dack_rel").cum_max().forward_fill().shift(1).over("conn_id", "_up"))
        .select("frame", "stream", "conn_id",
                pl.when(pl.col("_up")).then(pl.lit("up")).otherwise(pl.lit("down")).alias("direction"), "time_s",
                pl.when(pl.col("sub") & (pl.col("before").is_null()
                                         | (pl.col("rel_ack") > pl.col("before"))))
                .then(pl.col("rel_ack")).alias("ack_rel"),
                pl.when(pl.col("conn") & (pl.col("dbefore").is_null()
                                          | (pl.col("dack_rel") > pl.col("dbefore"))))
                .then(pl.col("dack_rel")).alias("data_ack_rel"))
        .filter(pl.col("ack_rel").is_not_null() | pl.col("data_ack_rel").is_not_null())
        .collect()
    )
    # In (frame, direction) order ("down" first; the pair is unique), built column by
    # column: a long trace's rows are then held twice only one column at a time.
    order = pl.concat([d.select("frame", up=pl.col("direction") == "up"),
                       acks.select("frame", up=pl.col("direction") == "up")]).select(
        pl.arg_sort_by("frame", "up")).to_series()
    cols = {}
    schema = {**acks.schema, **d.schema}
    for c in [*d.columns, *(c for c in acks.columns if c not in d.columns)]:
        dtype = schema[c]
        parts = [f.drop_in_place(c) if c in f.columns else pl.Series(c, dtype=dtype).extend_constant(None, f.height)
                 for f in (d, acks)]
        cols[c] = pl.concat(parts).gather(order)
    del order, d, acks
    return pl.DataFrame(cols).with_columns(
        subflow_id=pl.col("stream"),
        payload_bytes=pl.col("payload_bytes").fill_null(0),
    )


def _seq_packets_native(p: pl.DataFrame, data: pl.DataFrame) -> pl.DataFrame | None:
    """``seq_packets``' rows by the native crate's pass (pipeline/pcapdecode/src/seqrows.rs;
    1.1 s against 2.0 s on a 5M-packet trace), or None where it does not apply: no native
    build, packets not in frame order, or a null where the pass reads none.
    tests/test_metrics_synthetic.py holds the two equal."""
    try:
        from pcapdecode import seq_rows
    except ImportError:
        return None
    cols = native_columns(p)
    frames = p["frame"]
    if (not frames.is_sorted() or (frames.len() > 1 and (frames[1:] == frames[:-1]).any())
            or cols.select(pl.any_horizontal(pl.col("stream", "down", "payload_bytes").is_null().any())).item()):
        return None
    rows = pl.DataFrame(seq_rows(cols.rechunk()))  # one chunk: read in place, no copy
    del cols
    # the data rows come in frame order, as ``data``'s rows (p's data packets) sorted
    retx = data["retx"] if data["frame"].is_sorted() else data.sort("frame")["retx"]
    return seq_frame(p, rows, retx)


def native_columns(p: pl.DataFrame) -> pl.DataFrame:
    """What the native pass reads of the packets (``pcapdecode.seq_rows``)."""
    return p.select(pl.col("stream").cast(pl.UInt32), pl.col("conn_id").cast(pl.Int32), "down",
                    pl.col("payload_bytes").cast(pl.UInt32), pl.col("dsn_rel").cast(pl.Int64),
                    pl.col("rel_ack").cast(pl.Int64), pl.col("dack_rel").cast(pl.Int64))


def seq_frame(p: pl.DataFrame, rows: pl.DataFrame, retx: pl.Series) -> pl.DataFrame | None:
    """``seq_packets``' rows from the native pass's ``rows`` (of ``p``'s packets) and the
    data packets' ``retx`` flags (in frame order); None when they do not match."""
    is_data = rows["data"]
    at = is_data.arg_true()
    if at.len() != retx.len():
        return None
    g = p.select("frame", "stream", "conn_id", "down", "time_s", "rel_seq", "payload_bytes", "dsn_rel")[rows["row"]]
    data_row = pl.lit(is_data)
    return g.select(
        "frame", "stream", "conn_id",
        # a data row goes its packet's way; an ACK row's data the other way
        direction=pl.when(data_row == pl.col("down")).then(pl.lit("down")).otherwise(pl.lit("up")),
        time_s="time_s",
        ssn_rel=pl.when(data_row).then(pl.col("rel_seq")),
        payload_bytes=pl.when(data_row).then(pl.col("payload_bytes")).otherwise(0).cast(pl.UInt32),
        dsn_rel=pl.when(data_row).then(pl.col("dsn_rel")),
        retransmission=pl.repeat(None, g.height, dtype=pl.Boolean, eager=True).scatter(at, retx),
        reinjection=pl.when(data_row).then(pl.lit(rows["reinjection"])),
        ack_rel=pl.lit(rows["ack_rel"]),
        data_ack_rel=pl.lit(rows["data_ack_rel"]),
        subflow_id="stream",
    )


def _reinjections(d: pl.DataFrame) -> pl.Series:
    """Per data row (in frame order): were any of its DSN bytes carried earlier, in
    this trace, by another subflow of the same connection and direction?"""
    out: list[bool] | None = None
    m = d.with_row_index("_i").filter(pl.col("dsn_rel").is_not_null(), pl.col("conn_id").is_not_null())
    # only the connections where some byte went over two subflows take the loop below
    # (one pass over all connections: 10,000 short ones took seconds one at a time)
    crossing = _cross_overlapping(m)
    if crossing.height == 0:  # the usual case: no loop ran, no list of a row each
        return pl.repeat(False, d.height, dtype=pl.Boolean, eager=True)
    m = m.join(crossing, on=["conn_id", "direction"], how="semi", maintain_order="left")
    for _, g in m.group_by(["conn_id", "direction"], maintain_order=True):
        if out is None:
            out = [False] * d.height
        idx = g["_i"].to_list()
        streams = g["stream"].to_list()
        starts = g["dsn_rel"].to_list()
        ends = (g["dsn_rel"] + g["payload_bytes"].cast(pl.Int64)).to_list()
        seen: dict[int, _Intervals] = {}
        for k in range(len(starts)):
            s, e, sf = starts[k], ends[k], streams[k]
            out[idx[k]] = any(iv.overlaps(s, e) for st, iv in seen.items() if st != sf)
            seen.setdefault(sf, _Intervals()).add(s, e)
    return pl.Series(out, dtype=pl.Boolean)


def _cross_overlapping(m: pl.DataFrame) -> pl.DataFrame:
    """``conn_id, direction`` of the groups where a DSN range of one subflow overlaps one
    of another subflow, in any order.

    Sorted by start, a range overlaps an earlier-starting one when it starts below the
    running maximum end before it. When that maximum is higher than its own subflow's,
    another subflow's range reaches past its start: an overlap. When the two are equal
    the overlap may be within its own subflow only, and the few groups with such rows
    are settled by ``_merged_cross_overlapping``. Groups with no range starting below
    that maximum (the usual case) have no overlap at all."""
    g = ["conn_id", "direction"]
    lowest = -(1 << 62)
    r = (
        m.select(*g, "stream", start=pl.col("dsn_rel"), end=pl.col("dsn_rel") + pl.col("payload_bytes").cast(pl.Int64))
        .sort(*g, "start")
        .with_columns(before=pl.col("end").cum_max().shift(1).over(g),
                      own=pl.col("end").cum_max().shift(1).over(*g, "stream").fill_null(lowest))
        .filter(pl.col("start") < pl.col("before"))
    )
    sure = r.filter(pl.col("before") > pl.col("own")).select(g).unique()
    unsure = r.select(g).unique().join(sure, on=g, how="anti")
    if unsure.height:
        sure = pl.concat([sure, _merged_cross_overlapping(m.join(unsure, on=g, how="semi"))])
    return sure


def _merged_cross_overlapping(m: pl.DataFrame) -> pl.DataFrame:
    """``_cross_overlapping`` by first merging each subflow's ranges into disjoint ones:
    sorted by start, a range then starts below the running maximum end of the ranges
    before it exactly when one of another subflow overlaps it (those of its own subflow
    end at or before its start)."""
    g = ["conn_id", "direction"]
    own = [*g, "stream"]
    r = m.select(*own, start=pl.col("dsn_rel"), end=pl.col("dsn_rel") + pl.col("payload_bytes").cast(pl.Int64))
    merged = (
        r.sort(*own, "start")
        .with_columns(prev_end=pl.col("end").cum_max().shift(1).over(own))
        .with_columns(piece=(pl.col("prev_end").is_null() | (pl.col("start") > pl.col("prev_end")))
                      .cast(pl.Int32).cum_sum().over(own))
        .group_by(*own, "piece").agg(pl.col("start").min(), pl.col("end").max())
        .sort(*g, "start")
    )
    return (merged.with_columns(before=pl.col("end").cum_max().shift(1).over(g))
            .filter(pl.col("start") < pl.col("before")).select(g).unique())


class _Intervals:
    """Disjoint, sorted half-open byte ranges (a subflow's data so far)."""

    def __init__(self) -> None:
        self.lo: list[int] = []
        self.hi: list[int] = []

    def overlaps(self, s: int, e: int) -> bool:
        i = bisect_right(self.lo, e - 1) - 1  # the last range starting before e
        return i >= 0 and self.hi[i] > s

    def add(self, s: int, e: int) -> None:
        lo, hi = self.lo, self.hi
        if not lo or s > hi[-1]:  # the usual case: new data past everything so far
            lo.append(s)
            hi.append(e)
            return
        i = bisect_right(lo, s) - 1
        if i >= 0 and hi[i] >= s:  # touches the range before
            s = lo[i]
        else:
            i += 1
        j = i
        while j < len(lo) and lo[j] <= e:  # swallow the ranges it reaches
            e = max(e, hi[j])
            j += 1
        lo[i:j] = [s]
        hi[i:j] = [e]
