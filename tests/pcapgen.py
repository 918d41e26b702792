"""Small pcaps with scapy, for tests whose expected values are known by construction.

A ``Subflow`` knows its endpoints and ISNs and makes packets at given times with
sequence numbers given relative to the ISN (first data byte = 1), so a test reads as
the exchange it describes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from scapy.all import IP, TCP, Ether, IPv6, Raw, wrpcap, wrpcapng
from scapy.layers.l2 import CookedLinux, CookedLinuxV2

from pipeline import mptcp

CLIENT_KEY = 0x0123456789ABCDEF
SERVER_KEY = 0x0FEDCBA987654321


def opt_mp_capable(version: int = 1, sendkey: int | None = None, recvkey: int | None = None) -> tuple:
    body = struct.pack("!BB", (0 << 4) | version, 0x81)
    if sendkey is not None:
        body += struct.pack("!Q", sendkey)
    if recvkey is not None:
        body += struct.pack("!Q", recvkey)
    return (30, body)


def opt_mp_join_syn(token: int, rand: int = 7, addr_id: int = 1) -> tuple:
    return (30, struct.pack("!BBII", 0x10, addr_id, token, rand))


def opt_mp_join_synack(rand: int = 9, addr_id: int = 0) -> tuple:
    return (30, struct.pack("!BBQI", 0x10, addr_id, 0, rand))


def opt_mp_join_ack() -> tuple:
    return (30, struct.pack("!BB", 0x10, 0) + b"\0" * 20)


def opt_dss(data_ack: int | None = None, dsn: int | None = None, ssn: int = 0, length: int = 0,
            dsn64: bool = True) -> tuple:
    flags, body = 0, b""
    if data_ack is not None:
        flags |= 0x03
        body += struct.pack("!Q", data_ack & (2**64 - 1))
    if dsn is not None:
        flags |= 0x04
        if dsn64:
            flags |= 0x08
            body += struct.pack("!Q", dsn & (2**64 - 1))
        else:
            body += struct.pack("!I", dsn & 0xFFFFFFFF)
        body += struct.pack("!IH", ssn, length)
    return (30, struct.pack("!BB", 0x20, flags) + body)


@dataclass
class Subflow:
    client: str
    server: str
    cport: int
    sport: int = 80
    isn_c: int = 1000
    isn_s: int = 50000
    ipv6: bool = False
    packets: list = field(default_factory=list)

    def _pkt(self, t: float, from_client: bool, flags: str, seq: int, ack: int, opts=(), payload: int = 0):
        l3 = IPv6 if self.ipv6 else IP
        src, dst = (self.client, self.server) if from_client else (self.server, self.client)
        sp, dp = (self.cport, self.sport) if from_client else (self.sport, self.cport)
        p = Ether() / l3(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags, seq=seq & 0xFFFFFFFF,
                                                  ack=ack & 0xFFFFFFFF, options=list(opts), window=65535)
        if payload:
            p = p / Raw(b"d" * payload)
        p.time = t
        self.packets.append(p)
        return p

    # handshake
    def syn(self, t, opts=()):
        return self._pkt(t, True, "S", self.isn_c, 0, opts)

    def synack(self, t, opts=()):
        return self._pkt(t, False, "SA", self.isn_s, self.isn_c + 1, opts)

    def ack3(self, t, opts=()):
        return self._pkt(t, True, "A", self.isn_c + 1, self.isn_s + 1, opts)

    # data: relative sequence numbers, first data byte = 1
    def data(self, t, rel_seq: int, length: int, opts=(), client_rel_seq: int = 1):
        return self._pkt(t, False, "PA", self.isn_s + rel_seq, self.isn_c + client_rel_seq, opts, length)

    def request(self, t, length: int = 100, opts=()):
        return self._pkt(t, True, "PA", self.isn_c + 1, self.isn_s + 1, opts, length)

    def ack(self, t, rel_ack: int, opts=(), client_rel_seq: int = 1):
        return self._pkt(t, True, "A", self.isn_c + client_rel_seq, self.isn_s + rel_ack, opts)

    # uploads: the client's data (relative to its ISN) and the server's ACKs of it
    def up(self, t, rel_seq: int, length: int, opts=(), server_rel_seq: int = 1):
        return self._pkt(t, True, "PA", self.isn_c + rel_seq, self.isn_s + server_rel_seq, opts, length)

    def ack_up(self, t, rel_ack: int, opts=(), server_rel_seq: int = 1):
        return self._pkt(t, False, "A", self.isn_s + server_rel_seq, self.isn_c + rel_ack, opts)


def server_idsn(version: int = 1) -> int:
    return mptcp.idsn(SERVER_KEY, version)


def client_idsn(version: int = 1) -> int:
    return mptcp.idsn(CLIENT_KEY, version)


def server_token(version: int = 1) -> int:
    return mptcp.token(SERVER_KEY, version)


def mp_handshake(sf: Subflow, t_syn: float, t_synack: float, t_ack: float, version: int = 1):
    """MP_CAPABLE handshake. v1 (RFC 8684): no key in the SYN, the server's key in
    the SYN/ACK, both in the third ACK; v0 (RFC 6824): the client's key in the SYN too."""
    sf.syn(t_syn, [opt_mp_capable(version, CLIENT_KEY if version == 0 else None)])
    sf.synack(t_synack, [opt_mp_capable(version, SERVER_KEY)])
    sf.ack3(t_ack, [opt_mp_capable(version, CLIENT_KEY, SERVER_KEY)])
    return sf


def tcp_handshake(sf: Subflow, t_syn: float, t_synack: float, t_ack: float):
    sf.syn(t_syn)
    sf.synack(t_synack)
    sf.ack3(t_ack)
    return sf


def join_handshake(sf: Subflow, t_syn: float, t_synack: float, t_ack: float, version: int = 1):
    sf.syn(t_syn, [opt_mp_join_syn(server_token(version))])
    sf.synack(t_synack, [opt_mp_join_synack()])
    sf.ack3(t_ack, [opt_mp_join_ack()])
    return sf


def _relink(p, link: str):
    """Re-wrap an Ethernet frame as Linux cooked capture v1 (SLL) or v2 (SLL2)."""
    if link == "ether":
        return p
    l3 = p.payload
    ethertype = 0x86DD if isinstance(l3, IPv6) else 0x0800
    head = CookedLinux(proto=ethertype) if link == "sll" else CookedLinuxV2(proto=ethertype)
    q = head / l3
    q.time = p.time
    return q


def write(path, *subflows_or_packets, link: str = "ether", fmt: str = "pcap"):
    """Write the packets of ``subflows_or_packets`` in time order."""
    pkts = []
    for x in subflows_or_packets:
        pkts.extend(x.packets if isinstance(x, Subflow) else x)
    pkts = [_relink(p, link) for p in sorted(pkts, key=lambda p: float(p.time))]
    (wrpcapng if fmt == "pcapng" else wrpcap)(str(path), pkts)
    return path
