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

_LINE = re.compile(
    r"Flow>\s*(\d+)\s+Seq>\s*(\d+).*?txTime>\s*(\d+):(\d+):([\d.]+)\s+rxTime>\s*(\d+):(\d+):([\d.]+)\s+Size>\s*(\d+)"
)
DAY = 86400.0


def app_latency(text: str, run_id: str, day_start_s: float = 0.0) -> pl.DataFrame:
    """Application latency, per packet: receive time minus send time (D-ITG study)."""
    rows = []
    for m in _LINE.finditer(text):
        g = m.groups()
        tx = int(g[2]) * 3600 + int(g[3]) * 60 + float(g[4])
        rx = int(g[5]) * 3600 + int(g[6]) * 60 + float(g[7])
        if rx < tx - DAY / 2:
            rx += DAY
        # the delay from times of day: epoch seconds would round it to 0.2 µs
        rows.append((int(g[0]), int(g[1]), int(g[8]), day_start_s + tx, day_start_s + rx, (rx - tx) * 1000.0))
    df = pl.DataFrame(rows, schema=["flow", "seq", "size_bytes", "sent_s", "received_s", "delay_ms"], orient="row")
    return schema.conform("app_latency", df.with_columns(run_id=pl.lit(run_id)))


def read(path: str | Path, run_id: str, day_start_s: float = 0.0) -> pl.DataFrame:
    return app_latency(Path(path).read_text(errors="replace"), run_id, day_start_s)
