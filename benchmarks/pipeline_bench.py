#!/usr/bin/env python3
"""Pipeline speed against tshark's bare field extraction on the same pcap.

Makes (once) a 200k+ packet two-path MPTCP capture with the testbed, then times
  baseline: the exact `tshark -T fields` call the pipeline makes, output discarded;
  ours:     `python -m pipeline analyze PCAP --db FILE` (process start to DuckDB file),
and prints packets/s for both, their ratio and where our extra time goes.

    python benchmarks/pipeline_bench.py [--pcap FILE] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline import extract, flows, store, tables  # noqa: E402

CAMPAIGN = REPO / "benchmarks" / "bench-capture.yaml"
OUT = REPO / "data" / "bench"


def make_capture() -> Path:
    pcaps = sorted(OUT.glob("**/server.pcap"))
    if pcaps:
        return pcaps[0]
    if os.geteuid() != 0:
        sys.exit("error: making the benchmark capture needs root (network namespaces); pass --pcap FILE instead")
    print(f"making the benchmark capture with the testbed ({CAMPAIGN.name}) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "capture", "run", str(CAMPAIGN), "--out", str(OUT)], check=True, cwd=REPO)
    return sorted(OUT.glob("**/server.pcap"))[0]


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_pair(a, b, repeat: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """Median (wall, CPU) seconds of ``a`` and of ``b``, runs interleaved so that a
    change in the machine's load affects both alike."""
    res = {a: ([], []), b: ([], [])}
    for _ in range(repeat):
        for fn in (a, b):
            w0, c0 = time.perf_counter(), child_cpu()
            fn()
            res[fn][0].append(time.perf_counter() - w0)
            res[fn][1].append(child_cpu() - c0)
    return tuple((statistics.median(res[f][0]), statistics.median(res[f][1])) for f in (a, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pcap", type=Path, help="pcap to time (default: make the two-path benchmark capture)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    a = ap.parse_args()
    pcap = a.pcap or make_capture()

    env = {**os.environ, "LC_ALL": "C"}
    cmd = extract.tshark_command(pcap)

    def baseline():
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)

    db = Path(tempfile.mkdtemp()) / "bench.duckdb"

    def ours():
        subprocess.run([sys.executable, "-m", "pipeline", "analyze", "-q", str(pcap), "--db", str(db)],
                       check=True, cwd=REPO, stderr=subprocess.DEVNULL)

    n = extract.read_packets(pcap).packets.height
    (t_base, c_base), (t_ours, c_ours) = timed_pair(baseline, ours, a.repeat)

    # Where our time goes, in-process (one run).
    phases = {}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env)
    phases["tshark (same call as baseline)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    pk = extract.parse_fields(proc.stdout)
    phases["parse tshark output (polars)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr = flows.build_trace(pk)
    phases["subflows, connections, DSN mapping"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for v in ("server", "client"):
        tabs = tables.trace_tables(tr, "bench", str(pcap), v, {}, [])
    phases["metrics, both vantages"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.write_duckdb(tables.complete(tabs), db)
    phases["DuckDB write"] = time.perf_counter() - t0

    size = pcap.stat().st_size / 1e6
    print(f"pcap: {pcap} ({size:.1f} MB, {n} TCP packets); median of {a.repeat} runs; 2 cores")
    print(f"{'':30s} {'wall':>8s} {'packets/s':>11s} {'CPU':>8s}")
    print(f"{'tshark bare field extraction':30s} {t_base:7.2f}s {n / t_base:11,.0f} {c_base:7.2f}s")
    print(f"{'pipeline pcap -> DuckDB':30s} {t_ours:7.2f}s {n / t_ours:11,.0f} {c_ours:7.2f}s")
    print(f"ratio (ours / tshark): wall {t_ours / t_base:.2f}x, CPU {c_ours / c_base:.2f}x   (target <= 1.5x)")
    print("where the time goes (one in-process run; the CLI adds interpreter start and imports):")
    for k, v in phases.items():
        print(f"  {k:38s} {v:6.2f} s")


if __name__ == "__main__":
    main()
