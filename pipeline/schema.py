"""Every table the lab writes, in one place.

One list (``PACKET_FIELDS`` in ``fields``: tshark field -> column, type) drives both decoders (the
native one in ``pipeline/pcapdecode`` and tshark's ``-e`` arguments), the packets
Parquet schema and the DuckDB DDL, so adding a field is one line (plus, for a field
the native decoder does not produce yet, its source in ``pcapdecode/src/decoder.rs`` and its
column in ``pcapdecode/src/decoder/columns.rs``).
Units are in column names (``_s`` seconds, ``_ms`` milliseconds, ``_bytes``).
Times ending in ``_s`` without another qualifier are Unix epoch seconds.
"""
from __future__ import annotations

import polars as pl

from .fields import PACKET_FIELDS, VANTAGES, Field  # noqa: F401 - re-exported here

# The native decoder's type names, as polars types.
NATIVE_DTYPES = {"u8": pl.UInt8, "u16": pl.UInt16, "u32": pl.UInt32, "u64": pl.UInt64,
                 "f64": pl.Float64, "str": pl.Utf8}

PACKETS: dict[str, pl.DataType] = {f.column: NATIVE_DTYPES[f.native_type] for f in PACKET_FIELDS}

# tshark preferences every extraction (and the benchmark's baseline) uses.
TSHARK_PREFS: list[str] = [
    "mptcp.analyze_mappings:TRUE",
    "mptcp.relative_sequence_numbers:FALSE",
    "tcp.relative_sequence_numbers:FALSE",
    "tcp.analyze_sequence_numbers:TRUE",
    "mptcp.analyze_mptcp:TRUE",
    # no reassembly for application dissectors: we read no application field, and
    # reassembling non-HTTP data on port 80 (or TLS, ...) costs several times the decode
    "tcp.desegment_tcp_streams:FALSE",
]


# Which way data went: "down" is server -> client (the papers' downloads), "up" is
# client -> server (iperf3's default, uploads). The sender's trace gives loss and RTT,
# the receiver's OFO delay and completion time. connections, subflows, rtt_samples and
# ofo_samples have one row per direction that carried data; a subflow or connection
# that carried none has one "down" row with zero counts. Tables written before the
# column existed held downloads only (``legacy_direction``).
DIRECTIONS = ("down", "up")
DIRECTION_TABLES = ("connections", "subflows", "rtt_samples", "ofo_samples", "delivered_1s")

