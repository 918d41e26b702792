"""How long a campaign takes: a rough wall-time model per run, for the quick-scale
budget and `python -m capture validate` (pure: no capture needed)."""
from __future__ import annotations

import heapq
import math
from pathlib import Path

from .ditg_schedule import drain_limit_s, draw, schedule_seed
from .spec import SIZED, RunSpec, direction, expand, load

RUN_OVERHEAD_S = {"http": 2.5, "ditg": 4.5, "iperf3-down": 4.5}  # namespaces, linkem, tcpdump, teardown (measured here)
# A capture repeats a run whose emulator stalled (a frame > 5 ms late), up to the campaign's
# `stall_repeats` times. The stalls came at a rate per second of run, measured on this host
# (2026-11-30, runs' meta.json): 63 stalled attempts in 9,173 s of attempts (the quick scale's
# 76 runs of all five campaigns, 5 stalled; the standard scale's deng, 1 in 946 s, and ferlin,
# 53 in 6,866 s). That quick capture took 1,547 s against the model's 1,080 s: the runs
# themselves 0.94x their model, the five repeats about 370 s, the jobs' starts the rest.
STALL_PER_S = 63 / 9173
# what the workflow adds to each run: Snakemake starting the job, `python -m capture run
# --run` importing and checking the kernel (the same quick capture: 2.2 s a job beyond the
# runs' own times and repeats)
WORKFLOW_JOB_S = 2.2


def _trace_mean_mbit(path: Path) -> float:
    try:
        lines = path.read_text().split()
        return (len(lines) - 1) * 1500 * 8 / (int(lines[-1]) / 1000) / 1e6
    except (OSError, ValueError, IndexError, ZeroDivisionError):
        return 10.0


def path_estimate(profile: dict, base_dir: Path | None = None) -> tuple[float, float]:
    """(expected TCP throughput in Mbit/s, base RTT in s) of a link profile, for planning:
    the bottleneck rate, capped by the Mathis et al. loss bound 1.22·MSS/(RTT·√p)."""
    down, up = direction(profile, "down"), direction(profile, "up")
    rtt = (float(down.get("delay_ms", 0)) + float(up.get("delay_ms", 0))) / 1000 + 0.0005
    if "trace" in down:
        t = Path(down["trace"])
        rate = _trace_mean_mbit(t if t.is_absolute() else (base_dir or Path.cwd()) / t)
    else:
        rate = float(down.get("rate_mbit", 1000))
    loss = down.get("loss", 0)
    p = float(loss) if not isinstance(loss, dict) else (
        loss.get("p", 0) if loss.get("model") == "bernoulli" else
        loss.get("p_gb", 0) / max(loss.get("p_gb", 0) + loss.get("p_bg", 1), 1e-9) * loss.get("loss_bad", 1))
    if down.get("llr"):  # the radio's loss, resent by the link: TCP sees what every attempt lost
        p = p ** (1 + int(down["llr"]["retries"]))
    if p > 0:
        rate = min(rate, 1.22 * 1448 * 8 / (max(rtt, 0.002) * p ** 0.5) / 1e6)
    return rate * 0.85, rtt


def _ditg_drain_s(spec: RunSpec, base: Path | None) -> float:
    """How long a D-ITG test drains after its schedule ends: the scheduled bytes at the
    paths' expected TCP rate, beyond the test's length, at most the drain limit."""
    profile = spec.workload[len("ditg-"):]
    s = draw(profile, spec.duration_s, schedule_seed(spec.campaign_seed, profile, spec.repetition))
    rate = sum(path_estimate(spec.profiles[p], base)[0] for p in spec.paths)
    return min(max(0.0, s.bytes * 8 / (rate * 1e6) - spec.duration_s), drain_limit_s(spec.duration_s))


def estimate_s(spec: RunSpec, base_dir: Path | None = None) -> float:
    """Rough wall time of one run (seconds): set-up/teardown plus the workload."""
    if spec.workload == "iperf3-down":
        return RUN_OVERHEAD_S["iperf3-down"] + spec.duration_s
    base = Path(spec.base_dir) if spec.base_dir else base_dir
    if spec.workload not in SIZED:
        return RUN_OVERHEAD_S["ditg"] + spec.duration_s + _ditg_drain_s(spec, base)
    paths = spec.paths if spec.mode != "backup" else [spec.primary]
    est = [path_estimate(spec.profiles[p], base) for p in paths]
    rate = sum(r for r, _ in est)
    rtt = max(t for _, t in est)
    outage = sum(o[1] - o[0] for p in spec.paths for o in spec.profiles[p].get("outages", []))
    t = 2.5 * rtt + 6 * rtt + spec.size_bytes * 8 / (rate * 1e6) + outage / max(len(spec.paths), 1)
    return RUN_OVERHEAD_S["http"] + min(t, spec.timeout_s)


def expected_s(spec: RunSpec, base_dir: Path | None = None) -> float:
    """Expected wall time of one run (seconds) with the repeats after emulator stalls:
    each attempt of the model's length stalls with probability q = 1 - exp(-rate·t), so
    the attempts expected are 1 + q + ... + q^repeats."""
    t = estimate_s(spec, base_dir)
    q = 1 - math.exp(-STALL_PER_S * t)
    return t * sum(q ** i for i in range(spec.stall_repeats + 1))


def workflow_s(spec: RunSpec, base_dir: Path | None = None) -> float:
    """Expected wall time of one capture job of the workflow (`make reproduce-all`):
    the run with its repeats, plus the job's start."""
    return WORKFLOW_JOB_S + expected_s(spec, base_dir)


def plan(path: str | Path, scale: str | None = None, hosts: tuple[int, ...] = ()) -> dict:
    """Run count and estimated capture time of a campaign file at ``scale``; with
    ``hosts``, the wall time on each number of hosts too (``wall_s``: {hosts: seconds})."""
    name, runs = run_times(path, scale)
    out = {"campaign": name, "scale": scale, "runs": len(runs), "estimated_s": round(sum(runs), 1)}
    if hosts:
        out["wall_s"] = {n: round(makespan_s(runs, n), 1) for n in hosts}
    return out


def run_times(path: str | Path, scale: str | None = None) -> tuple[str, list[float]]:
    """A campaign file's name and the estimated time of each of its runs at ``scale``."""
    path = Path(path)
    doc = load(path, scale)
    return doc["name"], [estimate_s(s) for s in expand(doc, base_dir=path.resolve().parent, scale=scale)]


def makespan_s(runs: list[float], hosts: int) -> float:
    """Wall time of independent runs on ``hosts`` machines, one run at a time each (a
    capture takes a node of its own): longest run first to the least loaded host, as a
    scheduler handing the next job to the first free node does at best (within 4/3 of
    the optimum, Graham 1969)."""
    if hosts < 1:
        raise ValueError("hosts must be at least 1")
    load = [0.0] * min(hosts, max(len(runs), 1))
    heapq.heapify(load)
    for r in sorted(runs, reverse=True):
        heapq.heapreplace(load, load[0] + r)
    return max(load)
