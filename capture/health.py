"""How healthy a run's host was: CPU steal and load from /proc, the CPU the run's own
processes used, and the emulator's stalls (linkem's ``--stats``), summarised for
meta.json.

These machines are shared VMs: a host stall inside a run makes the emulator send
late, and the pipeline would report that as the path's RTT. linkem records every
interval in which a frame left more than 1 ms late; a run whose worst lateness is
above the campaign's threshold (``stall_retry.late_ms``, 5 ms by default) is
``stalled``: the campaign repeats it (a bounded number of times) and the tables
carry the flag, so findings can leave it out.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
# /proc/stat's cpu line, in order (Linux >= 2.6.33)
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")


@dataclass(frozen=True)
class Sample:
    """One reading of the host's and this process's CPU counters."""
    t: float                      # time.monotonic()
    host: dict[str, int]          # /proc/stat cpu line, ticks
    own: tuple[int, int, int, int]  # /proc/self/stat utime, stime, cutime, cstime (ticks)
    loadavg: float


def sample() -> Sample:
    with open("/proc/stat") as f:
        cpu = f.readline().split()
    host = {k: int(v) for k, v in zip(STAT_FIELDS, cpu[1:])}
    with open("/proc/self/stat") as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()  # after "pid (comm) "
    own = tuple(int(fields[i]) for i in (11, 12, 13, 14))
    with open("/proc/loadavg") as f:
        load = float(f.read().split()[0])
    return Sample(time.monotonic(), host, own, load)


def host_load(a: Sample, b: Sample, cpus: int | None = None) -> dict:
    """CPU time of the whole host between two samples (steal: time the hypervisor gave
    our vCPUs to someone else), as seconds and as % of all CPUs' time."""
    d = {k: b.host.get(k, 0) - a.host.get(k, 0) for k in STAT_FIELDS}
    # guest time is already counted in user/nice
    total = sum(d[k] for k in STAT_FIELDS[:8]) or 1
    idle = d["idle"] + d["iowait"]
    return {
        "window_s": round(b.t - a.t, 3),
        "cpus": cpus or os.cpu_count(),
        "steal_s": round(d["steal"] / TICK, 3),
        "steal_pct": round(100 * d["steal"] / total, 2),
        "busy_pct": round(100 * (total - idle - d["steal"]) / total, 2),
        "loadavg_1m": [a.loadavg, b.loadavg],
    }


def run_cpu(a: Sample, b: Sample) -> dict:
    """CPU used by the run: this process and the children it reaped in between (the
    emulators, tcpdump, nginx, wget or D-ITG, and the commands that built the
    testbed). Kernel work done on their behalf in softirq counts where Linux charges it."""
    d = [y - x for x, y in zip(a.own, b.own)]
    user, system = (d[0] + d[2]) / TICK, (d[1] + d[3]) / TICK
    wall = max(b.t - a.t, 1e-9)
    return {"user_s": round(user, 3), "system_s": round(system, 3), "cpu_s": round(user + system, 3),
            "pct_of_one_core": round(100 * (user + system) / wall, 1)}


def read_linkem_stats(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def stall_summary(per_path: dict[str, dict | None], stall_ms: float) -> dict:
    """One run's stalls from linkem's per-path ``--stats`` (None for a path without
    linkem, e.g. tbf): totals over paths and directions, the worst, when and where."""
    late_n = late_iv = lag_n = lag_iv = 0
    worst = worst_lag = None
    worst_at = worst_where = None
    measured = {p: s for p, s in per_path.items() if s}
    for p, s in measured.items():
        for d in ("down", "up"):
            late, lag = s[d]["late"], s[d]["reader_lag"]
            late_n += late["late_events"]
            late_iv += late["intervals"]
            lag_n += lag["late_events"]
            lag_iv += lag["intervals"]
            if late["worst_ms"] is not None and (worst is None or late["worst_ms"] > worst):
                worst, worst_at, worst_where = late["worst_ms"], late["worst_at_s"], f"{p} {d}"
            if lag["worst_ms"] is not None and (worst_lag is None or lag["worst_ms"] > worst_lag):
                worst_lag = lag["worst_ms"]
    out = {
        "measured": bool(measured),
        "late_threshold_ms": next((s["late_threshold_ms"] for s in measured.values()), None),
        "stall_ms": stall_ms,
        "late_packets": late_n if measured else None,
        "late_intervals": late_iv if measured else None,
        "worst_late_ms": worst,
        "worst_late_at_s": worst_at,
        "worst_late_where": worst_where,
        "reader_lag_packets": lag_n if measured else None,
        "reader_lag_intervals": lag_iv if measured else None,
        "worst_reader_lag_ms": worst_lag,
        "stalled": (worst is not None and worst > stall_ms) if measured else None,
    }
    out["paths"] = {p: ({d: {"late": s[d]["late"], "reader_lag": s[d]["reader_lag"]} for d in ("down", "up")}
                        | {"cpu": s.get("cpu"), "loop": s.get("loop")}) if s else None
                    for p, s in per_path.items()}
    return out