TABLES: dict[str, dict[str, pl.DataType]] = {
    "runs": {
        "run_id": pl.Utf8,
        "campaign": pl.Utf8,
        "study": pl.Utf8,  # the paper or study the campaign belongs to (meta.json study; null when absent)
        "scenario": pl.Utf8,
        "mode": pl.Utf8,  # SP-wifi, SP-lte, MP-2, MP-3, MP-4, backup
        "congestion_control": pl.Utf8,
        "scheduler": pl.Utf8,
        "primary_path": pl.Utf8,
        "size_bytes": pl.Int64,
        "workload": pl.Utf8,
        "repetition": pl.Int32,
        "started_at": pl.Utf8,
        # Host health during the run (capture/health.py; null where not recorded,
        # e.g. tbf links or runs captured before stalls were recorded):
        "stalled": pl.Boolean,  # the emulator left a frame later than the campaign's stall threshold (5 ms)
        "worst_late_ms": pl.Float64,  # worst departure lateness of linkem, all paths and directions
        "late_packets": pl.Int64,  # frames that left > 1 ms later than scheduled
        "late_intervals": pl.Int64,  # intervals of consecutive such frames (per path and direction)
        "worst_reader_lag_ms": pl.Float64,  # worst delay between a frame's arrival and linkem reading it
        "steal_pct": pl.Float64,  # host CPU steal over the run, % of all CPUs' time
        "host_busy_pct": pl.Float64,  # host CPU busy (not idle, not stolen), % of all CPUs' time
        "run_cpu_s": pl.Float64,  # CPU seconds of the run's own processes (emulators, tcpdump, workload)
        "attempt": pl.Int32,  # 1, or 2.. when earlier attempts were repeated after a stall
        # meta.json lifted into columns (pipeline/metadoc.run_columns): what the derived layer reads
        "scale": pl.Utf8,  # quick, standard, paper
        "campaign_seed": pl.Int64,
        "duration_s": pl.Float64,  # a timed workload's length (D-ITG, iperf3)
        "buffer_bytes": pl.Int64,  # receive buffer tested (meta.json buffer_bytes, else the applied tcp_rmem's max ...)
        "complete": pl.Boolean,  # false: a D-ITG test that did not generate and deliver its whole schedule
        "app_sent_packets": pl.Int64,  # packets the application generated (result.sent_packets)
        "app_schedule_packets": pl.Int64,  # packets of D-ITG's replayed schedule (result.schedule_packets)
        "app_schedule_sha256": pl.Utf8,  # the schedule files' hash: the same for TCP and MPTCP of a repetition
        "app_drained": pl.Boolean,  # every generated packet was received before the drain limit (result.drained)
        "host": pl.Utf8,  # the machine it was captured on (builds.host, else host.hostname)
        "kernel_release": pl.Utf8,
        "linkem_build": pl.Utf8,  # content hash of the link emulator (builds.linkem_sha256)
        "repo_commit": pl.Utf8,  # the lab's commit (tools.repo_commit)
        # the client's interface unplugged during the run (meta.json unplug, the first
        # scheduled event; capture/ifevents.py): seconds after the workload's start
        "unplug_path": pl.Utf8,
        "unplug_at_s": pl.Float64,
        "replug_at_s": pl.Float64,
        # socket-buffer samples (meta.json socket_buffers, capture/sockbuf.py): the run's
        # main connection's MPTCP-level socket (TCP: its socket) over the samples
        "rcvbuf_mean_bytes": pl.Float64,  # client: mean receive buffer size (ss skmem rb)
        "rcvbuf_max_bytes": pl.Int64,  # client: largest receive buffer size sampled
        "rcvbuf_used_mean_bytes": pl.Float64,  # client: mean receive memory in use (skmem r)
        "rcvbuf_samples": pl.Int64,  # client: samples of that socket
        "sndbuf_mean_bytes": pl.Float64,  # server: mean send buffer size (skmem tb)
        "meta_json": pl.Utf8,  # the whole meta.json, for fields not lifted into columns
    },
    # meta.json's configured paths (pipeline/metadoc.path_rows): one row per path and direction
    "run_paths": {
        "run_id": pl.Utf8,
        "path": pl.Utf8,
        "direction": pl.Utf8,  # "down" (server -> client) or "up"
        "delay_ms": pl.Float64,  # configured one-way delay
        "rate_mbit": pl.Float64,
        "loss": pl.Float64,  # mean loss probability (Gilbert-Elliott: the stationary mix); 0 when none
        "queue_bytes": pl.Int64,
        "outages": pl.Int32,  # scheduled link outages (run_outages)
        "client_addr": pl.Utf8,
        "profile": pl.Utf8,  # link profile name (meta.json link_profiles)
    },
    # scheduled outages (handover runs): seconds from the emulator's start
    "run_outages": {
        "run_id": pl.Utf8,
        "path": pl.Utf8,
        "direction": pl.Utf8,
        "down_s": pl.Float64,
        "up_s": pl.Float64,
    },
    "connections": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "vantage": pl.Utf8,
        "conn_id": pl.Int32,
        "direction": pl.Utf8,  # "down" (server -> client) or "up"
        "transport": pl.Utf8,  # "mptcp" or "tcp"
        "mptcp_version": pl.Int8,
        "client_addr": pl.Utf8,
        "server_addr": pl.Utf8,
        "server_port": pl.Int32,
        "n_subflows": pl.Int32,
        "payload_bytes": pl.Int64,  # payload in this direction, retransmissions included
        "start_s": pl.Float64,  # first SYN (or first packet when the SYN was not captured)
        # first SYN -> last data packet received; the receiver's trace only (client for
        # "down": Chen's download time; server for "up": the upload's completion time)
        "download_time_s": pl.Float64,
        "handshake_captured": pl.Boolean,
    },
    "subflows": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "vantage": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,  # tshark's tcp.stream
        "direction": pl.Utf8,  # "down" (server -> client) or "up"
        "path": pl.Utf8,
        "client_addr": pl.Utf8,
        "client_port": pl.Int32,
        "server_addr": pl.Utf8,
        "server_port": pl.Int32,
        "is_primary": pl.Boolean,
        "start_s": pl.Float64,
        "data_packets": pl.Int64,  # packets with payload in this direction
        "retransmitted_packets": pl.Int64,
        "loss_rate": pl.Float64,  # the sender's trace only (server for "down", client for "up")
        "payload_bytes": pl.Int64,
        "traffic_share": pl.Float64,
        "rtt_samples": pl.Int64,  # RTT: the sender's trace only
        "rtt_min_ms": pl.Float64,
        "rtt_mean_ms": pl.Float64,
        "rtt_median_ms": pl.Float64,
        "rtt_max_ms": pl.Float64,
        # per-ACK RTT (tshark's ack_rtt: each ACK that moves the cumulative ACK times the last
        # segment it covers; metrics.ack_rtt_samples): the sender's trace only
        "rtt_ack_samples": pl.Int64,
        "rtt_ack_median_ms": pl.Float64,
        "handshake_captured": pl.Boolean,
    },
    "rtt_samples": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,  # of the data packet: "down" or "up"
        "path": pl.Utf8,
        "frame": pl.UInt32,  # the data packet timed
        "sent_s": pl.Float64,
        "rtt_ms": pl.Float64,
    },
    "ofo_samples": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,  # of the data packet: "down" or "up"
        "path": pl.Utf8,
        "frame": pl.UInt32,
        "arrival_s": pl.Float64,
        "dsn": pl.UInt64,  # data sequence number of the packet's first byte (the sender's numbering)
        "ofo_delay_ms": pl.Float64,
    },
    # Time-sequence graphs (pipeline/seqgraph.py): per trace, one row per data packet
    # and one per ACK that moved its subflow's cumulative ACK forward.
    "seq_packets": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,  # of the data (an ACK row: of the data it acknowledges)
        "frame": pl.UInt32,
        "time_s": pl.Float64,
        "ssn_rel": pl.Int64,  # data row: subflow sequence number of its first byte (first data byte = 1)
        "ack_rel": pl.Int64,  # ACK row: the new cumulative ACK (next byte expected, same numbering)
        "data_ack_rel": pl.Int64,  # ACK row: the new DATA_ACK (next data byte expected, dsn_rel's numbering)
        "payload_bytes": pl.UInt32,  # 0 on ACK rows
        "dsn_rel": pl.Int64,  # data sequence number of its first byte from the sender's IDSN (first byte = 1)
        "retransmission": pl.Boolean,  # below what its subflow had already carried
        "reinjection": pl.Boolean,  # bytes another subflow carried earlier in this trace
    },
    # Bytes received per second (the receiver's trace: client for "down", server for
    # "up"), per subflow: the throughput-over-time of iperf-style protocols and figures.
    "delivered_1s": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,  # of the data: "down" or "up"
        "path": pl.Utf8,
        "second": pl.Int32,  # whole seconds since the connection's first SYN (0: [0, 1) s)
        "payload_bytes": pl.Int64,  # new data received in that second (retransmissions left out)
        "packets": pl.Int64,  # data packets received in that second (retransmissions included)
    },
    # One-way delay (pipeline/owd.py): a run with both ends' traces, one row per data
    # packet found in both (sent once, seen once at each end).
    "owd_samples": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,  # the sender's trace (server's for "down"); its ids and frame
        "recv_trace": pl.Utf8,  # the receiver's trace
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,  # "down" (server -> client) or "up"
        "path": pl.Utf8,
        "frame": pl.UInt32,
        "recv_frame": pl.UInt32,
        "sent_s": pl.Float64,
        "raw_ms": pl.Float64,  # receiver's timestamp minus sender's, as captured
        "owd_ms": pl.Float64,  # raw_ms corrected by the clocks' offset (null: offset unknown)
        "clock_offset_ms": pl.Float64,  # client clock minus server clock (0 on one host)
        "clock": pl.Utf8,  # how the offset was found: "one host", "estimated: ...", "unknown: ..."
    },
    "app_latency": {
        "run_id": pl.Utf8,
        "flow": pl.Int32,
        "seq": pl.Int64,
        "size_bytes": pl.Int32,
        "sent_s": pl.Float64,
        "received_s": pl.Float64,
        "delay_ms": pl.Float64,
    },
    "link_truth": {
        "run_id": pl.Utf8,
        "path": pl.Utf8,
        "direction": pl.Utf8,  # "down" (server -> client) or "up"
        "packet_id": pl.Int64,
        "size_bytes": pl.Int32,
        "arrival_s": pl.Float64,
        "departure_s": pl.Float64,  # null when dropped
        "dropped": pl.Boolean,
        "reason": pl.Utf8,  # null, or why it was dropped: "loss", "queue", "outage"
        # transmissions on the emulated link: 1 + link-layer retransmissions when forwarded
        # (1 = none), 1 + retries for a loss drop with llr (1 without), 0 for queue/outage
        # drops; null in logs written before linkem counted them
        "attempts": pl.Int32,
    },
    "problems": {
        "run_id": pl.Utf8,
        "source": pl.Utf8,  # the file the problem is about
        "stage": pl.Utf8,  # extract, metrics, load
        "reason": pl.Utf8,
    },
}

