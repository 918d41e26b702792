"""The data under the paper figures' lines (issue 42): a throughput line per path and
second drops to 0 where the path delivered nothing (an outage) instead of bridging the
gap, as the claims count those seconds (CS244 Fig. 2: WiFi seemed to carry 0.2-0.9
Mbit/s through its 14-21 s outage)."""
from __future__ import annotations

import duckdb
import polars as pl

from labfig.db import per_second_sql
from pipeline.frames import Arrow, frame


def test_a_second_a_path_delivered_nothing_is_a_zero_not_a_bridge():
    rows = pl.DataFrame({
        "run_id": ["r1"] * 7 + ["r2"] * 2,
        "second": [0, 1, 4, 0, 1, 2, 3, 0, 2],
        "path": ["wifi", "wifi", "wifi", "lte", "lte", "lte", "lte", "wifi", "wifi"],
        "mbit": [5.0, 4.0, 3.0, 1.0, 2.0, 2.0, 2.0, 7.0, 6.0],
    })
    con = duckdb.connect()
    con.register("rows", Arrow(rows))
    got = frame(con, per_second_sql("SELECT * FROM rows"))
    series = {(r, p): got.filter((pl.col("run_id") == r) & (pl.col("path") == p)).sort("second")
              for r, p in [("r1", "wifi"), ("r1", "lte"), ("r2", "wifi")]}
    # every second from 0 to the run's last (of any path), 0 where the path had no row
    assert series["r1", "wifi"]["second"].to_list() == [0, 1, 2, 3, 4]
    assert series["r1", "wifi"]["mbit"].to_list() == [5.0, 4.0, 0.0, 0.0, 3.0]
    assert series["r1", "lte"]["mbit"].to_list() == [1.0, 2.0, 2.0, 2.0, 0.0]
    assert series["r2", "wifi"]["mbit"].to_list() == [7.0, 0.0, 6.0]  # runs apart: r1's seconds add none to r2
    assert got.height == 13
