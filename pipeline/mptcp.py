"""MPTCP key arithmetic: tokens, initial data sequence numbers, DSN unwrapping.

RFC 8684 (v1) derives the token (most significant 32 bits) and the IDSN (least
significant 64 bits) from SHA-256 of the 64-bit key; RFC 6824 (v0) uses SHA-1.
"""
from __future__ import annotations

import hashlib
import struct

import polars as pl

_TWO32 = 1 << 32
_LOW32 = _TWO32 - 1


def _digest(key: int, version: int) -> bytes:
    algo = hashlib.sha256 if version == 1 else hashlib.sha1
    return algo(struct.pack("!Q", key)).digest()


def token(key: int, version: int) -> int:
    return struct.unpack("!I", _digest(key, version)[:4])[0]


def idsn(key: int, version: int) -> int:
    d = _digest(key, version)
    return struct.unpack("!Q", d[-8:])[0]


def token_and_idsn(key: int, version: int) -> tuple[int, int]:
    """``token`` and ``idsn`` of one key from one digest."""
    d = _digest(key, version)
    return struct.unpack("!I", d[:4])[0], struct.unpack("!Q", d[-8:])[0]


def relative_dsn_by(frame: pl.DataFrame, raw: str, is64: str, ref: str, by: str) -> pl.Series:
    """DSNs relative to each connection's reference (the sender's IDSN), as Int64, first
    data byte = 1: column ``raw`` of every row of ``frame`` (in packet order), each group
    of ``by`` (a connection) on its own, with its reference in column ``ref``.

    ``raw`` holds the DSS field as captured (64- or 32-bit per column ``is64``). 64-bit
    values are exact modulo 2^64; 32-bit ones are placed relative to the reference and
    unwrapped in packet order (a step of more than 2^31 backwards is a wrap forwards and
    vice versa, as in TCP), which is exact while the connection moves less than 2 GiB
    between two consecutive 32-bit mappings; a connection's first 32-bit mapping goes in
    the 2^32 window nearest its first 64-bit one. One pass over all connections: a loop
    over 10,000 short ones took half a minute (tests/test_metrics_synthetic.py holds it
    to that loop's definition)."""
    t = frame.select(_g=pl.col(by), _raw=pl.col(raw).cast(pl.UInt64), _m64=pl.col(is64).cast(pl.Boolean),
                     _ref=pl.col(ref).cast(pl.UInt64)).with_row_index("_i")
    # polars' unsigned arithmetic wraps: modulo 2^64, read back as signed
    t = t.with_columns(_rel64=(pl.col("_raw") - pl.col("_ref")).reinterpret(signed=True))
    if t["_m64"].all():
        return t["_rel64"].alias(raw)
    d = pl.col("_low").diff().over("_g").fill_null(0)
    s32 = (
        t.filter(~pl.col("_m64"))
        .with_columns(_low=(pl.col("_raw").cast(pl.Int64) - (pl.col("_ref") & _LOW32).cast(pl.Int64)) & _LOW32)
        .with_columns(_rel32=pl.col("_low") + ((d < -(1 << 31)).cast(pl.Int64)
                                               - (d > (1 << 31)).cast(pl.Int64)).cum_sum().over("_g") * _TWO32)
    )
    # Each connection's first 32-bit mapping goes in the window nearest its 64-bit ones.
    anchors = t.filter(pl.col("_m64")).group_by("_g").agg(_anchor=pl.col("_rel64").first())
    s32 = s32.join(anchors, on="_g", how="left", maintain_order="left").with_columns(
        _rel32=pl.when(pl.col("_anchor").is_not_null())
        .then(pl.col("_rel32") + ((pl.col("_anchor") - pl.col("_rel32").first().over("_g")) + (1 << 31))
              // _TWO32 * _TWO32)
        .otherwise(pl.col("_rel32")))
    out = t.join(s32.select("_i", "_rel32"), on="_i", how="left", maintain_order="left")
    return out.select(pl.coalesce("_rel32", "_rel64").alias(raw)).to_series()


def absolute_dsn(rel: str, ref: pl.Expr) -> pl.Expr:
    """Relative DSNs (column ``rel``) back to absolute 64-bit ones (modulo 2^64) from ``ref``."""
    return pl.col(rel).cast(pl.Int64).reinterpret(signed=False) + ref.cast(pl.UInt64)


class LateAnchor(Exception):
    """A connection's first 64-bit value came after 32-bit ones already unwrapped
    without it (``Unwrap``): the trace must be read whole."""


_UNWRAP_STATE = {"_g": pl.Int64, "_last_low": pl.Int64, "_wraps": pl.Int64, "_first_low": pl.Int64,
                 "_anchor": pl.Int64}


class Unwrap:
    """``relative_dsn_by`` of a trace's rows fed piece by piece, in packet order: each
    connection's last 32-bit value and wraps so far, its first 32-bit value and its first
    64-bit one (the anchor) carry from one piece to the next. ``feed`` raises
    ``LateAnchor`` when a connection's first 64-bit value comes in a later piece than
    32-bit ones (which ``relative_dsn_by`` would have moved to its window)."""

    def __init__(self) -> None:
        self.state = pl.DataFrame(schema=_UNWRAP_STATE)

    def _anchored(self, m64: pl.DataFrame) -> pl.DataFrame:
        """The state with the anchors of connections seen first in ``m64`` (a piece's
        64-bit rows); ``LateAnchor`` for a connection with 32-bit values and no anchor."""
        waiting = self.state.filter(pl.col("_anchor").is_null())["_g"]
        if waiting.len() and m64.select(pl.col("_g").is_in(waiting.implode()).any()).item():
            raise LateAnchor("a connection's first 64-bit DSN or DATA_ACK comes after 32-bit ones")
        fresh = m64.filter(~pl.col("_g").is_in(self.state["_g"].implode()))
        if fresh.height == 0:
            return self.state
        anchors = fresh.group_by("_g", maintain_order=True).agg(_anchor=pl.col("_rel64").first())
        return pl.concat([self.state, anchors], how="diagonal_relaxed").select(list(_UNWRAP_STATE))

    def feed(self, frame: pl.DataFrame, raw: str, is64: str, ref: str, by: str) -> pl.Series:
        t = frame.select(_g=pl.col(by).cast(pl.Int64), _raw=pl.col(raw).cast(pl.UInt64),
                         _m64=pl.col(is64).cast(pl.Boolean), _ref=pl.col(ref).cast(pl.UInt64))
        t = t.with_columns(_rel64=(pl.col("_raw") - pl.col("_ref")).reinterpret(signed=True))
        all64 = t["_m64"].all()
        known = self._anchored(t if all64 else t.filter(pl.col("_m64")))
        if all64:
            self.state = known
            return t["_rel64"].alias(raw)
        t = t.with_row_index("_i")
        d = pl.col("_low").diff().over("_g")
        s32 = (
            t.filter(~pl.col("_m64"))
            .with_columns(_low=(pl.col("_raw").cast(pl.Int64) - (pl.col("_ref") & _LOW32).cast(pl.Int64)) & _LOW32)
            .join(known, on="_g", how="left", maintain_order="left")
            # the first step of each connection in this piece: from its last value before
            .with_columns(_d=pl.coalesce(d, pl.col("_low") - pl.col("_last_low"), pl.lit(0)),
                          _first_low=pl.coalesce("_first_low", pl.col("_low").first().over("_g")))
            .with_columns(_wraps=pl.col("_wraps").fill_null(0) + ((pl.col("_d") < -(1 << 31)).cast(pl.Int64)
                                                                  - (pl.col("_d") > (1 << 31)).cast(pl.Int64))
                          .cum_sum().over("_g"))
            .with_columns(_rel32=pl.col("_low") + pl.col("_wraps") * _TWO32 + pl.when(pl.col("_anchor").is_not_null())
                          .then((pl.col("_anchor") - pl.col("_first_low") + (1 << 31)) // _TWO32 * _TWO32)
                          .otherwise(0))
        )
        last = s32.group_by("_g").agg(pl.col("_low").last().alias("_last_low"), pl.col("_wraps").last(),
                                      pl.col("_first_low").first(), pl.col("_anchor").first())
        self.state = pl.concat([known.join(last, on="_g", how="anti"), last.select(list(_UNWRAP_STATE))])
        out = t.join(s32.select("_i", "_rel32"), on="_i", how="left", maintain_order="left")
        return out.select(pl.coalesce("_rel32", "_rel64").alias(raw)).to_series()
