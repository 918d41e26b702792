#!/usr/bin/env python3
"""Decoder and pipeline speed against tshark's bare field extraction, same pcap, same run.

Makes (once) the ~280k-packet two-path MPTCP capture of bench-capture.yaml with the
testbed, then times, interleaved (round after round, so a change in the machine's
load hits every command alike), each as a child process measured by GNU time:

  tshark bare       tshark's bare field extraction, the baseline: `tshark -T fields` of the
                    fields `--decoder tshark` reads, tshark's default preferences, one pass
  tshark analysis   the exact call `--decoder tshark` makes: the same fields with the MPTCP
                    mapping analysis and a second pass (here 1.9x slower than bare on the
                    two-path capture, 5.7x on the synthetic ones: it slows as a connection
                    grows), output discarded
  tcpdump -nn -r    decode and print every packet, to /dev/null
  native decoder    pcapdecode alone: pcap -> Arrow batches, dropped once built
  pipeline native   `python -m pipeline analyze PCAP --db FILE` (process start to a new DuckDB file)
  same, again       the same into a database that already holds this trace (a re-analysis)
  pipeline tshark   the same with --decoder tshark

and prints packets/s, wall, CPU and peak memory (largest RSS in the process tree) for
each, with ratios against tshark's bare extraction; then, in-process, where the native
pipeline's time goes, stage by stage and metric by metric.

    python benchmarks/pipeline_bench.py [--pcap FILE] [--repeat 3]
    python benchmarks/pipeline_bench.py --memory [--repeat 3] [--sizes 1000000 5000000 10000000] [--many 10000 10000000]
        (memory and speed by size, and on many short connections)

Run it under the heavy-job lock on a shared machine: flock /work/wt/heavy.lock make bench
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline import extract, flows, metrics, store, tables

REPO = Path(__file__).resolve().parents[1]

CAMPAIGN = REPO / "benchmarks" / "bench-capture.yaml"
OUT = REPO / "data" / "bench"
TIME = "/usr/bin/time"  # GNU time (Debian: time; scripts/setup-system.sh installs it)
# The decoder alone: the extension and the field list, no polars import.
DECODE_ONLY = ("import json, sys, pcapdecode; print(pcapdecode.PacketReader(sys.argv[1], "
               f"[tuple(f) for f in json.loads(sys.argv[2])], {extract.CHUNK_ROWS}).drain())")
FIELDS = json.dumps(extract.native_fields())
TSHARK_PACKETS = 100_000  # --memory: tshark's baseline rate over this many packets
DECODER_CALLS = 9  # in-process decoder calls timed (the median is reported)


def tshark_bare(pcap: Path, count: int | None = None) -> list[str]:
    """tshark's bare field extraction: the fields ``--decoder tshark`` reads, as text,
    with tshark's default preferences in one pass (no MPTCP analysis, no second pass,
    no display filter): the baseline the ratios are quoted against."""
    return [shutil.which("tshark") or "tshark", "-n", "-r", str(pcap), *(["-c", str(count)] if count else []),
            *extract.tshark_field_args()]


def make_capture() -> Path:
    pcaps = sorted(OUT.glob("**/server.pcap"))
    if pcaps:
        return pcaps[0]
    if os.geteuid() != 0:
        sys.exit("error: making the benchmark capture needs root (network namespaces); pass --pcap FILE instead")
    print(f"making the benchmark capture with the testbed ({CAMPAIGN.name}) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "capture", "run", str(CAMPAIGN), "--out", str(OUT)], check=True, cwd=REPO)
    return sorted(OUT.glob("**/server.pcap"))[0]


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float


def run_child(cmd: list[str], stdout=subprocess.DEVNULL) -> Run:
    """Wall, CPU (user + system, the command and what it waited for) and peak RSS of one
    command, from GNU time: rusage taken in this process would count the Python
    interpreter the child was forked from (exec keeps the old image's peak)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as rep:
        t0 = time.perf_counter()
        p = subprocess.run([TIME, "-o", rep.name, "-f", "%U %S %M", *cmd], stdout=stdout,
                           stderr=subprocess.DEVNULL, cwd=REPO, env={**os.environ, "LC_ALL": "C"})
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            sys.exit(f"error: {' '.join(cmd[:4])} ... failed (exit {p.returncode})")
        user, sys_, rss_kb = rep.read().split()[-3:]
    return Run(wall, float(user) + float(sys_), int(rss_kb) / 1024)


def commands(pcap: Path, out: Path, round_no: int) -> dict[str, list[str]]:
    """One round's commands. Each pipeline run writes a database of its own (pcap ->
    new DuckDB file), except "again into a store": a re-analysis into a database that
    already holds this trace (copy, delete its rows, insert)."""
    py = sys.executable
    return {
        "tshark bare fields (baseline)": tshark_bare(pcap),
        "tshark with MPTCP analysis": extract.tshark_command(pcap),
        "tcpdump -nn -r > /dev/null": ["tcpdump", "-nn", "-r", str(pcap)],
        "native decoder alone": [py, "-c", DECODE_ONLY, str(pcap), FIELDS],
        "pipeline, --decoder native": [py, "-m", "pipeline", "analyze", "-q", str(pcap),
                                       "--db", str(out / f"native-{round_no}.duckdb")],
        "  same, again into a store": [py, "-m", "pipeline", "analyze", "-q", str(pcap),
                                       "--db", str(out / "store.duckdb")],
        "pipeline, --decoder tshark": [py, "-m", "pipeline", "analyze", "-q", "--decoder", "tshark", str(pcap),
                                       "--db", str(out / f"tshark-{round_no}.duckdb")],
    }


def timed(label: str, fn, out: dict) -> object:
    t0 = time.perf_counter()
    r = fn()
    out[label] = out.get(label, 0.0) + time.perf_counter() - t0
    return r


def profile(pcap: Path) -> None:
    """Where the native pipeline's time goes, in-process, stage by stage (one run)."""
    st: dict[str, float] = {}
    ex = timed("decode (native, into polars)", lambda: extract.read_packets(pcap, "native"), st)
    tr = timed("flows.build_trace (subflows, connections, DSNs)", lambda: flows.build_trace(ex.packets), st)
    p = tr.packets
    # The metrics trace_tables computes, one by one (both vantages' worth).
    data = timed("  metrics.retransmissions", lambda: metrics.retransmissions(p), st)
    timed("  metrics.loss_rate", lambda: metrics.loss_rate(data), st)
    timed("  metrics.traffic_share", lambda: metrics.traffic_share(p), st)
    timed("  metrics.rtt_samples (server)", lambda: metrics.rtt_samples(p, data), st)
    timed("  metrics.ofo_delays (client)", lambda: metrics.ofo_delays(p), st)
    timed("  metrics.download_time", lambda: metrics.download_time(p, tr.subflows), st)
    tabs = {}
    for v in ("server", "client"):
        tabs = timed("tables.trace_tables, both vantages (includes the metrics above)",
                     lambda: tables.trace_tables(tr, "bench", str(pcap), v, {}, []), st)
    db = Path(tempfile.mkdtemp()) / "profile.duckdb"
    timed("store.write_duckdb (a new database)", lambda: store.write_duckdb(tables.complete(tabs), db), st)
    imports = run_child([sys.executable, "-c", "import pipeline.cli"]).wall
    st["python start + imports (`import pipeline.cli`, measured apart)"] = imports
    total = sum(v for k, v in st.items() if not k.startswith("  "))
    print(f"\nwhere the native pipeline's time goes (in-process, one run; {total:.2f} s in all):")
    for k, v in st.items():
        share = "" if k.startswith("  ") else f"{100 * v / total:5.1f} %"
        print(f"  {k:66s} {v:6.3f} s {share}")


def speed(a: argparse.Namespace) -> None:
    pcap = a.pcap or make_capture()
    # Bytecode up to date, as after a first run wherever Python may write it (a shell
    # with PYTHONDONTWRITEBYTECODE would otherwise time the compiler at every start).
    compileall.compile_dir(REPO / "pipeline", quiet=1)
    n = extract.read_packets(pcap, "native").packets.height
    out = Path(tempfile.mkdtemp())
    # One untimed run: the store the re-analysis line writes into, and the empty store
    # of this version kept in ~/.cache (as after any first run on a machine).
    run_child(commands(pcap, out, 0)["  same, again into a store"])
    runs: dict[str, list[Run]] = {}
    for r in range(1, a.repeat + 1):
        for k, cmd in commands(pcap, out, r).items():
            runs.setdefault(k, []).append(run_child(cmd))
    med = {k: Run(*(statistics.median(getattr(r, f) for r in v) for f in ("wall", "cpu", "rss_mb")))
           for k, v in runs.items()}
    base = med["tshark bare fields (baseline)"]
    size = pcap.stat().st_size / 1e6
    print(f"pcap: {pcap} ({size:.1f} MB, {n:,} TCP packets); median of {a.repeat} interleaved rounds; "
          f"{os.cpu_count()} cores")
    print(f"{'':30s} {'wall':>8s} {'packets/s':>12s} {'CPU':>8s} {'peak RSS':>9s} {'wall vs tshark':>15s}")
    for k, r in med.items():
        print(f"{k:30s} {r.wall:7.3f}s {n / r.wall:12,.0f} {r.cpu:7.3f}s {r.rss_mb:7.0f}MB "
              f"{base.wall / r.wall:13.1f}x")
    print("(x = how many times faster than tshark's bare field extraction of the same fields; "
          "peak RSS is the largest process of the tree)")
    # The decoder's own rate, without interpreter start and imports (one core). Several
    # calls: the first also pays for first-touching its buffers, and a shared host's
    # noise moves single calls by +-20 %.
    times = []
    for _ in range(DECODER_CALLS):
        t0 = time.perf_counter()
        rows = extract.native_reader(pcap).drain()
        times.append(time.perf_counter() - t0)
    dt = statistics.median(times)
    print(f"native decoder in-process: {rows:,} packets in {dt:.3f} s = {rows / dt / 1e6:.2f} M packets/s, "
          f"median of {DECODER_CALLS} calls ({rows / max(times) / 1e6:.2f}-{rows / min(times) / 1e6:.2f}; "
          "target >= 5 M/s on one core)")
    profile(pcap)


def synthetic(packets: int, connections: int = 1) -> Path:
    """The synthetic two-path capture of ``packets`` packets over ``connections``
    connections, one after another (made once, under data/bench/)."""
    size = f"{packets // 1_000_000}M" if packets % 1_000_000 == 0 else str(packets)
    f = OUT / f"synthetic-{size}{f'-{connections}conn' if connections > 1 else ''}.pcap"
    if not f.exists():
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_big_capture.py"), "--packets", str(packets),
                        "--connections", str(connections), "--out", str(f)], check=True)
    return f


