"""One-way delay from a run's two traces: each data packet found in the sender's
capture and again in the receiver's (what mptcpanalyzer's trace mapping offers).

A packet is the same segment in both traces when its subflow (the 4-tuple), direction,
absolute sequence number and payload length agree. A segment sent more than once (a
retransmission) is matched copy by copy by its IPv4 identification: Linux numbers a TCP
socket's packets one by one, so each copy has an ID of its own, and the copy that
arrived is the one whose ID the receiver saw. Copies that share an ID (a packet
captured twice) or have none (IPv6) cannot be told apart: they are left out, as Karn
leaves them out of RTT, and counted in a note.

The two clocks: when both ends were network namespaces of one host (a lab run,
``meta.json``'s ``namespaces``) they are one clock and the offset is 0. Otherwise it is
estimated from both directions, assuming their smallest delays are equal:
measured down = d_down + θ, measured up = d_up - θ (θ: client clock minus server
clock), so θ = (min down - min up) / 2. With one direction only the offset is
unknown and ``owd_ms`` stays empty (``raw_ms`` has the receiver's time minus the
sender's). ``clock`` names which of these a row rests on.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from .spill import Spill

KEY = ("client_addr", "client_port", "server_addr", "server_port", "down", "seq32", "payload_bytes")
# a segment's copies in one trace: their number, and how many share each one's IP ID
_COPIES, _SAME_ID = "_copies", "_same_id"
SAME_HOST = "one host"
ESTIMATED = "estimated: equal smallest delay both ways"
UNKNOWN = "unknown: one direction only"
IMPLAUSIBLE = "implausible: "  # + why; owd_ms left empty, raw_ms kept
# How far below zero a one-way delay may lie before the clocks it rests on are wrong:
# both ends stamp with one clock (or offsets estimated from both ways), so a receiver
# never stamps a packet before its sender did; 1 ms leaves room for stamping jitter.
NEGATIVE_MS = 1.0


def half(data: pl.DataFrame, sf: pl.DataFrame) -> pl.DataFrame:
    """One trace's side of the matching: its data packets (``data``: frame, time_s,
    stream, conn_id, down, payload_bytes, rel_seq) with the subflow's addresses and the
    absolute sequence number, and how many copies of its segment the trace holds."""
    return _counted(rows(data, sf))


def rows(data: pl.DataFrame, sf: pl.DataFrame) -> pl.DataFrame:
    """``half``'s rows before its copies are counted (a piece of a trace)."""
    s = sf.select("stream", "conn_id", "path", "client_addr", "client_port", "server_addr", "server_port",
                  "seq_base_server", "seq_base_client")
    d = data.select("frame", "time_s", "stream", pl.col("down").fill_null(False), "payload_bytes", "rel_seq",
                    "ip_id").join(s, on="stream", how="inner")
    base = pl.when(pl.col("down")).then(pl.col("seq_base_server")).otherwise(pl.col("seq_base_client"))
    return d.select("frame", "time_s", "stream", "conn_id", "path", "client_addr", "client_port", "server_addr",
                    "server_port", "down", "payload_bytes", "ip_id",
                    seq32=((base + pl.col("rel_seq")) % (1 << 32)).cast(pl.UInt32))


def _counted(d: pl.DataFrame) -> pl.DataFrame:
    """``d`` with each row's ``_COPIES`` (its segment's copies in this trace) and
    ``_SAME_ID`` (those with its IP ID): all of a trace's copies of a segment must be in
    ``d`` (a whole trace, or one of ``Spilled``'s parts)."""
    return d.with_columns(pl.len().over(KEY).cast(pl.UInt32).alias(_COPIES),
                          pl.len().over(*KEY, "ip_id").cast(pl.UInt32).alias(_SAME_ID))


# A copy that can be matched: its segment's only one, or one whose IP ID no other copy shares.
_TOLD_APART = (pl.col(_COPIES) == 1) | (pl.col("ip_id").is_not_null() & (pl.col(_SAME_ID) == 1))


# A long trace's side goes to disk in this many parts by its keys' hash, and is matched
# part by part (a grace hash join): each part holds ~1/16 of the trace's data packets.
PARTS = 16
# rows of one part held before they are written
PART_ROWS = 1 << 15


