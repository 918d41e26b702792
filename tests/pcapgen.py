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
    # the next IPv4 identification of each end's packets: one after another, as Linux
    # numbers a TCP socket's (a retransmission's copy gets an ID of its own)
    next_ip_id: dict = field(default_factory=lambda: {True: 100, False: 5000})

    def _pkt(self, t: float, from_client: bool, flags: str, seq: int, ack: int, opts=(), payload: int = 0):
        src, dst = (self.client, self.server) if from_client else (self.server, self.client)
        sp, dp = (self.cport, self.sport) if from_client else (self.sport, self.cport)
        if self.ipv6:
            l3 = IPv6(src=src, dst=dst)
        else:
            l3 = IP(src=src, dst=dst, id=self.next_ip_id[from_client] & 0xFFFF)
            self.next_ip_id[from_client] += 1
        p = Ether() / l3 / TCP(sport=sp, dport=dp, flags=flags, seq=seq & 0xFFFFFFFF,
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


# --- Any link type, pcap or pcapng, written byte by byte -------------------------
# The native decoder is tested against tshark on captures scapy's writers cannot
# make (BSD loopback, PPP, raw IP, big-endian or nanosecond pcap, pcapng with several
# interfaces and time resolutions), so frames are written here from their bytes.

LINKTYPES = {"ether": 1, "vlan": 1, "qinq": 1, "sll": 113, "sll2": 276, "raw": 101, "ipv4": 228,
             "ipv6": 229, "ppp": 9, "null": 0, "null-be": 0, "loop": 108}


def link_frame(p, link: str) -> bytes:
    """The bytes of packet ``p`` (an Ether()/IP... scapy packet) re-wrapped in ``link``."""
    from scapy.layers.l2 import Dot1AD, Dot1Q

    if IP not in p and IPv6 not in p:
        return bytes(p)  # ARP and other non-IP frames: Ethernet only
    l3 = p[IPv6] if IPv6 in p else p[IP]
    v6 = IPv6 in p
    raw = bytes(l3)
    if link == "ether":  # fixed MACs: scapy would otherwise resolve IPv6 neighbours (slow)
        return bytes(Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01") / l3)
    if link == "vlan":
        return bytes(Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01") / Dot1Q(vlan=5) / l3)
    if link == "qinq":
        return bytes(Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01", type=0x88A8) / Dot1AD(vlan=7)
                     / Dot1Q(vlan=5) / l3)
    if link in ("sll", "sll2"):
        return bytes(_relink(p, link))
    if link in ("raw", "ipv4", "ipv6"):
        return raw
    if link == "ppp":
        return b"\xff\x03" + struct.pack("!H", 0x0057 if v6 else 0x0021) + raw
    if link == "null":  # host byte order of a little-endian BSD
        return struct.pack("<I", 30 if v6 else 2) + raw
    if link == "null-be":
        return struct.pack(">I", 24 if v6 else 2) + raw
    if link == "loop":
        return struct.pack(">I", 24 if v6 else 2) + raw
    raise ValueError(link)


def write_pcap_bytes(path, frames, linktype: int, nanosecond: bool = False, big_endian: bool = False,
                     snaplen: int = 262144):
    """Classic pcap of ``frames`` = [(time, bytes, original length or None)]."""
    e = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nanosecond else 0xA1B2C3D4
    out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)]
    for t, data, orig in frames:
        sec = int(t)
        frac = round((t - sec) * (1e9 if nanosecond else 1e6))
        cap = data[:snaplen]
        out.append(struct.pack(e + "IIII", sec, frac, len(cap), orig or len(data)) + cap)
    path.write_bytes(b"".join(out))
    return path


def _pcapng_block(btype: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def write_pcapng_bytes(path, interfaces, frames, snaplen: int = 262144):
    """pcapng with several interfaces: ``interfaces`` = [(linktype, if_tsresol or None)],
    ``frames`` = [(interface index, time, bytes)] (enhanced packet blocks)."""
    out = [_pcapng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    units = []
    for linktype, tsresol in interfaces:
        opts = b""
        if tsresol is not None:
            opts += struct.pack("<HHB", 9, 1, tsresol) + b"\0" * 3
        opts += struct.pack("<HH", 0, 0)
        out.append(_pcapng_block(1, struct.pack("<HHI", linktype, 0, snaplen) + opts))
        tsresol = 6 if tsresol is None else tsresol
        units.append(2 ** (tsresol & 0x7F) if tsresol & 0x80 else 10 ** tsresol)
    for iface, t, data in frames:
        ts = round(t * units[iface])
        cap = data[:snaplen]
        body = struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(cap), len(data)) + cap
        body += b"\0" * (-len(cap) % 4)
        out.append(_pcapng_block(6, body))
    path.write_bytes(b"".join(out))
    return path


def packets_of(*subflows_or_packets) -> list:
    """Packets of subflows (or lists of packets) in time order."""
    pkts = []
    for x in subflows_or_packets:
        pkts.extend(x.packets if isinstance(x, Subflow) else x)
    return sorted(pkts, key=lambda p: float(p.time))


def write_link(path, pkts, link: str, **kw):
    """``pkts`` as a classic pcap of link type ``link`` (see ``LINKTYPES``)."""
    frames = [(float(p.time), link_frame(p, link), None) for p in pkts]
    return write_pcap_bytes(path, frames, LINKTYPES[link], **kw)


# Other MPTCP options (RFC 8684 §3.4-3.6; v0 as RFC 6824 where the layout differs).
def opt_add_addr(addr: str = "10.9.0.2", addr_id: int = 3, hmac: bool = True, version: int = 1) -> tuple:
    low = 0 if version == 1 else 4  # v1: echo flag (0); v0: IP version
    body = struct.pack("!BB", 0x30 | low, addr_id) + bytes(int(x) for x in addr.split("."))
    if hmac and version == 1:
        body += struct.pack("!Q", 0x1122334455667788)
    return (30, body)


def opt_remove_addr(*ids: int) -> tuple:
    return (30, bytes([0x40, *ids]))


def opt_mp_prio(backup: bool, addr_id: int | None = None) -> tuple:
    return (30, bytes([0x50 | int(backup)] + ([] if addr_id is None else [addr_id])))


def opt_mp_fail(dsn: int) -> tuple:
    return (30, struct.pack("!BBQ", 0x60, 0, dsn))


def opt_mp_fastclose(key: int) -> tuple:
    return (30, struct.pack("!BBQ", 0x70, 0, key))


def opt_mp_tcprst(reason: int = 1) -> tuple:
    return (30, struct.pack("!BB", 0x80, reason))
