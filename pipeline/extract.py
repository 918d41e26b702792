"""pcap -> packets DataFrame, through the native decoder (default) or ``tshark -T fields``.

The field list, column names and types all come from ``schema.PACKET_FIELDS``; both
decoders give the same table (tests/test_decoders.py holds them to it, tshark being
the oracle). Problems with the file itself (empty, not a capture, truncated, no TCP)
are returned as ``Problem`` values, never raised past ``read_packets``'s caller, so
one bad file cannot stop the others. A decoder that cannot run at all (not built,
tshark not installed) raises ``DecoderUnavailable``: that is the set-up's problem,
not the file's.
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

DECODERS = ("native", "tshark")
_decoder = "native"
# Rows per Arrow batch: bounds the decoder's own memory (the table it fills is the
# caller's); 64k rows is ~10 MB of columns.
CHUNK_ROWS = 1 << 16


def set_decoder(name: str) -> None:
    """The decoder ``read_packets`` uses when not told (the CLI's ``--decoder``)."""
    global _decoder
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose one of {', '.join(DECODERS)}")
    _decoder = name


class DecoderUnavailable(RuntimeError):
    """The chosen decoder cannot run on this machine; the message says how to fix it."""


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


TRUNCATED = "truncated: the last record is cut short; the packets before it were used"
_CUT_SHORT = ("cut short in the middle of a packet",)
_CORRUPT = ("appears to be damaged or corrupt",)
_NOT_CAPTURE = ("isn't a capture file in a format", "unknown file format", "isn't a capture file")


def _corrupt(detail: str) -> str:
    return f"corrupt: a record in the file is damaged ({detail}); the packets before it were used"


def _classify_stderr(stderr: str) -> tuple[str | None, str | None]:
    """(fatal reason, warning) from tshark's stderr."""
    text = " ".join(line for line in stderr.splitlines() if "Running as user" not in line).strip()
    if not text:
        return None, None
    low = text.lower()
    if any(s in low for s in _NOT_CAPTURE):
        return "not a pcap or pcapng capture (tshark: unknown file format)", None
    if any(s in low for s in _CUT_SHORT):
        return None, TRUNCATED
    if any(s in low for s in _CORRUPT):
        return None, _corrupt(f"tshark: {text.split('(', 1)[-1].rstrip(').')[:160]}")
    return None, f"tshark: {text[:200]}"


def read_packets(pcap: str | os.PathLike, decoder: str | None = None) -> Extracted:
    """The TCP packets of ``pcap`` typed by the schema, decoded by ``decoder``
    (default: the one ``set_decoder`` chose, native unless told otherwise).

    Raises ``ExtractError`` with a one-line reason when nothing in the file is usable.
    """
    path = Path(pcap)
    _check_file(path)
    name = decoder or _decoder
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose one of {', '.join(DECODERS)}")
    ex = read_native(path) if name == "native" else read_tshark(path)
    if ex.packets.height == 0:
        raise ExtractError("no TCP packets in the capture")
    return ex


def native_fields() -> list[tuple[str, str, str, str]]:
    """The packets table as the native decoder takes it."""
    return [(f.tshark, f.column, f.native_type, f.occurrence) for f in PACKET_FIELDS]


def native_reader(path: str | os.PathLike, chunk_rows: int = CHUNK_ROWS):
    """A ``pcapdecode.PacketReader`` on ``path`` (Arrow C stream of the packets table)."""
    try:
        import pcapdecode
    except ImportError as e:
        raise DecoderUnavailable(
            "the native decoder (pipeline/pcapdecode) is not built: run `make venv` (it needs cargo; "
            "get it with rustup: https://rustup.rs), or pass --decoder tshark") from e
    try:
        return pcapdecode.PacketReader(str(path), native_fields(), chunk_rows)
    except pcapdecode.FormatError as e:
        raise ExtractError(str(e)) from None
    except OSError as e:
        raise ExtractError(f"cannot read the file: {e}") from None


def read_native(path: Path) -> Extracted:
    reader = native_reader(path)
    # Batches cross through the Arrow C stream interface: polars takes the buffers as they are.
    packets = pl.DataFrame(reader)
    stats = reader.stats()
    warnings = []
    end = stats["end"]
    if end == "truncated":
        warnings.append(TRUNCATED)
    elif end.startswith("corrupt: "):
        warnings.append(_corrupt(end.removeprefix("corrupt: ")))
    if stats["fragments"]:
        warnings.append(f"{stats['fragments']} IP fragments skipped (the native decoder does not reassemble; "
                        "--decoder tshark does)")
    if stats["malformed"]:
        warnings.append(f"{stats['malformed']} frames with malformed IP/TCP headers skipped")
    for linktype, n in stats["unsupported_link_types"]:
        warnings.append(f"{n} frames of link type {linktype} skipped: the native decoder does not read it "
                        "(try --decoder tshark)")
    return Extracted(packets, warnings)


def read_tshark(path: Path) -> Extracted:
    if shutil.which("tshark") is None:
        raise DecoderUnavailable("tshark is not installed (Debian: apt-get install tshark; `make system` does it), "
                                 "or use the default --decoder native")
    proc = subprocess.run(tshark_command(path), capture_output=True, env=_tshark_env())
    stderr = proc.stderr.decode(errors="replace")
    fatal, warning = _classify_stderr(stderr)
    if fatal:
        raise ExtractError(fatal)
    if proc.returncode < 0 or (proc.returncode != 0 and not proc.stdout):
        # A negative code: tshark died of a signal (its own assertions abort it on some
        # malformed MPTCP options); what it printed before is not a table.
        why = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        text = (stderr.strip() or proc.stdout.decode(errors="replace").strip())[:200]
        raise ExtractError(f"tshark failed ({why}): {text or 'no message'}")
    return Extracted(parse_fields(proc.stdout), [warning] if warning else [])


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
        if f.occurrence == "all":
            exprs.append(col)
            continue
        # occurrence=a: a frame with two of an option (or an ICMP-quoted header)
        # prints "a,b"; the first occurrence is the one that describes this frame.
        first = col.str.split_exact(",", 0).struct.field("field_0")
        if f.hex:
            exprs.append(first.str.strip_prefix("0x").str.to_integer(base=16, strict=False).cast(f.dtype).alias(f.column))
        elif f.dtype == pl.Utf8:
            exprs.append(first.alias(f.column))
        else:
            exprs.append(first.cast(f.dtype, strict=False).alias(f.column))
    return df.select(exprs)
