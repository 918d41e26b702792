#!/usr/bin/env python3
"""Benchmark of capture/linkem: two paths, 100 Mbit/s each, both directions at once.

Builds the testbed's namespaces (capture.topology through capture.linkem_lab.LinkBed:
client, server, one emulator namespace per path; always deleted), runs one linkem per path with
rate_mbit=R and delay_ms=D in both directions, and one iperf3 --bidir per path
(TCP by default, or UDP at a given rate), all four flows simultaneously.

Prints:
  * achieved throughput per path and direction (iperf3 receiver side goodput,
    and the rate of Ethernet frame bytes leaving linkem according to its log,
    headers included, over the run minus its first and last second);
  * delay error percentiles from the log. The error of a forwarded packet is
    departure_s - expected departure, where the expected departure is replayed
    from the logged arrivals with linkem's own model: bottleneck FIFO at the
    configured rate (serialisation of the IP bytes, i.e. frame - 14) plus the
    configured delay, never earlier than the previous packet's departure. So the
    error isolates the emulator's timing error from the queueing and
    serialisation it is supposed to add. (arrival_s is the kernel receive
    timestamp; departure_s is taken just before the send call.)
  * CPU use of each linkem process (user+system, % of one core) over the run, and
    the line `linkem CPU: A % of one core per path (max)`;
  * what linkem itself recorded as late (its --stats): the line
    `late > 1 ms: K packets in M intervals, worst W ms` (all paths and directions);
  * how busy the whole host was (/proc/stat: every core, everything running), since
    linkem's figure includes the receiving stacks (a veth send() runs them inline).

With --repeat N it runs N times, prints each run and then the worst of the N
(highest error percentiles, CPU and lateness, lowest throughput).

Needs root, iperf3, ethtool, and the release build of linkem. Measure under the
shared lock (`flock /work/wt/heavy.lock ...`) on a shared machine.
Usage: python3 benchmarks/linkem_bench.py [--duration 10] [--rate 100] [--delay 10]
       [--udp MBIT] [--spin-us N] [--rt-prio N] [--queue-packets N] [--repeat N]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

from capture import linkem_lab as lab

TCK = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> dict[str, int]:
    """utime+stime per thread name (and 'total') of a process."""
    out = {}
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1: stat.rindex(")")]
        f = stat[stat.rindex(")") + 2:].split()
        t = int(f[11]) + int(f[12])
        out[name] = out.get(name, 0) + t
        total += t
    out["total"] = total
    return out


def host_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot (/proc/stat; idle and iowait are not busy)."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(f) - f[3] - f[4], sum(f)


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(q / 100 * (len(xs) - 1)))))
    return xs[i]


def us(s: str) -> int:
    """Epoch seconds with 6 decimals -> integer microseconds (exact)."""
    a, _, b = s.partition(".")
    return int(a) * 1_000_000 + int((b + "000000")[:6])


def analyse(log: Path, rate_bps: float, delay_s: float, t0: float, t1: float):
    """Replays linkem's model in integer nanoseconds (floats of epoch seconds
    would accumulate rounding drift over long busy periods)."""
    by_dir: dict[str, list[tuple[int, int, int, int | None]]] = {"down": [], "up": []}
    with open(log) as f:
        for r in csv.DictReader(f):
            dep = us(r["departure_s"]) * 1000 if r["dropped"] == "0" else None
            by_dir[r["direction"]].append((int(r["packet_id"]), int(r["size_bytes"]), us(r["arrival_s"]) * 1000, dep))
    delay_ns = round(delay_s * 1e9)
    t0_ns, t1_ns = int(t0 * 1e9), int(t1 * 1e9)
    res = {}
    for d, rows in by_dir.items():
        rows.sort()
        tail = -(1 << 62)
        prev = -(1 << 62)
        errs = []
        sent_bytes = 0
        drops = 0
        for _pid, size, arr, dep in rows:
            if dep is None:
                drops += 1
                continue
            tail = max(arr, tail) + round(max(size - 14, 1) * 8 * 1e9 / rate_bps)
            exp = max(tail + delay_ns, prev)
            prev = exp
            errs.append((dep - exp) / 1e6)
            if t0_ns <= dep <= t1_ns:
                sent_bytes += size
        errs.sort()
        res[d] = {
            "packets": len(rows), "dropped": drops,
            "log_mbit": sent_bytes * 8 / (t1 - t0) / 1e6,
            "err_ms": {"min": errs[0] if errs else float("nan"), "p50": pct(errs, 50), "p99": pct(errs, 99),
                       "p99.9": pct(errs, 99.9), "max": errs[-1] if errs else float("nan")},
            "abs_errs": sorted(abs(e) for e in errs),
        }
    return res


def late_summary(stats: list[dict | None]) -> dict:
    """linkem's own record of late departures (--stats), over paths and directions."""
    k = m = 0
    worst = 0.0
    for st in stats:
        for d in ("down", "up"):
            late = (st or {}).get(d, {}).get("late") if st else None
            if late:
                k += late["late_events"]
                m += late["intervals"]
                worst = max(worst, late["worst_ms"] or 0.0)
    return {"packets": k, "intervals": m, "worst_ms": worst}


