"""A trace's structure and annotated packets from its spill (``spill``), piece by piece:
what ``flows.build_trace`` gives, without holding the trace's packets.

The subflows and connections come from the spill's ``Digest``; each piece is then
numbered and mapped by the native crate's states (``pcapdecode.Numbering``,
``pcapdecode.Mappings``), which carry what a packet's numbers depend on from one piece
to the next (``mptcp.Unwrap`` the 32-bit DSNs and DATA_ACKs). The DSS mappings are all
read first, in a sweep of their own, since a mapping may come after a packet it maps.
In each sweep the stages that follow the piece's making run in threads of their own
(``_one_behind``), each with its own state, so that the sweep takes both cores.
The spill's pieces are in timestamp order (``timeorder`` puts a capture out of order in
it as it is read). tests/test_streamed.py holds the pieces, subflows and notes equal to
``build_trace``'s on every test capture in time order, and every table equal to the
in-memory analysis's on every test capture.
"""
from __future__ import annotations

import ctypes
import gc
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import polars as pl

from . import assemble, dsnmap, extract, flows, inputs, metrics, mptcp, owd, reuse, seqgraph, spill
from .spill import Digest, Spill
from .timeorder import TimeOrder

# The per-packet tables over a spill are read file after file: polars reads up to 8
# files of a scan at once by default, which at 10M packets held ~200 MB more while
# seq_packets was stored. (An environment variable polars reads when it scans; only
# this module scans several files.)
os.environ.setdefault("POLARS_MAX_CONCURRENT_SCANS", "1")


T = TypeVar("T")


class InMemory(Exception):
    """This trace must be analysed in memory; the message says why."""


# What a spill holds of each packet: what the trace's annotation reads.
SPILLED = flows._ANNOTATE_INPUT


