"""Every table the lab writes, in one place: its columns and their types (``TABLES``),
and what each table and column holds (``TABLE_DOCS``, ``COLUMN_DOCS``: the DuckDB
comments the store writes, and ``python -m pipeline describe``).

One list (``PACKET_FIELDS`` in ``fields``: tshark field -> column, type) drives both decoders (the
native one in ``pipeline/pcapdecode`` and tshark's ``-e`` arguments), the packets
Parquet schema and the DuckDB DDL, so adding a field is one line (plus, for a field
the native decoder does not produce yet, its source in ``pcapdecode/src/decoder.rs`` and its
column in ``pcapdecode/src/decoder/columns.rs``). Adding a column to ``TABLES`` is two
lines: its type, and its description in ``COLUMN_DOCS``.
Units are in column names (``_s`` seconds, ``_ms`` milliseconds, ``_bytes``, ``_pct``)
and, for every column, at the end of its description (``[ms]``; ``UNITS``).
Times ending in ``_s`` without another qualifier are Unix epoch seconds.
"""
from __future__ import annotations

import re

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
# Tables that per-run Parquet folders written before them (the committed data/reference
# among them) lack: such a folder reads them as empty (store.read_tables) and the workflow
# requires them of no folder (rules/labflow.py TABLE_NAMES); `tables` writes them all.
OPTIONAL_TABLES = ("run_labels",)

