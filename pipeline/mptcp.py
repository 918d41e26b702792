"""MPTCP key arithmetic: tokens, initial data sequence numbers, DSN unwrapping.

RFC 8684 (v1) derives the token (most significant 32 bits) and the IDSN (least
significant 64 bits) from SHA-256 of the 64-bit key; RFC 6824 (v0) uses SHA-1.
"""
from __future__ import annotations

import hashlib
import struct

import numpy as np

_TWO32 = 1 << 32


def _digest(key: int, version: int) -> bytes:
    algo = hashlib.sha256 if version == 1 else hashlib.sha1
    return algo(struct.pack("!Q", key)).digest()


def token(key: int, version: int) -> int:
    return struct.unpack("!I", _digest(key, version)[:4])[0]


def idsn(key: int, version: int) -> int:
    d = _digest(key, version)
    return struct.unpack("!Q", d[-8:])[0]


def unwrap32(values: np.ndarray) -> np.ndarray:
    """Unwrap a sequence of 32-bit sequence numbers (in packet order) into int64.

    A step of more than 2^31 backwards is a wrap forwards and vice versa, as in TCP.
    """
    v = values.astype(np.int64)
    if v.size == 0:
        return v
    d = np.diff(v)
    steps = np.zeros(v.size, dtype=np.int64)
    steps[1:] = np.cumsum((d < -(1 << 31)).astype(np.int64) - (d > (1 << 31)).astype(np.int64))
    return v + steps * _TWO32


def relative_dsn(raw: np.ndarray, is64: np.ndarray, ref: int) -> np.ndarray:
    """DSNs relative to ``ref`` (the sender's IDSN), as int64, first data byte = 1.

    ``raw`` holds the DSS field as captured (64- or 32-bit per ``is64``), in packet
    order. 64-bit values are exact modulo 2^64; 32-bit ones are placed relative to
    the IDSN and unwrapped in packet order, which is exact while the connection
    moves less than 2 GiB between two consecutive 32-bit mappings.
    """
    raw = raw.astype(np.uint64)
    out = np.empty(raw.size, dtype=np.int64)
    m64 = is64.astype(bool)
    with np.errstate(over="ignore"):
        out[m64] = (raw[m64] - np.uint64(ref)).view(np.int64)
        low = (raw[~m64] - np.uint64(ref & 0xFFFFFFFF)) & np.uint64(0xFFFFFFFF)
    if (~m64).any():
        rel32 = unwrap32(low)
        # Put the first 32-bit mapping in the window nearest the 64-bit ones, if any.
        if m64.any():
            anchor = out[m64][0]
            shift = ((anchor - rel32[0]) + (1 << 31)) // _TWO32 * _TWO32
            rel32 = rel32 + shift
        out[~m64] = rel32
    return out


def absolute_dsn(rel: np.ndarray, ref: np.ndarray | int) -> np.ndarray:
    """Relative DSNs back to absolute 64-bit ones (modulo 2^64)."""
    with np.errstate(over="ignore"):
        return rel.astype(np.int64).view(np.uint64) + np.asarray(ref, dtype=np.uint64)
