"""Structure of a trace: who is client and server, subflows, connections, sequence
numbers relative to each side's ISN, and each server data packet's data sequence
number. No statistics here: ``metrics`` computes those from what this returns.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from . import mptcp, reuse
from .fields import ACK, FIN, SYN
from .dsnmap import looked_up, map_data_ack, map_dsn

EPHEMERAL = (32768, 60999)  # Linux's default ip_local_port_range
DIRECTIONS = ("down", "up")  # server -> client, client -> server


# What the metrics read of each packet (``Trace.packets``): the decoder's columns are
# dropped once subflows and connections are known, so that a long trace's per-packet
# frame stays narrow (addresses, keys and options are per subflow, in ``subflows``).
TRACE_PACKETS: dict[str, pl.DataType] = {
    "frame": pl.UInt32,
    "time_s": pl.Float64,
    "stream": pl.UInt32,
    "conn_id": pl.Int32,
    "direction": pl.Utf8,  # "down" (server -> client) or "up"
    "down": pl.Boolean,
    "payload_bytes": pl.UInt32,
    "rel_seq": pl.Int64,  # sequence number of the first byte, relative to the sender's ISN, unwrapped
    "rel_ack": pl.Int64,  # null when the ACK flag is off
    "fin": pl.Boolean,  # the FIN flag (a FIN takes a sequence number: the per-ACK RTT times it)
    # IPv4's identification (null over IPv6): Linux numbers a TCP socket's packets one by
    # one, so a retransmission's copy has an ID of its own and the one-way delay can tell
    # the copies apart (``owd``)
    "ip_id": pl.UInt16,
    "dsn_rel": pl.Int64,  # data sequence number relative to the sender's IDSN (MPTCP data packets)
    # the DSS's DATA_ACK, relative to the IDSN of the data it acknowledges (the other end's):
    # the next data byte expected, in dsn_rel's numbering (null: none, or that key not captured)
    "dack_rel": pl.Int64,
}
# One row per TCP stream, as ``find_subflows`` returns it: what the later stages read.
SUBFLOW_COLUMNS: dict[str, pl.DataType] = {
    "stream": pl.UInt32,
    "first_frame": pl.UInt32,  # the stream's first packet in the trace
    "t_first": pl.Float64,  # and its time
    # handshake: SYN, SYN/ACK and third ACK times (null: not captured)
    "t_syn": pl.Float64,
    "t_synack": pl.Float64,
    "t_ack3": pl.Float64,
    "handshake_captured": pl.Boolean,  # SYN and SYN/ACK both seen
    "client_addr": pl.Utf8,
    "client_port": pl.UInt16,
    "server_addr": pl.Utf8,
    "server_port": pl.UInt16,
    "reversed": pl.Boolean,  # the SYN came from the server (the client's addresses said so)
    "n_senders": pl.UInt32,  # how many ends sent anything (1: one direction captured)
    "kind": pl.Utf8,  # "mpc" (MP_CAPABLE), "join" (MP_JOIN), "dss" (MPTCP, handshake missed), "tcp"
    "mp_version": pl.Int8,  # MPTCP version of the MP_CAPABLE exchange (0, 1)
    "join_token": pl.UInt32,  # an MP_JOIN SYN's token: the connection's receiver end
    "client_key": pl.UInt64,  # MP_CAPABLE keys (IDSNs and tokens derive from them)
    "server_key": pl.UInt64,
    "is_backup": pl.Boolean,  # MP_JOIN with the backup flag
    "isn_client": pl.UInt32,  # initial sequence numbers (null: that SYN not captured)
    "isn_server": pl.UInt32,
}
# ``Trace.subflows``: the same with each stream's connection (``assign_connections``).
SUBFLOWS: dict[str, pl.DataType] = {
    **SUBFLOW_COLUMNS,
    "conn_id": pl.Int32,
    "server_idsn": pl.UInt64,  # the connection's IDSNs (null: that key not captured)
    "client_idsn": pl.UInt64,
    "is_primary": pl.Boolean,  # the subflow that opened the connection
}
# ``Trace.subflows``' last two columns, from ``annotate_packets``: what each sender's
# rel_seq counts from (its ISN, else its first sequence number - 1), so that
# (base + rel_seq) mod 2^32 finds a packet in the other end's trace (``owd``).
SEQ_BASES: dict[str, pl.DataType] = {"seq_base_server": pl.Int64, "seq_base_client": pl.Int64}
# What dsnmap.map_dsn reads of the decoder's columns, besides TRACE_PACKETS.
_MAP_INPUT = ("mpc", "mp_map_present", "mp_dsn64", "mp_map_len", "mp_ssn", "mp_dsn_raw", "mp_dack64", "mp_dack_raw")


# What annotate_packets (and the DSN mapping after it) read of the packets.
_ANNOTATE_INPUT = ("frame", "time_s", "stream", "src", "sport", "seq", "ack", "ackf", "fin", "payload_bytes",
                   "ip_id", *_MAP_INPUT)


@dataclass
class Trace:
    packets: pl.DataFrame  # one row per TCP frame, the columns of TRACE_PACKETS
    subflows: pl.DataFrame  # one row per TCP stream, the columns of SUBFLOWS and SEQ_BASES
    notes: list[str] = field(default_factory=list)  # problems worth a row
    time_unusable: bool = False  # timestamps impossible: no time-based metric from this trace


# The decoder's columns the trace keeps (``compact``); everything else is dropped as
# the capture is decoded. Addresses and the option list become categoricals (a few
# distinct values in millions of rows), one address column per end.
_KEPT = ("frame", "time_s", "frame_bytes", "cap_bytes", "ip_id", "stream", "sport", "dport", "tcp_flags", "seq",
         "ack", "payload_bytes", "tcp_checksum", "mp_version", "mp_sendkey", "mp_recvkey", "mp_recvtok",
         "mp_map_present", "mp_dsn64", "mp_dsn_raw", "mp_ssn", "mp_map_len", "mp_data_fin", "mp_backup", "mp_dack64",
         "mp_dack_raw")


def compact(p: pl.DataFrame) -> pl.DataFrame:
    """The packets table as ``sanity`` and ``build_trace`` read it: ``src``/``dst``
    (IPv4 or IPv6) and ``mp_subtypes`` as categoricals, and the flags they test
    (``syn``, ``ackf``, ``fin``, ``mpc``, ``join``, ``dss``) as booleans. Row by row, so it can
    be applied to each piece of a capture as it is decoded
    (``extract.read_packets(..., compact=compact)``)."""
    c = p.select(
        *_KEPT[:4],
        src=pl.coalesce("ip_src", "ip6_src").cast(pl.Categorical),
        dst=pl.coalesce("ip_dst", "ip6_dst").cast(pl.Categorical),
        *_KEPT[4:],
        mp_subtypes=pl.col("mp_subtypes").cast(pl.Categorical),
        syn=(pl.col("tcp_flags") & SYN) != 0,
        ackf=(pl.col("tcp_flags") & ACK) != 0,
        fin=(pl.col("tcp_flags") & FIN) != 0,
    )
    # the subtype lists are a handful of strings in millions of rows: each is tested
    # once, the rows by its category's code
    lists = c["mp_subtypes"].unique().drop_nulls()
    texts, code = lists.cast(pl.Utf8), pl.col("mp_subtypes").to_physical()
    return c.with_columns(**{name: code.is_in(lists.filter(texts.str.contains(rf"(^|,){n}(,|$)")).to_physical()
                                              .implode()).fill_null(False)
                             for name, n in (("mpc", 0), ("join", 1), ("dss", 2))})


def find_subflows(p: pl.DataFrame, client_addrs: frozenset[str] = frozenset(),
                  sent: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per TCP stream: endpoints, handshake, MPTCP keys and tokens.

    The client is the host that sent the SYN. Without a SYN, the SYN/ACK's
    receiver; without either, the host whose port is in Linux's ephemeral range
    (32768-60999) when only one is, else the host that sent fewer payload bytes (the
    lab's workloads are downloads), and the row says the handshake was not captured.
    When the client's addresses are known (meta.json, ``--path``) they decide
    instead: D-ITG's sender, on the server, opens its connections itself.

    ``sent`` (``stream, src, sport, sent``: each sender's payload bytes) is summed from
    ``p`` unless given: ``p`` may then be a ``spill.Digest``'s rows, not every packet.
    """
    g = _stream_facts(p, sent)
    g = _ends(g)
    g = _known_clients(g, client_addrs)
    g = _third_acks(p, g)
    g = _mptcp_keys(p, g)
    # addresses as text from here on: one row per subflow; the handshake's working
    # columns (syn_*, sa_*, any_*, big_*) stay here
    return g.select(pl.col(c).cast(t) for c, t in SUBFLOW_COLUMNS.items()).sort("first_frame")