# Each table's columns, in order, and their types; what they hold: ``COLUMN_DOCS`` below.
TABLES: dict[str, dict[str, pl.DataType]] = {
    "runs": {
        "run_id": pl.Utf8,
        "campaign": pl.Utf8,
        "study": pl.Utf8,
        "scenario": pl.Utf8,
        "mode": pl.Utf8,
        "congestion_control": pl.Utf8,
        "scheduler": pl.Utf8,
        "primary_path": pl.Utf8,
        "size_bytes": pl.Int64,
        "workload": pl.Utf8,
        "repetition": pl.Int32,
        "started_at": pl.Utf8,
        "stalled": pl.Boolean,
        "worst_late_ms": pl.Float64,
        "late_packets": pl.Int64,
        "late_intervals": pl.Int64,
        "worst_reader_lag_ms": pl.Float64,
        "steal_pct": pl.Float64,
        "host_busy_pct": pl.Float64,
        "run_cpu_s": pl.Float64,
        "host_others_pct": pl.Float64,
        "attempt": pl.Int32,
        "scale": pl.Utf8,
        "campaign_seed": pl.Int64,
        "duration_s": pl.Float64,
        "buffer_bytes": pl.Int64,
        "complete": pl.Boolean,
        "app_sent_packets": pl.Int64,
        "app_schedule_packets": pl.Int64,
        "app_schedule_sha256": pl.Utf8,
        "app_drained": pl.Boolean,
        "host": pl.Utf8,
        "kernel_release": pl.Utf8,
        "linkem_build": pl.Utf8,
        "repo_commit": pl.Utf8,
        "unplug_path": pl.Utf8,
        "unplug_at_s": pl.Float64,
        "replug_at_s": pl.Float64,
        "rcvbuf_mean_bytes": pl.Float64,
        "rcvbuf_max_bytes": pl.Int64,
        "rcvbuf_used_mean_bytes": pl.Float64,
        "rcvbuf_samples": pl.Int64,
        "sndbuf_mean_bytes": pl.Float64,
        "meta_json": pl.Utf8,
    },
    "run_paths": {
        "run_id": pl.Utf8,
        "path": pl.Utf8,
        "direction": pl.Utf8,
        "delay_ms": pl.Float64,
        "rate_mbit": pl.Float64,
        "loss": pl.Float64,
        "queue_bytes": pl.Int64,
        "outages": pl.Int32,
        "client_addr": pl.Utf8,
        "profile": pl.Utf8,
    },
    "run_outages": {
        "run_id": pl.Utf8,
        "path": pl.Utf8,
        "direction": pl.Utf8,
        "down_s": pl.Float64,
        "up_s": pl.Float64,
    },
    "run_labels": {
        "run_id": pl.Utf8,
        "key": pl.Utf8,
        "value": pl.Utf8,
        "origin": pl.Utf8,
        "overrides": pl.Utf8,
    },
    "connections": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "vantage": pl.Utf8,
        "conn_id": pl.Int32,
        "direction": pl.Utf8,
        "transport": pl.Utf8,
        "mptcp_version": pl.Int8,
        "client_addr": pl.Utf8,
        "server_addr": pl.Utf8,
        "server_port": pl.Int32,
        "n_subflows": pl.Int32,
        "payload_bytes": pl.Int64,
        "start_s": pl.Float64,
        "download_time_s": pl.Float64,
        "handshake_captured": pl.Boolean,
    },
    "subflows": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "vantage": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,
        "path": pl.Utf8,
        "client_addr": pl.Utf8,
        "client_port": pl.Int32,
        "server_addr": pl.Utf8,
        "server_port": pl.Int32,
        "is_primary": pl.Boolean,
        "start_s": pl.Float64,
        "data_packets": pl.Int64,
        "retransmitted_packets": pl.Int64,
        "loss_rate": pl.Float64,
        "payload_bytes": pl.Int64,
        "traffic_share": pl.Float64,
        "rtt_samples": pl.Int64,
        "rtt_min_ms": pl.Float64,
        "rtt_mean_ms": pl.Float64,
        "rtt_median_ms": pl.Float64,
        "rtt_max_ms": pl.Float64,
        "rtt_ack_samples": pl.Int64,
        "rtt_ack_median_ms": pl.Float64,
        "handshake_captured": pl.Boolean,
    },
    "rtt_samples": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,
        "path": pl.Utf8,
        "frame": pl.UInt32,
        "sent_s": pl.Float64,
        "rtt_ms": pl.Float64,
    },
    "ofo_samples": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,
        "path": pl.Utf8,
        "frame": pl.UInt32,
        "arrival_s": pl.Float64,
        "dsn": pl.UInt64,
        "ofo_delay_ms": pl.Float64,
    },
    "seq_packets": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,
        "frame": pl.UInt32,
        "time_s": pl.Float64,
        "ssn_rel": pl.Int64,
        "ack_rel": pl.Int64,
        "data_ack_rel": pl.Int64,
        "payload_bytes": pl.UInt32,
        "dsn_rel": pl.Int64,
        "retransmission": pl.Boolean,
        "reinjection": pl.Boolean,
    },
    "delivered_1s": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,
        "path": pl.Utf8,
        "second": pl.Int32,
        "payload_bytes": pl.Int64,
        "packets": pl.Int64,
    },
    "owd_samples": {
        "run_id": pl.Utf8,
        "trace": pl.Utf8,
        "recv_trace": pl.Utf8,
        "conn_id": pl.Int32,
        "subflow_id": pl.Int32,
        "direction": pl.Utf8,
        "path": pl.Utf8,
        "frame": pl.UInt32,
        "recv_frame": pl.UInt32,
        "sent_s": pl.Float64,
        "raw_ms": pl.Float64,
        "owd_ms": pl.Float64,
        "clock_offset_ms": pl.Float64,
        "clock": pl.Utf8,
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
        "direction": pl.Utf8,
        "packet_id": pl.Int64,
        "size_bytes": pl.Int32,
        "arrival_s": pl.Float64,
        "departure_s": pl.Float64,
        "dropped": pl.Boolean,
        "reason": pl.Utf8,
        "attempts": pl.Int32,
    },
    "problems": {
        "run_id": pl.Utf8,
        "source": pl.Utf8,
        "stage": pl.Utf8,
        "reason": pl.Utf8,
    },
}

# --------------------------------------------------------------- descriptions
# What each table and column holds: data, not comments, so that the store writes them
# into every DuckDB file (COMMENT ON, pipeline/migrate.py) and `describe` shows them.
# Keyed as ``TABLES`` (tests/test_describe.py holds the two the same). A column's
# description ends with its unit in brackets, one of ``UNITS``; a unit in the column's
# name (``NAME_UNITS``) is that one.