class Trace:
    """A spilled trace: ``subflows`` (as ``flows.Trace``'s) once opened, ``packets()``'s
    pieces (``flows.TRACE_PACKETS``) in frame order, then ``notes`` (complete once the
    pieces have all been read)."""

    def __init__(self, spilled: Spill, digest: Digest, client_addrs: frozenset[str] = frozenset(),
                 original: Callable[[pl.Series], pl.Series] | None = None) -> None:
        try:
            from pcapdecode import Mappings, Numbering
        except ImportError:
            raise InMemory("the native crate is not built") from None
        if digest.in_memory:
            raise InMemory(digest.in_memory)
        self._Numbering, self._Mappings = Numbering, Mappings
        self.spill = spilled
        # the capture's frame numbers of the pieces' (``timeorder.TimeOrder.original``)
        self.original = original
        rows = digest.rows()
        # a 4-tuple used again after its close: the digest keeps every packet after a
        # stream's first close, so the splits are the whole trace's (``reuse``)
        self._splits, split_notes = reuse.reused_stream_splits(rows, int(rows["stream"].max()) + 1 if rows.height else 0)
        rows = reuse.with_splits(rows, self._splits)
        sent = _sent_apart(digest.sent(), rows, self._splits)
        sf = flows.find_subflows(rows, client_addrs, sent=sent)
        split = pl.concat([self._splits["stream"], self._splits["new_stream"]]).implode()
        if (sf["kind"] == "dss").any() and rows.filter(pl.col("stream").is_in(split), pl.col("dss")).height:
            # a subflow joined by its data sequence range is matched against every stream's
            # range, and the digest's extremes of a split stream's span both connections
            raise InMemory("an MPTCP subflow on a reused 4-tuple beside one matched by data sequence range")
        sf, more = flows.assign_connections(sf, rows)
        self._structure_notes = split_notes + more
        self.notes: list[str] = []
        isns = sf.select("stream", "isn_server", "isn_client")
        self._bases = flows.sequence_bases(flows.with_direction(rows, sf), isns).select(
            pl.col("stream").cast(pl.UInt32), "down", pl.col("base").cast(pl.Int64))
        if self._bases["down"].null_count():
            raise InMemory("a packet's direction is unknown")
        self.subflows = sf.join(flows.seq_bases_of(self._bases), on="stream", how="left")
        self._mp = sf.filter(pl.col("kind") != "tcp")
        sent = sent.filter(pl.col("sent") > 0)
        self._carrying = sent["stream"]
        # which subflows and connections carried data which way (a null direction is "up")
        self.carried = flows.with_direction(sent, sf).select("stream", "conn_id", pl.col("down").fill_null(False))
        self._mappings: dict[str, tuple[object, list[int]]] = {}
        self._map_notes: dict[str, list[str]] = {}
        if self._mp.height:
            self._read_mappings()

    def _pieces(self) -> Iterator[pl.DataFrame]:
        """The spill's pieces, in frame order, a reused 4-tuple's new connection in its stream."""
        for piece in self.spill.pieces(SPILLED):
            yield reuse.with_splits(piece, self._splits)

    @staticmethod
    def empty_packets() -> pl.DataFrame:
        """No packets, as ``packets()`` gives them (an empty table's columns and types)."""
        return pl.DataFrame(schema=flows.TRACE_PACKETS)

    def _numbered(self, numbering, piece: pl.DataFrame) -> pl.DataFrame:
        q = flows.with_direction(piece, self.subflows)
        cols = q.select(pl.col("stream").cast(pl.UInt32), "down", pl.col("seq").cast(pl.UInt32),
                        pl.col("ack").cast(pl.UInt32), "ackf")
        if sum(cols.null_count().row(0)):
            raise InMemory("a packet's direction or numbers are unknown")
        return q.hstack(pl.DataFrame(numbering.feed(cols.rechunk())))

    def _read_mappings(self) -> None:
        """The first sweep: every DSS mapping, numbered as it comes and handed to the
        native state (``dsnmap.dss_mappings`` piece by piece)."""
        ways = {}
        for d in flows.DIRECTIONS:
            streams = self.carried.filter(pl.col("down") == (d == "down"),
                                          pl.col("stream").is_in(self._mp["stream"].implode()))["stream"]
            if streams.len():
                no_isn, self._map_notes[d] = dsnmap.without_isn(self._mp, streams, d)
                ways[d] = no_isn
        if not ways:
            return
        numbering = self._Numbering(self._bases)
        firsts = {d: pl.DataFrame(schema={"conn_id": pl.Int32, "first": pl.UInt64}) for d in ways}
        mappings = {d: self._Mappings() for d in ways}
        unwraps = {d: mptcp.Unwrap() for d in ways}
        any_maps = dict.fromkeys(ways, False)

        def take(q: pl.DataFrame) -> None:
            for d, no_isn in ways.items():
                maps, mpc_maps = dsnmap.usable_mappings(*dsnmap.raw_mappings(q, d), self._mp, d, no_isn)
                if maps.height == 0 and mpc_maps.height == 0:
                    continue
                new = maps.group_by("conn_id", maintain_order=True).agg(first=pl.col("mp_dsn_raw").first().cast(pl.UInt64))
                firsts[d] = pl.concat([firsts[d], new.join(firsts[d], on="conn_id", how="anti")])
                try:
                    m = dsnmap.numbered_mappings(maps, mpc_maps, self._mp, d, firsts[d], unwraps[d])
                except mptcp.LateAnchor as e:
                    raise InMemory(str(e)) from None
                m = m.select(pl.col("stream").cast(pl.UInt32), pl.col("map_ssn").cast(pl.Int64),
                             pl.col("mp_map_len").cast(pl.Int64), pl.col("map_dsn").cast(pl.Int64))
                if sum(m.drop("map_dsn").null_count().row(0)):
                    raise InMemory("a DSS mapping's numbers are unknown")
                if (m["map_dsn"].min() or 1) < 1:
                    # the out-of-order loop starts at a connection's lowest DSN, known only
                    # once every packet is mapped; from byte 1 when no mapping is below it
                    raise InMemory("data below its connection's first data sequence number")
                mappings[d].add(m.rechunk())
                any_maps[d] = True

        _one_behind((self._numbered(numbering, piece) for piece in self._pieces()), take)
        self._mappings = {d: (mappings[d], no_isn) for d, no_isn in ways.items() if any_maps[d]}
        for m, _ in self._mappings.values():
            m.seal()
        _give_back()  # the mappings the seal dropped (10,000 connections at 10M packets: ~150 MB)

    def packets(self) -> Iterator[pl.DataFrame]:
        """The second sweep: the annotated pieces, as ``flows.build_trace``'s packets."""
        numbering = self._Numbering(self._bases)
        unmapped = dict.fromkeys(flows.DIRECTIONS, 0)
        unwraps = {down: mptcp.Unwrap() for down in (True, False)}
        for piece in self._pieces():
            q = self._numbered(numbering, piece)
            found = []
            for d, (mappings, no_isn) in self._mappings.items():
                data = q.select(dsnmap.positions(), "stream", "rel_seq", "payload_bytes", "down").filter(
                    dsnmap.dsn_data(self._mp, d))
                if data.height == 0:
                    continue
                got = data.select("_row", "stream").with_columns(pl.DataFrame(mappings.feed(
                    data.select(pl.col("stream").cast(pl.UInt32), pl.col("rel_seq").cast(pl.Int64)).rechunk())))
                unmapped[d] += got.filter(pl.col("dsn_rel").is_null(), ~pl.col("stream").is_in(no_isn)).height
                found.append(got.select("_row", "dsn_rel"))
            q = q.with_columns(dsnmap.at_rows(q.height, pl.concat(found), "dsn_rel") if found
                               else pl.lit(None, dtype=pl.Int64).alias("dsn_rel"))
            try:
                q = dsnmap.map_data_ack(q, self.subflows, unwraps)
            except mptcp.LateAnchor as e:
                raise InMemory(str(e)) from None
            yield flows.trace_packets(q)
        self._mappings = {}  # (a 10M-packet trace's mappings: 160 MB)
        notes = list(self._structure_notes)
        for d in flows.DIRECTIONS:
            notes += self._map_notes.get(d, []) + dsnmap.unmapped_notes(unmapped[d], d)
        self.notes = notes + flows.one_way_notes(self.subflows, self._carrying)


