#!/usr/bin/env python3
"""Generates a synthetic LTE-like Mahimahi delivery trace.

The rate follows a Markov-modulated process: a chain over rate levels (Mbit/s)
that holds each level for an exponentially distributed time (mean --hold s) and
then moves to a neighbouring level (±1, occasionally ±2), with per-millisecond
multiplicative noise. Each millisecond gets floor(accumulated bytes / 1500)
delivery opportunities (one line "<ms>" per 1500-byte opportunity), so the
long-run rate is exact. Pure standard library; deterministic for a given seed.

  python3 capture/linkem/gen_trace.py --seed 1 --duration 60 \\
      --levels 2,5,10,20,40 --hold 2.0 --start 10 > traces/lte_driving.trace
"""
from __future__ import annotations

import argparse
import random
import sys


def rates(seed: int, duration_s: float, levels: list[float], hold_s: float, start: float, noise: float) -> list[float]:
    """The rate (Mbit/s) of each millisecond 1 .. duration."""
    rng = random.Random(seed)
    idx = min(range(len(levels)), key=lambda i: abs(levels[i] - start))
    n_ms = int(duration_s * 1000)
    next_switch = rng.expovariate(1 / hold_s) * 1000
    out: list[float] = []
    for ms in range(1, n_ms + 1):
        if ms >= next_switch:
            step = rng.choice([-1, 1]) * (2 if rng.random() < 0.15 else 1)
            idx = max(0, min(len(levels) - 1, idx + step))
            next_switch = ms + rng.expovariate(1 / hold_s) * 1000
        out.append(levels[idx] * max(0.0, rng.gauss(1.0, noise)))
    return out


def generate(seed: int, duration_s: float, levels: list[float], hold_s: float, start: float, noise: float,
             mean: float | None = None) -> list[int]:
    """The trace's timestamps. ``mean`` (Mbit/s): every millisecond's rate is scaled by
    one factor so that the trace's mean rate is ``mean`` (a short trace's level process
    need not average to its levels' mean)."""
    r = rates(seed, duration_s, levels, hold_s, start, noise)
    if mean is not None:
        k = mean / (sum(r) / len(r))
        r = [x * k for x in r]
    n_ms = len(r)
    acc = 0.0
    out: list[int] = []
    for ms, rate in enumerate(r, start=1):
        acc += rate * 1e6 / 8 / 1000  # bytes this millisecond
        while acc >= 1500:
            out.append(ms)
            acc -= 1500
    if not out or out[-1] != n_ms:
        out.append(n_ms)  # the last timestamp is the period of the loop
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds (the trace's period)")
    ap.add_argument("--levels", default="2,5,10,20,40", help="rate levels in Mbit/s")
    ap.add_argument("--hold", type=float, default=2.0, help="mean seconds at one level")
    ap.add_argument("--start", type=float, default=10.0, help="starting level (nearest)")
    ap.add_argument("--noise", type=float, default=0.3, help="per-ms relative noise (sd)")
    ap.add_argument("--mean", type=float, help="scale the rates so the trace's mean is this (Mbit/s)")
    ap.add_argument("-o", "--output", help="file (default stdout)")
    a = ap.parse_args()
    levels = sorted(float(x) for x in a.levels.split(","))
    lines = generate(a.seed, a.duration, levels, a.hold, a.start, a.noise, a.mean)
    text = "".join(f"{v}\n" for v in lines)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    mean = (len(lines) - 1) * 1500 * 8 / a.duration / 1e6
    print(f"{len(lines)} opportunities, mean {mean:.1f} Mbit/s over {a.duration:g} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
