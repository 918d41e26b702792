"""A capture's packets put in timestamp order as they are read, piece by piece: what
``sanity`` does to a whole capture whose disorder is only between senders (``tcpdump -i
any``, several interfaces or capture queues), for a capture too long to hold.

A packet may go before packets read up to ``KEPT_ROWS`` before it: the last rows in
timestamp order are kept back until the next piece is read. A packet that goes before
a row already given out, or a sender whose own packets go backwards, ends the reading:
``in_memory`` says why, and the capture is analysed in memory instead (where ``sanity``
repairs or notes it).

The rows keep the capture's frame numbers until the first one that is out of order; from
there on they are numbered on, one after another (the metrics read frame numbers as
the packets' order), and ``original`` gives the tables the capture's numbers back.
"""
from __future__ import annotations

import threading

import polars as pl

from . import sanity

# Rows kept back (~7 MB of narrowed columns): at the 0.13 s of disorder of the
# third-party captures, ~500k packets/s.
KEPT_ROWS = 1 << 16


class TimeOrder:
    """``feed`` the pieces in frame order (``flows.compact``'s columns); each call gives
    the rows that are settled, in timestamp order; ``finish`` gives the rest."""

    def __init__(self, kept_rows: int = KEPT_ROWS) -> None:
        self.kept_rows = kept_rows
        self.in_memory: str | None = None
        self._kept: pl.DataFrame | None = None
        self._last_given: tuple[float, int] | None = None  # (time, capture's frame) of the last row given out
        self._prev_t: float | None = None  # the capture's last timestamp, in frame order
        self._senders: dict[object, float] = {}  # each sender's last timestamp
        self.backwards, self.worst = 0, 0.0
        self._base: int | None = None  # frames above it are renumbered ...
        self._originals: list[pl.Series] = []  # ... from these, in order
        self._next = 0
        self._map: pl.Series | None = None
        self._mapping = threading.Lock()

    def feed(self, piece: pl.DataFrame) -> pl.DataFrame:
        if self.in_memory or piece.height == 0:
            return piece.clear()
        t = piece["time_s"]
        if t.null_count():
            self.in_memory = "timestamps missing"
            return piece.clear()
        self._count_backwards(t)
        if not self._senders_in_order(piece, in_order=not self.backwards):
            self.in_memory = "timestamps go backwards within one sender's packets"
            return piece.clear()
        if self._last_given is not None and t.min() < self._last_given[0]:
            self.in_memory = (f"a packet is stamped before packets read more than {self.kept_rows} packets "
                              "before it (the capture's order is repaired in memory)")
            return piece.clear()
        rows = piece if self._kept is None else pl.concat([self._kept, piece])
        if self.backwards:
            rows = rows.sort("time_s", "frame")
        cut = max(rows.height - self.kept_rows, 0)
        self._kept = rows.slice(cut)
        return self._give(rows.slice(0, cut))

    def finish(self) -> pl.DataFrame:
        rest, self._kept = self._kept, None
        if self.in_memory or rest is None:
            return pl.DataFrame()
        return self._give(rest)

    def notes(self) -> list[str]:
        """``sanity``'s note on a capture it put in timestamp order (after ``finish``)."""
        return [sanity.reordered_note(self.backwards, self.worst)] if self.backwards else []

    @property
    def renumbered(self) -> bool:
        """Were rows numbered here (the capture was out of timestamp order)?"""
        return self._base is not None

    def original(self, frames: pl.Series) -> pl.Series:
        """The capture's frame numbers of rows numbered here."""
        if self._base is None or frames.len() == 0:
            return frames
        with self._mapping:  # (asked from a sweep's threads at once)
            if self._map is None or self._map.len() != self._next - self._base:
                self._map = pl.concat(self._originals).rechunk()
                self._originals = [self._map]
            known = self._map
        at = frames.cast(pl.Int64) - self._base - 1
        return pl.select(pl.when(at >= 0).then(known.gather(at.clip(0))).otherwise(frames)
                         .cast(frames.dtype).alias(frames.name)).to_series()

    def _count_backwards(self, t: pl.Series) -> None:
        steps = t.diff()
        if self._prev_t is not None:
            steps[0] = t[0] - self._prev_t
        back = steps.filter(steps < 0)
        if back.len():
            self.backwards += back.len()
            self.worst = max(self.worst, -back.min())
        self._prev_t = t[-1]

    def _senders_in_order(self, piece: pl.DataFrame, in_order: bool = False) -> bool:
        """``sanity._senders_in_order`` (a sender: one flow direction), on the capture read so far. ``in_order``: the
        capture's timestamps never went back so far, so neither did any sender's; only
        each sender's last timestamp is then taken."""
        t = pl.col("time_s")
        key = sanity.sender_key(piece.columns)
        if in_order:
            for *who, last in piece.select(*key, "time_s").unique(key, keep="last").iter_rows():
                self._senders[tuple(who)] = last
            return True
        by = piece.group_by(key).agg(first=t.first(), last=t.last(), back=(t.diff() < 0).any())
        ok = True
        for row in by.iter_rows():
            who, (first, last, back) = tuple(row[:len(key)]), row[len(key):]
            before = self._senders.get(who)
            if back or (before is not None and first < before):
                ok = False
            self._senders[who] = last
        return ok

    def _give(self, rows: pl.DataFrame) -> pl.DataFrame:
        if rows.height == 0:
            return rows
        frames = rows["frame"]
        last = self._last_given
        if self._base is None and (last is None or frames[0] > last[1]) and frames.is_sorted():
            self._last_given = (rows["time_s"][-1], frames[-1])
            return rows
        if self._base is None:  # the first row out of the capture's order: numbered on from here
            self._base = self._next = last[1] if last else 0
        self._originals.append(frames)
        numbers = pl.int_range(self._next + 1, self._next + 1 + rows.height, dtype=pl.UInt32, eager=True)
        self._next += rows.height
        self._last_given = (rows["time_s"][-1], self._next)
        return rows.with_columns(numbers.alias("frame"))
