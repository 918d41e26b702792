"""A long capture read without holding its packets: decoded piece by piece into a spill
on disk (one Arrow IPC file per piece, the columns the later stages read), while a
``Digest`` keeps the few rows that finding subflows and connections reads.

``flows.find_subflows``, ``assign_connections`` and ``reuse.reused_stream_splits`` give on the
digest's rows (``Digest.rows``, with ``Digest.sent`` for the payload per sender) what
they give on every packet, because each reads, per stream or per sender, a first row,
a last row, a minimum or maximum, or rows of a kind (SYN, MP_CAPABLE, FIN/RST) that
the digest keeps (tests/test_spill.py holds the two equal on every test capture).

That holds for a capture in time order (``timeorder`` puts one whose disorder lies
between senders in that order before it reaches the digest). A capture that needs
``sanity``'s other repairs or notes (timestamps impossible, duplicates, a snap length
cutting headers) is analysed in memory instead: ``Digest.in_memory`` says why. (A
stream split as a reused 4-tuple's is split piece by piece: ``streamed.Trace``.)
"""
from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from . import sanity
from .fields import FIN, RST
from .procs import FS_FAULTS, MachineFault, pid_alive

SENDER = ["stream", "src", "sport"]


PREFIX = "mptcp-lab-spill-"


class SpillFull(MachineFault):
    """The spill's folder could not take a piece (full, read-only, over quota); the
    message names the folder and how to choose another (TMPDIR)."""


def _full(where: Path, e: OSError) -> SpillFull | None:
    if not any(w in str(e) for w in FS_FAULTS):
        return None
    return SpillFull(f"the spill folder {where} could not take the capture's pieces ({e}): a long capture is "
                     f"decoded piece by piece into the temporary folder; set TMPDIR to a folder with room")


class Spill:
    """The pieces of one capture on disk, in frame order, in a folder of their own that
    ``close`` removes (also when the analysis fails), in the system's temporary folder
    (``TMPDIR``) unless ``where``. A folder left by a process that was killed is removed
    by the next one."""

    def __init__(self, where: str | Path | None = None) -> None:
        base = Path(where or tempfile.gettempdir())
        _remove_stale(base)
        try:
            self.dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
        except OSError as e:
            raise (_full(base, e) or e) from e
        self.files: list[Path] = []
        self.rows = 0
        self._numbers = itertools.count()
        self._naming = threading.Lock()  # a sweep's stages write from threads of their own

    @classmethod
    def until_exit(cls) -> Spill:
        """A spill that stays until the process ends (``close_kept``): a streamed trace's
        tables read it until they are stored."""
        s = cls()
        if not _kept:
            atexit.register(close_kept)
        _kept.append(s)
        return s

    def add(self, piece: pl.DataFrame) -> None:
        """A piece of the capture (``pieces`` reads them back)."""
        self.write(piece)
        self.rows += piece.height

    def write(self, frame: pl.DataFrame) -> Path:
        """``frame`` in a file of its own in the spill's folder (from any thread)."""
        with self._naming:
            path = self.dir / f"{next(self._numbers):06d}.arrow"
        try:  # uncompressed: read back memory-mapped, piece by piece, at disk speed
            frame.write_ipc(path, compression="uncompressed")
        except OSError as e:
            path.unlink(missing_ok=True)
            raise (_full(self.dir, e) or e) from e
        with self._naming:
            self.files.append(path)
        return path

    def pieces(self, columns: list[str] | tuple[str, ...] | None = None) -> Iterator[pl.DataFrame]:
        for path in self.files:
            yield pl.read_ipc(path, columns=list(columns) if columns else None)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_kept: list[Spill] = []


def close_kept() -> None:
    """Remove the spills kept until exit (at exit; ``python -m pipeline`` ends with
    ``os._exit``, which skips ``atexit``, so it calls this first)."""
    while _kept:
        _kept.pop().close()


def _remove_stale(where: Path) -> None:
    try:
        left = list(where.glob(f"{PREFIX}*"))
    except OSError:
        return
    for d in left:
        pid = d.name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)


