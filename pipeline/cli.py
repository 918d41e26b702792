"""Command line: ``python -m pipeline {analyze,tables,load,plot,show,describe,reference}``; the console
script ``mptcp-lab`` is these and ``compare`` (``report.cli``: it reads the findings' statistics, a layer
above the pipeline, and hands every other command to ``main`` here)."""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from typing import NamedTuple
from pathlib import Path

import polars as pl

from . import apart, extract, labels, schema, store, tables
from .assemble import canonical_addr, problem, vantage_from_name
from .beside import not_utf8
from .inputs import run_pcaps
from .procs import MachineFault, catch_interrupts, stop_if_interrupted

EPILOG = """\
examples:
  python -m pipeline analyze data/samples/*/client.pcap data/samples/*/server.pcap --db results/lab.duckdb
  python -m pipeline analyze data/samples/mp2-tbf --db results/lab.duckdb      (a run folder)
  python -m pipeline tables data/raw/chen/run-0001 --out results/tables/run-0001
  python -m pipeline load results/tables/* --db results/lab.duckdb
  python -m pipeline plot seq mp2-linkem --db results/lab.duckdb -o seq.svg   (also rtt, owd, throughput; .png/.html)
  python -m pipeline show data/samples/mp2-linkem/client.pcap 478               (tshark's dissection of frame 478)
  python -m pipeline describe subflows                                          (its columns: type, unit, meaning)
  python -m pipeline analyze mine.pcap --label cc=lia --db lab.duckdb           (a labelled run: run_labels)
  mptcp-lab compare --db lab.duckdb --by cc -o cc.svg                           (per label value: n, means, intervals)

Metrics follow Chen et al. (IMC 2013) §3.3: download time and out-of-order delay
from the client's trace, loss and RTT from the server's. Uploads (client -> server
data, e.g. iperf3) get the same metrics with the roles swapped; every row says its
direction ('down' or 'up'). Which side a pcap was captured on comes from --vantage,
else its name (client*/server*), else the handshake timing. Files that cannot be
used become rows of the `problems` table and a one-line message; the exit status is
1 when nothing was usable, 2 when the --db/--out target or a --label/--labels is
refused (a one-line error, before any work), else 0.

The database is a store: each call adds its runs and traces to what is there. A run
folder analysed again replaces that run's rows, a pcap analysed again replaces that
trace's rows, every other row (and any table of your own) stays; a file given twice
in one call counts once. A call with labels replaces the labelled runs' labels (a
loose pcap labelled gets a runs row). A call with nothing usable leaves the
database untouched.
--db is checked before any work: an existing file that is not a DuckDB database, or
is read-only, is refused. Concurrent writers wait for each other (a lock file
.<db>.lock beside it); temporary files of interrupted writes are removed by the next
write. To start afresh, delete the database file.
"""