def _stream_facts(p: pl.DataFrame, sent: pl.DataFrame | None) -> pl.DataFrame:
    """Per stream: its first packet's ends, first time and frame, what its SYN (``syn_*``) and
    SYN/ACK (``sa_*``) said, and its biggest sender (``big_*``, ``n_senders``)."""
    is_syn = pl.col("syn") & ~pl.col("ackf")
    is_synack = pl.col("syn") & pl.col("ackf")

    # What the SYN ("syn_*") and the SYN/ACK ("sa_*") of each stream said.
    handshake = [
        pl.col(col).filter(cond).first().alias(f"{prefix}_{col}")
        for prefix, cond in (("syn", is_syn), ("sa", is_synack))
        for col in ("time_s", "src", "sport", "dst", "dport", "seq", "mpc", "join", "mp_recvtok", "mp_backup")
    ] + [
        pl.col("mp_version").filter(cond & pl.col("mpc")).first().alias(f"{prefix}_version")
        for prefix, cond in (("syn", is_syn), ("sa", is_synack))
    ]
    # The handshake from the SYN-flagged packets alone: a long trace has few of them.
    hs = p.filter(pl.col("syn")).group_by("stream").agg(*handshake)
    # (group-bys on a narrow selection: polars may copy whatever frame it groups)
    g = p.select("stream", "src", "sport", "dst", "dport", "time_s", "dss", "frame").group_by("stream").agg(
        pl.col("src").first().alias("any_src"),
        pl.col("sport").first().alias("any_sport"),
        pl.col("dst").first().alias("any_dst"),
        pl.col("dport").first().alias("any_dport"),
        pl.col("time_s").min().alias("t_first"),
        pl.col("dss").any().alias("any_dss"),
        pl.col("frame").min().alias("first_frame"),
    ).join(hs, on="stream", how="left")
    # Payload by (stream, sender) to guess the server when no handshake was seen.
    if sent is None:
        sent = senders(p)
    by_sender = (
        sent.sort("stream", "sent", "sport", descending=[False, True, False])
        .group_by("stream", maintain_order=True)
        .agg(pl.col("src").first().alias("big_src"), pl.col("sport").first().alias("big_sport"),
             pl.len().alias("n_senders"))
    )
    g = g.join(by_sender, on="stream", how="left").rename(
        {"syn_time_s": "t_syn", "sa_time_s": "t_synack", "syn_mp_recvtok": "join_token", "syn_mp_backup": "syn_backup"}
    )
    return g


