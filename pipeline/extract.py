"""pcap -> packets DataFrame, through the native decoder (default) or ``tshark -T fields``.

The field list, column names and types all come from ``schema.PACKET_FIELDS``; both
decoders give the same table (tests/test_decoders.py holds them to it, tshark being
the oracle) and the same notes about the file's structure (``capfile``: a damaged
record mid-file, a truncated tail). Problems with the file itself (empty, not a
capture, truncated, no TCP) are returned as warnings or raised as ``ExtractError``,
never past ``read_packets``'s caller, so one bad file cannot stop the others. A
decoder that cannot run at all (not built, tshark not installed) raises
``DecoderUnavailable``: that is the set-up's problem, not the file's.
"""
from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path

import polars as pl

from . import capfile, inputs
from .procs import MachineFault
from .inputs import CHUNK_ROWS, native_fields  # noqa: F401 - the decoder's settings, used here and by the bench
from .schema import PACKET_FIELDS, PACKETS, TSHARK_PREFS

DECODERS = ("native", "tshark")
DEFAULT_DECODER = "native"
# Batches per piece when the caller narrows the table as it is decoded (``compact``):
# memory then holds ~64k rows of the decoder's full-width columns at a time, and the
# decoder thread decodes the next piece while polars narrows this one.
PIECE_BATCHES = 8


class DecoderUnavailable(MachineFault):
    """The chosen decoder cannot run on this machine; the message says how to fix it."""


class ExtractError(Exception):
    """The file could not be read at all; the message says why."""


@dataclass
class Extracted:
    packets: pl.DataFrame
    warnings: list[str]  # usable, but something the researcher should know


def check_decoder(name: str) -> str:
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose one of {', '.join(DECODERS)}")
    return name


def tshark_command(pcap: str | os.PathLike) -> list[str]:
    """The exact tshark call: also what the benchmark times as its baseline."""
    cmd = [shutil.which("tshark") or "tshark", "-n", "-r", str(pcap)]
    for pref in TSHARK_PREFS:
        cmd += ["-o", pref]
    # Port 80 carries the lab's downloads, but also anyone's non-HTTP data: the HTTP
    # dissector's reassembly made such captures ~7x slower, and we read no HTTP field.
    cmd += ["--disable-protocol", "http"]
    # Only TCP frames: cheaper than extracting everything and filtering in polars. Not
    # the TCP header an ICMP error quotes: it is no segment of the connection (and the
    # native decoder counts such frames as not TCP).
    return cmd + ["-2", "-Y", "tcp && !icmp && !icmpv6", *tshark_field_args()]


def tshark_field_args() -> list[str]:
    """tshark's arguments for the packets table's fields, as the reader parses them
    (also the benchmark's bare extraction, without the preferences above)."""
    return ["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,",
            *(a for f in PACKET_FIELDS for a in ("-e", f.tshark)), "-e", "ip.proto"]


# ip.proto (tshark's only, last column): whether the last IPv4 header carries the TCP
# segment (TCP, or AH before it). When a frame has headers of both families, the row keeps
# only the carrying family's addresses, as the native decoder does: with 6in4 or Teredo
# the IPv4 header is the tunnel's, with 4in6 the IPv6 one is.
_CARRIES_TCP = ("6", "51")


def _tshark_env() -> dict[str, str]:
    # Field formatting follows the locale (decimal separators): pin it.
    return {**os.environ, "LC_ALL": "C", "LANG": "C"}


def _check_file(path: Path) -> None:
    """A one-line reason when ``path`` cannot be a capture file to read."""
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


def read_packets(pcap: str | os.PathLike, decoder: str = DEFAULT_DECODER,
                 compact: Callable[[pl.DataFrame], pl.DataFrame] | None = None) -> Extracted:
    """The TCP packets of ``pcap`` typed by the schema, decoded by ``decoder``
    ("native" or "tshark"). ``compact``, when given, turns the table into the narrower
    one the caller keeps (e.g. ``flows.compact``); the native decoder applies it piece
    by piece as it decodes, so the full-width table of a long capture never exists.

    Raises ``ExtractError`` with a one-line reason when nothing in the file is usable.
    """
    path = Path(pcap)
    check_decoder(decoder)
    _check_file(path)
    if decoder == "native":
        packets, notes = read_native(path, compact)
    else:
        packets, notes = read_tshark(path)
        packets = compact(packets) if compact else packets
    if packets.height == 0:
        raise ExtractError("; ".join(notes + ["no TCP packets in the capture"]) if notes
                           else "no TCP packets in the capture")
    return Extracted(packets, notes)