def run_once(a, extra: tuple[str, ...]) -> dict:
    d = {"delay_ms": a.delay, "rate_mbit": a.rate, "queue_packets": a.queue_packets}
    config = json.dumps({"seed": 1, "down": d, "up": d})
    with lab.LinkBed(2, prefix=f"lkb-{os.getpid()}-", linkem=a.linkem) as t:
        logs = [t.tmp / f"path{i}.csv" for i in range(2)]
        lk = [t.start_linkem(i, config, logs[i], extra) for i in range(2)]
        servers = []
        for i in range(2):
            servers.append(t.popen(t.server, "iperf3", "-s", "-1", "-B", t.server_ip(i), "-p", str(5201 + i),
                                   stdout=open(t.tmp / f"srv{i}.json", "w"), stderr=open(t.tmp / f"srv{i}.err", "w")))
        time.sleep(0.5)
        cmd_extra = ["-u", "-b", f"{a.udp}M", "-l", "1400"] if a.udp else []
        cpu0 = [cpu_ticks(p.pid) for p in lk]
        host0 = host_ticks()
        w0 = time.time()
        clients = []
        for i in range(2):
            clients.append(t.popen(t.client, "iperf3", "-c", t.server_ip(i), "-B", t.client_ip(i), "-p", str(5201 + i),
                                   "--bidir", "-t", str(a.duration), "-J", *cmd_extra,
                                   stdout=open(t.tmp / f"cli{i}.json", "w"), stderr=open(t.tmp / f"cli{i}.err", "w")))
        for c in clients:
            c.wait(a.duration + 30)
        w1 = time.time()
        cpu1 = [cpu_ticks(p.pid) for p in lk]
        host1 = host_ticks()
        rcs = [t.stop(p) for p in lk]
        if a.keep:
            import shutil
            Path(a.keep).mkdir(parents=True, exist_ok=True)
            for lg in logs:
                shutil.copy(lg, Path(a.keep) / lg.name)
        stderr = [(t.tmp / f"linkem{i}.stderr").read_text() for i in range(2)]
        stats = []
        for i in range(2):
            try:
                stats.append(json.loads(t.stats_path(i).read_text()))
            except (OSError, ValueError):
                stats.append(None)
        results = {"config": {"rate_mbit": a.rate, "delay_ms": a.delay, "duration_s": a.duration,
                              "traffic": f"UDP {a.udp} Mbit/s" if a.udp else "TCP", "extra": list(extra)},
                   "paths": []}
        all_abs: list[float] = []
        for i in range(2):
            try:
                j = json.loads((t.tmp / f"cli{i}.json").read_text())
                end = j["end"]
                if a.udp:
                    up_mbit = end["sum"]["bits_per_second"] / 1e6
                    down_mbit = end["sum_bidir_reverse"]["bits_per_second"] / 1e6
                else:
                    up_mbit = end["sum_received"]["bits_per_second"] / 1e6
                    down_mbit = end["sum_received_bidir_reverse"]["bits_per_second"] / 1e6
            except Exception as e:  # noqa: BLE001
                print(f"path {i}: iperf3 output unreadable: {e}: {(t.tmp / f'cli{i}.err').read_text()}", file=sys.stderr)
                up_mbit = down_mbit = float("nan")
            an = analyse(logs[i], a.rate * 1e6, a.delay / 1e3, w0 + 1, w1 - 1)
            cpu = {k: (cpu1[i].get(k, 0) - cpu0[i].get(k, 0)) / TCK / (w1 - w0) * 100 for k in cpu1[i]}
            p = {"path": i, "linkem_rc": rcs[i], "iperf3_mbit": {"down": down_mbit, "up": up_mbit},
                 "cpu_pct": cpu, "linkem_stderr": stderr[i].strip().splitlines()}
            for dname in ("down", "up"):
                all_abs += an[dname].pop("abs_errs")
                p[dname] = an[dname]
            results["paths"].append(p)
        all_abs.sort()
        results["all_abs_err_ms"] = {"p50": pct(all_abs, 50), "p99": pct(all_abs, 99), "max": all_abs[-1] if all_abs else None,
                                     "n": len(all_abs)}
        results["linkem_cpu_pct_max"] = max(p["cpu_pct"]["total"] for p in results["paths"])
        results["host_busy_pct"] = (host1[0] - host0[0]) / max(host1[1] - host0[1], 1) * 100

        results["late"] = late_summary(stats) if t.has_stats else None
        results["log_mbit_min"] = min(p[dn]["log_mbit"] for p in results["paths"] for dn in ("down", "up"))
    return results