# A capture this large (bytes) is analysed from a spill: its packets are never held
# whole. Smaller ones are read into memory, which is about twice as fast and, below this
# size (~1.4M packets at the testbed's 128-byte snap length), peaks under ~600 MB too.
# The environment variable MPTCP_LAB_STREAM_FROM (bytes) sets another size (0: every capture).
STREAM_FROM_BYTES = 128 << 20


def _sent_apart(sent: pl.DataFrame, rows: pl.DataFrame, splits: pl.DataFrame) -> pl.DataFrame:
    """``Digest.sent`` (payload bytes per sender) with a reused 4-tuple's new connection
    apart: its packets all follow the old stream's close, so the digest's rows hold them
    all, and their bytes leave the old stream's sum."""
    if splits.is_empty():
        return sent
    moved = rows.filter(pl.col("stream").is_in(splits["new_stream"].implode())).group_by(spill.SENDER).agg(
        sent=pl.col("payload_bytes").cast(pl.Int64).sum())
    old = moved.with_columns(stream=pl.col("stream").replace_strict(splits["new_stream"], splits["stream"])).group_by(
        spill.SENDER).agg(less=pl.col("sent").sum())
    kept = sent.join(old, on=spill.SENDER, how="left").with_columns(
        sent=pl.col("sent") - pl.col("less").fill_null(0)).drop("less")
    return pl.concat([kept, moved.select(pl.col(c).cast(t) for c, t in sent.schema.items())])


def stream_from_bytes() -> int:
    value = os.environ.get("MPTCP_LAB_STREAM_FROM", "").strip()
    return int(value) if value.isdigit() else STREAM_FROM_BYTES
# Decoder batches per piece of a streamed capture (~130k packets, ~15 MB of narrowed
# columns): each piece costs a few dozen polars calls, whatever its size, and each call's
# copies grow with it (at 10M packets over 10,000 connections, pieces twice this size
# took ~10 % less time and peaked 80 MB higher).
PIECE_BATCHES = 16