def _ends(g: pl.DataFrame) -> pl.DataFrame:
    """``g`` with who is server and client (handshake, else ports, else payload), the
    MPTCP version and the subflow's kind."""
    eph_src = pl.col("any_sport").is_between(*EPHEMERAL)
    eph_dst = pl.col("any_dport").is_between(*EPHEMERAL)
    by_port = eph_src ^ eph_dst  # exactly one end looks like a client
    g = g.with_columns(
        handshake_captured=pl.col("t_syn").is_not_null(),
        server_addr=pl.coalesce("syn_dst", "sa_src",
                                pl.when(by_port).then(pl.when(eph_src).then("any_dst").otherwise("any_src")),
                                "big_src"),
        server_port=pl.coalesce("syn_dport", "sa_sport",
                                pl.when(by_port).then(pl.when(eph_src).then("any_dport").otherwise("any_sport")),
                                "big_sport"),
    )
    # Address and port: on loopback both ends share one address.
    first_from_server = (pl.col("any_src") == pl.col("server_addr")) & (pl.col("any_sport") == pl.col("server_port"))
    g = g.with_columns(
        client_addr=pl.coalesce(
            "syn_src", "sa_dst",
            pl.when(first_from_server).then("any_dst").otherwise("any_src"),
        ),
        client_port=pl.coalesce(
            "syn_sport", "sa_dport",
            pl.when(first_from_server).then("any_dport").otherwise("any_sport"),
        ),
        mp_version=pl.coalesce("sa_version", "syn_version").cast(pl.Int8),
        # MP_CAPABLE on both SYN and SYN/ACK: an MPTCP connection (else a fallback).
        kind=pl.when(pl.col("syn_mpc") & pl.col("sa_mpc").fill_null(True))
        .then(pl.lit("mpc"))
        .when(pl.col("syn_join"))
        .then(pl.lit("join"))
        .when(pl.col("t_syn").is_null() & pl.col("t_synack").is_null() & pl.col("any_dss"))
        .then(pl.lit("dss"))
        .when(pl.col("t_syn").is_null() & pl.col("sa_mpc").fill_null(False))
        .then(pl.lit("mpc"))
        .otherwise(pl.lit("tcp")),
    )
    return g


