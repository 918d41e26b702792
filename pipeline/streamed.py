"""A trace's structure and annotated packets from its spill (``spill``), piece by piece:
what ``flows.build_trace`` gives, without holding the trace's packets.

The subflows and connections come from the spill's ``Digest``; each piece is then
numbered and mapped by the native crate's states (``pcapdecode.Numbering``,
``pcapdecode.Mappings``), which carry what a packet's numbers depend on from one piece
to the next. The DSS mappings are all read first, in a sweep of their own, since a
mapping may come after a packet it maps. tests/test_streamed.py holds the pieces,
subflows and notes equal to ``build_trace``'s on every test capture in time order.
"""
from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from . import flows
from .spill import Digest, Spill


class InMemory(Exception):
    """This trace must be analysed in memory; the message says why."""


# What a spill holds of each packet: what the trace's annotation reads.
SPILLED = flows._ANNOTATE_INPUT


class Trace:
    """A spilled trace: ``subflows`` (as ``flows.Trace``'s) once opened, ``packets()``'s
    pieces (``flows.TRACE_PACKETS``) in frame order, then ``notes`` (complete once the
    pieces have all been read)."""

    def __init__(self, spilled: Spill, digest: Digest, client_addrs: frozenset[str] = frozenset()) -> None:
        try:
            from pcapdecode import Mappings, Numbering
        except ImportError:
            raise InMemory("the native crate is not built") from None
        if digest.in_memory:
            raise InMemory(digest.in_memory)
        self._Numbering, self._Mappings = Numbering, Mappings
        self.spill = spilled
        rows = digest.rows()
        if flows.split_reused_streams(rows)[1]:
            raise InMemory("a stream goes on after its FIN/RST as a new connection")
        sf = flows.find_subflows(rows, client_addrs, sent=digest.sent())
        sf, self._structure_notes = flows.assign_connections(sf, rows)
        self.notes: list[str] = []
        isns = sf.select("stream", "isn_server", "isn_client")
        self._bases = flows.sequence_bases(flows.with_direction(rows, sf), isns).select(
            pl.col("stream").cast(pl.UInt32), "down", pl.col("base").cast(pl.Int64))
        if self._bases["down"].null_count():
            raise InMemory("a packet's direction is unknown")
        self.subflows = sf.join(flows.seq_bases_of(self._bases), on="stream", how="left")
        self._mp = sf.filter(pl.col("kind") != "tcp")
        sent = digest.sent()
        self._carrying = sent.filter(pl.col("sent") > 0)["stream"]
        self._mappings: dict[str, tuple[object, list[int]]] = {}
        self._map_notes: dict[str, list[str]] = {}
        if self._mp.height:
            self._read_mappings()

    def _numbered(self, numbering, piece: pl.DataFrame) -> pl.DataFrame:
        q = flows.with_direction(piece, self.subflows)
        cols = q.select(pl.col("stream").cast(pl.UInt32), "down", pl.col("seq").cast(pl.UInt32),
                        pl.col("ack").cast(pl.UInt32), "ackf")
        if sum(cols.null_count().row(0)):
            raise InMemory("a packet's direction or numbers are unknown")
        return q.hstack(pl.DataFrame(numbering.feed(cols.rechunk())))

    def _read_mappings(self) -> None:
        """The first sweep: every DSS mapping, each direction's in frame order."""
        numbering = self._Numbering(self._bases)
        raw: dict[str, list] = {d: [] for d in flows.DIRECTIONS}
        carrying: dict[str, list[pl.Series]] = {d: [] for d in flows.DIRECTIONS}
        for piece in self.spill.pieces(SPILLED):
            q = self._numbered(numbering, piece)
            for d in flows.DIRECTIONS:
                raw[d].append(flows.raw_mappings(q, d))
                carrying[d].append(q.filter(flows.dsn_data(self._mp, d))["stream"].unique())
        for d in flows.DIRECTIONS:
            streams = pl.concat(carrying[d])
            if streams.len() == 0:
                continue
            no_isn, self._map_notes[d] = flows.without_isn(self._mp, streams, d)
            maps = flows.dss_mappings(pl.concat([m for m, _ in raw[d]]), pl.concat([c for _, c in raw[d]]),
                                      self._mp, d, no_isn)
            raw[d] = []
            if maps is not None:
                m = maps.select(pl.col("stream").cast(pl.UInt32), pl.col("map_ssn").cast(pl.Int64),
                                pl.col("mp_map_len").cast(pl.Int64), pl.col("map_dsn").cast(pl.Int64))
                if sum(m.drop("map_dsn").null_count().row(0)):
                    raise InMemory("a DSS mapping's numbers are unknown")
                self._mappings[d] = (self._Mappings(m.rechunk()), no_isn)

    def packets(self) -> Iterator[pl.DataFrame]:
        """The second sweep: the annotated pieces, as ``flows.build_trace``'s packets."""
        numbering = self._Numbering(self._bases)
        unmapped = dict.fromkeys(flows.DIRECTIONS, 0)
        for piece in self.spill.pieces(SPILLED):
            q = self._numbered(numbering, piece)
            found = []
            for d, (mappings, no_isn) in self._mappings.items():
                data = q.select(flows._row(), "stream", "rel_seq", "payload_bytes", "down").filter(
                    flows.dsn_data(self._mp, d))
                if data.height == 0:
                    continue
                got = data.select("_row", "stream").with_columns(pl.DataFrame(mappings.feed(
                    data.select(pl.col("stream").cast(pl.UInt32), pl.col("rel_seq").cast(pl.Int64)).rechunk())))
                unmapped[d] += got.filter(pl.col("dsn_rel").is_null(), ~pl.col("stream").is_in(no_isn)).height
                found.append(got.select("_row", "dsn_rel"))
            q = q.with_columns(flows._at_rows(q.height, pl.concat(found), "dsn_rel") if found
                               else pl.lit(None, dtype=pl.Int64).alias("dsn_rel"))
            q = flows.map_data_ack(q, self.subflows)
            yield flows.trace_packets(q)
        notes = list(self._structure_notes)
        for d in flows.DIRECTIONS:
            notes += self._map_notes.get(d, []) + flows.unmapped_notes(unmapped[d], d)
        self.notes = notes + flows.one_way_notes(self.subflows, self._carrying)