# ------------------------------------------------------------------ native decoder


def native_reader(path: str | os.PathLike, chunk_rows: int = CHUNK_ROWS):
    """A ``pcapdecode.PacketReader`` on ``path`` (Arrow C stream of the packets table)."""
    try:
        import pcapdecode
    except ImportError as e:
        raise DecoderUnavailable(
            "the native decoder (the package pcapdecode) is not installed: in the checkout `make venv` builds it, "
            "elsewhere `pip install <checkout>/pipeline/pcapdecode` (both need cargo; get it with rustup: "
            "https://rustup.rs); or pass --decoder tshark (slower, needs tshark)") from e
    try:
        return pcapdecode.PacketReader(str(path), native_fields(), chunk_rows)
    except pcapdecode.FormatError as e:
        raise ExtractError(str(e)) from None
    except OSError as e:
        raise ExtractError(f"cannot read the file: {e}") from None


def read_native(path: Path, compact: Callable[[pl.DataFrame], pl.DataFrame] | None = None
                ) -> tuple[pl.DataFrame, list[str]]:
    reader = inputs.take(path) or native_reader(path)  # decoding since the process started, or now
    # Batches cross through the Arrow C stream interface: polars takes the buffers as they are.
    if compact is None:
        packets = pl.DataFrame(reader)
    else:
        parts = []
        while (piece := pl.DataFrame(reader.piece(PIECE_BATCHES))).height:
            parts.append(compact(piece).rechunk())
        del piece
        packets = pl.concat(parts, rechunk=False) if parts else compact(pl.DataFrame(schema=PACKETS))
    return packets, reader_notes(reader)


def reader_notes(reader) -> list[str]:
    """What a native reader, read to its end, says about the file."""
    s = reader.stats()
    if s["format"] == "pcap":
        # The decoder walks the record headers as capfile.scan does and stops at the
        # first impossible one: the same scan, without reading the file a second time.
        notes = capfile.notes(capfile.Scan(
            "pcap", records=s["records"], size=s["size"], damaged_at=s["damaged_at"], damage=s["damage"],
            tail_missing=s["tail_missing"], snaplen=s["snaplen"]))
        if s["end"] == "damaged" and s["damaged_at"] is None:  # the reader's own error (e.g. I/O)
            notes.append(capfile.damaged(s["damage"]))
    else:
        notes = [capfile.TRUNCATED] if s["end"] == "truncated" else []
        if s["end"] == "damaged":
            notes.append(capfile.damaged(s["damage"]))
    if s["fragments"]:
        notes.append(f"{s['fragments']} IP fragments skipped (the native decoder does not reassemble; "
                     "--decoder tshark does)")
    if s["malformed"]:
        notes.append(f"{s['malformed']} frames with malformed IP/TCP headers skipped")
    for linktype, n in s["unsupported_link_types"]:
        notes.append(f"{n} frames of link type {linktype} skipped: the native decoder does not read it "
                     "(try --decoder tshark)")
    return notes


# ------------------------------------------------------------------ tshark


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
        return None, capfile.TRUNCATED
    if any(s in low for s in _DAMAGED):
        detail = text.split("(", 1)[1].rstrip(")") if "(" in text else "no detail"
        return None, capfile.damaged(detail[:120])
    return None, f"tshark: {text[:200]}"