def _path_map(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items:
        label, sep, addr = it.partition("=")
        if not sep or not label or not addr:
            raise SystemExit(f"error: --path expects LABEL=CLIENT_ADDRESS, got {it!r}")
        key = canonical_addr(addr)
        if out.get(key, label) != label:
            raise SystemExit(f"error: --path gives {addr} two labels ({out[key]!r} and {label!r}): one address, "
                             "one path")
        out[key] = label
    return out


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def _report(t: dict[str, pl.DataFrame], say=_say) -> None:
    for r in t["problems"].iter_rows(named=True):
        say(f"{r['source']}: {r['reason']}")


def _usable(t: dict[str, pl.DataFrame]) -> bool:
    return t["connections"].height > 0


def _real(p: Path) -> str:
    return os.path.realpath(p)


class Pair(NamedTuple):
    """A client's and a server's pcap of one folder given alone: analysed together as
    that folder's run (one-way delay matched across them), as a run folder is."""

    client: Path
    server: Path

    def __str__(self) -> str:
        return f"{self.client} + {self.server.name}"

    def is_dir(self) -> bool:  # a run's facts, as a folder's (_facts_once)
        return True


def _pairs(paths: list[Path]) -> list[Path | Pair]:
    """``paths`` with each folder's one client-named and one server-named pcap (when the
    call names exactly one of each there) joined into a ``Pair`` at the first's place."""
    ends: dict[Path, dict[str, list[Path]]] = {}
    for p in paths:
        v = vantage_from_name(p) if not p.is_dir() else None
        if v:
            ends.setdefault(p.parent, {}).setdefault(v, []).append(p)
    pairs = {f: Pair(e["client"][0], e["server"][0]) for f, e in ends.items()
             if len(e.get("client", ())) == 1 and len(e.get("server", ())) == 1}
    out: list[Path | Pair] = []
    for p in paths:
        pr = pairs.get(p.parent) if not p.is_dir() else None
        if pr is None or p not in pr:
            out.append(p)
        elif p == min(pr, key=paths.index):
            out.append(pr)
    return out


def _plan(inputs: list[str], pair: bool = True) -> tuple[list[Path | Pair], list[str]]:
    """The inputs to analyse, each file once: a pcap that a run folder given in the same
    call analyses, or a path given twice, is dropped with a note; a folder's client and
    server pcaps given alone make a ``Pair`` (unless ``pair`` is false: --vantage names
    every pcap's end). Paths become absolute: they key the store's rows, whatever folder
    a later call is made from."""
    # an empty argument (an unset shell variable: `analyze "$RUN"`) is no path, not "."
    blank = [i for i in inputs if not i.strip()]
    paths = [Path(os.path.abspath(i)) for i in inputs if i.strip()]
    covered: dict[str, Path] = {}
    for p in paths:
        if p.is_dir():
            for f in run_pcaps(p):
                covered.setdefault(_real(f), p)
    keep, seen = [], set()
    notes = [f"{len(blank)} empty argument(s) (an unset shell variable?) skipped: not a path"] if blank else []
    for p in paths:
        shown = not_utf8(str(p))  # the store keys rows by these names, as UTF-8 text
        if shown is not None:
            notes.append(f"{shown}: the name is not UTF-8 text, which the store keeps names as; skipped (rename it)")
            continue
        key = _real(p)
        if key in seen:
            notes.append(f"{p}: given twice; analysed once")
            continue
        seen.add(key)
        if not p.is_dir() and key in covered:
            notes.append(f"{p}: part of run folder {covered[key]}, analysed there")
            continue
        keep.append(p)
    return (_pairs(keep) if pair else keep), notes


def _analyze_safely(item: Path | Pair, vantage: str | None, pm: dict[str, str], decoder: str,
                    decoded=None, given: labels.Labels | None = None) -> tuple[dict, store.Keys]:
    """An input's tables and the store keys they replace; never raises on bad input
    (``procs.MachineFault``: the machine's problem, not the input's)."""
    try:
        if isinstance(item, Pair):
            t = tables.analyze_run(item.client.parent, pm, decoder, decoded, given, pcaps=list(item))
            return t, store.Keys(runs=set(t["runs"]["run_id"].to_list()))
        if item.is_dir():
            t = tables.analyze_run(item, pm, decoder, decoded, given)
            return t, store.Keys(runs=set(t["runs"]["run_id"].to_list()))
        t, keys = tables.analyze_pcap(item, vantage, pm, decoder, decoded, given)
        return t, store.Keys(traces=keys, facts=set(t["runs"]["run_id"].to_list()))
    except MachineFault:
        raise
    except Exception as e:  # a defect of ours: say so, keep the other inputs
        stop_if_interrupted()
        one = item.client if isinstance(item, Pair) else item
        run_id = one.parent.resolve().name if isinstance(item, Pair) else one.stem
        reason = f"internal error while analysing it ({type(e).__name__}: {e}); please report this with the file"
        t = tables.complete({"problems": tables.problems_table([problem(run_id, str(one), "metrics", reason)])})
        return t, store.Keys(traces={(run_id, str(one))})


def _labels(a: argparse.Namespace) -> labels.Labels | None:
    """The call's --label and --labels, or None after a one-line error naming the bad one."""
    try:
        return labels.read(a.label, a.labels)
    except labels.LabelError as e:
        print(f"error: {e}", file=sys.stderr)
        return None


def _facts_once(parts: list[dict], folders: list[bool]) -> list[dict]:
    """One runs row and one set of labels per run of a call: a run folder's, else the first
    labelled pcap's (two pcaps of one run given alone, or a loose pcap named like a folder's run)."""
    owner: dict[str, int] = {}
    for i in sorted(range(len(parts)), key=lambda i: not folders[i]):
        for r in parts[i]["runs"]["run_id"].to_list():
            owner.setdefault(r, i)
    others = [sorted(r for r in t["runs"]["run_id"].to_list() if owner[r] != i) for i, t in enumerate(parts)]
    return [{n: df.filter(~pl.col("run_id").is_in(o)) if n in apart.FACT_TABLES else df for n, df in t.items()}
            if o else t for t, o in zip(parts, others)]


def _unmatched(given: labels.Labels, keys: store.Keys) -> None:
    for r in given.unmatched(keys.runs | {r for r, _ in keys.traces}):
        print(f"--labels {given.file}: run {r!r} is no run of this call; its labels not used", file=sys.stderr)


def cmd_analyze(a: argparse.Namespace) -> int:
    given = _labels(a)
    if given is None:
        return 2
    try:
        store.check_db_target(a.db)
    except store.StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pm = _path_map(a.path)
    inputs, notes = _plan(a.inputs, pair=a.vantage is None)
    for n in notes:
        print(n, file=sys.stderr)
    # The database's copy (DuckDB import, schema, views) is made while we analyse, from
    # the end of the first capture's decoding and checks on (they have both cores until
    # then; DuckDB's import holds the interpreter's lock).
    prepared = store.prepare(a.db, start=False)
    try:
        return _analyze_into(a, inputs, pm, prepared, given)
    finally:
        prepared.discard()


def _analyze_into(a: argparse.Namespace, inputs: list[Path], pm: dict[str, str], prepared: store.Prepared,
                  given: labels.Labels) -> int:
    parts, folders, used = [], [], 0
    keys = store.Keys()
    runs_seen: dict[str, Path] = {}
    items, say = inputs, _say
    if not a.quiet:  # imported only for a bar: tqdm is ~5 ms of a ~0.5 s call
        from tqdm import tqdm
        items = tqdm(inputs, desc="analyze", unit="file", disable=None, file=sys.stderr)
        say = lambda m: tqdm.write(m, file=sys.stderr)  # noqa: E731 - above the bar, not through it
    for item in items:
        t, k = _analyze_safely(item, a.vantage, pm, a.decoder, prepared.start, given)
        for r in sorted(k.runs & set(runs_seen)):  # another folder of this call has its name: a run of its own
            folder = str(item.client.parent if isinstance(item, Pair) else item)
            new = apart.other_id(r, folder, set(runs_seen) | k.runs)
            say(f"{item}: run id {r!r} is also run folder {runs_seen[r]}'s in this call; stored as {new!r}")
            t = apart.rename_run(t, r, new)
            k = dataclasses.replace(k, runs={new if x == r else x for x in k.runs})
        runs_seen.update({r: item for r in k.runs})
        _report(t, say)
        used += _usable(t)
        keys.runs |= k.runs
        keys.traces |= k.traces
        keys.facts |= k.facts
        parts.append(t)
        folders.append(item.is_dir())
    _unmatched(given, keys)
    parts = _facts_once(parts, folders)
    merged = {n: schema.concat([p[n] for p in parts]) if parts else schema.empty(n) for n in schema.TABLES}
    if not used:
        state = "left untouched" if Path(a.db).exists() else "not created"
        print(f"nothing usable in {len(inputs)} input(s): {a.db} {state}", file=sys.stderr)
        return 1
    try:
        store.upsert(merged, a.db, keys, prepared)
    except store.StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _summary(merged, a.db)
    return 0


def cmd_tables(a: argparse.Namespace) -> int:
    given = _labels(a)
    if given is None:
        return 2
    try:
        store.check_tables_target(a.out)
    except store.StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pm = _path_map(a.path)
    # absolute, as `analyze` records them: the traces key the rows and are opened again
    # later (`show`, the notebooks) from other folders than this call's
    if not a.input.strip():
        print("error: the input is an empty argument (an unset shell variable?), not a run folder", file=sys.stderr)
        return 2
    t, k = _analyze_safely(Path(os.path.abspath(a.input)), a.vantage, pm, a.decoder, None, given)
    _report(t)
    _unmatched(given, k)
    if not _usable(t) and any(Path(a.out).glob("*.parquet")):
        # the folder holds an earlier analysis' tables: nothing usable never replaces them
        print(f"nothing usable in {a.input}: {a.out} left as it was", file=sys.stderr)
        return 1
    try:
        store.write_tables(t, a.out)
    except store.StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0 if _usable(t) else 1


def cmd_load(a: argparse.Namespace) -> int:
    try:
        store.check_db_target(a.db)
        missing = [d for d in a.dirs if not Path(d).is_dir()]
        if missing:
            print(f"error: not a folder of tables: {', '.join(missing[:3])}", file=sys.stderr)
            return 2
        loaded = store.load_table_dirs(a.dirs, a.db)
    except store.StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if loaded is None:
        state = "left untouched" if Path(a.db).exists() else "not created"
        print(f"nothing usable in {len(a.dirs)} folder(s): no run's tables; {a.db} {state}", file=sys.stderr)
        return 1
    return 0


def cmd_plot(a: argparse.Namespace) -> int:
    # the charts live once, in runplots (the notebooks draw the same ones)
    from . import runplots

    from . import derived

    if not Path(a.db).is_file():
        print(f"error: {a.db}: no such database (python -m pipeline analyze ... --db {a.db} makes one)",
              file=sys.stderr)
        return 2
    try:
        con = derived.connect(a.db)
    except Exception as e:  # not a DuckDB file, or locked by a writer
        print(f"error: {a.db}: cannot be read as the lab's database ({e})", file=sys.stderr)
        return 2
    try:
        chart, _ = runplots.PLOTS[a.kind](con, a.run, a.direction, conn=a.connection)
        out = runplots.save(chart, a.output)
    except runplots.PlotError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except runplots.OutputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        con.close()
    print(f"wrote {out}", file=sys.stderr)
    return 0


def cmd_show(a: argparse.Namespace) -> int:
    from . import show

    try:
        for text in show.dissect(a.pcap, a.frames):
            print(text)
    except show.ShowError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_describe(a: argparse.Namespace) -> int:
    from . import describe  # (imports DuckDB: for this command only)

    try:
        text = describe.describe(a.table, a.db)
    except describe.DatabaseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except describe.UnknownTable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(text)
    return 0


def _summary(t: dict[str, pl.DataFrame], db: str) -> None:
    counts = ", ".join(f"{n} {schema.rows(t[n])}" for n in ("connections", "subflows", "rtt_samples", "ofo_samples", "problems"))
    print(f"wrote {db}: {counts}", file=sys.stderr)


def _common_options(p: argparse.ArgumentParser) -> None:
    """The options ``analyze`` and ``tables`` share."""
    p.add_argument("--vantage", choices=schema.VANTAGES,
                   help="whose capture the pcaps are (default: from the file name, else handshake timing)")
    p.add_argument("--path", action="append", default=[], metavar="LABEL=ADDR",
                   help="label the subflows from client address ADDR as LABEL (e.g. wifi=10.1.0.2); "
                        "default: meta.json's paths, else the address itself")
    p.add_argument("--decoder", choices=extract.DECODERS, default="native",
                   help="pcap decoder: the built-in native one (default, fast, needs no tshark) or "
                        "tshark (the reference it is tested against; much slower)")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                   help="label every run of the call (repeatable; KEY an identifier: letters, digits, _): a "
                        "run_labels row each, over meta.json's labels of the same key; what 'mptcp-lab compare "
                        "--by KEY' groups runs by. A loose pcap labelled gets a runs row")
    p.add_argument("--labels", metavar="FILE.csv",
                   help="labels per run: a header run,KEY,... then one row per run id (meta.json's run_id, else "
                        "the run folder's name, else a loose pcap's file name without its suffix); a run's row "
                        "wins over --label")


