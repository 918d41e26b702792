"""A 4-tuple used again after its connection closed: the decoder starts a new stream on
a SYN; a new connection whose SYN was not captured goes on in the old stream, and is
split from it here (``flows.build_trace`` on a whole trace; ``streamed`` on the rows a
capture's digest keeps, then piece by piece)."""
from __future__ import annotations

import polars as pl

from .fields import FIN, RST, SYN

# a sequence number this far from where its sender's previous packet ended is no
# retransmission or loss: another connection's numbering
SEQ_JUMP = 1 << 30
# After its own FIN or RST a sender's packets repeat its bytes (retransmissions, the FIN,
# keep-alives); one numbered outside [its first sequence number, its close's end] starts
# a new connection on the 4-tuple, whatever its ISN (a random ISN lands inside the old
# range with a chance of bytes / 2^32). The margin below the first number: a capture
# that began mid-transfer may later see a retransmission of bytes it never saw.
REPEAT_BELOW_BASE = 1 << 16
# ``reused_stream_splits``' table: a stream's packets from ``from_frame`` on are ``new_stream``'s
SPLITS = {"stream": pl.UInt32, "from_frame": pl.UInt32, "new_stream": pl.UInt32}


def split_reused_streams(p: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """A TCP stream (the decoder's 4-tuple conversation) that, after a FIN or RST, goes on
    with sequence numbers unrelated to its own is a new connection on the same 4-tuple
    whose SYN was not captured: its packets get a stream of their own (else they would
    count as retransmissions of the old one), with a row. The decoder splits on a SYN."""
    splits, notes = reused_stream_splits(p, int(p["stream"].max()) + 1 if p.height else 0)
    return with_splits(p, splits), notes


def reused_stream_splits(p: pl.DataFrame, next_stream: int) -> tuple[pl.DataFrame, list[str]]:
    """``split_reused_streams``' splits (``SPLITS``: the new streams numbered from
    ``next_stream``) and their rows. ``p``: the packets, or those a capture's digest keeps
    (every packet after a stream's first close, and each sender's first and last before it).
    Unrelated numbers: more than SEQ_JUMP from where the sender's previous packet ended,
    or, once the sender itself closed, outside the range it numbered (REPEAT_BELOW_BASE)."""
    seq_end = (pl.col("seq").cast(pl.Int64) + pl.col("payload_bytes").cast(pl.Int64)
               + ((pl.col("tcp_flags") & (SYN | FIN)) != 0).cast(pl.Int64))
    key = ["stream", "src", "sport"]
    closing = ((pl.col("tcp_flags") & (FIN | RST)) != 0)
    none = pl.DataFrame(schema=SPLITS), []
    # Only what follows a stream's first FIN/RST can be a new connection: the windows below
    # run over those packets (and each sender's last one before it), not the whole trace.
    first_close = p.filter(closing).group_by("stream").agg(fc=pl.col("frame").min())
    if first_close.is_empty():
        return none
    cols = p.select("frame", "stream", "src", "sport", "seq", "payload_bytes", "tcp_flags").join(
        first_close, on="stream", how="inner")
    # each sender's first sequence number (its SYN's, or its first packet's in the capture)
    base = cols.group_by(key).agg(base=pl.col("seq").get(pl.col("frame").arg_min()).cast(pl.Int64))
    window = pl.concat([
        cols.filter(pl.col("frame") < pl.col("fc")).sort("frame").group_by(key).last().select(cols.columns),
        cols.filter(pl.col("frame") >= pl.col("fc")),
    ], how="vertical_relaxed").drop("fc").sort("frame").join(base, on=key, how="left")
    del cols
    own_close = closing.cast(pl.Int32).cum_sum().over(key)
    cand = (
        window
        .with_columns(expected=seq_end.shift(1).over(key), closed=closing.cast(pl.Int32).cum_sum().over("stream"),
                      own=own_close,
                      # where the sender's own first FIN/RST ended its numbering
                      close_end=pl.when(closing & (own_close == 1)).then(seq_end).forward_fill().over(key))
        .with_columns(d=(pl.col("seq").cast(pl.Int64) - pl.col("expected")) % (1 << 32),
                      closed_before=(pl.col("closed") - closing.cast(pl.Int32)) > 0,
                      own_before=(pl.col("own") - closing.cast(pl.Int32)) > 0,
                      # past its own close a sender only repeats bytes of [base, close end]
                      outside=((pl.col("seq").cast(pl.Int64) - pl.col("base") + REPEAT_BELOW_BASE) % (1 << 32))
                      > ((pl.col("close_end") - pl.col("base") + REPEAT_BELOW_BASE) % (1 << 32)))
        .filter(pl.col("closed_before"), pl.col("expected").is_not_null(),
                (pl.min_horizontal("d", (1 << 32) - pl.col("d")) > SEQ_JUMP)
                | (pl.col("own_before") & pl.col("outside").fill_null(False)))
        .select("stream", "frame")
    )
    if cand.is_empty():
        return none
    closes = p.filter(closing).select("stream", "frame")
    splits = []  # (stream, first frame of the new connection)
    for (stream,), c in cand.group_by(["stream"], maintain_order=True):
        fins = sorted(closes.filter(pl.col("stream") == stream)["frame"].to_list())
        last = 0  # one split per close: the other end's first packet of the new connection jumps too
        for f in sorted(c["frame"].to_list()):
            if any(last <= x < f for x in fins):
                splits.append((stream, f))
                last = f
    table = pl.DataFrame([(s, f, next_stream + i) for i, (s, f) in enumerate(splits)], schema=SPLITS,
                         orient="row").sort("from_frame")
    notes = [f"stream {s}: after its FIN/RST, packets from frame {f} on number their bytes from elsewhere: a new "
             f"connection on the same addresses and ports whose SYN was not captured; analysed as stream "
             f"{next_stream + i}" for i, (s, f) in enumerate(splits)]
    return table, notes


def with_splits(p: pl.DataFrame, splits: pl.DataFrame) -> pl.DataFrame:
    """``p`` (in frame order, a whole trace or a piece of it) with each packet of a split
    stream from its ``from_frame`` on in the split's ``new_stream``."""
    if splits.is_empty() or p.is_empty():
        return p
    j = p.select("frame", "stream").join_asof(splits, left_on="frame", right_on="from_frame", by="stream",
                                              strategy="backward", check_sortedness=False)
    return p.with_columns(stream=pl.coalesce(j["new_stream"], j["stream"]))