UNITS: dict[str, str] = {
    "ms": "milliseconds",
    "s": "seconds: a duration, or seconds since the moment the description names",
    "Unix s": "seconds since 1970-01-01 00:00 UTC (a capture's clock)",
    "ISO time": "a date and time, ISO 8601 text",
    "bytes": "bytes",
    "Mbit/s": "megabits (10^6 bits) per second",
    "%": "percent, 0 to 100",
    "fraction": "a ratio, 0 to 1 (a probability, a share)",
    "count": "how many (packets, samples, ...)",
    "seqno": "a sequence number: bytes counted from the description's origin",
    "number": "a dimensionless number (a version, a port, a seed, an ordinal)",
    "id": "an identifier: compared, never computed with",
    "label": "one of a few names (the description lists them)",
    "address": "an IP address",
    "file": "a file's path",
    "text": "free text",
    "flag": "true or false",
    "JSON": "a JSON document",
}

# The units a column name's ending states: such a column's description says that unit.
NAME_UNITS: dict[str, tuple[str, ...]] = {
    "_ms": ("ms",), "_s": ("s", "Unix s"), "_bytes": ("bytes",), "_pct": ("%",), "_mbit": ("Mbit/s",),
    "_packets": ("count",), "_samples": ("count",),
}

_RUN_ID = "the run: meta.json run_id, else its folder's name (a loose pcap: its file name's stem) [id]"
_TRACE = "the pcap the row was measured on, as an absolute path [file]"
_VANTAGE = "whose capture the trace is: 'client' or 'server' [label]"
_CONN_ID = "the MPTCP (or TCP) connection, numbered within its trace [id]"
_SUBFLOW_ID = "the subflow within its trace: tshark's tcp.stream [id]"
_DIRECTION = "which way the data went: 'down' (server -> client) or 'up' (client -> server) [label]"
_DATA_DIRECTION = "of the data packet: 'down' (server -> client) or 'up' (client -> server) [label]"
_PATH = "the path's label (meta.json paths or --path, else the client address), e.g. 'wifi', 'lte' [label]"
_CONFIGURED_PATH = "the emulated path's label (meta.json paths), e.g. 'wifi', 'lte' [label]"
_FRAME = "the packet's frame number in the trace (tshark's: 1 = first) [id]"
_PAYLOAD = "payload in this direction, retransmissions included [bytes]"

TABLE_DOCS: dict[str, str] = {
    "runs": "One row per run: its configuration (meta.json) and the host's health while it ran.",
    "run_paths": "One row per run, emulated path and direction: the link's configured delay, rate, loss, "
                 "queue and outages (meta.json paths).",
    "run_outages": "One row per link outage scheduled on purpose (handover runs; meta.json paths' outages).",
    "run_labels": "One row per run and label a researcher gave it (--label KEY=VALUE, --labels FILE.csv, "
                  "meta.json labels): what compare --by KEY groups runs by.",
    "connections": "One row per connection, trace and data direction (a connection that carried no data: one "
                   "'down' row): transport, addresses, payload, start and completion time.",
    "subflows": "One row per subflow, trace and data direction (a subflow that carried no data: one 'down' "
                "row): path, packets, bytes, loss (the sender's trace) and RTT statistics.",
    "rtt_samples": "One row per RTT sample: a data packet of the sender's trace, never retransmitted (Karn), "
                   "timed to the first ACK that covers it.",
    "ofo_samples": "One row per data packet of the receiver's trace: its out-of-order delay, from arrival "
                   "until every earlier data byte had arrived on any subflow.",
    "seq_packets": "Time-sequence graph rows, per trace: one per data packet and one per ACK that moved its "
                   "subflow's cumulative ACK or the connection's DATA_ACK forward.",
    "delivered_1s": "Bytes and packets received per second since the connection's first SYN, per subflow and "
                    "direction (the receiver's trace).",
    "owd_samples": "One-way delay: one row per data packet found in both of a run's traces (the copies of a segment "
                    "sent more than once told apart by their IP ID; copies that cannot be are left out).",
    "app_latency": "One row per packet D-ITG's receiver logged (ITGDec): send and receive times and the "
                   "application's one-way delay.",
    "link_truth": "The link emulator's own log (linkem-<path>.csv): one row per frame it received, forwarded "
                  "or dropped and why.",
    "problems": "One row per problem met with an input: the file, the stage and the reason.",
}