_SQL_TYPES = {
    pl.Utf8: "VARCHAR",
    pl.Boolean: "BOOLEAN",
    pl.Float64: "DOUBLE",
    pl.Int8: "TINYINT",
    pl.Int32: "INTEGER",
    pl.Int64: "BIGINT",
    pl.UInt8: "UTINYINT",
    pl.UInt16: "USMALLINT",
    pl.UInt32: "UINTEGER",
    pl.UInt64: "UBIGINT",
}


def sql_type(dtype) -> str:
    return _SQL_TYPES[dtype]


def ddl(table: str) -> str:
    """CREATE TABLE statement for one of ``TABLES``."""
    cols = ", ".join(f'"{c}" {_SQL_TYPES[t]}' for c, t in TABLES[table].items())
    return f'CREATE TABLE "{table}" ({cols})'


def empty(table: str) -> pl.DataFrame:
    return pl.DataFrame(schema=TABLES[table])


def legacy_direction(table: str, df: pl.DataFrame) -> pl.DataFrame:
    """A table written before ``direction`` existed held downloads only: say so."""
    if table in DIRECTION_TABLES and "direction" not in df.columns:
        return df.with_columns(direction=pl.lit("down"))
    return df


def concat(frames: list[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame | pl.LazyFrame:
    """One table's rows from several traces: held, or over a spill when any is."""
    if all(isinstance(f, pl.DataFrame) for f in frames):
        return pl.concat(frames)
    return pl.concat([f.lazy() for f in frames])


def rows(frame: pl.DataFrame | pl.LazyFrame) -> int:
    """A table's rows, held or over a spill."""
    return frame.height if isinstance(frame, pl.DataFrame) else frame.select(pl.len()).collect().item()


def conform(table: str, df: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """Select and cast ``df`` to the table's schema, adding missing columns as nulls."""
    schema = TABLES[table]
    have = df.collect_schema().names()
    return df.select(
        [
            (pl.col(c) if c in have else pl.lit(None)).cast(t).alias(c)
            for c, t in schema.items()
        ]
    )
