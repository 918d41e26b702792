"""The papers' metrics, one function each, in polars on an annotated trace (the out-of-order
loop and the RTT samples' joins in the native crate when it is built).

Definitions follow Chen et al., IMC 2013, §3.3 (quoted in each docstring). Input
frames come from ``flows``: packets with ``stream``, ``conn_id``, ``direction``
("down": server -> client, "up": client -> server), ``rel_seq``, ``rel_ack``,
``payload_bytes``, ``time_s``, ``dsn_rel``.

The paper defines every metric for downloads. Each function here computes it for
both directions with the roles swapped for uploads (docs/metrics.md, "Directions"): the
*sender* is the server for "down" and the client for "up", and every result carries
a ``direction`` column. Which trace a value may come from (sender's or receiver's)
is decided by ``tables``.
"""
from __future__ import annotations

import heapq

import polars as pl


SUB = ["stream", "direction"]  # one subflow's data in one direction
KEY = ["stream", "down"]  # the same, by the ``down`` flag
CONN = ["conn_id", "direction"]


def _data(p: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    return p.filter(pl.col("payload_bytes") > 0)


def retransmissions(p: pl.DataFrame) -> pl.DataFrame:
    """Data packets (both directions) with a ``retx`` flag (and ``end``), without the
    ACK columns.

    A data packet is a retransmission when it starts below the highest sequence
    number the same subflow had already sent in that direction (as tcptrace counts
    them). MPTCP reinjections travel with new subflow sequence numbers, so a
    reinjection on another subflow is not a retransmission of that subflow.
    """
    d = data_rows(p)
    native = _retransmitted_native(d)
    if native is not None:
        return d.with_columns(native)
    return d.with_columns(
        retx=pl.col("rel_seq") < pl.col("end").cum_max().shift(1).over(SUB).fill_null(pl.col("rel_seq").min().over(SUB))
    )


def data_rows(p: pl.DataFrame) -> pl.DataFrame:
    """The data packets in frame order, with ``end`` (one past the last byte)."""
    # the ACK columns stay behind: no metric reads them from the data packets, and a long
    # trace's data rows are copied here
    return _data(p.drop("rel_ack", "dack_rel", strict=False)).sort("frame").with_columns(
        end=pl.col("rel_seq") + pl.col("payload_bytes").cast(pl.Int64))


def _retransmitted_native(d: pl.DataFrame) -> pl.Series | None:
    """``retransmissions``' flags by the native crate's pass (pipeline/pcapdecode/src/retx.rs:
    the highest end so far per subflow direction, not a window over every data packet), or
    None where it does not apply: no native build, or a null in a column it reads (the
    polars window's handling of nulls stays the definition). tests/test_metrics_synthetic.py
    holds the two equal."""
    try:
        from pcapdecode import retransmitted
    except ImportError:
        return None
    cols = retx_columns(d)
    if sum(cols.null_count().row(0)) or not d["direction"].is_in(["down", "up"]).all():
        return None
    return pl.DataFrame(retransmitted(cols.rechunk())).to_series()


def retx_columns(d: pl.DataFrame) -> pl.DataFrame:
    """What the native retransmission pass reads of the data rows: keyed as the
    definition's window (``SUB``), by stream and direction (two values)."""
    return d.select(pl.col("stream").cast(pl.UInt32), down=pl.col("direction") == "down",
                    rel_seq=pl.col("rel_seq").cast(pl.Int64), end=pl.col("end").cast(pl.Int64))


def loss_rate(data: pl.DataFrame) -> pl.DataFrame:
    """Per subflow: data packets, retransmitted packets, loss rate.

    Chen §3.3: "The loss rate is measured on a per-subflow basis. It is calculated as
    the total number of retransmitted data packets divided by the total number of
    data packets sent by the server on the flow." Server trace (uploads: the
    client's packets, client trace).
    """
    return with_loss_rate(loss_counts(data))


def loss_counts(data: pl.DataFrame) -> pl.DataFrame:
    """``loss_rate``'s counts (sums: a trace's pieces' add up)."""
    return data.group_by(SUB).agg(
        pl.len().cast(pl.Int64).alias("data_packets"),
        pl.col("retx").sum().cast(pl.Int64).alias("retransmitted_packets"),
    )


def with_loss_rate(counts: pl.DataFrame) -> pl.DataFrame:
    return counts.with_columns(loss_rate=pl.col("retransmitted_packets") / pl.col("data_packets"))


def acks_of(p: pl.DataFrame) -> pl.DataFrame:
    """The packets carrying an ACK, each with the direction of the data it acknowledges
    (an ACK travelling up acknowledges the down direction's data, and vice versa; a null
    ``down`` is "up", as ``direction`` says): ``stream, down, time_s, frame, ack``. What
    both RTTs read; ``tables`` makes it once for the two."""
    down = pl.col("down").fill_null(False)
    return p.filter(pl.col("rel_ack").is_not_null()).select("stream", (~down).alias("down"), "time_s", "frame",
                                                            pl.col("rel_ack").alias("ack"))


def rtt_samples(p: pl.DataFrame, data: pl.DataFrame, acks: pl.DataFrame | None = None) -> pl.DataFrame:
    """One RTT sample per server data packet that is not a retransmission.

    Chen §3.3: "RTT is measured as the difference between the time when a packet is
    sent by the server to the time the ACK for that packet is received (i.e.,
    RTT = Tr − Ts), such that the ACK number is larger than the last sequence number
    of the packet and the packet is not a retransmission [31]." Server trace (uploads:
    the client's packets and the server's ACKs, client trace).

    Karn's rule as tcptrace applies it: a segment whose bytes were ever retransmitted
    gives no sample, neither from its original nor from its retransmission, since the
    ACK cannot tell the two apart. The sample's ACK is the first one whose cumulative
    acknowledgement covers the whole segment.
    """
    # Keyed by ``down`` (a bit) rather than ``direction`` (text): the ACK side is a
    # long trace's every packet.
    down = pl.col("down").fill_null(False)  # as ``direction``: a null is "up"
    d = data.select("frame", "stream", "direction", down.alias("down"), "time_s", "rel_seq", "end", "retx")
    acks = acks_of(p) if acks is None else acks
    s = _rtt_pairs_native(d, acks)
    if s is None:
        s = _rtt_pairs(d, acks)
    s = s.select(
        "frame", "stream", "direction", pl.col("time_s").alias("sent_s"),
        ((pl.col("ack_s") - pl.col("time_s")) * 1000.0).alias("rtt_ms"),
    )
    # the native loop's samples come in frame order already: a scan, not a sort of millions
    return s if s["frame"].is_sorted() else s.sort("frame")


def ack_rtt_samples(p: pl.DataFrame, data: pl.DataFrame, acks: pl.DataFrame | None = None) -> pl.DataFrame:
    """For the directions of ``data`` (the sender's): one RTT sample per ACK that moves its
    subflow's cumulative ACK forward to the end of a segment sent before it, timing the
    first sent of the segments ending there: ``stream, direction, ack_frame, rtt_ms``. A
    retransmission counts with its own end (a retransmission cut otherwise than the
    original ends where no original does); an ACK ending on no segment's end (inside a
    segment) gives none: the highest end below it was covered by an earlier ACK.

    tshark's ``tcp.analysis.ack_rtt`` (its list of unacknowledged segments, the
    retransmissions in it: on client_1 an ACK ending on a retransmission's end, which no
    original shared, is timed from it), beside the lab's ``rtt_samples`` (Chen §3.3:
    every packet timed to the first cumulative ACK past it, Karn-filtered). The two agree
    on a loss-free subflow; after a loss they differ by definition: the ACK that closes a
    hole times one segment, where Chen's counts every packet's wait for the hole (and
    tshark's times the first copy sent when a retransmission with its end arrived)."""
    segs = timed_segments(p, data, data["direction"].unique().to_list())
    acks = (acks_of(p) if acks is None else acks).select("stream", "down", "ack", ack_s="time_s", ack_frame="frame")
    got = _ack_rtt_pairs_native(segs, acks)
    if got is None:
        got = _ack_rtt_pairs(segs, acks)
    return got.select("stream", "direction", "ack_frame", rtt_ms=(pl.col("ack_s") - pl.col("time_s")) * 1000.0)


def timed_segments(p: pl.DataFrame, data: pl.DataFrame, directions: list[str]) -> pl.DataFrame:
    """What the per-ACK RTT times: ``data``'s segments (retransmissions too, as tshark's list
    of unacknowledged segments holds them) and the SYNs and FINs of ``directions`` (those
    the data went), as ``stream, down, direction, time_s, frame, end``.
    A SYN or a FIN takes one sequence number (rel_seq 0 is the ISN: only a SYN has it; a
    FIN's is the one after its payload) and the ACK of it times it, as tshark does: without
    it, the ACK of a FIN timed the last data segment before it."""
    own = pl.col("direction").is_in(directions)
    syn = p.filter(pl.col("rel_seq") == 0, pl.col("payload_bytes") == 0, own).select(
        "stream", "down", "direction", "time_s", "frame", end=pl.lit(1, pl.Int64))
    fin = p.filter(pl.col("fin"), pl.col("rel_seq").is_not_null(), own).select(
        "stream", "down", "direction", "time_s", "frame",
        end=(pl.col("rel_seq") + pl.col("payload_bytes") + 1).cast(pl.Int64))
    return (pl.concat([data.select("stream", "down", "direction", "time_s", "frame", "end"), syn, fin])
            .select("stream", pl.col("down").fill_null(False), "direction", "time_s", "frame", "end"))


def _ack_rtt_pairs(segs: pl.DataFrame, acks: pl.DataFrame) -> pl.DataFrame:
    """``ack_rtt_samples``' definition in polars: each ACK that moves its subflow's
    cumulative ACK (``acks``), with the segment ending exactly there (``segs``: the first
    sent of each end), in frame order."""
    segs = segs.sort("frame").unique(["stream", "down", "end"], keep="first")
    reached = (
        acks.sort("ack_frame")
        .with_columns(cum_ack=pl.col("ack").cum_max().over(KEY))
        .with_columns(prev=pl.col("cum_ack").shift(1).over(KEY))
        .filter(pl.col("prev").is_null() | (pl.col("cum_ack") > pl.col("prev")))
    )
    m = reached.join(segs, left_on=[*KEY, "cum_ack"], right_on=[*KEY, "end"], how="inner")
    m = m.filter(pl.col("frame") < pl.col("ack_frame"))
    return m.select("stream", "direction", "ack_frame", "ack_s", "time_s").sort("ack_frame")


def _ack_rtt_pairs_native(segs: pl.DataFrame, acks: pl.DataFrame) -> pl.DataFrame | None:
    """``_ack_rtt_pairs`` by the native crate's loop (pipeline/pcapdecode/src/ackrtt.rs),
    or None where it does not apply: no native build, or a null in a column it reads.
    tests/test_metrics_synthetic.py holds the two equal."""
    try:
        from pcapdecode import ack_rtt_samples
    except ImportError:
        return None
    s = segs.select(pl.col("stream").cast(pl.UInt32), "down", pl.col("frame").cast(pl.UInt32),
                    pl.col("end").cast(pl.Int64))
    a = acks.select(pl.col("stream").cast(pl.UInt32), "down", pl.col("ack_frame").cast(pl.UInt32).alias("frame"),
                    pl.col("ack").cast(pl.Int64))
    if sum(s.null_count().row(0)) or sum(a.null_count().row(0)):
        return None
    # one chunk each: the native loop then reads polars' arrays in place, no copy
    found = pl.DataFrame(ack_rtt_samples(s.rechunk(), a.rechunk()))
    return pl.concat([acks.select("ack_frame", "ack_s")[found["ack_row"]],
                      segs.select("stream", "direction", "time_s")[found["seg_row"]]],
                     how="horizontal").select("stream", "direction", "ack_frame", "ack_s", "time_s")


def _rtt_pairs(d: pl.DataFrame, acks: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``d`` (data of the sending directions) that give a sample, with the
    time of their ACK (``ack_s``): ``rtt_samples``' definition in polars."""
    retx = d.filter(pl.col("retx"))
    originals = d.filter(~pl.col("retx"))
    if retx.height:
        # Union of retransmitted byte ranges per subflow, then: does a segment
        # overlap any of them? The last union interval starting before the segment's
        # end is the only candidate.
        u = (
            retx.sort("stream", "down", "rel_seq")
            .with_columns(prev_end=pl.col("end").cum_max().shift(1).over(KEY))
            .with_columns(new=(pl.col("prev_end").is_null() | (pl.col("rel_seq") > pl.col("prev_end"))).cast(pl.Int32))
            .with_columns(grp=pl.col("new").cum_sum().over(KEY))
            .group_by("stream", "down", "grp")
            .agg(pl.col("rel_seq").min().alias("u_start"), pl.col("end").max().alias("u_end"))
            .select("stream", "down", "u_start", "u_end")
            .sort("u_start")
        )
        originals = (
            originals.with_columns(last_byte=pl.col("end") - 1)
            .sort("last_byte")
            .join_asof(u, left_on="last_byte", right_on="u_start", by=KEY, strategy="backward", check_sortedness=False)
            .filter(pl.col("u_end").is_null() | (pl.col("u_end") <= pl.col("rel_seq")))
            .drop("last_byte", "u_start", "u_end")
        )
    reached = (
        acks.lazy()
        .sort("frame")
        .select("stream", "down", pl.col("time_s").alias("ack_s"), pl.col("frame").alias("ack_frame"), "ack")
        .with_columns(cum_ack=pl.col("ack").cum_max().over(KEY))
        # The first time each cumulative value was reached.
        .group_by("stream", "down", "cum_ack")
        .agg(pl.col("ack_s").min(), pl.col("ack_frame").min())
        .sort("cum_ack")
        .collect()
    )
    return (
        originals.sort("end")
        .join_asof(reached, left_on="end", right_on="cum_ack", by=KEY, strategy="forward", check_sortedness=False)
        .filter(pl.col("ack_frame").is_not_null(), pl.col("ack_frame") > pl.col("frame"))
    )


def _rtt_pairs_native(d: pl.DataFrame, acks: pl.DataFrame) -> pl.DataFrame | None:
    """``_rtt_pairs`` by the native crate's loop (pipeline/pcapdecode/src/rtt.rs; 0.016 s
    against ~0.06 s for the joins on the bench's server trace), or None where it does
    not apply: no native build, or a null in a column it reads (the polars joins'
    handling of null keys stays the definition). tests/test_metrics_synthetic.py holds
    the two equal."""
    try:
        from pcapdecode import rtt_samples
    except ImportError:
        return None
    sent = d.select(pl.col("stream").cast(pl.UInt32), "down", pl.col("frame").cast(pl.UInt32),
                    pl.col("rel_seq").cast(pl.Int64).alias("seq"), pl.col("end").cast(pl.Int64), "retx")
    acks = acks.select(pl.col("stream").cast(pl.UInt32), "down", pl.col("frame").cast(pl.UInt32),
                       pl.col("time_s").cast(pl.Float64), pl.col("ack").cast(pl.Int64))
    if sum(sent.null_count().row(0)) or sum(acks.null_count().row(0)):
        return None
    # one chunk each: the native loop then reads polars' arrays in place, no copy
    found = pl.DataFrame(rtt_samples(sent.rechunk(), acks.rechunk()))
    return d[found["row"]].with_columns(ack_s=found["ack_s"])


def download_time(p: pl.DataFrame, subflows: pl.DataFrame) -> pl.DataFrame:
    """Per connection and direction: start (first SYN) and download time.

    Chen §3.3: "We define the download time as the duration from when the client
    sends out the first SYN to the server to the time it receives the last data
    packet from the server." Client trace. Uploads: the completion time, from the
    first SYN to the last data packet the server receives (server trace). Null when
    the first SYN was not captured or no data went that way.
    """
    return download_time_from(last_data(p), subflows)


def last_data(p: pl.DataFrame) -> pl.DataFrame:
    """``conn_id, direction, last_data_s``: each connection's last data packet each way
    (a maximum: a trace's pieces' reduce to the trace's)."""
    return (_data(p.lazy().select(*CONN, "time_s", "payload_bytes")).group_by(CONN)
            .agg(pl.col("time_s").max().alias("last_data_s")).collect())


def download_time_from(last: pl.DataFrame, subflows: pl.DataFrame) -> pl.DataFrame:
    """``download_time`` from ``last_data``."""
    first_syn = subflows.group_by("conn_id").agg(
        pl.col("t_syn").filter(pl.col("is_primary")).min().alias("syn_s"),
        pl.col("t_first").min().alias("first_s"),
    )
    return first_syn.join(last, on="conn_id", how="left").with_columns(
        start_s=pl.coalesce("syn_s", "first_s"),
        download_time_s=pl.col("last_data_s") - pl.col("syn_s"),
        syn_captured=pl.col("syn_s").is_not_null(),
    ).select("conn_id", "direction", "start_s", "download_time_s", "syn_captured")


def delivered_per_second(data: pl.DataFrame, starts: pl.DataFrame) -> pl.DataFrame:
    """New data received per second since the connection's first SYN, per subflow and
    direction (the receiver's trace): the throughput a receiver-side tool (iperf's
    interval reports, bwm-ng) samples, and the per-subflow throughput-over-time
    graphs (Deng et al. Fig. 9, 10).

    ``data``: ``retransmissions`` (a retransmitted packet's bytes arrived before, so
    only first copies count as new data; MPTCP reinjections on another subflow count
    on the subflow that carried them); ``starts``: ``conn_id``, ``start_s``. Packets
    before the first SYN (a clock that went backwards) fall in no second.
    """
    return (
        data.join(starts.select("conn_id", "start_s"), on="conn_id", how="inner")
        .with_columns(second=((pl.col("time_s") - pl.col("start_s")).floor()).cast(pl.Int32))
        .filter(pl.col("second") >= 0)
        .group_by("conn_id", "stream", "direction", "second")
        .agg(payload_bytes=pl.col("payload_bytes").filter(~pl.col("retx")).sum().cast(pl.Int64),
             packets=pl.len().cast(pl.Int64))
        .sort("conn_id", "stream", "direction", "second")
    )


def traffic_share(p: pl.DataFrame) -> pl.DataFrame:
    """Per subflow: payload bytes and their share of the connection's.

    Chen §4 / Fig. 3: the "fraction of traffic carried by each cellular carrier in
    MPTCP connections", i.e. a subflow's server payload bytes (retransmissions
    included: bytes the path carried) over the connection's. Uploads: the client's
    payload bytes, per direction.
    """
    return with_traffic_share(subflow_bytes(p))


def subflow_bytes(p: pl.DataFrame) -> pl.DataFrame:
    """``traffic_share``'s sums: ``stream, conn_id, direction, payload_bytes``."""
    # only the columns summed: the data rows of a long trace are not copied whole
    return (_data(p.lazy().select("stream", "conn_id", "direction", "payload_bytes"))
            .group_by("stream", "conn_id", "direction")
            .agg(pl.col("payload_bytes").cast(pl.Int64).sum().alias("payload_bytes")).collect())


def with_traffic_share(b: pl.DataFrame) -> pl.DataFrame:
    return b.with_columns(traffic_share=pl.col("payload_bytes") / pl.col("payload_bytes").sum().over(CONN))


def ofo_delays(p: pl.DataFrame) -> pl.DataFrame:
    """Per server data packet arriving at the client: its out-of-order delay.

    Chen §3.3: "Out-of-order delay is defined to be the time difference between when
    a packet arrives at the receive buffer to when its data sequence number is
    in-order." A packet becomes in order when every data byte before its DSN has
    arrived on any subflow; in-order packets have delay 0 and count. Client trace
    (uploads: the client's data arriving at the server, server trace). Packets still
    waiting for a hole when the trace ends get a null delay.
    """
    d = (
        _data(p)
        .filter(pl.col("dsn_rel").is_not_null())
        .sort("time_s", "frame")
        .select("frame", "stream", "conn_id", "direction", "time_s", "dsn_rel", "payload_bytes")
    )
    if d.height == 0:
        return pl.DataFrame(schema={"frame": pl.UInt32, "stream": pl.UInt32, "conn_id": pl.Int32, "direction": pl.Utf8,
                                    "arrival_s": pl.Float64, "dsn_rel": pl.Int64, "ofo_delay_ms": pl.Float64})
    # Connections one after another (in order of their first packet), each in arrival
    # order; the loop runs over slices of three lists, not over polars groups (10,000
    # short connections took seconds of polars calls).
    d = d.with_row_index("_r").with_columns(_g=pl.col("_r").min().over(CONN)).sort("_g", "_r")
    bounds = d.select(pl.col("_g").rle_id()).to_series().rle().struct.field("len").cum_sum().to_list()
    times, starts, lengths = d["time_s"].to_list(), d["dsn_rel"].to_list(), d["payload_bytes"].to_list()
    in_order_times = _native_in_order_times()
    ready: list[float | None] = []
    lo = 0
    for hi in bounds:
        ready += in_order_times(times[lo:hi], starts[lo:hi], lengths[lo:hi])
        lo = hi
    return d.with_columns(in_order_s=pl.Series(ready, dtype=pl.Float64)).select(
        "frame", "stream", "conn_id", "direction", pl.col("time_s").alias("arrival_s"), "dsn_rel",
        ((pl.col("in_order_s") - pl.col("time_s")) * 1000.0).alias("ofo_delay_ms"),
    )


def _native_in_order_times():
    """The native decoder's copy of ``_in_order_times`` (pipeline/pcapdecode/src/ofo.rs;
    0.02 s against 0.06-0.07 s on a 180k-packet client trace, lists included), else the
    Python one: an install without the native build still analyses tshark's output.
    tests/test_metrics_synthetic.py holds the two equal."""
    try:
        from pcapdecode import in_order_times
    except ImportError:
        return _in_order_times
    return in_order_times


def _in_order_times(times: list[float], starts: list[int], lengths: list[int]) -> list[float | None]:
    """Time each packet's first byte became in order (None if never), in arrival order.

    The in-order point starts at the lowest DSN of the connection's data (byte 1 when
    the IDSN is known). A packet at or below it is in order on arrival and moves it
    forward; others wait in a heap until it reaches them.
    """
    n = len(times)
    ready: list[float | None] = [None] * n
    if n == 0:
        return ready
    frontier = min(1, min(starts))
    waiting: list[tuple[int, int]] = []
    ends = [s + n_ for s, n_ in zip(starts, lengths)]
    for i in range(n):
        if starts[i] <= frontier:
            ready[i] = times[i]
            if ends[i] > frontier:
                frontier = ends[i]
            while waiting and waiting[0][0] <= frontier:
                s, j = heapq.heappop(waiting)
                ready[j] = times[i]
                if ends[j] > frontier:
                    frontier = ends[j]
        else:
            heapq.heappush(waiting, (starts[i], i))
    return ready