def _part() -> pl.Expr:
    return (pl.struct(*KEY).hash() % PARTS).cast(pl.UInt8)


class Spilled:
    """One long trace's side of the matching, on disk in ``PARTS`` parts by key, fed
    piece by piece (``add``: ``rows``' rows); ``part(i)`` is ``half``'s rows of one part
    (a key's rows all lie in one part, so each part counts its keys' copies as the trace does)."""

    def __init__(self, where: Spill) -> None:
        self.where = where
        self._held: list[list[pl.DataFrame]] = [[] for _ in range(PARTS)]
        self._files: list[list[Path]] = [[] for _ in range(PARTS)]

    def add(self, piece: pl.DataFrame) -> None:
        for (i,), part in piece.with_columns(_part=_part()).partition_by("_part", as_dict=True,
                                                                           include_key=False).items():
            self._held[i].append(part)
            if sum(x.height for x in self._held[i]) >= PART_ROWS:
                self._files[i].append(self.where.write(pl.concat(self._held[i])))
                self._held[i] = []

    def part(self, i: int) -> pl.DataFrame | None:
        got = [pl.read_ipc(f) for f in self._files[i]] + self._held[i]
        return _counted(pl.concat(got)) if got else None


def _parts(side: pl.DataFrame | Spilled) -> Iterator[pl.DataFrame | None]:
    """A side's parts, read one at a time."""
    if isinstance(side, Spilled):
        yield from (side.part(i) for i in range(PARTS))
    else:
        yield from _split(side)


def pair(client: pl.DataFrame | Spilled, server: pl.DataFrame | Spilled, same_clock: bool,
         out: Spill | None = None) -> tuple[pl.DataFrame | pl.LazyFrame, list[str]]:
    """Per matched packet: the sender's stream, conn_id, path and frame, the receiver's
    frame, ``sent_s``, ``raw_ms``, ``owd_ms``, ``clock_offset_ms``, ``clock``; and notes
    (problems: the two traces share no packet). A ``Spilled`` side is matched part by
    part, and the matches written to files in ``out`` (a LazyFrame over them)."""
    # sender's packets, receiver's, matched, copies that could not be told apart
    counts = {down: [0, 0, 0, 0] for down in (True, False)}
    lows: dict[bool, list[float]] = {True: [], False: []}
    highs: dict[bool, list[float]] = {True: [], False: []}
    found: list[pl.DataFrame] = []
    files: list[Path] = []
    if isinstance(client, pl.DataFrame) and isinstance(server, pl.DataFrame):
        sides = [(client, server)]
    else:
        if out is None:
            raise ValueError("a spilled side of the matching needs a spill for its matches")
        sides = zip(_parts(client), _parts(server))
    for c, s in sides:
        m = _matched(c, s, counts)
        for down in (True, False):
            way = m.filter(pl.col("down") == down)["raw_ms"]
            if way.len():
                lows[down].append(way.min())
                highs[down].append(way.max())
        if out is None:
            found.append(m)
        elif m.height:
            files.append(out.write(m))
    notes = []
    for down, (n_snd, n_rcv, n_m, n_amb) in counts.items():
        way = "server -> client" if down else "client -> server"
        if n_snd and n_rcv and not n_m:
            notes.append(f"one-way delay: none of the {n_snd:,} {way} data packets was found in the other "
                         "end's trace (not the same connection, or segmentation offload changed the packets)")
        if n_amb:
            notes.append(f"one-way delay: {n_amb:,} {way} copies of segments sent or captured more than once "
                         "could not be told apart (one IP ID for several copies, or IPv6: no IP ID) and are left out")
    down_min, up_min = (min(lows[d]) if lows[d] else None for d in (True, False))
    if same_clock:
        theta, clock = 0.0, SAME_HOST
    elif down_min is not None and up_min is not None:
        theta, clock = (down_min - up_min) / 2.0, ESTIMATED
    else:  # said by the rows themselves (clock, an empty owd_ms): not a problem of the capture
        theta, clock = None, UNKNOWN
    why = _implausible(lows, highs, theta, clock)
    if why:
        notes.append(f"one-way delay: {why}; owd_ms left empty (raw_ms, the receiver's time minus the sender's, kept)")
        clock = IMPLAUSIBLE + why.split(":")[0]
    m = pl.concat(found) if out is None else pl.scan_ipc(files) if files else _matched(None, None, counts).lazy()
    sign = pl.when(pl.col("down")).then(-1.0).otherwise(1.0)
    return m.with_columns(
        owd_ms=pl.col("raw_ms") + sign * theta if theta is not None and not why else pl.lit(None, pl.Float64),
        clock_offset_ms=pl.lit(theta, pl.Float64),
        clock=pl.lit(clock),
        direction=pl.when(pl.col("down")).then(pl.lit("down")).otherwise(pl.lit("up")),
    ), notes


