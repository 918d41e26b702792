"""Measured metrics against the link emulator's own ground truth, on the committed
linkem sample runs: configured delay/loss in, measured RTT/loss out, and the
emulator's per-packet drop log against retransmissions counted from the pcaps."""
import json
import math
from pathlib import Path

import polars as pl
import pytest

from pipeline import tables

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
RUNS = sorted(d for d in SAMPLES.glob("*") if list(d.glob("linkem-*.csv")))

pytestmark = pytest.mark.skipif(not RUNS, reason="no sample run with linkem logs in data/samples")


@pytest.fixture(scope="module", params=RUNS, ids=[d.name for d in RUNS])
def run(request):
    d = request.param
    return tables.analyze_run(d), json.loads((d / "meta.json").read_text())


def data_drops(t, path):
    """Server -> client data frames (bigger than a bare ACK) the emulator dropped."""
    lt = t["link_truth"].filter(path=path, direction="down", dropped=True)
    return lt.filter(pl.col("size_bytes") > 100).height


def test_retransmissions_equal_emulator_drops(run):
    t, meta = run
    server = t["subflows"].filter(vantage="server")
    for sub in server.iter_rows(named=True):
        # Every data frame dropped on the wire is retransmitted once (TCP recovers each
        # loss); this run has no spurious retransmission.
        assert sub["retransmitted_packets"] == data_drops(t, sub["path"]), sub["path"]


def test_packets_missing_at_client_equal_emulator_drops(run):
    t, _ = run
    sub = t["subflows"]
    for path in sub["path"].unique():
        n = {r["vantage"]: r["data_packets"] for r in sub.filter(path=path).iter_rows(named=True)}
        assert n["server"] - n["client"] == data_drops(t, path), path


def test_min_rtt_matches_configured_delay(run):
    t, meta = run
    for sub in t["subflows"].filter(vantage="server").iter_rows(named=True):
        prof = meta["paths"][sub["path"]]
        rtt = prof["down"]["delay_ms"] + prof["up"]["delay_ms"]
        serialise_ms = 1514 * 8 / (prof["down"]["rate_mbit"] * 1e3)  # one full frame at the bottleneck
        assert rtt <= sub["rtt_min_ms"] <= rtt + serialise_ms + 0.5, sub["path"]


def test_loss_rate_agrees_with_configured_loss(run):
    t, meta = run
    for sub in t["subflows"].filter(vantage="server").iter_rows(named=True):
        p = meta["paths"][sub["path"]]["down"].get("loss") or 0
        queue_drops = t["link_truth"].filter(path=sub["path"], direction="down", reason="queue").height
        if queue_drops:
            continue  # the bottleneck queue adds losses the configuration does not state
        n = sub["data_packets"]
        # binomial: within 3 standard deviations of the configured probability
        assert abs(sub["loss_rate"] - p) <= 3 * math.sqrt(p * (1 - p) / n) + 1 / n, sub["path"]
