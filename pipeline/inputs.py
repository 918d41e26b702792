"""What an analysis reads, and the native decoder started on it early.

``python -m pipeline analyze|tables`` starts decoding the pcaps its command line names
(``start``) before the interpreter imports polars and the rest (~0.1 s, a fifth of a
280k-packet call): the decoder runs in its own thread on the second core meanwhile,
and ``extract.read_native`` takes the reader started for the same, unchanged file
(``take``). Nothing here imports polars. Memory stays bounded: at most ``AHEAD``
batches wait per file, for the first ``FILES`` files; a guess that misses (a file the
command does not read after all) costs that and nothing else.
"""
from __future__ import annotations

import os
from pathlib import Path

from .fields import PACKET_FIELDS, VANTAGES

# Rows per Arrow batch: bounds the decoder's own memory (the table it fills is the
# caller's). The decoder turns a chunk's rows into columns one column at a time, so a
# chunk that stays in the CPU's cache (8k rows of ~200 bytes) decodes ~1.4x faster
# than a 64k-row one (benchmarks/pipeline_bench.py), with no cost downstream.
CHUNK_ROWS = 1 << 13
AHEAD = 64  # batches decoded ahead of the reader: 512k rows, ~60 MB of columns
FILES = 2  # a run folder's two traces, or the first two pcaps named
# the commands' options that take a value (the value is no input)
_VALUED = {"--db", "--out", "--vantage", "--path", "--decoder", "--label", "--labels"}

_started: dict[str, tuple[tuple, object]] = {}  # real path -> (identity, PacketReader)


def run_pcaps(run_dir: Path) -> list[Path]:
    """The traces of a run folder (``sort_pcaps``: what is left out is said there)."""
    return sort_pcaps(run_dir)[0]


def sort_pcaps(run_dir: Path) -> tuple[list[Path], list[Path]]:
    """(the traces of a run folder, the pcaps it leaves out). Per end (client, server):
    its merged pcap (``client.pcap``, any case of the suffix) when present, the testbed's
    per-interface ones beside it (``client-wifi.pcap``) being copies of its packets; else
    those per-interface pcaps. Pcaps named after neither end are the traces when no file
    names an end, and are left out (to be said) when one does."""
    try:
        pcaps = sorted(f for f in run_dir.iterdir() if f.suffix.lower() in (".pcap", ".pcapng"))
    except OSError:
        return [], []
    keep: list[Path] = []
    named: set[Path] = set()
    for v in VANTAGES:
        merged = [f for f in pcaps if f.stem.lower() == v]
        parts = [f for f in pcaps if f.stem.lower().startswith(v + "-")]
        named |= {*merged, *parts}
        keep += merged or parts
    others = [f for f in pcaps if f not in named]
    return (keep, others) if keep else (others, [])


def not_regular(path: str | os.PathLike) -> str:
    """'' for a regular file (or none at all), else what it is: opening a FIFO would wait
    for a writer forever, a device would never end."""
    import stat

    try:
        m = os.stat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(m):
        return ""
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(m):
            return what
    return "not a regular file"


DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


def not_duckdb(head: bytes) -> str:
    """'' when a file's first 16 bytes are a DuckDB database's, else what it is instead.
    (DuckDB opens an SQLite file through its sqlite_scanner extension, which it would
    download from the internet: the lab never lets it.)"""
    if not head:
        return "an empty file"
    if head.startswith(b"SQLite format 3\x00"):
        return "an SQLite database, not a DuckDB one"
    if len(head) < 12 or head[8:12] != DUCKDB_MAGIC:
        return "not a DuckDB database"
    return ""


def native_fields() -> list[tuple[str, str, str, str]]:
    """The packets table as the native decoder takes it."""
    return [(f.tshark, f.column, f.native_type, f.occurrence) for f in PACKET_FIELDS]


def _identity(path: str) -> tuple:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def named(argv: list[str]) -> list[Path]:
    """The pcaps ``analyze``/``tables`` will read first, as far as a glance at the
    command line tells (its own parser decides what is read)."""
    if not argv or argv[0] not in ("analyze", "tables"):
        return []
    out: list[Path] = []
    args = iter(argv[1:])
    for a in args:
        if a in _VALUED:
            value = next(args, "")
            if a == "--decoder" and value != "native":
                return []
        elif a.startswith("--decoder=") and a != "--decoder=native":
            return []
        elif not a.startswith("-"):
            p = Path(a)
            out += run_pcaps(p) if p.is_dir() else [p] if p.is_file() else []
    return out[:FILES]


def start(argv: list[str]) -> None:
    """Start decoding the pcaps ``argv`` names (see ``named``); never fails."""
    try:
        import pcapdecode
    except ImportError:
        return  # not built: extract says so when it needs it
    for p in named(argv):
        try:
            real = os.path.realpath(p)
            reader = pcapdecode.PacketReader(real, native_fields(), CHUNK_ROWS)
            reader.prefetch(AHEAD)
            _started[real] = (_identity(real), reader)
        except Exception:  # noqa: BLE001 - not a capture, unreadable...: the analysis reports it
            continue


def take(path: str | os.PathLike):
    """The reader ``start`` opened on ``path``, if the file is unchanged since (once)."""
    real = os.path.realpath(path)
    got = _started.pop(real, None)
    try:
        return got[1] if got and _identity(real) == got[0] else None
    except OSError:
        return None
