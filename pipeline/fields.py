"""The packets table's fields (tshark field -> column, type: the one list both decoders
read; ``schema`` builds the polars schema from it) and the names of a run's traces. No
polars here: ``inputs`` starts the native decoder with them before the interpreter has
imported polars."""
from __future__ import annotations

from dataclasses import dataclass


# Who captured a trace: the paper's metrics each name theirs (Chen §3.3).
VANTAGES = ("client", "server")
SYN, ACK, FIN, RST = 0x02, 0x10, 0x01, 0x04  # the TCP flags of the tcp_flags field


@dataclass(frozen=True)
class Field:
    tshark: str  # tshark display-filter field name; also names the native decoder's value
    column: str  # column in the packets table
    native_type: str  # the column's type as the native decoder names it (schema.NATIVE_DTYPES: polars')
    # A frame may hold a field several times (two MPTCP options, a tunnel's outer and
    # inner IP headers): "first" keeps the first occurrence, "last" the last (the
    # innermost IP header: the TCP segment's), "all" joins them with commas, "dss" the
    # DSS option's (tshark shows MP_FAIL's sequence number in the same field).
    occurrence: str = "first"
    hex: bool = False  # tshark prints it in hex (0x...)
    # (its polars type is ``schema.PACKETS[column]``: polars is not imported here)


# The packets table (one row per TCP frame, in file order). Keys and tokens stay unsigned.
PACKET_FIELDS: list[Field] = [
    Field("frame.number", "frame", "u32"),
    Field("frame.time_epoch", "time_s", "f64"),
    Field("frame.len", "frame_bytes", "u32"),
    # bytes captured of the frame (less than frame_bytes when the snap length cut it):
    # fewer than the headers' bytes means TCP/MPTCP options were lost
    Field("frame.cap_len", "cap_bytes", "u32"),
    Field("ip.src", "ip_src", "str", occurrence="last"),
    Field("ip.dst", "ip_dst", "str", occurrence="last"),
    Field("ipv6.src", "ip6_src", "str", occurrence="last"),
    Field("ipv6.dst", "ip6_dst", "str", occurrence="last"),
    # IPv4 identification and the TCP checksum as sent (not verified): with the time and
    # the other fields they tell an exact duplicate (a capture merged with itself) from
    # a retransmission or a repeated ACK
    Field("ip.id", "ip_id", "u16", occurrence="last", hex=True),
    Field("tcp.stream", "stream", "u32"),
    Field("tcp.srcport", "sport", "u16"),
    Field("tcp.dstport", "dport", "u16"),
    Field("tcp.flags", "tcp_flags", "u16", hex=True),
    Field("tcp.seq", "seq", "u32"),  # absolute: tcp.relative_sequence_numbers:FALSE
    Field("tcp.ack", "ack", "u32"),
    Field("tcp.len", "payload_bytes", "u32"),
    Field("tcp.checksum", "tcp_checksum", "u16", hex=True),
    Field("tcp.options.mptcp.subtype", "mp_subtypes", "str", occurrence="all"),  # e.g. "2,3"
    Field("tcp.options.mptcp.version", "mp_version", "u8"),
    Field("tcp.options.mptcp.sendkey", "mp_sendkey", "u64"),
    Field("tcp.options.mptcp.recvkey", "mp_recvkey", "u64"),
    Field("tcp.options.mptcp.recvtok", "mp_recvtok", "u32"),
    Field("tcp.options.mptcp.dseqnpresent.flag", "mp_map_present", "u8"),
    Field("tcp.options.mptcp.dseqn8.flag", "mp_dsn64", "u8"),
    Field("tcp.options.mptcp.rawdataseqno", "mp_dsn_raw", "u64", occurrence="dss"),
    Field("tcp.options.mptcp.subflowseqno", "mp_ssn", "u32"),
    Field("tcp.options.mptcp.datalvllen", "mp_map_len", "u16"),
    Field("tcp.options.mptcp.datafin.flag", "mp_data_fin", "u8"),
    Field("tcp.options.mptcp.backup.flag", "mp_backup", "u8"),
    Field("tcp.options.mptcp.dataack8.flag", "mp_dack64", "u8"),
    Field("tcp.options.mptcp.rawdataack", "mp_dack_raw", "u64"),
]