def _known_clients(g: pl.DataFrame, client_addrs: frozenset[str]) -> pl.DataFrame:
    """``g`` with server and client swapped where the known client addresses say so."""
    # Known client addresses override the SYN rule (``reversed``: the server sent the SYN).
    rev = pl.col("server_addr").is_in(list(client_addrs)) & ~pl.col("client_addr").is_in(list(client_addrs))
    g = g.with_columns(reversed=rev if client_addrs else pl.lit(False)).with_columns(
        *[pl.when(pl.col("reversed")).then(f"client_{c}").otherwise(f"server_{c}").alias(f"server_{c}")
          for c in ("addr", "port")],
        *[pl.when(pl.col("reversed")).then(f"server_{c}").otherwise(f"client_{c}").alias(f"client_{c}")
          for c in ("addr", "port")],
    )
    return g


def _third_acks(p: pl.DataFrame, g: pl.DataFrame) -> pl.DataFrame:
    """``g`` with ``t_ack3``: when the handshake's third packet was sent."""
    # The handshake's third packet: the SYN sender's first ACK after the SYN/ACK.
    # (each sender's first such ACK, then the SYN sender's: a lookup per packet and a join
    # of a few rows, not a join of every packet with the subflows)
    answered = g.filter(pl.col("t_synack").is_not_null())
    t3 = (
        p.lazy().filter(~pl.col("syn"), pl.col("ackf"))
        .filter(pl.col("time_s") >= pl.col("stream").replace_strict(answered["stream"], answered["t_synack"],
                                                                     default=None, return_dtype=pl.Float64))
        .group_by("stream", "src", "sport").agg(pl.col("time_s").min().alias("t_ack3")).collect()
        .join(g.select("stream", src="syn_src", sport="syn_sport"), on=["stream", "src", "sport"])
        .select("stream", "t_ack3")
    )
    return g.join(t3, on="stream", how="left")


def _mptcp_keys(p: pl.DataFrame, g: pl.DataFrame) -> pl.DataFrame:
    """``g`` with both ends' MPTCP keys, the backup flag and each end's ISN."""
    # Keys from the MP_CAPABLE exchange: each side's key is the sendkey of its own
    # MP_CAPABLE packets (v0 SYN / v1 third ACK for the client, SYN/ACK for the server).
    keys = (
        p.filter(pl.col("mpc") & pl.col("mp_sendkey").is_not_null())
        .join(g.select("stream", "server_addr", "server_port"), on="stream")
        .with_columns(from_server=(pl.col("src") == pl.col("server_addr")) & (pl.col("sport") == pl.col("server_port")))
        .group_by("stream")
        .agg(
            pl.col("mp_sendkey").filter(~pl.col("from_server")).first().alias("client_key"),
            pl.col("mp_sendkey").filter(pl.col("from_server")).first().alias("server_key"),
            pl.col("mp_recvkey").filter(~pl.col("from_server")).first().alias("echoed_server_key"),
        )
    )
    return g.join(keys, on="stream", how="left").with_columns(
        server_key=pl.coalesce("server_key", "echoed_server_key"),
        is_backup=pl.col("syn_backup").fill_null(0).cast(pl.Boolean),
        isn_client=pl.when(pl.col("reversed")).then("sa_seq").otherwise("syn_seq"),
        isn_server=pl.when(pl.col("reversed")).then("syn_seq").otherwise("sa_seq"),
    )


def senders(p: pl.DataFrame) -> pl.DataFrame:
    """``stream, src, sport, sent``: the payload bytes of each sender of each stream."""
    return p.group_by("stream", "src", "sport").agg(sent=pl.col("payload_bytes").cast(pl.Int64).sum())


