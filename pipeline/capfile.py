"""The record structure of a classic pcap file, checked without decoding packets.

A decoder reading a damaged file either stops at the damage or, worse, goes on
reading garbage as packets (a record length off by a few bytes shifts every later
record). Walking the record headers finds the first impossible one, so the pipeline
can keep exactly the packets before it and say where the file breaks, and can tell a
truncated tail (the last record cut short: a capture stopped mid-write) from
mid-file corruption. pcapng files carry a length at both ends of every block and are
checked by the decoder itself. The native decoder walks the same record headers with
the same rules as it reads (pcapdecode/src/capture.rs), so ``notes`` words the
outcome alike for both decoders.
"""
from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = {  # magic -> (byte order, fractions of a second per unit)
    0xA1B2C3D4: ("<", 1_000_000), 0xD4C3B2A1: (">", 1_000_000),
    0xA1B23C4D: ("<", 1_000_000_000), 0x4D3CB2A1: (">", 1_000_000_000),
}
PCAPNG_MAGIC = 0x0A0D0D0A
# Kuznetzov's "modified" pcap (24-byte record headers), which tshark and the native
# decoder read: its kind is told, its records are not walked here
MODIFIED_MAGIC = {0xA1B2CD34, 0x34CDB2A1}
MAX_RECORD = 262_144  # libpcap's largest snapshot length


@dataclass
class Scan:
    kind: str  # "pcap", "pcapng", "modified pcap" or "unknown"
    records: int = 0  # well-formed records before any damage
    size: int = 0  # file size in bytes
    damaged_at: int | None = None  # byte offset of the first impossible record header
    damage: str | None = None  # why it is impossible
    tail_missing: int = 0  # bytes missing from a last record cut short
    snaplen: int | None = None


def scan(path: str | os.PathLike) -> Scan:
    """Walk a classic pcap's record headers; other formats only get their kind."""
    p = Path(path)
    size = p.stat().st_size
    with open(p, "rb") as f:
        head = f.read(24)
        if len(head) < 4:
            return Scan("unknown", size=size)
        magic_le = struct.unpack("<I", head[:4])[0]
        if magic_le == PCAPNG_MAGIC:
            return Scan("pcapng", size=size)
        if magic_le in MODIFIED_MAGIC:
            return Scan("modified pcap", size=size)
        if magic_le not in MAGIC or len(head) < 24:
            return Scan("unknown", size=size)
        order, per_s = MAGIC[magic_le]
        snaplen = struct.unpack(order + "I", head[16:20])[0]
        limit = max(snaplen, MAX_RECORD) if snaplen else MAX_RECORD
        out = Scan("pcap", size=size, snaplen=snaplen)
        if size <= 24:
            return out
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            rec = struct.Struct(order + "IIII")
            off, n = 24, 0
            while off < size:
                if off + 16 > size:
                    out.tail_missing = off + 16 - size
                    break
                _, frac, incl, orig = rec.unpack_from(m, off)
                why = None
                if incl > limit:
                    why = f"a {incl}-byte record, larger than the {limit}-byte maximum"
                elif frac >= per_s:
                    why = f"a timestamp fraction of {frac} (>= 1 s)"
                elif incl > orig:
                    why = f"{incl} bytes captured of a {orig}-byte packet"
                if why:
                    out.damaged_at, out.damage = off, why
                    break
                if off + 16 + incl > size:
                    if incl > MAX_RECORD:  # no capture stopped mid-write leaves that much unwritten
                        out.damaged_at, out.damage = off, f"a {incl}-byte record running past the end of the file"
                    else:
                        out.tail_missing = off + 16 + incl - size
                    break
                off += 16 + incl
                n += 1
            out.records = n
        return out


TRUNCATED = "truncated: the last record is cut short; the packets before it were used"


def damaged(detail: str) -> str:
    """A pcapng (or a file of unknown structure) damaged mid-file, in the reader's words."""
    return f"damaged mid-file ({detail}): the packets before the damage were used, the rest is lost"


def notes(sc: Scan) -> list[str]:
    """What a classic pcap's record walk found, as problems rows (none for a sound file)."""
    if sc.kind != "pcap":
        return []
    if sc.damaged_at is not None:
        lost = sc.size - sc.damaged_at
        return [f"damaged mid-file: record {sc.records + 1} at byte {sc.damaged_at} has {sc.damage}; the "
                f"{sc.records} records before it were used, the remaining {lost} bytes "
                f"({100 * lost / sc.size:.0f} % of the file) were not"]
    if sc.tail_missing:
        return [f"truncated: the last record is cut short ({sc.tail_missing} bytes missing); "
                f"the {sc.records} records before it were used"]
    return []
