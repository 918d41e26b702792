#!/usr/bin/env python3
"""Synthesise a large two-path MPTCP download capture for the memory benchmark.

    python benchmarks/make_big_capture.py [--packets 5000000] [--out data/bench/synthetic-5M.pcap]

The server's view of one MPTCP v1 connection (or ``--connections N``, one after another) over two subflows (wifi 10.1.0.2, lte
10.2.0.2 -> 10.100.0.1:80): MP_CAPABLE and MP_JOIN handshakes, then 1448-byte data
segments alternating between the subflows, each with a 64-bit DSS mapping, and an ACK
with a DATA_ACK every second segment; snap length 128 bytes (headers kept, payload
cut, as the testbed's captures). Written with struct, not scapy: 5M packets take
about half a minute. The file (~700 MB) is not committed (data/bench/ is git-ignored).
"""
from __future__ import annotations

import argparse
import hashlib
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAP = 128
MSS = 1448


def ip_sum(h: bytes) -> int:
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(src: str, dst: str, sport: int, dport: int, flags: int, opts: bytes, payload: int) -> bytearray:
    """Ethernet + IPv4 + TCP (+ options), ``payload`` bytes on the wire (not written)."""
    opts += b"\x01" * (-len(opts) % 4)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 0, 0, (20 + len(opts)) // 4 << 4, flags, 65535, 0, 0) + opts
    total = 20 + len(tcp) + payload
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0,
                               bytes(map(int, src.split("."))), bytes(map(int, dst.split(".")))))
    struct.pack_into("!H", ip, 10, ip_sum(bytes(ip)))
    return bytearray(b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00") + ip + tcp


def dss(ack: int | None, dsn: int | None, ssn: int = 0, length: int = 0) -> bytes:
    flags, body = 0, b""
    if ack is not None:
        flags |= 0x03
        body += struct.pack("!Q", ack)
    if dsn is not None:
        flags |= 0x0C
        body += struct.pack("!QIH", dsn, ssn, length)
    return struct.pack("!BBBB", 30, 4 + len(body), 0x20, flags) + body


SRV = "10.100.0.1"
BASE_PATHS = [("10.1.0.2", 20001), ("10.2.0.2", 20002)]  # wifi, lte
BASE_KEYS = (0x0123456789ABCDEF, 0x0FEDCBA987654321)
T0 = 1_700_000_000.0


class _Pcap:
    """The capture being written: its file and the packets written so far."""

    def __init__(self, f) -> None:
        self.f = f
        self.n = 0

    def put(self, t: float, fr: bytearray | bytes, wire: int | None = None) -> None:
        """``wire``: the frame's length on the wire (None: the frame as built, no payload)."""
        wire = len(fr) if wire is None else wire
        sec = int(t)
        cap = bytes(fr[:SNAP])
        self.f.write(struct.pack("<IIII", sec, int((t - sec) * 1e6), len(cap), wire) + cap)
        self.n += 1


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=5_000_000)
    ap.add_argument("--out", type=Path, default=REPO / "data" / "bench" / "synthetic-5M.pcap")
    ap.add_argument("--connections", type=int, default=1,
                    help="connections, one after another, sharing the packets (10000: many short ones)")
    ap.add_argument("--mss", type=int, default=MSS,
                    help="payload bytes per data segment (up to 65,000: a few 100k packets then carry "
                         "over 4 GB per subflow, past the 32-bit sequence numbers' wrap)")
    a = ap.parse_args()
    if not 1 <= a.connections <= 2_000_000 or a.packets < 8 * a.connections:
        ap.error("--connections must be between 1 and 2,000,000, with at least 8 packets each")
    if not 1 <= a.mss <= 65_000:
        ap.error("--mss must be between 1 and 65000")
    return a


def _paths(conn: int) -> list[tuple[str, int]]:
    """Connection ``conn``'s client address and port per path: one connection after
    another, each on its own client ports; 20,000 connections per pair of client
    addresses (ports 20001-60000)."""
    return [(f"10.{i + 1}.{conn // 20_000 % 250}.{2 + conn // 5_000_000}", port + 2 * (conn % 20_000))
            for i, (_, port) in enumerate(BASE_PATHS)]