def analyze(pcap: str | os.PathLike, run_id: str, vantage: str | None = None,
            path_map: dict[str, str] | None = None, decoded: Callable[[], None] | None = None,
            force: bool = False, paired: bool = False) -> tuple[assemble.Tables, list[dict]] | None:
    """``tables.analyze_trace`` of a capture of ``stream_from_bytes()`` or more (any size
    when ``force``d) through a spill; None when it is smaller, or must be analysed in
    memory (``InMemory``: read it again that way). Raises ``extract.ExtractError`` on a
    file with nothing usable."""
    path = Path(pcap)
    try:
        big = path.stat().st_size >= stream_from_bytes()
    except OSError:
        return None  # extract says what is wrong with it
    if not (big or force):
        return None
    try:
        import pcapdecode  # noqa: F401 - the states below
    except ImportError:
        return None
    source = str(pcap)
    extract._check_file(path)
    reader = inputs.take(path) or extract.native_reader(path)
    spilled, digest, order = Spill(), Digest(), TimeOrder()

    def settled(rows: pl.DataFrame) -> bool:
        rows = rows.rechunk()
        digest.feed(rows)
        if order.in_memory or digest.in_memory:
            return False
        if rows.height:
            spilled.add(rows.select(SPILLED))
        return True

    try:
        # the native decoder's pieces, narrowed as ``extract.read_native`` narrows them and
        # put in time order here, while the worker digests and spills the one before
        def ordered() -> Iterator[pl.DataFrame]:
            while (piece := pl.DataFrame(reader.piece(PIECE_BATCHES))).height:
                rows = order.feed(flows.compact(piece))
                del piece  # (the decoder's columns: not kept while the worker takes the rows)
                yield rows

        if not _one_behind(ordered(), settled) or not settled(order.finish()):
            return None
        notes = extract.reader_notes(reader) + order.notes()
        if digest.packets == 0:
            raise extract.ExtractError("; ".join(notes + ["no TCP packets in the capture"]))
        digest.finish(time.time())
        if decoded:
            decoded()
        try:
            tr = Trace(spilled, digest, frozenset(path_map or ()), order.original if order.renumbered else None)
        except InMemory:
            return None
        problems = [assemble.problem(run_id, source, "extract", n) for n in notes]
        v, said = assemble.which_vantage(tr.subflows, vantage, pcap)
        m = measure(tr, v, Spill.until_exit(), assemble.with_paths(tr.subflows, path_map or {}) if paired else None)
        _give_back()  # the native states' memory, before the tables' queries and the database's write
        problems += [assemble.problem(run_id, source, "metrics", n) for n in tr.notes + said]
        out = assemble.assemble(m, tr.subflows, run_id, source, v, path_map or {}, problems), problems
        _give_back()
        return out
    except InMemory:
        return None
    finally:
        spilled.close()


def _one_behind(pieces: Iterator[T], *works: Callable[[T], object]) -> bool:
    """Each of ``works`` on each of ``pieces`` in order, each work in a thread of its own,
    while this thread makes the next piece: a sweep's stages each have a state of their
    own, carried from one piece to the next, so stages in threads keep both cores busy
    (the native states and most of polars' work let go of the interpreter's lock). One
    piece waits at most, so memory holds two. False, the rest left undone, once a work
    returns False; a work's exception is raised here."""
    workers = [ThreadPoolExecutor(1, thread_name_prefix="sweep") for _ in works]
    try:
        busy: list = []
        for piece in pieces:
            if any(b.result() is False for b in busy):
                return False
            busy = [w.submit(work, piece) for w, work in zip(workers, works)]
            del piece
        return all(b.result() is not False for b in busy)
    finally:
        for w in workers:
            w.shutdown()


