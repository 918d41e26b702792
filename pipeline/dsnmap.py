"""Data sequence numbers: each MPTCP data packet's DSN from the DSS mappings its sender
sent (``map_dsn``), each DATA_ACK in the same numbering (``map_data_ack``), and the
row-position helpers both use. A stage of ``flows.build_trace`` (and, piece by piece,
of ``streamed``), in a module of its own: the subflows and connections it reads are
``flows``' work, the numbering here is the data level's.
"""
from __future__ import annotations

import polars as pl

from . import mptcp, schema


def looked_up(key: str, keys: pl.Series, values: pl.Series) -> pl.Expr:
    """``values`` at each row's ``key`` (among ``keys``: small non-negative integers, as
    the decoder's streams and the connections are numbered), null for any other: a
    gather from a table indexed by key (a hash lookup per packet took three times as long)."""
    if keys.len() == 0:
        return pl.lit(None, values.dtype)
    size = int(keys.max()) + 1
    table = pl.repeat(None, size, dtype=values.dtype, eager=True).scatter(keys, values)
    k = pl.col(key)
    return pl.when(k.is_between(0, size - 1)).then(pl.lit(table).gather(k.clip(0, size - 1)))


def map_dsn(p: pl.DataFrame, sf: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Give every data packet the data sequence number of its first byte, in each
    direction: downloads relative to the server's IDSN, uploads to the client's.

    DSS mappings (DSN, subflow sequence number relative to the ISN, length) may cover
    several segments; a packet's DSN is the mapping's DSN plus its offset into the
    mapping. Needs the sender's ISN (its SYN or SYN/ACK): without it, the subflow's
    packets in that direction get no DSN and a note says so.
    """
    notes: list[str] = []
    p = p.with_columns(dsn_rel=pl.lit(None, dtype=pl.Int64))
    mp = sf.filter(pl.col("kind") != "tcp")
    if mp.height == 0:
        return p, notes
    parts = []
    for direction in schema.DIRECTIONS:
        got, more = _map_dsn_one_way(p, mp, direction)
        parts.append(got)
        notes += more
    dsn = pl.concat(parts)
    if dsn.height:
        p = p.with_columns(at_rows(p.height, dsn, "dsn_rel"))
    return p, notes


def at_rows(n: int, got: pl.DataFrame, name: str) -> pl.Series:
    """Column ``name`` of ``got`` placed at its rows (``positions``) of a frame of ``n`` rows,
    null elsewhere: the rows come from the packets' positions, carried through the
    filters, so no frame number is looked up again."""
    out = pl.repeat(None, n, dtype=got.schema[name], eager=True).alias(name)
    return out.scatter(got["_row"], got[name])


def positions() -> pl.Expr:
    """Each packet's position in the trace's frame (``at_rows`` puts values back there)."""
    return pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row")


def _map_dsn_one_way(p: pl.DataFrame, mp: pl.DataFrame, direction: str) -> tuple[pl.DataFrame, list[str]]:
    """``_row, dsn_rel`` of the data packets of one direction on MPTCP subflows."""
    empty = pl.DataFrame(schema={"_row": pl.UInt32, "dsn_rel": pl.Int64})
    data = p.select(positions(), "stream", "rel_seq", "down", "payload_bytes").filter(dsn_data(mp, direction))
    if data.height == 0:
        return empty, []
    no_isn, notes = without_isn(mp, data["stream"], direction)
    maps = dss_mappings(*raw_mappings(p, direction), mp, direction, no_isn)
    if maps is None:
        return empty, notes
    d = data.select("_row", "stream", "rel_seq")
    del data
    got = _dsn_of_mappings_native(d, maps)
    j = d.with_columns(got) if got is not None else _dsn_of_mappings(d, maps)
    notes += unmapped_notes(j.filter(pl.col("dsn_rel").is_null(), ~pl.col("stream").is_in(no_isn)).height, direction)
    return j.select("_row", "dsn_rel"), notes


def _this_way(direction: str) -> pl.Expr:
    return pl.col("down").fill_null(False) == (direction == "down")  # a null is "up", as in ``direction``


def _sender_of(direction: str) -> str:
    return "server" if direction == "down" else "client"


def dsn_data(mp: pl.DataFrame, direction: str) -> pl.Expr:
    """The packets that get a DSN one way: data on the MPTCP subflows ``mp``."""
    return _this_way(direction) & (pl.col("payload_bytes") > 0) & pl.col("stream").is_in(mp["stream"].implode())


def without_isn(mp: pl.DataFrame, carrying: pl.Series, direction: str) -> tuple[list[int], list[str]]:
    """The subflows of ``mp`` carrying data one way (``carrying``: their streams) whose
    sender's ISN was not captured, and a note for each: their DSNs cannot be inferred.
    A subflow that carries no data this way (e.g. a join the server reset because the
    transfer had ended) needs no DSNs and is not a problem."""
    sender = _sender_of(direction)
    no_isn = mp.filter(pl.col(f"isn_{sender}").is_null(), pl.col("stream").is_in(carrying.unique().implode()))
    notes = []
    for r in no_isn.iter_rows(named=True):
        # the sender's ISN rides on the SYN when it opened the subflow, else on the SYN/ACK
        opened = (sender == "server") == bool(r["reversed"])
        what = "SYN" if opened else "SYN/ACK"
        notes.append(f"subflow {r['stream']}: {what} not captured, so its "
                     f"{'' if direction == 'down' else 'upload '}data sequence numbers cannot be inferred")
    return no_isn["stream"].to_list(), notes


def unmapped_notes(n: int, direction: str) -> list[str]:
    return [f"{n} {_sender_of(direction)} data packets are covered by no captured DSS mapping"] if n else []


def raw_mappings(p: pl.DataFrame, direction: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The DSS mappings one way as the packets carry them (``dss_mappings`` reads them):
    row by row, so a trace read in pieces gives the pieces' mappings one after another."""
    this_way = _this_way(direction)
    maps = p.lazy().filter(
        this_way, pl.col("mp_map_present") == 1, pl.col("mp_map_len") > 0, pl.col("mp_ssn").is_not_null(),
    ).select("stream", "conn_id", "mp_dsn_raw", "mp_dsn64", "mp_map_len",
             # The DSS's subflow sequence number is 32-bit: past 4 GB it wraps, and a mapping
             # of the first 4 GB would cover a later packet. It is taken into the unwrapped
             # numbering of the packet that carries it (the two lie within 2^31 of each other).
             mp_ssn=pl.col("rel_seq") + ((pl.col("mp_ssn").cast(pl.Int64) - pl.col("rel_seq") + (1 << 31))
                                         % (1 << 32) - (1 << 31))).collect()
    # RFC 8684: the initiator's first data may ride on the third ACK's MP_CAPABLE, whose
    # data-level length maps the subflow's first bytes to the first data byte (IDSN + 1).
    mpc_maps = p.filter(
        this_way, pl.col("mpc"), pl.col("mp_map_len") > 0, pl.col("payload_bytes") > 0,
        pl.col("mp_map_present").fill_null(0) == 0).select("stream", "mp_map_len")
    return maps, mpc_maps


def dss_mappings(maps: pl.DataFrame, mpc_maps: pl.DataFrame, mp: pl.DataFrame, direction: str,
                 no_isn: list[int]) -> pl.DataFrame | None:
    """``stream, map_ssn, mp_map_len, map_dsn`` of one direction's mappings (``raw_mappings``,
    in frame order) on the subflows ``mp`` whose sender's ISN is known, with DSNs relative
    to the sender's IDSN; None when there are none."""
    maps, mpc_maps = usable_mappings(maps, mpc_maps, mp, direction, no_isn)
    if maps.height == 0 and mpc_maps.height == 0:
        return None
    return numbered_mappings(maps, mpc_maps, mp, direction)


def usable_mappings(maps: pl.DataFrame, mpc_maps: pl.DataFrame, mp: pl.DataFrame, direction: str,
                    no_isn: list[int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The mappings ``dss_mappings`` numbers: on the subflows ``mp`` whose sender's ISN is
    known (row by row: a trace's pieces' one after another)."""
    sender = _sender_of(direction)
    on_mp = pl.col("stream").is_in(mp["stream"].implode()) & ~pl.col("stream").is_in(no_isn)
    return maps.filter(on_mp), mpc_maps.filter(on_mp).join(mp.select("stream", f"{sender}_idsn"), on="stream").filter(
        pl.col(f"{sender}_idsn").is_not_null()).select(
        "stream", pl.lit(1, pl.Int64).alias("map_ssn"), "mp_map_len", pl.lit(1, pl.Int64).alias("map_dsn"))


def numbered_mappings(maps: pl.DataFrame, mpc_maps: pl.DataFrame, mp: pl.DataFrame, direction: str,
                      firsts: pl.DataFrame | None = None, unwrap: mptcp.Unwrap | None = None) -> pl.DataFrame:
    """``dss_mappings`` of ``usable_mappings``. A connection whose sender's key was not
    captured is numbered from its first mapping: the first of ``maps``, else of
    ``firsts`` (``conn_id, first``: the raw DSN of each connection's first mapping, for
    a trace read in pieces, whose 32-bit DSNs ``unwrap`` carries from piece to piece)."""
    sender = _sender_of(direction)
    # DSNs relative to the sender's IDSN (first data byte = 1), per connection (without
    # its key: from the connection's first mapping).
    idsn = mp.select("conn_id", _ref=pl.col(f"{sender}_idsn")).unique("conn_id")
    first = (pl.col("mp_dsn_raw").cast(pl.UInt64).first().over("conn_id") if firsts is None else
             pl.col("conn_id").replace_strict(firsts["conn_id"], firsts["first"].cast(pl.UInt64), default=None))
    maps = maps.join(idsn, on="conn_id", how="left", maintain_order="left").with_columns(
        _ref=pl.coalesce("_ref", first - pl.lit(1, pl.UInt64)))
    rel = (unwrap.feed if unwrap else mptcp.relative_dsn_by)(
        maps.with_columns(pl.col("mp_dsn64").fill_null(1)), "mp_dsn_raw", "mp_dsn64", "_ref", "conn_id")
    # of the mappings starting at one SSN, the longest (_dsn_of_mappings)
    return pl.concat([mpc_maps, maps.select("stream", pl.col("mp_ssn").cast(pl.Int64).alias("map_ssn"),
                                            "mp_map_len", rel.alias("map_dsn"))])


def _dsn_of_mappings(d: pl.DataFrame, maps: pl.DataFrame) -> pl.DataFrame:
    """``d`` (data packets: ``stream, rel_seq``) with ``dsn_rel`` from ``maps`` (``stream,
    map_ssn, mp_map_len, map_dsn``): the definition, as polars' sorts and as-of join. Of
    the mappings starting at one SSN the join takes the last, so the longest (a segment
    sent again re-sends its mapping, or a shorter one when it was cut anew)."""
    maps = maps.sort("map_ssn", "mp_map_len", "map_dsn")
    j = d.sort("rel_seq").join_asof(maps, left_on="rel_seq", right_on="map_ssn", by="stream", strategy="backward",
                                    check_sortedness=False)
    return j.with_columns(
        dsn_rel=pl.when(
            pl.col("map_ssn").is_not_null()
            & (pl.col("rel_seq") < pl.col("map_ssn") + pl.col("mp_map_len").cast(pl.Int64))
        ).then(pl.col("map_dsn") + (pl.col("rel_seq") - pl.col("map_ssn")))
    ).select(*d.columns, "dsn_rel")


def _dsn_of_mappings_native(d: pl.DataFrame, maps: pl.DataFrame) -> pl.Series | None:
    """``_dsn_of_mappings``' ``dsn_rel``, in ``d``'s row order, by the native crate
    (pipeline/pcapdecode/src/dsnmap.rs: each subflow's mappings sorted once, each packet's
    found from the last one's), or None where it does not apply: no native build, or a
    null where it reads none. tests/test_metrics_synthetic.py holds the two equal."""
    try:
        from pcapdecode import map_dsn as native_map_dsn
    except ImportError:
        return None
    data = d.select(pl.col("stream").cast(pl.UInt32), pl.col("rel_seq").cast(pl.Int64)).rechunk()
    m = maps.select(pl.col("stream").cast(pl.UInt32), pl.col("map_ssn").cast(pl.Int64),
                    pl.col("mp_map_len").cast(pl.Int64), pl.col("map_dsn").cast(pl.Int64)).rechunk()
    if sum(data.null_count().row(0)) or sum(m.drop("map_dsn").null_count().row(0)):
        return None
    return pl.DataFrame(native_map_dsn(data, m)).to_series()


def map_data_ack(p: pl.DataFrame, sf: pl.DataFrame, unwraps: dict[bool, mptcp.Unwrap] | None = None) -> pl.DataFrame:
    """``dack_rel``: each packet's DATA_ACK relative to the IDSN of the data it
    acknowledges (a packet going up carries the client's DATA_ACK of the server's data),
    so that it reads as the next data byte expected in ``dsn_rel``'s numbering: the
    connection-level ACK line of a time-sequence graph (mptcptrace draws it). A
    connection whose acknowledged end's key was not captured gets none. ``unwraps``:
    for a trace read in pieces, each way's 32-bit DATA_ACKs unwrapped from piece to piece."""
    p = p.with_columns(dack_rel=pl.lit(None, dtype=pl.Int64))
    mp = sf.filter(pl.col("kind") != "tcp")
    if mp.height == 0 or "mp_dack_raw" not in p.columns:
        return p
    parts = []
    # positions taken before the filter; the packets of MPTCP subflows by a table indexed by stream
    dacks = p.select(positions(), pl.col("down").fill_null(False), "conn_id", "mp_dack_raw",
                     pl.col("mp_dack64").fill_null(1), _mp=looked_up("stream", mp["stream"], pl.repeat(
                         True, mp.height, eager=True))).filter(pl.col("mp_dack_raw").is_not_null(), pl.col("_mp"))
    for down in (True, False):
        acked = "client" if down else "server"  # whose data the DATA_ACKs on this way acknowledge
        idsn = mp.select("conn_id", _ref=pl.col(f"{acked}_idsn")).unique("conn_id").drop_nulls()
        # the connections with a reference, by a table indexed by connection
        a = dacks.filter(pl.col("down") == down).select(
            "_row", "conn_id", "mp_dack_raw", "mp_dack64",
            _ref=looked_up("conn_id", idsn["conn_id"], idsn["_ref"])).filter(pl.col("_ref").is_not_null())
        if a.height:
            relative = unwraps[down].feed if unwraps else mptcp.relative_dsn_by
            parts.append(a.select("_row", dack_rel=relative(a, "mp_dack_raw", "mp_dack64", "_ref", "conn_id")))
    if parts:
        p = p.with_columns(at_rows(p.height, pl.concat(parts), "dack_rel"))
    return p
