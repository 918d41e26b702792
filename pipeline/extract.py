"""pcap -> packets DataFrame, through ``tshark -T fields``.

The field list, column names and types all come from ``schema.PACKET_FIELDS``.
Problems with the file itself (empty, not a capture, truncated, no TCP) are returned
as ``Problem`` values, never raised past ``read_packets``'s caller, so one bad file
cannot stop the others.
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .schema import PACKET_FIELDS, PACKETS, TSHARK_PREFS


class ExtractError(Exception):
    """The file could not be read at all; the message says why."""


@dataclass
class Extracted:
    packets: pl.DataFrame
    warnings: list[str]  # usable, but something the researcher should know


def tshark_command(pcap: str | os.PathLike) -> list[str]:
    """The exact tshark call: also what the benchmark times as its baseline."""
    cmd = [shutil.which("tshark") or "tshark", "-n", "-r", str(pcap)]
    for pref in TSHARK_PREFS:
        cmd += ["-o", pref]
    # Only TCP frames: cheaper than extracting everything and filtering in polars.
    cmd += ["-2", "-Y", "tcp", "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in PACKET_FIELDS:
        cmd += ["-e", f.tshark]
    return cmd


def _tshark_env() -> dict[str, str]:
    # Field formatting follows the locale (decimal separators): pin it.
    return {**os.environ, "LC_ALL": "C", "LANG": "C"}


def _check_file(path: Path) -> None:
    if not path.exists():
        raise ExtractError("file does not exist")
    if path.is_dir():
        raise ExtractError("is a directory, not a capture file")
    if path.stat().st_size == 0:
        raise ExtractError("empty file (0 bytes)")


_TRUNCATED = ("cut short in the middle of a packet", "appears to be damaged or corrupt")
_NOT_CAPTURE = ("isn't a capture file in a format", "unknown file format", "isn't a capture file")


def _classify_stderr(stderr: str) -> tuple[str | None, str | None]:
    """(fatal reason, warning) from tshark's stderr."""
    text = " ".join(line for line in stderr.splitlines() if "Running as user" not in line).strip()
    if not text:
        return None, None
    low = text.lower()
    if any(s in low for s in _NOT_CAPTURE):
        return "not a pcap or pcapng capture (tshark: unknown file format)", None
    if any(s in low for s in _TRUNCATED):
        return None, "truncated: the last record is cut short; the packets before it were used"
    return None, f"tshark: {text[:200]}"


def read_packets(pcap: str | os.PathLike) -> Extracted:
    """Run tshark on ``pcap`` and return its TCP packets typed by the schema.

    Raises ``ExtractError`` with a one-line reason when nothing in the file is usable.
    """
    path = Path(pcap)
    _check_file(path)
    proc = subprocess.run(tshark_command(path), capture_output=True, env=_tshark_env())
    stderr = proc.stderr.decode(errors="replace")
    fatal, warning = _classify_stderr(stderr)
    if fatal:
        raise ExtractError(fatal)
    if proc.returncode != 0 and not proc.stdout:
        raise ExtractError(f"tshark failed (exit {proc.returncode}): {stderr.strip()[:200] or 'no message'}")
    packets = parse_fields(proc.stdout)
    if packets.height == 0:
        raise ExtractError("no TCP packets in the capture")
    return Extracted(packets, [warning] if warning else [])


def parse_fields(raw: bytes) -> pl.DataFrame:
    """Parse tshark's tab-separated field output into the typed packets table."""
    names = [f.column for f in PACKET_FIELDS]
    if not raw.strip():
        return pl.DataFrame(schema=PACKETS)
    df = pl.read_csv(
        io.BytesIO(raw),
        separator="\t",
        has_header=False,
        new_columns=names,
        schema_overrides={n: pl.Utf8 for n in names},
        quote_char=None,
        infer_schema=False,
    )
    exprs = []
    for f in PACKET_FIELDS:
        col = pl.col(f.column)
        if f.column == "mp_subtypes":
            exprs.append(col)
            continue
        # occurrence=a: a frame with two of an option (or an ICMP-quoted header)
        # prints "a,b"; the first occurrence is the one that describes this frame.
        first = col.str.split_exact(",", 0).struct.field("field_0")
        if f.column == "tcp_flags":
            exprs.append(first.str.strip_prefix("0x").str.to_integer(base=16, strict=False).cast(f.dtype).alias(f.column))
        elif f.dtype == pl.Utf8:
            exprs.append(first.alias(f.column))
        else:
            exprs.append(first.cast(f.dtype, strict=False).alias(f.column))
    return df.select(exprs)
