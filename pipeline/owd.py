"""One-way delay from a run's two traces: each data packet found in the sender's
capture and again in the receiver's (what mptcpanalyzer's trace mapping offers).

A packet is the same segment in both traces when its subflow (the 4-tuple), direction,
absolute sequence number and payload length agree. A segment seen more than once in
either trace (a retransmission, or a duplicate in the capture) is left out, as Karn
leaves it out of RTT: which copy arrived cannot be told.

The two clocks: when both ends were network namespaces of one host (a lab run,
``meta.json``'s ``namespaces``) they are one clock and the offset is 0. Otherwise it is
estimated from both directions, assuming their smallest delays are equal:
measured down = d_down + θ, measured up = d_up - θ (θ: client clock minus server
clock), so θ = (min down - min up) / 2. With one direction only the offset is
unknown and ``owd_ms`` stays empty (``raw_ms`` has the receiver's time minus the
sender's). ``clock`` names which of these a row rests on.
"""
from __future__ import annotations

import polars as pl

KEY = ("client_addr", "client_port", "server_addr", "server_port", "down", "seq32", "payload_bytes")
SAME_HOST = "one host"
ESTIMATED = "estimated: equal smallest delay both ways"
UNKNOWN = "unknown: one direction only"


def half(data: pl.DataFrame, sf: pl.DataFrame) -> pl.DataFrame:
    """One trace's side of the matching: its data packets (``data``: frame, time_s,
    stream, conn_id, down, payload_bytes, rel_seq) with the subflow's addresses and the
    absolute sequence number, each key seen once in this trace."""
    s = sf.select("stream", "conn_id", "path", "client_addr", "client_port", "server_addr", "server_port",
                  "seq_base_server", "seq_base_client")
    d = data.select("frame", "time_s", "stream", pl.col("down").fill_null(False), "payload_bytes", "rel_seq").join(
        s, on="stream", how="inner")
    base = pl.when(pl.col("down")).then(pl.col("seq_base_server")).otherwise(pl.col("seq_base_client"))
    d = d.select("frame", "time_s", "stream", "conn_id", "path", "client_addr", "client_port", "server_addr",
                 "server_port", "down", "payload_bytes", seq32=((base + pl.col("rel_seq")) % (1 << 32)).cast(pl.UInt32))
    return d.filter(pl.len().over(KEY) == 1)


def pair(client: pl.DataFrame, server: pl.DataFrame, same_clock: bool) -> tuple[pl.DataFrame, list[str]]:
    """Per matched packet: the sender's stream, conn_id, path and frame, the receiver's
    frame, ``sent_s``, ``raw_ms``, ``owd_ms``, ``clock_offset_ms``, ``clock``; and notes
    (problems: the two traces share no packet)."""
    notes: list[str] = []
    parts = []
    for down, sender, receiver in ((True, server, client), (False, client, server)):
        snd = sender.filter(pl.col("down") == down)
        rcv = receiver.filter(pl.col("down") == down).select(*KEY, recv_frame="frame", received_s="time_s")
        m = snd.join(rcv, on=list(KEY), how="inner")
        parts.append(m.select("stream", "conn_id", "path", "frame", "recv_frame", "down", sent_s="time_s",
                              raw_ms=(pl.col("received_s") - pl.col("time_s")) * 1000.0))
        if snd.height and rcv.height and not m.height:
            way = "server -> client" if down else "client -> server"
            notes.append(f"one-way delay: none of the {snd.height:,} {way} data packets was found in the other "
                         "end's trace (not the same connection, or segmentation offload changed the packets)")
    m = pl.concat(parts)
    down_min = m.filter(pl.col("down"))["raw_ms"].min()
    up_min = m.filter(~pl.col("down"))["raw_ms"].min()
    if same_clock:
        theta, clock = 0.0, SAME_HOST
    elif down_min is not None and up_min is not None:
        theta, clock = (down_min - up_min) / 2.0, ESTIMATED
    else:  # said by the rows themselves (clock, an empty owd_ms): not a problem of the capture
        theta, clock = None, UNKNOWN
    sign = pl.when(pl.col("down")).then(-1.0).otherwise(1.0)
    out = m.with_columns(
        owd_ms=pl.col("raw_ms") + sign * theta if theta is not None else pl.lit(None, pl.Float64),
        clock_offset_ms=pl.lit(theta, pl.Float64),
        clock=pl.lit(clock),
        direction=pl.when(pl.col("down")).then(pl.lit("down")).otherwise(pl.lit("up")),
    )
    return out, notes
