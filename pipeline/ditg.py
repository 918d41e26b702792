"""D-ITG's decoded receiver log (``ITGDec LOG -l OUT``) -> the ``app_latency`` table.

ITGDec prints one line per packet::

    Flow>0001 Seq>      1 Src>  10.0.0.1/48736 Dest>  10.1.0.2/8999 txTime>8:19:48.882029 rxTime>8:19:48.882078 Size>  400

Times are wall-clock times of day (sender and receiver share the host's clock in
the testbed), so the one-way delay is exact; ``day_start_s`` places them in epoch
seconds, and a receive time earlier than its send time has crossed midnight.
"""
from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from . import schema
from .inputs import not_regular

_LINE = re.compile(
    r"Flow>\s*(\d+)\s+Seq>\s*(\d+).*?txTime>\s*(\d+):(\d+):(\d+(?:\.\d+)?)\s+rxTime>\s*(\d+):(\d+):(\d+(?:\.\d+)?)"
    r"\s+Size>\s*(\d+)"
)
DAY = 86400.0


def app_latency(text: str, run_id: str, day_start_s: float = 0.0, source: str = "ditg-recv.txt"
                ) -> tuple[pl.DataFrame, list[dict]]:
    """Application latency, per packet: receive time minus send time (D-ITG study).

    Lines that are not packet lines, or hold impossible times of day, are skipped and
    counted in a problems row; so are packets received before they were sent (by more
    than the half day that marks a midnight crossing), whose delay would be negative.
    """
    rows, bad, negative, lines = [], 0, 0, 0
    for line in text.splitlines():
        if not line.strip():
            continue
        lines += 1
        m = _LINE.search(line)
        if not m:
            bad += 1
            continue
        g = m.groups()
        h1, m1, s1, h2, m2, s2 = int(g[2]), int(g[3]), float(g[4]), int(g[5]), int(g[6]), float(g[7])
        # times of day, and a flow id and size that fit the table's 32-bit columns
        if not (h1 < 24 and m1 < 60 and s1 < 61 and h2 < 24 and m2 < 60 and s2 < 61
                and int(g[0]) < 2 ** 31 and int(g[8]) < 2 ** 31 and int(g[1]) < 2 ** 63):
            bad += 1
            continue
        tx = h1 * 3600 + m1 * 60 + s1
        rx = h2 * 3600 + m2 * 60 + s2
        if rx < tx - DAY / 2:
            rx += DAY
        if rx < tx:
            negative += 1
            continue
        # the delay from times of day: epoch seconds would round it to 0.2 µs
        rows.append((int(g[0]), int(g[1]), int(g[8]), day_start_s + tx, day_start_s + rx, (rx - tx) * 1000.0))
    problems = []
    if lines and not rows and not negative:
        problems.append(_problem(run_id, source, f"no D-ITG packet lines in {lines} lines (expected ITGDec -l output)"))
    elif bad:
        problems.append(_problem(run_id, source, f"{bad} of {lines} lines are not D-ITG packet lines; skipped"))
    if negative:
        problems.append(_problem(run_id, source, f"{negative} packets were received before they were sent "
                                                 "(clocks disagree?); skipped"))
    df = pl.DataFrame(rows, schema=["flow", "seq", "size_bytes", "sent_s", "received_s", "delay_ms"], orient="row")
    return schema.conform("app_latency", df.with_columns(run_id=pl.lit(run_id))), problems


def _problem(run_id: str, source: str, reason: str) -> dict:
    return {"run_id": run_id, "source": source, "stage": "load", "reason": reason}


def read(path: str | Path, run_id: str, day_start_s: float = 0.0) -> tuple[pl.DataFrame, list[dict]]:
    what = not_regular(path)
    if what:
        return schema.empty("app_latency"), [_problem(run_id, str(path), f"is {what}, not a regular file; skipped")]
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        return schema.empty("app_latency"), [_problem(run_id, str(path), f"cannot read ({e.strerror or e})")]
    return app_latency(text, run_id, day_start_s, str(path))