def _give_back() -> None:
    """Hand freed memory back to the system now: the frames of a piece wait for the
    garbage collector (a cycle or two), and the native crate's freed states for glibc's
    trim (10M packets: ~150 MB off the peak of the database's write that follows)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def measure(tr: Trace, vantage: str | None, out: Spill, paired: pl.DataFrame | None = None) -> assemble.Measures:
    """``tables.measure`` of a spilled trace, piece by piece: the native states carry
    each metric from one piece to the next, sums and extremes add up, and the
    per-packet rows go to Arrow IPC files in ``out`` (the measures hold LazyFrames over them).
    ``paired``: the subflows with their paths, when the trace's side of the one-way
    delay matching is kept (``owd.Spilled``, in ``out``)."""
    from pcapdecode import Retransmissions
    sending, receiving = assemble.sending_receiving(vantage)
    retransmissions = Retransmissions()
    every = _Every(tr, out)
    sent = _Sent(tr, sending, out) if sending else None
    received = _Received(tr, receiving, out) if receiving else None
    half = owd.Spilled(out) if paired is not None else None

    def the_rest(qd: tuple[pl.DataFrame, pl.DataFrame]) -> None:
        q, d = qd
        if half:
            half.add(_in_capture_frames(tr, owd.rows(d, paired)))
        if sent:
            sent.feed(q, d)
        if received:
            received.feed(d)

    def with_data(q: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        d = metrics.data_rows(q)
        return q, d.with_columns(pl.DataFrame(retransmissions.feed(metrics.retx_columns(d).rechunk())).to_series())

    # the time-sequence rows (about half the work) beside the rest
    _one_behind((with_data(q) for q in tr.packets()), lambda qd: every.feed(*qd), the_rest)
    m = every.measures()
    if sent:
        m.rtt, m.ack_rtt = sent.samples()
    if received:
        m.ofo, m.delivered = received.samples()
    m.owd_data = half
    return m


class _Every:
    """What every trace gives: loss counts, traffic shares, completion times, and the
    time-sequence rows (``seq_packets``)."""

    def __init__(self, tr: Trace, out: Spill) -> None:
        from pcapdecode import SeqRows
        self.tr, self.out = tr, out
        carried = tr.carried  # stream, conn_id, down: what carried data which way
        up = pl.col("down").not_()
        self.seqrows = SeqRows(carried.select(pl.col("stream").cast(pl.UInt32), up=up).unique(),
                               carried.filter(pl.col("conn_id").is_not_null()).select(
                                   conn=pl.col("conn_id").cast(pl.UInt32), up=up).unique())
        self.counts: list[pl.DataFrame] = []
        self.share: list[pl.DataFrame] = []
        self.last: list[pl.DataFrame] = []
        self.files: list[Path] = []

    def feed(self, q: pl.DataFrame, d: pl.DataFrame) -> None:
        self.counts.append(metrics.loss_counts(d))
        self.share.append(metrics.subflow_bytes(q))
        self.last.append(metrics.last_data(q))
        rows = pl.DataFrame(self.seqrows.feed(seqgraph.native_columns(q).rechunk()))
        _write(self.out, self.files, _in_capture_frames(self.tr, seqgraph.seq_frame(q, rows, d["retx"])))

    def measures(self) -> assemble.Measures:
        empty = self.tr.empty_packets()
        last = (pl.concat(self.last).group_by(metrics.CONN).agg(pl.col("last_data_s").max())
                if self.last else _NO_LAST)
        return assemble.Measures(
            counts=metrics.with_loss_rate(_summed(self.counts, metrics.SUB, ["data_packets", "retransmitted_packets"])),
            share=metrics.with_traffic_share(_summed(self.share, ["stream", "conn_id", "direction"], ["payload_bytes"])),
            dl=metrics.download_time_from(last, self.tr.subflows),
            seq=_scan(self.files, seqgraph.seq_packets(empty, metrics.retransmissions(empty))))


class _Sent:
    """The sender's metrics of the directions ``sending``: RTT samples (Karn's rule, once
    every retransmission is known) and per-ACK RTTs."""

    def __init__(self, tr: Trace, sending: list[str], out: Spill) -> None:
        from pcapdecode import AckRtt, Rtt
        sf = tr.subflows
        self.tr, self.sending, self.out = tr, sending, out
        self.rtt, self.ack_rtt = Rtt(int(sf["stream"].max()) if sf.height else 0), AckRtt()
        # the directions the SYNs are timed in (``metrics.ack_rtt_samples``): those with data
        with_data = tr.carried.select(_direction(pl.col("down"))).to_series().to_list()
        self.sent_dirs = [d for d in sending if d in with_data]
        self.raw: list[Path] = []
        self.acked: list[Path] = []

    def feed(self, q: pl.DataFrame, d: pl.DataFrame) -> None:
        acks = metrics.acks_of(q).select(pl.col("stream").cast(pl.UInt32), "down", pl.col("frame").cast(pl.UInt32),
                                         "time_s", pl.col("ack").cast(pl.Int64)).rechunk()
        mine = d.filter(pl.col("direction").is_in(self.sending))
        sent = mine.select(
            pl.col("stream").cast(pl.UInt32), pl.col("down").fill_null(False), pl.col("frame").cast(pl.UInt32),
            seq=pl.col("rel_seq").cast(pl.Int64), end=pl.col("end").cast(pl.Int64), retx="retx", time_s="time_s")
        _write(self.out, self.raw, pl.DataFrame(self.rtt.feed(sent.rechunk(), acks)))
        segs = metrics.timed_segments(q, mine, self.sent_dirs).sort("frame").select(
            pl.col("stream").cast(pl.UInt32), "down", pl.col("frame").cast(pl.UInt32), pl.col("end").cast(pl.Int64),
            "time_s")
        _write(self.out, self.acked, _ack_rtts(self.ack_rtt.feed(segs.rechunk(), acks)))

    def samples(self) -> tuple[pl.DataFrame | pl.LazyFrame, pl.DataFrame | pl.LazyFrame]:
        """``Measures.rtt``, ``Measures.ack_rtt``."""
        _write(self.out, self.raw, pl.DataFrame(self.rtt.close()))
        _write(self.out, self.acked, _ack_rtts(self.ack_rtt.close()))
        return (_scan(_karn(self.tr, self.rtt, self.raw, self.out), _RTT_EMPTY),
                _scan(self.acked, _ack_rtts(pl.DataFrame(schema=_ACK_SAMPLES))))


class _Received:
    """The receiver's metrics of the directions ``receiving``: out-of-order delays (a
    packet's row is written once its data is in order) and data delivered per second."""

    def __init__(self, tr: Trace, receiving: list[str], out: Spill) -> None:
        from pcapdecode import InOrder
        sf = tr.subflows
        self.tr, self.receiving, self.out = tr, receiving, out
        groups = 2 * (int(sf["conn_id"].max()) + 1) if sf.height else 0
        # every group's data from byte 1 on (``Trace`` sends a trace with data below it to memory)
        self.in_order = InOrder([1] * groups)
        self.starts = assemble.connection_starts(metrics.download_time_from(_NO_LAST, sf)).filter(
            pl.col("start_s").is_not_null())
        self.delivered: list[pl.DataFrame] = []
        self.pending: pl.DataFrame | None = None  # received data packets not yet in order
        self.ids = 0
        self.files: list[Path] = []

    def feed(self, d: pl.DataFrame) -> None:
        r = d.filter(pl.col("direction").is_in(self.receiving))
        self.delivered.append(metrics.delivered_per_second(r, self.starts))
        o = r.filter(pl.col("dsn_rel").is_not_null()).select(
            "frame", "stream", "conn_id", "direction", "time_s", "dsn_rel", "payload_bytes")
        o = o.with_columns(id=pl.int_range(self.ids, self.ids + o.height, dtype=pl.UInt64))
        self.ids += o.height
        done = pl.DataFrame(self.in_order.feed(o.select(
            "id", group=(pl.col("conn_id").cast(pl.UInt32) * 2 + (pl.col("direction") == "up")).cast(pl.UInt32),
            time_s="time_s", dsn_rel="dsn_rel", payload_bytes=pl.col("payload_bytes").cast(pl.Int64)).rechunk()))
        waiting = o if self.pending is None else pl.concat([self.pending, o])
        _write(self.out, self.files, _in_capture_frames(self.tr, _ofo_rows(waiting.join(done, on="id", how="inner"))))
        self.pending = waiting.join(done, on="id", how="anti")

    def samples(self) -> tuple[pl.DataFrame | pl.LazyFrame, pl.DataFrame]:
        """``Measures.ofo``, ``Measures.delivered``."""
        if self.pending is not None and self.pending.height:
            _write(self.out, self.files, _in_capture_frames(
                self.tr, _ofo_rows(self.pending.with_columns(in_order_s=pl.lit(None, pl.Float64)))))
        delivered = _summed(self.delivered, ["conn_id", "stream", "direction", "second"], ["payload_bytes", "packets"])
        return (_scan(self.files, metrics.ofo_delays(self.tr.empty_packets())),
                delivered.sort("conn_id", "stream", "direction", "second"))


