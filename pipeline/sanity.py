"""Checks on a trace's packets before any metric: what would make the numbers silently
wrong becomes a note (a problems row), and exact duplicates are dropped.

* Exact duplicates (same time, headers, IP id and TCP checksum: a capture merged with
  itself, a packet written twice) would double bytes and look like retransmissions.
* A snap length that cuts into the TCP header loses TCP/MPTCP options: MPTCP
  connections then look like plain TCP ones, joins lose their tokens and data
  sequence numbers (OFO delay) go missing.
* Timestamps that go backwards make negative durations; timestamps that are
  impossible (all equal, 1970 mixed with recent dates, in the future) make every
  duration meaningless, so time-based metrics are not computed from such a trace.
* A capture whose order is not its time order while each sender's own packets are in
  time order (``tcpdump -i any``, several interfaces or capture queues: an ACK written
  after data it was stamped before) is put in timestamp order for the metrics, as the
  packets happened; the tables keep the capture's frame numbers (``Checked.frames``).
"""
from __future__ import annotations

import datetime as dt
import functools
import time
from dataclasses import dataclass, field

import polars as pl

PLAUSIBLE_FROM_S = dt.datetime(1990, 1, 1, tzinfo=dt.timezone.utc).timestamp()
FUTURE_SLACK_S = 86400.0
# Backwards steps up to this many seconds, in at most this share of packets (or this
# many), are capture jitter (several capture queues); beyond, no duration is trusted.
BACKWARDS_TOLERATED_S = 1.0
BACKWARDS_TOLERATED_SHARE = 0.01
BACKWARDS_TOLERATED_N = 3


@dataclass
class Checked:
    packets: pl.DataFrame
    notes: list[str] = field(default_factory=list)
    time_unusable: bool = False
    # when the packets were put in timestamp order: the capture's frame number of each row
    # (their ``frame`` is then 1..n in time order; ``restore_frames`` maps a table back)
    frames: pl.Series | None = None


def check(packets: pl.DataFrame, now_s: float | None = None) -> Checked:
    out = Checked(packets)
    _ports_only(out)
    _drop_duplicates(out)
    _snap_length(out)
    _timestamps(out, time.time() if now_s is None else now_s)
    return out


def _row_hash(p: pl.DataFrame) -> pl.Expr:
    """A hash of a few telling columns: comparing whole rows of a multi-million-packet
    trace costs several times its size in memory, and duplicates are rare. Only the rows
    whose hash repeats are compared exactly, on every column."""
    same = [col for col in p.columns if col != "frame"]
    key = [col for col in ("time_s", "stream", "seq", "ack", "ip_id", "tcp_checksum", "payload_bytes") if col in same]
    return functools.reduce(lambda a, b: a.xor(b), [pl.col(col).hash(seed=i) for i, col in enumerate(key or same)])


def _repeated_hashes(p: pl.DataFrame) -> pl.Series:
    h = p.select(_row_hash(p)).to_series().sort()
    return h.filter(h == h.shift(1))  # sorting keeps memory to one more column


def may_hold_duplicates(p: pl.DataFrame) -> bool:
    """Could ``p`` hold exact duplicates (two rows whose telling columns hash alike)?"""
    return _repeated_hashes(p).len() > 0


def _drop_duplicates(c: Checked) -> None:
    p = c.packets
    same = [col for col in p.columns if col != "frame"]
    row_hash = _row_hash(p)
    repeated = _repeated_hashes(p)
    if repeated.len() == 0:
        return
    maybe = p.select(row_hash.is_in(repeated.implode())).to_series()
    candidates = p.filter(maybe)
    kept = candidates.unique(subset=same, keep="first", maintain_order=True)
    n = candidates.height - kept.height
    if n:
        dropped = candidates.filter(~pl.col("frame").is_in(kept["frame"].implode()))["frame"]
        c.packets = p.filter(~pl.col("frame").is_in(dropped.implode()))
        c.notes.append(f"{n} exact duplicate packets (same time, headers and checksum, e.g. a capture merged "
                       "with itself) dropped before the metrics")


def _ports_only(c: Checked) -> None:
    """Packets whose snap length kept the TCP ports and nothing after them (tcpdump's old
    -s 68 on IPv6, -s 40 on IPv4): the decoder, as tshark, gives them no stream and no
    sequence numbers, so no metric can place them. Left out, and said."""
    p = c.packets
    # (a header whose data offset is below 20 bytes lacks flags and ACK, not these: kept)
    cols = [col for col in ("stream", "seq") if col in p.columns]
    if not cols:
        return
    blind = pl.any_horizontal(pl.col(col).is_null() for col in cols)
    n = p.select(blind.sum()).item()
    if not n:
        return
    least = p.filter(blind)["cap_bytes"].min() if "cap_bytes" in p.columns else None
    c.packets = p.filter(~blind)
    c.notes.append(f"the snap length kept only the TCP ports of {n} of {p.height} packets"
                   + (f" ({least} bytes captured)" if least is not None else "")
                   + ": no sequence numbers, so they are left out of every metric; capture with a larger snap "
                   "length (tcpdump -s 256)")