def memory(a: argparse.Namespace) -> None:
    """Peak memory and packets/s of `pipeline analyze` on synthetic captures of growing
    size, against tshark's bare field extraction rate measured in the same run (on the
    smallest capture: tshark's rate does not depend on the file's length, its time does)."""
    py = sys.executable
    files = [a.pcap] if a.pcap else [synthetic(n) for n in a.sizes] + [synthetic(a.many[1], a.many[0])]
    counts = [int(extract.native_reader(f).drain()) for f in files]
    n0 = min(TSHARK_PACKETS, counts[0])
    # tshark over the first TSHARK_PACKETS packets: bare (the baseline), and with the MPTCP
    # analysis `--decoder tshark` asks for, which slows as one connection grows (a
    # 1M-packet connection took it over 20 min here; over 100k packets it is already ~5x
    # slower than bare): a baseline that would flatter us, shown beside it only
    baselines = {"bare": tshark_bare(files[0], TSHARK_PACKETS)}
    cmd = extract.tshark_command(files[0])
    baselines["with MPTCP analysis (the --decoder tshark call)"] = [cmd[0], "-c", str(TSHARK_PACKETS), *cmd[1:]]
    decoder = {f: run_child([py, "-c", DECODE_ONLY, str(f), FIELDS]) for f in files}
    # interleaved rounds, tshark's in each (a change in the machine's load hits every
    # command alike); a shared host moves single runs by +-20 %, so the median, its range,
    # and the largest peak
    tshark: dict[str, list[Run]] = {k: [] for k in baselines}
    runs: dict[Path, list[Run]] = {f: [] for f in files}
    for _ in range(a.repeat):
        for k, c in baselines.items():
            tshark[k].append(run_child(c))
        for f in files:
            db = Path(tempfile.mkdtemp()) / "big.duckdb"
            runs[f].append(run_child([py, "-m", "pipeline", "analyze", "-q", str(f), "--db", str(db)]))
            db.unlink(missing_ok=True)
    rates = {k: n0 / statistics.median(t.wall for t in v) for k, v in tshark.items()}
    for k, v in tshark.items():
        print(f"tshark field extraction, {k}, on the first {n0:,} packets of {files[0].name}: {rates[k]:,.0f} "
              f"packets/s (median; {n0 / max(t.wall for t in v):,.0f}-{n0 / min(t.wall for t in v):,.0f}), "
              f"peak RSS {max(t.rss_mb for t in v):.0f} MB")
    bare, analysis = rates.values()
    print(f"median of {a.repeat} interleaved rounds (range), CPU = user + system; peak RSS: the largest of the rounds; "
          "vs tshark: against the bare extraction (in brackets: against the call with MPTCP analysis)")
    print(f"{'capture':30s} {'packets':>11s} {'MB':>7s} {'decoder RSS':>12s} {'analyze wall':>13s} {'range':>13s} "
          f"{'CPU':>7s} {'packets/s':>11s} {'vs tshark':>16s} {'peak RSS':>9s}")
    for f, n in zip(files, counts):
        walls = [r.wall for r in runs[f]]
        wall = statistics.median(walls)
        cpu = statistics.median(r.cpu for r in runs[f])
        print(f"{f.name:30s} {n:11,d} {f.stat().st_size / 1e6:7.0f} {decoder[f].rss_mb:9.0f} MB {wall:11.1f} s "
              f"{min(walls):5.1f}-{max(walls):5.1f} s {cpu:5.1f} s {n / wall:11,.0f} "
              f"{n / wall / bare:6.1f}x [{n / wall / analysis:5.1f}x] {max(r.rss_mb for r in runs[f]):6.0f} MB",
              flush=True)
    print("Targets (issue 25): peak <= 600 MB at 10 M packets and on 10,000 short connections, "
          ">= 1 M packets/s and >= 50x tshark's field extraction end to end. "
          "Captures from 128 MB on (MPTCP_LAB_STREAM_FROM) are analysed from a spill on disk, piece by piece; "
          "smaller ones in memory, whose peak grows with the capture.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pcap", type=Path, help="pcap to time (default: the two-path benchmark capture)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="interleaved rounds; the median is reported (--memory: with its range and the largest peak)")
    ap.add_argument("--memory", action="store_true", help="peak memory on a synthetic capture instead")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000, 10_000_000], metavar="N",
                    help="packets of each synthetic one-connection capture (--memory; default 1M 5M 10M)")
    ap.add_argument("--many", type=int, nargs=2, default=[10_000, 10_000_000], metavar=("CONNS", "PACKETS"),
                    help="and a capture of CONNS short connections sharing PACKETS packets (--memory; "
                         "default 10000 10000000)")
    a = ap.parse_args()
    (memory if a.memory else speed)(a)


if __name__ == "__main__":
    main()
