"""plot --connection (issue 42): a pcap that holds several connections draws the one asked
for, matched in the sender's trace by its addresses, server port and start."""
from __future__ import annotations

import duckdb
import polars as pl
import pytest

from pipeline import runplots
from pipeline.frames import Arrow


@pytest.fixture()
def con():
    c = duckdb.connect()
    rows = pl.DataFrame({
        "run_id": ["r"] * 5, "trace": ["c.pcap", "c.pcap", "s.pcap", "s.pcap", "s.pcap"],
        "vantage": ["client", "client", "server", "server", "server"], "conn_id": [0, 1, 0, 1, 2],
        "direction": ["down"] * 5, "payload_bytes": [5000, 90000, 90000, 5000, 700],
        "start_s": [10.0, 20.0, 20.01, 10.01, 30.0], "client_addr": ["10.0.1.2", "10.0.1.2", "10.0.1.2", "10.0.1.2", "10.9.9.9"],
        "server_addr": ["10.0.0.1"] * 5, "server_port": [80, 80, 80, 80, 80]})
    c.register("rows", Arrow(rows))
    c.execute("CREATE TABLE connections AS SELECT * FROM rows")
    yield c
    c.close()


def test_the_default_is_the_connection_with_most_payload(con):
    v = runplots.run_view(con, "r")
    assert v.receiver == ("c.pcap", 1, 20.0) and v.sender == ("s.pcap", 0, 20.01)


def test_a_chosen_connection_is_matched_in_the_senders_trace(con):
    v = runplots.run_view(con, "r", conn=0)
    assert v.receiver == ("c.pcap", 0, 10.0) and v.sender == ("s.pcap", 1, 10.01) and v.direction == "down"


def test_an_unknown_connection_lists_the_runs(con):
    with pytest.raises(runplots.PlotError, match=r"no connection 7 .*connections: 0, 1"):
        runplots.run_view(con, "r", conn=7)