COLUMN_DOCS: dict[str, dict[str, str]] = {
    "runs": {
        "run_id": _RUN_ID,
        "campaign": "the campaign it belongs to (meta.json campaign) [label]",
        "study": "the paper or study its campaign belongs to (meta.json study; null when absent) [label]",
        "scenario": "the campaign's scenario: the conditions and settings it ran under [label]",
        "mode": "what carried the data: 'SP-wifi', 'SP-lte' (single-path TCP), 'MP-2', 'MP-3' (MPTCP over "
                "2 or 3 paths), 'MP-4' (2 paths, 4 subflows) or 'backup' (MPTCP, the second path a backup "
                "subflow) [label]",
        "congestion_control": "the congestion control (e.g. 'reno', 'cubic', 'lia', 'olia') [label]",
        "scheduler": "the MPTCP packet scheduler [label]",
        "primary_path": "the path the first subflow was opened on [label]",
        "size_bytes": "the file or flow size the workload transferred (null for timed workloads) [bytes]",
        "workload": "what made the traffic: 'http' (a download), 'iperf3-up', 'iperf3-down', "
                    "'ditg-<profile>' [label]",
        "repetition": "the repetition of its configuration within the campaign [number]",
        "started_at": "when the run started (meta.json started_at) [ISO time]",
        "stalled": "the link emulator sent a frame later than the campaign's stall threshold (5 ms): the path's "
                   "delay was not the configured one (null: not recorded, e.g. tbf links) [flag]",
        "worst_late_ms": "the link emulator's worst departure lateness, all paths and directions [ms]",
        "late_packets": "frames the link emulator sent more than 1 ms later than scheduled [count]",
        "late_intervals": "runs of consecutive late frames, per path and direction [count]",
        "worst_reader_lag_ms": "the worst delay between a frame's arrival and the link emulator reading it [ms]",
        "steal_pct": "host CPU time stolen (by a hypervisor) during the run, of all CPUs' time [%]",
        "host_busy_pct": "host CPU busy (neither idle nor stolen) during the run, of all CPUs' time [%]",
        "run_cpu_s": "CPU time of the run's own processes (emulators, tcpdump, workload) [s]",
        "host_others_pct": "host CPU busy with work other than the run's own processes: host_busy_pct minus the "
                           "run's CPU share of all CPUs, at least 0; kernel work for the run's packets "
                           "(softirq) may count here, so it bounds the other work from above [%]",
        "attempt": "1, or 2, 3, ... when earlier attempts were repeated after a stall [number]",
        "scale": "the campaign's scale: 'quick', 'standard' or 'paper' (null: a run made alone) [label]",
        "campaign_seed": "the campaign's random seed [number]",
        "duration_s": "a timed workload's length (D-ITG, iperf3) [s]",
        "buffer_bytes": "the receive buffer tested: meta.json buffer_bytes, else the applied net.ipv4.tcp_rmem's "
                        "maximum, else net.core.rmem_max or the sysctl profile's buffer [bytes]",
        "complete": "false: a D-ITG test that did not generate and deliver its whole schedule "
                    "(meta.json result.complete) [flag]",
        "app_sent_packets": "packets the application generated (meta.json result.sent_packets) [count]",
        "app_schedule_packets": "packets of D-ITG's replayed schedule (meta.json result.schedule_packets) [count]",
        "app_schedule_sha256": "SHA-256 of D-ITG's schedule files: the same for TCP and MPTCP of a "
                               "repetition [id]",
        "app_drained": "every generated packet was received before the drain limit (meta.json "
                       "result.drained) [flag]",
        "host": "the machine it was captured on (meta.json builds.host, else host.hostname) [id]",
        "kernel_release": "the kernel it ran on (meta.json builds.kernel) [id]",
        "linkem_build": "content hash of the link emulator's build (meta.json builds.linkem_sha256) [id]",
        "repo_commit": "the lab's git commit (meta.json tools.repo_commit) [id]",
        "unplug_path": "the path whose client interface was unplugged during the run (meta.json unplug, its "
                       "first event; null: none) [label]",
        "unplug_at_s": "when that interface was unplugged, since the workload's start [s]",
        "replug_at_s": "when it was plugged back, since the workload's start (null: not during the run) [s]",
        "rcvbuf_mean_bytes": "client: mean receive buffer size of the main connection's MPTCP-level (or TCP) "
                             "socket over its samples (ss skmem rb) [bytes]",
        "rcvbuf_max_bytes": "client: largest receive buffer size sampled [bytes]",
        "rcvbuf_used_mean_bytes": "client: mean receive memory in use (ss skmem r) [bytes]",
        "rcvbuf_samples": "client: socket samples taken (meta.json socket_buffers) [count]",
        "sndbuf_mean_bytes": "server: mean send buffer size (ss skmem tb) [bytes]",
        "meta_json": "the whole meta.json, for the fields not lifted into columns [JSON]",
    },
    "run_paths": {
        "run_id": _RUN_ID,
        "path": _CONFIGURED_PATH,
        "direction": _DIRECTION,
        "delay_ms": "configured one-way delay in this direction [ms]",
        "rate_mbit": "configured rate (null: none configured, e.g. a delivery trace instead) [Mbit/s]",
        "loss": "configured mean loss probability (Gilbert-Elliott: the stationary mix of its two states); "
                "0 when none [fraction]",
        "queue_bytes": "configured queue size [bytes]",
        "outages": "outages scheduled in this direction (rows of run_outages) [count]",
        "client_addr": "the client's address on this path [address]",
        "profile": "the link profile's name (meta.json link_profiles) [label]",
    },
    "run_outages": {
        "run_id": _RUN_ID,
        "path": _CONFIGURED_PATH,
        "direction": _DIRECTION,
        "down_s": "when the link went down, since the link emulator's start (about the first SYN) [s]",
        "up_s": "when it came back, since the link emulator's start [s]",
    },
    "run_labels": {
        "run_id": _RUN_ID,
        "key": "the label's name, an identifier (e.g. 'cc', 'site'): what compare --by KEY groups by [label]",
        "value": "the label's value for this run (e.g. 'lia', 'lab1') [text]",
        "origin": "where it was given: '--label' (every run of the call), '--labels' (the run's row of the "
                  "call's labels file) or 'meta.json' (its labels object) [label]",
        "overrides": "meta.json's value for this key, which the command line's replaced (null: meta.json gave "
                     "none, or this row is meta.json's) [text]",
    },
    "connections": {
        "run_id": _RUN_ID,
        "trace": _TRACE,
        "vantage": _VANTAGE,
        "conn_id": _CONN_ID,
        "direction": _DIRECTION,
        "transport": "'mptcp' or 'tcp' [label]",
        "mptcp_version": "the MPTCP version its MP_CAPABLE options carry (null: plain TCP) [number]",
        "client_addr": "the client's address of its primary subflow [address]",
        "server_addr": "the server's address of its primary subflow [address]",
        "server_port": "the server's TCP port [number]",
        "n_subflows": "its subflows seen in this trace [count]",
        "payload_bytes": _PAYLOAD,
        "start_s": "its first SYN (or first packet when the SYN was not captured) [Unix s]",
        "download_time_s": "first SYN -> last data packet received, on the receiver's trace only (the client's "
                           "for 'down': the download time; the server's for 'up': the upload's completion "
                           "time); null elsewhere or without the SYN [s]",
        "handshake_captured": "its primary subflow's SYN and SYN/ACK were both captured [flag]",
    },
    "subflows": {
        "run_id": _RUN_ID,
        "trace": _TRACE,
        "vantage": _VANTAGE,
        "conn_id": _CONN_ID,
        "subflow_id": _SUBFLOW_ID,
        "direction": _DIRECTION,
        "path": _PATH,
        "client_addr": "the client's address [address]",
        "client_port": "the client's TCP port [number]",
        "server_addr": "the server's address [address]",
        "server_port": "the server's TCP port [number]",
        "is_primary": "the subflow that opened the connection [flag]",
        "start_s": "its SYN (or first packet when the SYN was not captured) [Unix s]",
        "data_packets": "packets with payload in this direction, retransmissions included [count]",
        "retransmitted_packets": "data packets that start below the highest sequence number the subflow had "
                                 "already sent that way [count]",
        "loss_rate": "retransmitted_packets / data_packets, on the sender's trace only (the server's for "
                     "'down', the client's for 'up'); null elsewhere [fraction]",
        "payload_bytes": _PAYLOAD,
        "traffic_share": "its payload_bytes over its connection's in this direction [fraction]",
        "rtt_samples": "RTT samples of its data (its rows of rtt_samples), on the sender's trace only [count]",
        "rtt_min_ms": "smallest of its RTT samples [ms]",
        "rtt_mean_ms": "mean of its RTT samples [ms]",
        "rtt_median_ms": "median of its RTT samples [ms]",
        "rtt_max_ms": "largest of its RTT samples [ms]",
        "rtt_ack_samples": "per-ACK RTT samples (tshark's ack_rtt: each ACK that moved its cumulative ACK "
                           "times the last segment, SYN or FIN it covers), on the sender's trace only [count]",
        "rtt_ack_median_ms": "median of its per-ACK RTT samples [ms]",
        "handshake_captured": "its SYN and SYN/ACK were both captured [flag]",
    },
    "rtt_samples": {
        "run_id": _RUN_ID,
        "trace": _TRACE,
        "conn_id": _CONN_ID,
        "subflow_id": _SUBFLOW_ID,
        "direction": _DATA_DIRECTION,
        "path": _PATH,
        "frame": "the data packet timed: its frame number in the sender's trace [id]",
        "sent_s": "when the data packet was sent (the sender's capture time) [Unix s]",
        "rtt_ms": "from the data packet to the first ACK whose cumulative acknowledgement covers it [ms]",
    },
    "ofo_samples": {
        "run_id": _RUN_ID,
        "trace": _TRACE,
        "conn_id": _CONN_ID,
        "subflow_id": _SUBFLOW_ID,
        "direction": _DATA_DIRECTION,
        "path": _PATH,
        "frame": "the data packet: its frame number in the receiver's trace [id]",
        "arrival_s": "when it arrived (the receiver's capture time) [Unix s]",
        "dsn": "data sequence number of its first byte, in the sender's (absolute) numbering [seqno]",
        "ofo_delay_ms": "from its arrival until its data was in order (every earlier data byte arrived): 0 when "
                        "in order on arrival, null when never within the trace [ms]",
    },
    "seq_packets": {
        "run_id": _RUN_ID,
        "trace": _TRACE,
        "conn_id": _CONN_ID,
        "subflow_id": _SUBFLOW_ID,
        "direction": "of the data; an ACK row: of the data it acknowledges ('down' or 'up') [label]",
        "frame": _FRAME,
        "time_s": "the packet's capture time [Unix s]",
        "ssn_rel": "data row: subflow sequence number of its first byte (first data byte = 1); null on ACK "
                   "rows [seqno]",
        "ack_rel": "ACK row: the new cumulative ACK (next byte expected, ssn_rel's numbering); null when it "
                   "did not move [seqno]",
        "data_ack_rel": "ACK row: the new DATA_ACK (next data byte expected, dsn_rel's numbering); null when "
                        "it did not move [seqno]",
        "payload_bytes": "the packet's payload; 0 on ACK rows [bytes]",
        "dsn_rel": "data row: data sequence number of its first byte from the sender's IDSN (first data "
                   "byte = 1); null without a DSS mapping [seqno]",
        "retransmission": "data row: it starts below what its subflow had already carried [flag]",
        "reinjection": "data row: its bytes were carried earlier in this trace by another subflow [flag]",
    },
    "delivered_1s": {
        "run_id": _RUN_ID,
        "trace": _TRACE,
        "conn_id": _CONN_ID,
        "subflow_id": _SUBFLOW_ID,
        "direction": "of the data: 'down' (server -> client) or 'up' (client -> server) [label]",
        "path": _PATH,
        "second": "whole seconds since the connection's first SYN (0: [0, 1) s) [s]",
        "payload_bytes": "new data received in that second (retransmissions left out) [bytes]",
        "packets": "data packets received in that second (retransmissions included) [count]",
    },
    "owd_samples": {
        "run_id": _RUN_ID,
        "trace": "the sender's trace (the server's for 'down'): conn_id, subflow_id and frame are "
                 "its [file]",
        "recv_trace": "the receiver's trace [file]",
        "conn_id": _CONN_ID,
        "subflow_id": _SUBFLOW_ID,
        "direction": _DIRECTION,
        "path": _PATH,
        "frame": "the packet's frame number in the sender's trace [id]",
        "recv_frame": "its frame number in the receiver's trace [id]",
        "sent_s": "when it was sent (the sender's capture time) [Unix s]",
        "raw_ms": "the receiver's capture time minus the sender's, as captured [ms]",
        "owd_ms": "raw_ms corrected by the clocks' offset (null: offset unknown) [ms]",
        "clock_offset_ms": "the client's clock minus the server's (0 on one host) [ms]",
        "clock": "how the offset was found: 'one host', 'estimated: ...' or 'unknown: ...'; 'implausible: ...' "
                 "when the delays cannot be one-way delays (owd_ms empty) [label]",
    },
    "app_latency": {
        "run_id": _RUN_ID,
        "flow": "D-ITG's flow number [id]",
        "seq": "the packet's sequence number within its flow [id]",
        "size_bytes": "the packet's size as D-ITG logs it [bytes]",
        "sent_s": "when ITGSend sent it [Unix s]",
        "received_s": "when ITGRecv received it [Unix s]",
        "delay_ms": "received_s minus sent_s: the application's one-way delay [ms]",
    },
    "link_truth": {
        "run_id": _RUN_ID,
        "path": _CONFIGURED_PATH,
        "direction": _DIRECTION,
        "packet_id": "the frame's arrival number, per direction, from 0 [id]",
        "size_bytes": "the Ethernet frame's length [bytes]",
        "arrival_s": "when the emulator received it (kernel receive time) [Unix s]",
        "departure_s": "when the emulator sent it on (null when dropped) [Unix s]",
        "dropped": "the emulator dropped it [flag]",
        "reason": "why it was dropped: 'loss', 'queue' or 'outage' (null: forwarded) [label]",
        "attempts": "transmissions on the emulated link: 1 + link-layer retransmissions when forwarded, "
                    "1 + retries for a loss drop with link-layer retransmission (1 without), 0 for queue and "
                    "outage drops; null in logs written before linkem counted them [count]",
    },
    "problems": {
        "run_id": _RUN_ID,
        "source": "the file the problem is about [file]",
        "stage": "where it was met: 'extract', 'metrics' or 'load' [label]",
        "reason": "what is wrong, in a sentence [text]",
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


_UNIT = re.compile(r"\s\[([^\[\]]+)\]$")


def unit(description: str) -> str:
    """The unit a column's description ends with (``[ms]``: 'ms'); '' when it names none."""
    m = _UNIT.search(description or "")
    return m.group(1) if m else ""


def meaning(description: str) -> str:
    """A column's description without its unit."""
    return _UNIT.sub("", description or "")


def comments() -> list[tuple[str, str | None, str]]:
    """``(table, column, description)`` of every table (column None) and column of
    ``TABLES`` that has one: the comments the store writes into a DuckDB file."""
    out: list[tuple[str, str | None, str]] = []
    for t, cols in TABLES.items():
        if TABLE_DOCS.get(t):
            out.append((t, None, TABLE_DOCS[t]))
        docs = COLUMN_DOCS.get(t, {})
        out += [(t, c, docs[c]) for c in cols if docs.get(c)]
    return out


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
