"""pcap -> packets DataFrame, through ``tshark -T fields``.

The field list, column names and types all come from ``schema.PACKET_FIELDS``.
Problems with the file itself (empty, not a capture, truncated, no TCP) are returned
as ``Problem`` values, never raised past ``read_packets``'s caller, so one bad file
cannot stop the others.
"""
from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from . import capfile
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
    # Port 80 carries the lab's downloads, but also anyone's non-HTTP data: the HTTP
    # dissector's reassembly made such captures ~7x slower, and we read no HTTP field.
    cmd += ["--disable-protocol", "http"]
    # Only TCP frames: cheaper than extracting everything and filtering in polars.
    cmd += ["-2", "-Y", "tcp", "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in PACKET_FIELDS:
        cmd += ["-e", f.tshark]
    return cmd


def _tshark_env() -> dict[str, str]:
    # Field formatting follows the locale (decimal separators): pin it.
    return {**os.environ, "LC_ALL": "C", "LANG": "C"}


def _check_file(path: Path) -> None:
    """A one-line reason when ``path`` cannot be a capture file to read twice."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            raise ExtractError(f"a broken symbolic link (to {os.readlink(path)})") from None
        raise ExtractError("file does not exist") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ExtractError("a symbolic link loop") from None
        raise ExtractError(f"cannot open it: {(e.strerror or str(e)).lower()}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ExtractError("is a directory, not a capture file")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO (pipe)" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
        raise ExtractError(f"is {kind}, not a regular file: save the capture to a file first "
                           "(it is read twice)")
    if st.st_size == 0:
        raise ExtractError("empty file (0 bytes)")
    if not os.access(path, os.R_OK):
        raise ExtractError("cannot open it: permission denied")


_TRUNCATED = ("cut short in the middle of a packet",)
_DAMAGED = ("appears to be damaged or corrupt",)
_NOT_CAPTURE = ("isn't a capture file in a format", "unknown file format", "isn't a capture file")
# tshark's words about itself, not about the file
_BANNERS = ("running as user", "this could be dangerous")


def _tool_text(stderr: str) -> str:
    """tshark's stderr without its banners, on one line."""
    lines = [ln.strip() for ln in stderr.splitlines()
             if ln.strip() and not any(b in ln.lower() for b in _BANNERS)]
    return " ".join(lines)


def _classify_stderr(stderr: str) -> tuple[str | None, str | None]:
    """(fatal reason, warning) from tshark's stderr."""
    text = _tool_text(stderr)
    if not text:
        return None, None
    low = text.lower()
    if any(s in low for s in _NOT_CAPTURE):
        return "not a pcap or pcapng capture (tshark: unknown file format)", None
    if any(s in low for s in _TRUNCATED):
        return None, "truncated: the last record is cut short; the packets before it were used"
    if any(s in low for s in _DAMAGED):
        detail = text.split("(", 1)[1].rstrip(")") if "(" in text else "no detail"
        return None, f"damaged mid-file ({detail[:120]}): the packets before the damage were used, the rest is lost"
    return None, f"tshark: {text[:200]}"


def _structure(path: Path, packets: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Keep only the records before any damage a record walk finds, and say what was lost."""
    sc = capfile.scan(path)
    notes: list[str] = []
    if sc.kind != "pcap":
        return packets, notes
    if sc.damaged_at is not None:
        lost = sc.size - sc.damaged_at
        garbage = packets.filter(pl.col("frame") > sc.records).height
        notes.append(
            f"damaged mid-file: record {sc.records + 1} at byte {sc.damaged_at} has {sc.damage}; the "
            f"{sc.records} records before it were used, the remaining {lost} bytes ({100 * lost / sc.size:.0f} % "
            f"of the file) were not" + (f" ({garbage} packets read from them dropped)" if garbage else ""))
        packets = packets.filter(pl.col("frame") <= sc.records)
    elif sc.tail_missing:
        notes.append(f"truncated: the last record is cut short ({sc.tail_missing} bytes missing); "
                     f"the {sc.records} records before it were used")
    return packets, notes


def read_packets(pcap: str | os.PathLike) -> Extracted:
    """Run tshark on ``pcap`` and return its TCP packets typed by the schema.

    Raises ``ExtractError`` with a one-line reason when nothing in the file is usable.
    """
    path = Path(pcap)
    _check_file(path)
    try:
        proc = subprocess.run(tshark_command(path), capture_output=True, env=_tshark_env())
    except FileNotFoundError:
        raise ExtractError("tshark is not installed (scripts/setup-system.sh installs it)") from None
    stderr = proc.stderr.decode(errors="replace")
    fatal, warning = _classify_stderr(stderr)
    if fatal:
        raise ExtractError(fatal)
    if not proc.stdout.strip() and capfile.scan(path).kind == "unknown":
        # tshark guesses among dozens of formats and may take garbage for one of them
        raise ExtractError("not a pcap or pcapng capture (unrecognised file header)")
    if proc.returncode != 0 and not proc.stdout:
        raise ExtractError(f"tshark failed (exit {proc.returncode}): {_tool_text(stderr)[:200] or 'no message'}")
    packets = parse_fields(proc.stdout)
    packets, notes = _structure(path, packets)
    if notes:  # the record walk says more precisely what tshark saw
        warning = None
    if packets.height == 0:
        raise ExtractError("; ".join(notes + ["no TCP packets in the capture"]) if notes
                           else "no TCP packets in the capture")
    return Extracted(packets, notes + ([warning] if warning else []))


# fields tshark prints in hex (0x...)
HEX_COLUMNS = ("tcp_flags", "ip_id", "tcp_checksum")


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
        if f.column in HEX_COLUMNS:
            exprs.append(first.str.strip_prefix("0x").str.to_integer(base=16, strict=False).cast(f.dtype).alias(f.column))
        elif f.dtype == pl.Utf8:
            exprs.append(first.alias(f.column))
        else:
            exprs.append(first.cast(f.dtype, strict=False).alias(f.column))
    return df.select(exprs)