_NO_LAST = pl.DataFrame(schema={"conn_id": pl.Int32, "direction": pl.Utf8, "last_data_s": pl.Float64})
_RTT_EMPTY = pl.DataFrame(schema={"frame": pl.UInt32, "stream": pl.UInt32, "direction": pl.Utf8, "sent_s": pl.Float64,
                                  "rtt_ms": pl.Float64})


def _summed(parts: list[pl.DataFrame], keys: list[str], sums: list[str]) -> pl.DataFrame:
    return pl.concat(parts).group_by(keys).agg(pl.col(c).sum() for c in sums)


def _write(out: Spill, files: list[Path], frame: pl.DataFrame) -> None:
    if frame.height:
        files.append(out.write(frame))


def _scan(files: list[Path], empty: pl.DataFrame) -> pl.DataFrame | pl.LazyFrame:
    return pl.scan_ipc(files) if files else empty


def _direction(down: pl.Expr) -> pl.Expr:
    return pl.when(down).then(pl.lit("down")).otherwise(pl.lit("up"))


_ACK_SAMPLES = {"ack_frame": pl.UInt32, "stream": pl.UInt32, "down": pl.Boolean, "ack_s": pl.Float64,
                "time_s": pl.Float64}


def _ack_rtts(samples) -> pl.DataFrame:
    """``ack_rtt_samples``' stream, direction, rtt_ms (what the tables read of them)."""
    s = pl.DataFrame(samples)
    return s.select(pl.col("stream").cast(pl.UInt32), direction=_direction(pl.col("down")),
                    rtt_ms=(pl.col("ack_s") - pl.col("time_s")) * 1000.0)