def _describe_parser(sub) -> None:
    """``describe``'s sub-command (in ``build_parser``'s ``sub``)."""
    p = sub.add_parser(
        "describe", help="what the tables, views and columns hold: types, units, meanings",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Without TABLE, list the tables and the derived layer's views, each with its description; "
                    "with TABLE (a table or view), list its columns: name, type, unit and meaning. The "
                    "descriptions are the DuckDB comments the store writes into every database (COMMENT ON; "
                    "SELECT comment FROM duckdb_columns() shows them in any DuckDB client), from the one "
                    "schema, pipeline/schema.py. Without --db they are this version's; with --db, the ones the "
                    "file holds (its own tables and views too).",
        epilog="examples:\n  python -m pipeline describe\n  python -m pipeline describe subflows\n"
               "  python -m pipeline describe run_metrics --db results/lab.duckdb\n"
               "\nUnits (the unit column): ms, s (a duration, or seconds since what the description names), "
               "Unix s (epoch\nseconds), ISO time, bytes, Mbit/s, % (0-100), fraction (0-1), count, seqno "
               "(bytes), number, id, label,\naddress, file, text, flag, JSON.\n"
               "\nExit status: 0; 1 for an unknown TABLE; 2 when --db cannot be read (missing, not a DuckDB file).")
    p.add_argument("table", nargs="?", metavar="TABLE", help="a table or view (default: list them all)")
    p.add_argument("--db", help="a lab DuckDB file to read the descriptions from (read only; default: this "
                                "version's schema)")
    p.set_defaults(func=cmd_describe)