def lines(r: dict) -> list[str]:
    """The three summary lines of a run (or of the worst of several)."""
    aa, lt = r["all_abs_err_ms"], r["late"]
    late = (f"late > 1 ms: {lt['packets']} packets in {lt['intervals']} intervals, worst {lt['worst_ms']:.1f} ms"
            if lt else "late > 1 ms: not recorded by this linkem (no --stats)")
    return [f"all directions |error|: p50 {aa['p50']:.4f} ms, p99 {aa['p99']:.4f} ms, max {aa['max']:.4f} ms "
            f"over {aa['n']} packets",
            f"linkem CPU: {r['linkem_cpu_pct_max']:.0f} % of one core per path (max)",
            late,
            f"log throughput: {r['log_mbit_min']:.1f} Mbit/s of frame bytes per path and direction (min)"]


def report(results: dict) -> None:
    c = results["config"]
    print(f"linkem bench: 2 paths x 2 directions, {c['traffic']}, rate {c['rate_mbit']} Mbit/s, delay {c['delay_ms']} ms, "
          f"{c['duration_s']} s, linkem options {' '.join(c['extra']) or '(defaults)'}")
    print(f"{'path':>4} {'dir':>4} {'iperf3 Mbit/s':>13} {'log Mbit/s':>10} {'pkts':>8} {'drops':>6} "
          f"{'err p50 ms':>10} {'p99 ms':>8} {'p99.9 ms':>8} {'max ms':>8} {'min ms':>8}")
    for p in results["paths"]:
        for dname in ("down", "up"):
            r = p[dname]
            e = r["err_ms"]
            print(f"{p['path']:>4} {dname:>4} {p['iperf3_mbit'][dname]:>13.1f} {r['log_mbit']:>10.1f} {r['packets']:>8} "
                  f"{r['dropped']:>6} {e['p50']:>10.4f} {e['p99']:>8.4f} {e['p99.9']:>8.4f} {e['max']:>8.4f} {e['min']:>8.4f}")
    for line in lines(results):
        print(line)
    print(f"host busy: {results['host_busy_pct']:.0f} % of all {os.cpu_count()} cores (everything: iperf3, stacks, linkem, others)")
    for p in results["paths"]:
        threads = ", ".join(f"{k} {v:.0f}%" for k, v in sorted(p["cpu_pct"].items()) if k != "total")
        print(f"path {p['path']} linkem CPU: {p['cpu_pct']['total']:.0f}% of one core ({threads}); exit {p['linkem_rc']}")
        for line in p["linkem_stderr"]:
            print(f"    {line}")


def worst(runs: list[dict]) -> dict:
    """The worst of several runs, figure by figure."""
    aa = [r["all_abs_err_ms"] for r in runs]
    lt = [r["late"] for r in runs if r["late"]]
    return {"all_abs_err_ms": {"p50": max(x["p50"] for x in aa), "p99": max(x["p99"] for x in aa),
                               "max": max(x["max"] for x in aa), "n": min(x["n"] for x in aa)},
            "linkem_cpu_pct_max": max(r["linkem_cpu_pct_max"] for r in runs),
            "late": {"packets": max(x["packets"] for x in lt), "intervals": max(x["intervals"] for x in lt),
                     "worst_ms": max(x["worst_ms"] for x in lt)} if lt else None,
            "log_mbit_min": min(r["log_mbit_min"] for r in runs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--rate", type=float, default=100, help="rate_mbit per direction and path")
    ap.add_argument("--delay", type=float, default=10, help="delay_ms per direction")
    ap.add_argument("--udp", type=float, default=0, help="use UDP at this many Mbit/s per flow instead of TCP")
    ap.add_argument("--queue-packets", type=int, default=1000)
    ap.add_argument("--spin-us", type=int, default=None)
    ap.add_argument("--rt-prio", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=1, metavar="N", help="run N times; print each run and the worst")
    ap.add_argument("--linkem", type=Path, default=None,
                    help="the linkem binary to measure (default: the release build), e.g. an older one to compare")
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--keep", help="copy the linkem logs into this directory")
    a = ap.parse_args()
    why = lab.can_run()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    extra: tuple[str, ...] = ()
    if a.spin_us is not None:
        extra += ("--spin-us", str(a.spin_us))
    if a.rt_prio is not None:
        extra += ("--rt-prio", str(a.rt_prio))
    runs = []
    for k in range(max(a.repeat, 1)):
        if a.repeat > 1:
            print(f"--- run {k + 1} of {a.repeat}")
        runs.append(run_once(a, extra))
        report(runs[-1])
    if a.repeat > 1:
        print(f"--- worst of {len(runs)} runs")
        for line in lines(worst(runs)):
            print(line)
    if a.json:
        Path(a.json).write_text(json.dumps({"runs": runs, "worst": worst(runs)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