def _implausible(lows: dict, highs: dict, theta: float | None, clock: str) -> str | None:
    """Why the matched delays cannot be one-way delays (None: they can): every delay
    exactly 0 (one capture given as both ends), or a delay below -NEGATIVE_MS once the
    clock offset is applied (the ends swapped, or two clocks taken for one)."""
    seen = [d for d in (True, False) if lows[d]]
    if seen and all(min(lows[d]) == 0.0 == max(highs[d]) for d in seen):
        return "every matched packet has a delay of exactly 0 ms: one capture given as both ends?"
    if theta is None:
        return None
    for d in seen:
        low = min(lows[d]) + (-theta if d else theta)
        if low < -NEGATIVE_MS:
            way = "server -> client" if d else "client -> server"
            hint = ("the client and server traces swapped, or the two ends do not share this host's clock"
                    if clock == SAME_HOST else "the client and server traces swapped")
            return (f"negative delays: {way} down to {low:.1f} ms under the clock '{clock}' ({hint})")
    return None


def _split(side: pl.DataFrame) -> list[pl.DataFrame]:
    """An in-memory side in ``Spilled``'s parts."""
    parts = side.with_columns(_part=_part()).partition_by("_part", as_dict=True, include_key=False)
    return [parts.get((i,), side.clear()) for i in range(PARTS)]


_MATCHED = {"stream": pl.UInt32, "conn_id": pl.Int32, "path": pl.Utf8, "frame": pl.UInt32, "recv_frame": pl.UInt32,
            "down": pl.Boolean, "sent_s": pl.Float64, "raw_ms": pl.Float64}


def _matched(client: pl.DataFrame | None, server: pl.DataFrame | None, counts: dict) -> pl.DataFrame:
    """Both ways' packets of ``client`` found in ``server`` and the other way round;
    ``counts`` adds up the packets each way."""
    parts = []
    for down, sender, receiver in ((True, server, client), (False, client, server)):
        if sender is None or receiver is None:
            continue
        snd = sender.filter(pl.col("down") == down)
        rcv = receiver.filter(pl.col("down") == down)
        n_snd, n_rcv = snd.height, rcv.height
        snd, rcv = snd.filter(_TOLD_APART), rcv.filter(_TOLD_APART)
        ambiguous = n_snd + n_rcv - snd.height - rcv.height
        rcv = rcv.select(*KEY, "ip_id", _COPIES, recv_frame="frame", received_s="time_s")
        # a segment sent and received once is itself whatever its IP ID (a middlebox may
        # rewrite it); a copy of one sent or received more than once, the copy of its ID
        m = snd.join(rcv, on=list(KEY), how="inner", suffix="_rcv").filter(
            ((pl.col(_COPIES) == 1) & (pl.col(f"{_COPIES}_rcv") == 1)) | (pl.col("ip_id") == pl.col("ip_id_rcv")))
        parts.append(m.select("stream", "conn_id", "path", "frame", "recv_frame", "down", sent_s="time_s",
                              raw_ms=(pl.col("received_s") - pl.col("time_s")) * 1000.0))
        c = counts[down]
        c[0], c[1], c[2], c[3] = c[0] + n_snd, c[1] + n_rcv, c[2] + m.height, c[3] + ambiguous
    return pl.concat(parts) if parts else pl.DataFrame(schema=_MATCHED)