def assign_connections(sf: pl.DataFrame, p: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Group subflows into connections: MP_JOIN by token, handshake-less MPTCP
    subflows by data sequence range; plain TCP streams are connections of one.
    Each connection gets both ends' IDSNs (``server_idsn``, ``client_idsn``) where
    their keys were captured: downloads are numbered from the server's, uploads
    from the client's."""
    # only the columns read here (a capture of 100,000 connections: 200,000 rows)
    rows = sf.select("stream", "kind", "mp_version", "server_key", "client_key", "first_frame",
                     "join_token").to_dicts()
    conns = _Connections()
    # in this order: the connection ids are numbered as the steps make them
    _capable_connections(conns, rows)
    _joined_subflows(conns, rows)
    _dsn_matched_subflows(conns, rows, p, sf)
    _lone_streams(conns, rows)
    return _with_connections(sf, conns), conns.notes


@dataclass
class _Connections:
    """The connections ``assign_connections`` makes, step by step."""
    conn_of: dict[int, int] = field(default_factory=dict)  # stream -> connection
    # token -> the connections announcing it, as (first frame, conn): two connections with
    # the same key (a broken key generator, a replayed capture) share a token
    token_to_conn: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    idsn: dict[str, dict[int, int | None]] = field(default_factory=lambda: {"server": {}, "client": {}})
    notes: list[str] = field(default_factory=list)
    next_id: int = 0

    def new_conn(self) -> int:
        cid = self.next_id
        self.next_id += 1
        self.idsn["server"][cid] = self.idsn["client"][cid] = None
        return cid


def _capable_connections(conns: _Connections, rows: list[dict]) -> None:
    """A connection per MP_CAPABLE subflow, with its ends' tokens and IDSNs."""
    for r in rows:
        if r["kind"] == "mpc":
            cid = conns.conn_of[r["stream"]] = conns.new_conn()
            v = r["mp_version"] if r["mp_version"] is not None else 1
            # A join's SYN carries the token of the host it is sent to: either end.
            for end in ("server", "client"):
                key = r[f"{end}_key"]
                if key is not None:
                    tok, conns.idsn[end][cid] = mptcp.token_and_idsn(key, v)
                    conns.token_to_conn.setdefault(tok, []).append((r["first_frame"] or 0, cid))


def _joined_subflows(conns: _Connections, rows: list[dict]) -> None:
    """Each MP_JOIN subflow to the connection its token names (else a connection of its own)."""
    for r in rows:
        if r["kind"] == "join":
            tok = r["join_token"]
            if tok is not None and tok in conns.token_to_conn:
                owners = conns.token_to_conn[tok]
                # the connection opened last before this join (all of them when the join came first)
                before = [o for o in owners if o[0] <= (r["first_frame"] or 0)] or owners
                conns.conn_of[r["stream"]] = max(before)[1]
                if len({c for _, c in owners}) > 1:
                    conns.notes.append(f"subflow {r['stream']}: MP_JOIN token {tok:#010x} is shared by connections "
                                       f"{', '.join(str(c) for _, c in sorted(owners))} (the same key); joined to "
                                       f"connection {conns.conn_of[r['stream']]}, the last opened before it")
                continue
            cid = conns.conn_of[r["stream"]] = conns.new_conn()
            if tok is None:
                # e.g. a snap length that cut the option short
                conns.notes.append(f"subflow {r['stream']}: MP_JOIN SYN without a readable token; "
                                   "treated as its own connection")
            else:
                conns.token_to_conn[tok] = [(r["first_frame"] or 0, cid)]
                conns.notes.append(f"subflow {r['stream']}: MP_JOIN token {tok:#010x} matches no captured "
                                   "MP_CAPABLE handshake")


def _dsn_matched_subflows(conns: _Connections, rows: list[dict], p: pl.DataFrame, sf: pl.DataFrame) -> None:
    """Each handshake-less MPTCP subflow to the connection whose data sequence range it shares."""
    dss_rows = [r for r in rows if r["kind"] == "dss"]
    if not dss_rows:
        return
    ranges = _dsn_ranges(p, sf)
    cluster = _dsn_clusters(ranges)
    members: dict[tuple[bool, int], list[int]] = {}  # cluster -> its streams with a connection
    for key, c in cluster.items():
        if key[0] in conns.conn_of:
            members.setdefault(c, []).append(key[0])
    for r in dss_rows:
        cid = _match_by_dsn(r, ranges, conns.conn_of, cluster, members)
        if cid is None:
            cid = conns.new_conn()
            conns.notes.append(f"subflow {r['stream']}: MPTCP handshake not captured and no other subflow "
                               "shares its data sequence range; treated as its own connection")
        else:
            conns.notes.append(f"subflow {r['stream']}: handshake not captured; joined to connection {cid} "
                               "by data sequence range")
        conns.conn_of[r["stream"]] = cid
        for fs in (True, False):
            c = cluster.get((r["stream"], fs))
            if c is not None:
                members.setdefault(c, []).append(r["stream"])


def _lone_streams(conns: _Connections, rows: list[dict]) -> None:
    """A connection of its own for every stream still without one (plain TCP)."""
    for r in rows:
        if r["stream"] not in conns.conn_of:
            conns.conn_of[r["stream"]] = conns.new_conn()


def _with_connections(sf: pl.DataFrame, conns: _Connections) -> pl.DataFrame:
    """The subflows with their connection, its IDSNs and which subflow is its primary."""
    out = sf.with_columns(
        conn_id=pl.col("stream").replace_strict(conns.conn_of, return_dtype=pl.Int32),
    )
    out = out.with_columns(
        **{f"{end}_idsn": pl.col("conn_id").replace_strict(conns.idsn[end], default=None, return_dtype=pl.UInt64)
           for end in ("server", "client")}
    )
    # The primary subflow is the one that carried MP_CAPABLE (or the first one seen).
    out = out.with_columns(
        is_primary=pl.when(pl.col("kind") == "mpc").then(True)
        .when(pl.col("kind").is_in(["join"])).then(False)
        .otherwise(pl.col("first_frame") == pl.col("first_frame").min().over("conn_id"))
    )
    return out.select(pl.col(c).cast(t) for c, t in SUBFLOWS.items())


def _dsn_ranges(p: pl.DataFrame, sf: pl.DataFrame) -> dict[tuple[int, bool], tuple[int, int]]:
    """Raw 64-bit DSN range of the mappings per (stream, from the server?), for matching."""
    m = (
        p.filter(pl.col("mp_map_present") == 1, pl.col("mp_dsn64") == 1, pl.col("mp_map_len") > 0)
        .join(sf.select("stream", "server_addr", "server_port"), on="stream")
        .with_columns(from_server=(pl.col("src") == pl.col("server_addr")) & (pl.col("sport") == pl.col("server_port")))
        .group_by("stream", "from_server")
        .agg(pl.col("mp_dsn_raw").min().alias("lo"), pl.col("mp_dsn_raw").max().alias("hi"))
    )
    return {(r["stream"], r["from_server"]): (r["lo"], r["hi"]) for r in m.iter_rows(named=True)}


def _dsn_clusters(ranges: dict[tuple[int, bool], tuple[int, int]]) -> dict[tuple[int, bool], tuple[bool, int]]:
    """Per (stream, from the server?): its cluster of ranges, each within 2^32 of the next
    (sorted by start): only ranges of one cluster can be near enough to match, so a
    subflow is compared with its cluster, not with every subflow (N subflows without a
    captured handshake: N log N, not N^2)."""
    out: dict[tuple[int, bool], tuple[bool, int]] = {}
    for fs in (True, False):
        n, reach = -1, None
        for lo, hi, stream in sorted((lo, hi, s) for (s, f), (lo, hi) in ranges.items() if f == fs):
            if reach is None or lo - reach >= (1 << 32):
                n += 1
                reach = hi
            else:
                reach = max(reach, hi)
            out[(stream, fs)] = (fs, n)
    return out


def _match_by_dsn(r: dict, ranges: dict, conn_of: dict, cluster: dict, members: dict) -> int | None:
    best = None
    for from_server in (True, False):  # downloads' data sequence space, then uploads'
        mine = ranges.get((r["stream"], from_server))
        if mine is None:
            continue
        for stream in members.get(cluster[(r["stream"], from_server)], ()):
            other = ranges.get((stream, from_server))
            if other is None or stream == r["stream"]:
                continue
            # The same connection's subflows share one data sequence space per direction:
            # their ranges interleave, or lie within a window far smaller than 2^64.
            gap = max(mine[0], other[0]) - min(mine[1], other[1])
            if gap < (1 << 32) and (best is None or gap < best[0]):
                best = (gap, conn_of[stream])
    return None if best is None else best[1]


def annotate_packets(p: pl.DataFrame, sf: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Direction, sequence and ack numbers relative to each side's ISN, unwrapped;
    and ``stream, seq_base_server, seq_base_client``: what each side's numbers count from.

    ``down`` is server -> client (``build_trace`` spells it out as ``direction``: "down", else "up"). ``rel_seq`` of a packet's first byte is 1 for the
    first data byte when the handshake was captured (the ISN is 0); otherwise the
    first packet seen in that direction is taken to start at 1.

    ``p`` in frame order. The per-stream values come by lookup, the numbers from one
    pass of the native crate (else ``_relative_numbers``): the packet columns are never
    copied.
    """
    if not p["frame"].is_sorted():
        p = p.sort("frame")
    p = with_direction(p, sf)
    isns = sf.select("stream", "isn_server", "isn_client")
    got = _relative_numbers_native(p, isns)
    rel, bases = got if got is not None else _relative_numbers(p, isns)
    p = p.select("frame", "time_s", "stream", "conn_id", "down", "payload_bytes", "fin", "ip_id", *_MAP_INPUT)
    return p.hstack(rel), seq_bases_of(bases)


def with_direction(p: pl.DataFrame, sf: pl.DataFrame) -> pl.DataFrame:
    """``p`` with each packet's ``conn_id`` and ``down`` (sent by its subflow's server),
    looked up per stream in ``sf``."""
    lut = sf.select("stream", "conn_id", "server_port", pl.col("server_addr").cast(pl.Categorical))
    return p.with_columns(
        conn_id=looked_up("stream", lut["stream"], lut["conn_id"]),
        down=(pl.col("src") == looked_up("stream", lut["stream"], lut["server_addr"]))
        & (pl.col("sport") == looked_up("stream", lut["stream"], lut["server_port"])),
    )


def seq_bases_of(bases: pl.DataFrame) -> pl.DataFrame:
    """``stream, seq_base_server, seq_base_client`` from ``stream, down, base``."""
    return bases.group_by("stream").agg(
        seq_base_server=pl.col("base").filter(pl.col("down")).first(),
        seq_base_client=pl.col("base").filter(~pl.col("down")).first())


def sequence_bases(p: pl.DataFrame, isns: pl.DataFrame) -> pl.DataFrame:
    """``stream, down, base`` of each side of ``p`` (``with_direction``'s, in frame
    order) that sent a packet: its ISN when seen, else its first sequence number - 1.
    ``p`` may be a ``spill.Digest``'s rows: each sender's first packet is among them."""
    return (
        p.group_by("stream", "down").agg(pl.col("seq").first().alias("seq0"))
        .join(isns, on="stream", how="left")
        .select("stream", "down", base=pl.when(pl.col("down"))
                .then(pl.coalesce("isn_server", pl.col("seq0").cast(pl.Int64) - 1))
                .otherwise(pl.coalesce("isn_client", pl.col("seq0").cast(pl.Int64) - 1))
                .cast(pl.Int64))
    )


def _relative_numbers(p: pl.DataFrame, isns: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``rel_seq, rel_ack`` of every packet of ``p`` (in frame order), and ``stream, down,
    base`` of each side that sent one: the definition, in polars (``annotate_packets``)."""
    bases = sequence_bases(p, isns)
    # The ack numbers of one direction count the other direction's bytes.
    both = bases.join(bases.select("stream", down=~pl.col("down"), ack_base="base"), on=["stream", "down"], how="left")
    # one integer per (stream, direction): a lookup per packet, not a join
    key = pl.col("stream").cast(pl.Int64) * 2 + pl.col("down").cast(pl.Int64)
    bk = both.select(k=key, b="base", a="ack_base")
    rel = p.select(
        "stream", "down",
        rel_seq=(pl.col("seq").cast(pl.Int64) - key.replace_strict(bk["k"], bk["b"], default=None, return_dtype=pl.Int64))
        % (1 << 32),
        rel_ack=pl.when(pl.col("ackf")).then(
            (pl.col("ack").cast(pl.Int64) - key.replace_strict(bk["k"], bk["a"], default=None, return_dtype=pl.Int64))
            % (1 << 32)),
    )
    # Numbers that stay below 2^31 from their base cannot have wrapped (two in a row are
    # less than 2^31 apart): unwrapping changes nothing then, and is skipped, for it is
    # a window over each subflow's every packet. A subflow past 2 GB (or a packet from
    # before its base) takes the unwrapping.
    if rel.select((pl.col("rel_seq").max() >= 1 << 31) | (pl.col("rel_ack").max() >= 1 << 31)).item():
        rel = rel.with_columns(_unwrap_expr(pl.col(c)).over("stream", "down") for c in ("rel_seq", "rel_ack"))
    return rel.select("rel_seq", "rel_ack"), bases


def _relative_numbers_native(p: pl.DataFrame, isns: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """``_relative_numbers`` by the native crate's pass (pipeline/pcapdecode/src/seqnum.rs;
    a 10M-packet trace's ``annotate_packets`` took 2.3 s with the polars lookups and
    windows, 0.6 s with it), or None where it does not apply: no native build, or a null
    in a column it reads. tests/test_metrics_synthetic.py holds the two equal."""
    try:
        from pcapdecode import relative_numbers
    except ImportError:
        return None
    cols = p.select("stream", "down", "seq", "ack", "ackf")
    if sum(cols.null_count().row(0)):
        return None
    numbers, bases = relative_numbers(cols.select(pl.col("stream").cast(pl.UInt32), "down", pl.col("seq").cast(pl.UInt32),
                                                  pl.col("ack").cast(pl.UInt32), "ackf").rechunk(),
                                      isns.select(pl.col("stream").cast(pl.UInt32), pl.col("isn_server").cast(pl.UInt32),
                                                  pl.col("isn_client").cast(pl.UInt32)))
    del cols
    return pl.DataFrame(numbers), pl.DataFrame(bases)


def _unwrap_expr(c: pl.Expr) -> pl.Expr:
    d = c.forward_fill().diff().fill_null(0)
    wraps = (d < -(1 << 31)).cast(pl.Int64).cum_sum() - (d > (1 << 31)).cast(pl.Int64).cum_sum()
    return c + wraps * (1 << 32)


def build_trace(packets: pl.DataFrame, client_addrs: frozenset[str] = frozenset()) -> Trace:
    """``packets``: the decoder's table, or its ``compact`` form (what the pipeline
    reads). A caller that hands its only reference over lets the columns the trace does
    not keep go as soon as the packets are annotated."""
    p = packets if "src" in packets.columns else compact(packets)
    del packets
    p, notes = reuse.split_reused_streams(p)
    sf = find_subflows(p, client_addrs)
    sf, more = assign_connections(sf, p)
    notes += more
    # the handshake's and the header's other columns are done with: a long trace's
    # annotated copy is then made beside a third less
    p = p.select(_ANNOTATE_INPUT)
    p, seq_bases = annotate_packets(p, sf)
    sf = sf.join(seq_bases, on="stream", how="left")
    p, more = map_dsn(p, sf)
    notes += more
    p = map_data_ack(p, sf)
    p = trace_packets(p)
    notes += one_way_notes(sf, p.filter(pl.col("payload_bytes") > 0)["stream"])
    return Trace(p, sf, notes)


def trace_packets(p: pl.DataFrame) -> pl.DataFrame:
    """The annotated packets (in frame order) as ``Trace.packets`` holds them."""
    # flagged in frame order, so that the metrics' sorts by frame are free; ``direction``
    # spelt out last: text is the widest column of a long trace
    p = p.with_columns(direction=pl.when(pl.col("down")).then(pl.lit("down")).otherwise(pl.lit("up")))
    return p.select(pl.col(c).cast(t) for c, t in TRACE_PACKETS.items()).with_columns(pl.col("frame").set_sorted())


def one_way_notes(sf: pl.DataFrame, carries_data: pl.Series) -> list[str]:
    """A lone SYN (a join attempt nobody answered) is no capture problem; data with no
    packet coming back is. ``carries_data``: the streams with payload."""
    one_way = sf.filter(pl.col("n_senders") == 1, pl.col("stream").is_in(carries_data.unique().implode()))
    return [f"subflow {s}: only one direction was captured" for s in one_way["stream"].to_list()]