class Digest:
    """What the structure stages read of a capture fed piece by piece (``feed``, in frame
    order, ``flows.compact``'s columns): see the module's doc."""

    def __init__(self) -> None:
        self._rows: list[pl.DataFrame] = []  # rows kept whole (SYN, MP_CAPABLE, FIN/RST, after a close)
        self._firsts: list[pl.DataFrame] = []  # candidates, reduced in ``rows``
        self._lasts: list[pl.DataFrame] = []  # each piece's last row per sender
        self._ack3: list[pl.DataFrame] = []
        self._ranges: list[pl.DataFrame] = []
        self._sent: list[pl.DataFrame] = []
        self._closed = pl.DataFrame(schema={"stream": pl.UInt32, "fc": pl.UInt32})  # first close per stream
        self._synack = pl.DataFrame(schema={"stream": pl.UInt32, "t_sa": pl.Float64})  # first SYN/ACK's time
        self._tail: pl.DataFrame | None = None  # the last piece's ACKs at its last timestamp
        self._tail_all: pl.DataFrame | None = None  # and all its rows there
        self._last_time: float | None = None
        self._t = {"min": None, "max": None, "n": 0, "old": 0}
        self.in_memory: str | None = None  # why this capture must be analysed in memory instead
        self.packets = 0

    def feed(self, p: pl.DataFrame) -> None:
        if p.height == 0 or self.in_memory:
            return
        self.packets += p.height
        if not self._check(p):
            return
        closing = (pl.col("tcp_flags") & (FIN | RST)) != 0
        close = p.filter(closing).group_by("stream").agg(fc=pl.col("frame").min())
        self._closed = pl.concat([self._closed, close]).group_by("stream").agg(pl.col("fc").min())
        sa = p.filter(pl.col("syn") & pl.col("ackf")).group_by("stream").agg(t_sa=pl.col("time_s").first())
        self._synack = pl.concat([self._synack, sa]).unique("stream", keep="first", maintain_order=True)
        after_close = pl.col("frame") >= pl.col("stream").replace_strict(
            self._closed["stream"], self._closed["fc"], default=None, return_dtype=pl.UInt32)
        self._rows.append(_own(p.filter(pl.col("syn") | pl.col("mpc") | closing | after_close.fill_null(False))))
        t_sa = pl.col("stream").replace_strict(self._synack["stream"], self._synack["t_sa"], default=None,
                                               return_dtype=pl.Float64)
        acks = ~pl.col("syn") & pl.col("ackf")
        mapped = (pl.col("mp_map_present") == 1) & (pl.col("mp_dsn64") == 1) & (pl.col("mp_map_len") > 0)
        row = pl.col("_i")
        # each sender's rows the structure reads, by position, in one grouping of the piece
        at = p.select(*SENDER, "time_s", "payload_bytes", "mp_dsn_raw", _i=pl.int_range(pl.len(), dtype=pl.UInt32),
                      _after=after_close.fill_null(False), _ack3=acks & (pl.col("time_s") >= t_sa),
                      _mapped=mapped).group_by(SENDER).agg(
            first=row.first(),
            # (before the close: a piece's last row per sender may come after it)
            last=row.filter(~pl.col("_after")).last(),
            ack3=row.filter(pl.col("_ack3")).first(),
            **_extreme_positions(pl.col("_mapped")),
            sent=pl.col("payload_bytes").cast(pl.Int64).sum())
        dss = p.select("stream", _i=pl.int_range(pl.len(), dtype=pl.UInt32)).filter(p["dss"]).group_by(
            "stream").agg(row.first())["_i"]
        self._firsts.append(_rows_at(p, at["first"], dss))
        self._lasts.append(_rows_at(p, at["last"]))
        self._ack3.append(_rows_at(p, at["ack3"]))
        # (an ACK in an earlier piece at the SYN/ACK's own timestamp: that piece's tail)
        if self._tail is not None:
            self._ack3.append(self._tail)
        self._tail = _own(p.filter(acks, pl.col("time_s") == p["time_s"][-1]))
        ranges = _rows_at(p, at["lo"], at["hi"])
        if ranges.height:
            self._ranges.append(ranges)
        self._sent.append(at.select(*SENDER, "sent"))

    def _check(self, p: pl.DataFrame) -> bool:
        """``sanity``'s conditions, piece by piece: False (and ``in_memory`` says why)
        when the capture needs its repairs or notes."""
        t = p["time_s"]
        if t.null_count() or not p["frame"].is_sorted():
            self.in_memory = "timestamps missing or frames out of order"
            return False
        prev = self._last_time
        if (prev is not None and t[0] < prev) or (t.diff() < 0).any():
            self.in_memory = "timestamps go backwards (the capture's order is repaired in memory)"
            return False
        self._last_time = t[-1]
        s = self._t
        s["min"] = t[0] if s["min"] is None else s["min"]
        s["max"] = t[-1]
        s["n"] += t.len()
        s["old"] += int((t < sanity.PLAUSIBLE_FROM_S).sum())
        headers = pl.col("frame_bytes").cast(pl.Int64) - pl.col("payload_bytes").cast(pl.Int64)
        if p.select((pl.col("cap_bytes").cast(pl.Int64) < headers).any()).item():
            self.in_memory = "the snap length cut TCP headers"
            return False
        # Exact duplicates share their timestamp: in a capture in time order they lie in
        # one run of equal timestamps, within a piece or across the last one's tail.
        run = p if self._tail_all is None else pl.concat([self._tail_all, p])
        same_time = (pl.col("time_s") == pl.col("time_s").shift(1)) | (pl.col("time_s") == pl.col("time_s").shift(-1))
        if sanity.may_hold_duplicates(run.filter(same_time)):
            self.in_memory = "it may hold duplicate packets"
            return False
        self._tail_all = _own(p.filter(pl.col("time_s") == t[-1]))
        return True

    def finish(self, now_s: float) -> None:
        """After the last piece: the whole-capture timestamp checks."""
        s = self._t
        if self.in_memory or s["n"] < 2:
            return
        if s["min"] == s["max"] or 0 < s["old"] < s["n"] or s["max"] > now_s + sanity.FUTURE_SLACK_S:
            self.in_memory = "impossible timestamps"

    def rows(self) -> pl.DataFrame:
        """The digest's packets, in frame order (see the module's doc)."""
        kept = pl.concat(self._rows)
        firsts = pl.concat(self._firsts)
        firsts = pl.concat([_first(firsts, SENDER), _first(firsts.filter(pl.col("dss")), ["stream"])])
        # each sender's last row before its stream's first close (reused_stream_splits' window)
        lasts = pl.concat(self._lasts).join(self._closed, on="stream").filter(pl.col("frame") < pl.col("fc")).drop("fc")
        lasts = _last(lasts, SENDER)
        ack3 = pl.concat(self._ack3).join(self._synack, on="stream").filter(pl.col("time_s") >= pl.col("t_sa"))
        ack3 = _first(ack3.drop("t_sa").sort("frame"), SENDER)
        parts = [kept, firsts, lasts, ack3]
        if self._ranges:
            parts.append(_extremes(pl.concat(self._ranges)))
        return pl.concat([q.select(kept.columns) for q in parts]).unique("frame").sort("frame")

    def sent(self) -> pl.DataFrame:
        """``stream, src, sport, sent``: the payload bytes each sender sent."""
        return pl.concat(self._sent).group_by(SENDER).agg(pl.col("sent").sum())