def build_parser(extra: Callable[[argparse._SubParsersAction], None] | None = None) -> argparse.ArgumentParser:
    """The parser; ``extra`` adds commands of a layer above (the console script's ``compare``)."""
    # the console script (mptcp-lab) or python -m pipeline, as the user typed it
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    prog = script if script.startswith("mptcp-lab") else "python -m pipeline"
    ap = argparse.ArgumentParser(prog=prog, description="pcaps -> DuckDB tables of MPTCP metrics",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("analyze", help="pcaps or run folders -> the DuckDB store", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="PCAP", help="pcap/pcapng files or run folders")
    p.add_argument("--db", required=True,
                   help="DuckDB file to add the results to (created if missing; rows of the same runs/traces "
                        "replaced, everything else kept)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    _common_options(p)
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("tables", help="one run folder (or pcap) -> a folder of Parquet tables")
    p.add_argument("input", metavar="RUN_DIR")
    p.add_argument("--out", required=True,
                   help="folder to write <table>.parquet into (atomically; an existing folder is replaced only "
                        "when it holds nothing but such tables)")
    _common_options(p)
    p.set_defaults(func=cmd_tables)

    p = sub.add_parser("load", help="Parquet table folders -> the DuckDB store",
                       description="Add the runs in per-run Parquet table folders to the DuckDB store: each run "
                                   "replaces its own rows, other runs and tables stay (see 'analyze --help').",
                       epilog="Exit status: 0; 1 when no folder holds a run's tables (the database is then left "
                              "untouched, or not created); 2 when --db is refused or a TABLE_DIR is no folder.")
    p.add_argument("dirs", nargs="+", metavar="TABLE_DIR")
    p.add_argument("--db", required=True, help="DuckDB file to add the runs to (created if missing)")
    p.set_defaults(func=cmd_load)

    p = sub.add_parser(
        "plot", help="one run's time-sequence graph, RTT, one-way delay or throughput -> SVG/PNG/HTML",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Draw one run from the database: 'seq' the time-sequence graph of its connection at the "
                    "receiver (data sequence numbers coloured per subflow, each subflow's sequence numbers and "
                    "cumulative ACK, retransmissions and reinjections marked, out-of-order delay as a line), "
                    "'rtt' the RTT samples per subflow over time at the sender with the configured delay and "
                    "recorded outages, 'owd' the one-way delay of each data packet found in both ends' traces "
                    "(owd_samples) with the configured one-way delay, 'throughput' each subflow's throughput "
                    "over time at the receiver.",
        epilog="examples:\n  python -m pipeline plot seq mp2-linkem --db results/lab.duckdb -o seq.svg\n"
               "  python -m pipeline plot rtt mp2-linkem --db results/lab.duckdb -o rtt.html   (zoom: wheel, pan: drag)\n"
               "\nThe output format follows the suffix: .svg, .png, .html (interactive, self-contained) or .json "
               "(the Vega-Lite spec with its data). Large runs are pre-aggregated (the subtitle says how).")
    p.add_argument("kind", choices=["seq", "rtt", "owd", "throughput"])
    p.add_argument("run", metavar="RUN", help="run id (runs.run_id)")
    p.add_argument("--db", required=True, help="the lab's DuckDB file (read only)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="out.svg, out.png, out.html or out.json")
    p.add_argument("--direction", choices=schema.DIRECTIONS,
                   help="data direction to draw (default: the one that carried most payload)")
    p.add_argument("--connection", type=int, metavar="CONN_ID",
                   help="the connection to draw, by its conn_id in the receiver's trace (connections.conn_id; "
                        "default: the one that carried most payload); an unknown id lists the run's")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser(
        "show", help="tshark's dissection of pcap frames (via pyshark)",
        description="Print tshark's full dissection of the given frames, through pyshark, with the pipeline's "
                    "tshark preferences (MPTCP analysis on): MPTCP options as Wireshark names them and tshark's "
                    "own analysis flags (retransmission, duplicate ACK, ...), so a number of ours can be checked "
                    "against Wireshark's reading of the same packet. Frame numbers are tshark's (1 = first), as "
                    "in the tables' frame columns.")
    p.add_argument("pcap", metavar="PCAP")
    p.add_argument("frames", nargs="+", type=int, metavar="FRAME")
    p.set_defaults(func=cmd_show)

    _describe_parser(sub)

    # listed here; its arguments are its own (main hands it the rest of the command line)
    sub.add_parser("reference", help="per-campaign reference tables (data/reference) from analysed runs' table "
                                     "folders, thinned (python -m pipeline reference --help)")
    if extra:
        extra(sub)
    return ap


def main(argv: list[str] | None = None,
         extra: Callable[[argparse._SubParsersAction], None] | None = None) -> int:
    """Run one command; ``extra`` as in ``build_parser``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 is printed, not a traceback
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if argv[:1] == ["compare"] and extra is None:
        print("error: compare reads the findings' statistics, a layer above the pipeline: run it as "
              "mptcp-lab compare (or python -m report.cli compare)", file=sys.stderr)
        return 2
    if argv[:1] == ["reference"]:
        from .reference import main as reference_main  # (imported for this command only)
        return reference_main(argv[1:])
    a = build_parser(extra).parse_args(argv)
    catch_interrupts()
    try:
        return a.func(a)
    except MachineFault as e:  # met before anything of this call was stored
        print(f"error: {e}; nothing of this call was stored", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: stopped; the write under way was not stored (the database is as it was before it)",
              file=sys.stderr)
        return 130