def _snap_length(c: Checked) -> None:
    p = c.packets
    if "cap_bytes" not in p.columns or p["cap_bytes"].null_count() == p.height:
        return
    headers = pl.col("frame_bytes").cast(pl.Int64) - pl.col("payload_bytes").cast(pl.Int64)
    cut = p.filter(pl.col("cap_bytes").cast(pl.Int64) < headers)
    if cut.height:
        least = int(cut["cap_bytes"].min())
        c.notes.append(
            f"the snap length cut the TCP header of {cut.height} of {p.height} packets (as few as {least} bytes "
            "captured): TCP/MPTCP options are missing, so MPTCP connections may look like plain TCP, joins lose "
            "their tokens and OFO delays go missing; capture with a larger snap length (tcpdump -s 256)")


def _timestamps(c: Checked, now_s: float) -> None:
    p = c.packets
    t = (p["time_s"] if p["frame"].is_sorted() else p.select(pl.col("time_s").sort_by("frame"))
         .to_series()).fill_null(0.0)
    if t.len() < 2:
        return
    why = None
    if t.min() == t.max():
        why = f"every packet has the same timestamp ({t[0]:.6f})"
    else:
        old = (t < PLAUSIBLE_FROM_S).sum()
        if 0 < old < t.len():
            why = f"{old} packets are dated before 1990 (e.g. 1970) while the others are not"
        future = (t > now_s + FUTURE_SLACK_S).sum()
        if why is None and future:
            when = dt.datetime.fromtimestamp(min(t.max(), 253402300799), dt.timezone.utc).date()
            why = f"{future} packets are dated in the future (up to {when})"
    steps = t.diff().drop_nulls()
    back = steps.filter(steps < 0)
    if back.len() and why is None and _senders_in_order(p):
        _put_in_time_order(c, back.len(), -back.min())
        return
    if back.len():
        worst = -back.min()
        msg = f"timestamps go backwards {back.len()} times (by up to {worst:.6f} s)"
        many = back.len() > max(BACKWARDS_TOLERATED_N, BACKWARDS_TOLERATED_SHARE * t.len())
        if why is None and (worst > BACKWARDS_TOLERATED_S or many):
            why = msg + ", also within one sender's packets"
        elif why is None:
            c.notes.append(msg + "; durations across those points may be wrong (negative ones are dropped)")
    if why:
        c.time_unusable = True
        c.notes.append(f"impossible timestamps: {why}; time-based metrics (RTT, OFO delay, download time) "
                       "left empty, byte and packet counts kept")


# A sender is one direction of one flow (addresses and ports): a capture queue or
# interface holds all of it. By address alone, `tcpdump -i any` at a multi-homed client
# would put the server's packets to its two addresses, which come in through two
# interfaces, under one sender whose packets go backwards (issue 43).
SENDER = ("src", "dst", "sport", "dport")


def sender_key(columns: list[str]) -> list[str]:
    """The columns of ``SENDER`` a packet table has (none without ``src``)."""
    return [c for c in SENDER if c in columns] if "src" in columns else []


def _senders_in_order(p: pl.DataFrame) -> bool:
    """Is every sender's (one flow direction's) own sequence of packets in time order?
    Then the capture's disorder is only between senders (interfaces, capture queues)."""
    key = sender_key(p.columns)
    if not key:
        return False
    q = p if p["frame"].is_sorted() else p.sort("frame")
    return not q.select((pl.col("time_s").diff() < 0).any().over(key).any()).item()


def _put_in_time_order(c: Checked, n_back: int, worst: float) -> None:
    p = c.packets
    order = p.select(pl.arg_sort_by("time_s", "frame")).to_series()
    c.frames = p["frame"].gather(order)
    c.packets = p[order].with_columns(frame=pl.int_range(1, p.height + 1, dtype=pl.UInt32))
    c.notes.append(reordered_note(n_back, worst))


def reordered_note(n_back: int, worst: float) -> str:
    return (f"capture order repaired: timestamps go backwards {n_back} times (by up to {worst:.6f} s) between "
            "senders, never within one sender's packets (several interfaces or capture queues, e.g. tcpdump -i any); "
            "the metrics read the packets in timestamp order, the tables keep the capture's frame numbers")


def restore_frames(table: pl.DataFrame, frames: pl.Series | None, columns: tuple[str, ...] = ("frame",)
                   ) -> pl.DataFrame:
    """``table``'s frame columns back to the capture's numbers (after ``_put_in_time_order``)."""
    if frames is None or table.is_empty():
        return table
    return table.with_columns(frames.gather(table[c].cast(pl.Int64) - 1).cast(table.schema[c]).alias(c)
                              for c in columns if c in table.columns)