def _structure(path: Path, packets: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Keep only the records before any damage a record walk finds, and say what was lost."""
    sc = capfile.scan(path)
    if sc.kind == "pcap" and sc.damaged_at is not None:
        # tshark may read on past the damage, taking garbage for packets
        packets = packets.filter(pl.col("frame") <= sc.records)
    return packets, capfile.notes(sc)


def read_tshark(path: Path) -> tuple[pl.DataFrame, list[str]]:
    if shutil.which("tshark") is None:
        raise DecoderUnavailable("tshark is not installed (Debian: apt-get install tshark; `make system` does it), "
                                 "or use the default --decoder native")
    proc = subprocess.run(tshark_command(path), capture_output=True, env=_tshark_env())
    stderr = proc.stderr.decode(errors="replace")
    fatal, warning = _classify_stderr(stderr)
    if fatal:
        raise ExtractError(fatal)
    if not proc.stdout.strip() and capfile.scan(path).kind == "unknown":
        # tshark guesses among dozens of formats and may take garbage for one of them
        raise ExtractError("not a pcap or pcapng capture (unrecognised file header)")
    if proc.returncode < 0 or (proc.returncode != 0 and not proc.stdout):
        # A negative code: tshark died of a signal (its own assertions abort it on some
        # malformed MPTCP options); what it printed before is not a table.
        why = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        text = (_tool_text(stderr) or proc.stdout.decode(errors="replace").strip())[:200]
        raise ExtractError(f"tshark failed ({why}): {text or 'no message'}")
    packets, notes = _structure(path, parse_fields(proc.stdout))
    # the record walk says more precisely what tshark saw
    return packets, notes if notes else [warning] if warning else []


def parse_fields(raw: bytes) -> pl.DataFrame:
    """Parse tshark's tab-separated field output into the typed packets table."""
    names = [f.column for f in PACKET_FIELDS] + ["ip_proto"]
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
        col, dtype = pl.col(f.column), PACKETS[f.column]
        if f.occurrence == "all":
            exprs.append(col)
            continue
        # occurrence=a: a frame with two of an option (or a tunnel's two IP headers)
        # prints "a,b"; the field says which one describes this frame's TCP segment.
        if f.occurrence == "last":
            first = col.str.split(",").list.last()
        elif f.occurrence == "dss":
            # without an MP_FAIL the first value is the first DSS mapping's; frames with one
            # are settled below (_dss_values)
            first = col.str.split_exact(",", 0).struct.field("field_0")
        else:
            first = col.str.split_exact(",", 0).struct.field("field_0")
        if f.hex:
            exprs.append(first.str.strip_prefix("0x").str.to_integer(base=16, strict=False).cast(dtype).alias(f.column))
        elif dtype == pl.Utf8:
            exprs.append(first.alias(f.column))
        else:
            exprs.append(first.cast(dtype, strict=False).alias(f.column))
    return _innermost(df, _dss_values(df, df.select(exprs)))


def _innermost(raw: pl.DataFrame, out: pl.DataFrame) -> pl.DataFrame:
    """Only the carrying family's addresses in a frame with headers of both (above)."""
    both = out["ip_src"].is_not_null() & out["ip6_src"].is_not_null()
    if not both.any():
        return out
    v4 = raw["ip_proto"].str.split(",").list.last().is_in(_CARRIES_TCP)
    drop4, drop6 = both & ~v4, both & v4
    return out.with_columns(
        *(pl.when(pl.lit(drop4)).then(None).otherwise(pl.col(c)).alias(c) for c in ("ip_src", "ip_dst")),
        *(pl.when(pl.lit(drop6)).then(None).otherwise(pl.col(c)).alias(c) for c in ("ip6_src", "ip6_dst")))


def _dss_values(raw: pl.DataFrame, out: pl.DataFrame) -> pl.DataFrame:
    """The "dss" fields of the frames that carry an MP_FAIL (rare), from the raw text:
    tshark shows MP_FAIL's sequence number in the same field as a DSS mapping's."""
    fails = raw.select(pl.col("mp_subtypes").fill_null("").str.split(",").list.contains("6")).to_series()
    if not fails.any():
        return out
    at = fails.arg_true()
    for f in (f for f in PACKET_FIELDS if f.occurrence == "dss"):
        rows = raw.filter(fails).select("mp_subtypes", f.column, "mp_map_present").iter_rows()
        picked = pl.Series([_dss_value(*r) for r in rows], dtype=pl.Utf8).cast(PACKETS[f.column], strict=False)
        out = out.with_columns(out[f.column].scatter(at, picked))
    return out


def _dss_value(subtypes: str | None, values: str | None, mapped: str | None) -> str | None:
    """Which of a frame's values the native decoder keeps: the first DSS mapping's, else
    the first MP_FAIL's. They come in option order, one per MP_FAIL and one per DSS with a
    mapping (``mapped``: each DSS option's M flag)."""
    vals, flags = (values or "").split(","), (mapped or "").split(",")
    v = m = 0
    fail = None
    for s in (subtypes or "").split(","):
        if s == "6" and v < len(vals):
            fail = vals[v] if fail is None else fail
            v += 1
        elif s == "2":
            has_map = m < len(flags) and flags[m] == "1"
            m += 1
            if has_map and v < len(vals):
                return vals[v]
    return fail or None