def _handshakes(w: _Pcap, t: float, paths: list[tuple[str, int]], key_c: int, key_s: int) -> None:
    """Handshakes (v1): MP_CAPABLE on wifi, MP_JOIN on lte."""
    srv = SRV
    (c, cp) = paths[0]
    w.put(t, frame(c, srv, cp, 80, 0x02, struct.pack("!BBBB", 30, 4, 0x01, 0x81), 0))
    w.put(t + 0.001, frame(srv, c, 80, cp, 0x12, struct.pack("!BBBBQ", 30, 12, 0x01, 0x81, key_s), 0))
    w.put(t + 0.002, frame(c, srv, cp, 80, 0x10, struct.pack("!BBBBQQ", 30, 20, 0x01, 0x81, key_c, key_s), 0))
    (c, cp) = paths[1]
    token = int.from_bytes(hashlib.sha256(key_s.to_bytes(8, "big")).digest()[:4], "big")  # RFC 8684
    w.put(t + 0.003, frame(c, srv, cp, 80, 0x02, struct.pack("!BBBBII", 30, 12, 0x10, 1, token, 7), 0))
    w.put(t + 0.004, frame(srv, c, 80, cp, 0x12, struct.pack("!BBBBQI", 30, 16, 0x10, 0, 0, 9), 0))
    w.put(t + 0.005, frame(c, srv, cp, 80, 0x10, struct.pack("!BBBB", 30, 24, 0x10, 0) + b"\0" * 20, 0))


def _data(w: _Pcap, t: float, paths: list[tuple[str, int]], key_s: int, mss: int, quota: int) -> float:
    """Data segments alternating between the subflows, and the ACKs, until ``quota``
    packets are written; the time after the last."""
    srv = SRV
    # Templates: offsets of the fields patched per packet.
    data_t = [frame(srv, c, 80, cp, 0x10, dss(1, 1, 1, mss), mss) for c, cp in paths]
    ack_t = [frame(c, srv, cp, 80, 0x10, dss(1, None), 0) for c, cp in paths]
    seq_off = 14 + 20 + 4  # the ack number (at 14 + 20 + 8) stays as the template has it
    dss_data = 14 + 20 + 20 + 4  # data ack (8), dsn (8), ssn (4)
    dss_ack = 14 + 20 + 20 + 4
    sent = [0, 0]  # bytes per subflow
    # the server's first data byte: its IDSN + 1 (RFC 8684: the low 64 bits of SHA-256 of its key)
    dsn = (int.from_bytes(hashlib.sha256(key_s.to_bytes(8, "big")).digest()[-8:], "big") + 1) % (1 << 64)
    i = 0
    while w.n < quota:
        k = i % 2
        fr = data_t[k]
        # sequence numbers and the DSS's subflow sequence number are 32-bit: they wrap
        struct.pack_into("!II", fr, seq_off, (1 + sent[k]) % (1 << 32), 1)
        struct.pack_into("!QQI", fr, dss_data, 1, dsn % (1 << 64), (1 + sent[k]) % (1 << 32))
        w.put(t, fr, 14 + 20 + 20 + 28 + mss)
        sent[k] += mss
        dsn += mss
        t += 0.00006
        if i % 2 == 1 and w.n < quota:
            for j in (0, 1):
                if w.n >= quota:
                    break
                fr = ack_t[j]
                struct.pack_into("!II", fr, seq_off, 1, (1 + sent[j]) % (1 << 32))
                struct.pack_into("!Q", fr, dss_ack, dsn % (1 << 64))
                w.put(t - 0.00002, fr, 14 + 20 + 20 + 12)  # before the next data: time never goes back
        i += 1
        if w.n % 500_000 == 0:
            print(f"  {w.n:,} packets", file=sys.stderr)
    return t


def main() -> int:
    a = _args()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".part")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAP, 1))
        w = _Pcap(f)
        t = T0
        for conn in range(a.connections):
            quota = a.packets * (conn + 1) // a.connections  # packets written once this connection ends
            paths = _paths(conn)  # one connection after another, each on its own client ports and keys
            key_c, key_s = BASE_KEYS[0] + conn, BASE_KEYS[1] + conn
            _handshakes(w, t, paths, key_c, key_s)
            t = _data(w, t + 0.01, paths, key_s, a.mss, quota)
            t += 0.001
    tmp.replace(a.out)
    print(f"wrote {a.out} ({w.n:,} packets, {a.out.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
