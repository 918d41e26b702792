"""Command line: ``python -m pipeline {analyze,tables,load}``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl
from tqdm import tqdm

from . import extract, schema, store, tables

EPILOG = """\
examples:
  python -m pipeline analyze data/samples/*/client.pcap data/samples/*/server.pcap --db results/lab.duckdb
  python -m pipeline analyze data/samples/mp2-tbf --db results/lab.duckdb      (a run folder)
  python -m pipeline tables data/raw/chen/run-0001 --out results/tables/run-0001
  python -m pipeline load results/tables/* --db results/lab.duckdb

Metrics follow Chen et al. (IMC 2013) §3.3: download time and out-of-order delay
from the client's trace, loss and RTT from the server's. Which side a pcap was
captured on comes from --vantage, else its name (client*/server*), else the
handshake timing. Files that cannot be used become rows of the `problems` table
and a one-line message; the exit status is non-zero only when nothing was usable.
"""


def _path_map(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items:
        label, sep, addr = it.partition("=")
        if not sep or not label or not addr:
            raise SystemExit(f"error: --path expects LABEL=CLIENT_ADDRESS, got {it!r}")
        out[addr] = label
    return out


def _analyze_input(item: Path, vantage: str | None, pm: dict[str, str]) -> dict[str, pl.DataFrame]:
    if item.is_dir():
        return tables.analyze_run(item, pm)
    meta = tables.read_meta(item.parent)
    run_id = meta.get("run_id") or (item.parent.name if meta else item.stem)
    t, problems = tables.analyze_trace(item, run_id, vantage, {**tables.path_map_from_meta(meta), **pm})
    t["problems"] = tables.problems_table(problems)
    return tables.complete(t)


def _report(t: dict[str, pl.DataFrame]) -> None:
    for r in t["problems"].iter_rows(named=True):
        tqdm.write(f"{r['source']}: {r['reason']}", file=sys.stderr)


def _usable(t: dict[str, pl.DataFrame]) -> bool:
    return t["connections"].height > 0


def cmd_analyze(a: argparse.Namespace) -> int:
    pm = _path_map(a.path)
    parts, used = [], 0
    runs_seen = set()
    for item in tqdm(a.inputs, desc="analyze", unit="file", disable=a.quiet or None, file=sys.stderr):
        t = _analyze_input(Path(item), a.vantage, pm)
        _report(t)
        used += _usable(t)
        # One runs row per run, however many of its pcaps were given.
        if t["runs"].height:
            t["runs"] = t["runs"].filter(~pl.col("run_id").is_in(list(runs_seen)))
            runs_seen.update(t["runs"]["run_id"].to_list())
        parts.append(t)
    merged = {n: pl.concat([p[n] for p in parts]) for n in schema.TABLES}
    store.write_duckdb(merged, a.db)
    _summary(merged, a.db)
    return 0 if used else 1


def cmd_tables(a: argparse.Namespace) -> int:
    pm = _path_map(a.path)
    t = _analyze_input(Path(a.input), a.vantage, pm)
    _report(t)
    store.write_tables(t, a.out)
    return 0 if _usable(t) else 1


def cmd_load(a: argparse.Namespace) -> int:
    store.load_table_dirs(a.dirs, a.db)
    return 0


def _summary(t: dict[str, pl.DataFrame], db: str) -> None:
    counts = ", ".join(f"{n} {t[n].height}" for n in ("connections", "subflows", "rtt_samples", "ofo_samples", "problems"))
    print(f"wrote {db}: {counts}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipeline", description="pcaps -> DuckDB tables of MPTCP metrics",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--vantage", choices=schema.VANTAGES,
                       help="whose capture the pcaps are (default: from the file name, else handshake timing)")
        p.add_argument("--path", action="append", default=[], metavar="LABEL=ADDR",
                       help="label the subflows from client address ADDR as LABEL (e.g. wifi=10.1.0.2); "
                            "default: meta.json's paths, else the address itself")
        p.add_argument("--decoder", choices=extract.DECODERS, default="native",
                       help="pcap decoder: the built-in native one (default, fast, needs no tshark) or "
                            "tshark (the reference it is tested against; much slower)")

    p = sub.add_parser("analyze", help="pcaps or run folders -> one DuckDB file", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="PCAP", help="pcap/pcapng files or run folders")
    p.add_argument("--db", required=True, help="DuckDB file to write (replaced atomically)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    common(p)
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("tables", help="one run folder (or pcap) -> a folder of Parquet tables")
    p.add_argument("input", metavar="RUN_DIR")
    p.add_argument("--out", required=True, help="folder to write <table>.parquet into (atomically)")
    common(p)
    p.set_defaults(func=cmd_tables)

    p = sub.add_parser("load", help="Parquet table folders -> one DuckDB file")
    p.add_argument("dirs", nargs="+", metavar="TABLE_DIR")
    p.add_argument("--db", required=True)
    p.set_defaults(func=cmd_load)
    return ap


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if getattr(a, "decoder", None):
        extract.set_decoder(a.decoder)
    try:
        return a.func(a)
    except extract.DecoderUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