def _own(few: pl.DataFrame) -> pl.DataFrame:
    """``few`` rows in buffers of their own: a filter or a head may give a slice of the
    piece's, which would keep every piece's columns alive for a row or two. (A gather
    always builds new columns; the frames here hold no text, whose views could point
    into the piece's buffers.)"""
    return few[pl.int_range(few.height, eager=True)] if few.height else few.clear()


def _rows_at(p: pl.DataFrame, *rows: pl.Series) -> pl.DataFrame:
    """The rows of ``p`` at the positions ``rows`` hold (nulls left out), in ``p``'s
    order, once each, in buffers of their own (a gather)."""
    return p[pl.concat(rows).drop_nulls().unique().sort()]


def _first(p: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Each group's first row (in ``p``'s order), with ``p``'s columns."""
    return p.unique(subset=by, keep="first", maintain_order=True)


def _last(p: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return p.unique(subset=by, keep="last", maintain_order=True)


def _extreme_positions(among: pl.Expr) -> dict[str, pl.Expr]:
    """Aggregations per sender over rows numbered ``_i``: ``lo`` and ``hi``, the positions
    of the rows of the lowest and the highest DSN among the rows ``among`` selects
    (``flows._dsn_ranges``' minimum and maximum; the first such row)."""
    row, dsn = pl.col("_i").filter(among), pl.col("mp_dsn_raw").filter(among)
    return {"lo": row.get(dsn.arg_min()), "hi": row.get(dsn.arg_max())}


def _extremes(mapped: pl.DataFrame) -> pl.DataFrame:
    """Each sender's rows of the lowest and the highest DSN, in ``mapped``'s order."""
    at = mapped.with_row_index("_i").group_by(SENDER).agg(**_extreme_positions(pl.lit(True)))
    return _rows_at(mapped, at["lo"], at["hi"])