def _karn(tr: Trace, rtt, raw: list[Path], out: Spill) -> list[Path]:
    """The samples Karn's rule keeps, as ``metrics.rtt_samples`` gives them."""
    kept: list[Path] = []
    for path in raw:
        s = pl.read_ipc(path)
        keep = pl.DataFrame(rtt.karn(s.select("stream", "down", "seq", "end").rechunk())).to_series()
        _write(out, kept, _in_capture_frames(tr, s.filter(keep).select(
            "frame", "stream", direction=_direction(pl.col("down")), sent_s="sent_s",
            rtt_ms=(pl.col("ack_s") - pl.col("sent_s")) * 1000.0)))
        path.unlink()
    return kept


def _in_capture_frames(tr: Trace, rows: pl.DataFrame) -> pl.DataFrame:
    """``rows``' frame numbers as the capture's, for a capture read in timestamp order."""
    return rows if tr.original is None or rows.height == 0 else rows.with_columns(tr.original(rows["frame"]))


def _ofo_rows(o: pl.DataFrame) -> pl.DataFrame:
    return o.select("frame", "stream", "conn_id", "direction", pl.col("time_s").alias("arrival_s"), "dsn_rel",
                    ((pl.col("in_order_s") - pl.col("time_s")) * 1000.0).alias("ofo_delay_ms"))
