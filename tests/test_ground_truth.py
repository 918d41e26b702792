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


SENDER = {"down": "server", "up": "client"}
RECEIVER = {"down": "client", "up": "server"}
BULK = 50  # data packets: the transfer itself, not a request or iperf3's control messages


def data_drops(t, path, direction):
    """Data frames (bigger than a bare ACK) of one direction the emulator dropped."""
    lt = t["link_truth"].filter(path=path, direction=direction, dropped=True)
    return lt.filter(pl.col("size_bytes") > 100).height


def bulk(t, vantage_of):
    """Subflow rows of the bulk transfer (downloads, or the iperf3 upload) seen by
    ``vantage_of[direction]``: the sender's or the receiver's trace."""
    sub = t["subflows"]
    big = sub.filter(pl.col("data_packets") >= BULK).select("path", "direction").unique()
    rows = sub.join(big, on=["path", "direction"])
    return rows.filter(pl.col("vantage") == pl.col("direction").replace_strict(vantage_of))


def test_retransmissions_equal_emulator_drops(run):
    t, meta = run
    sent = bulk(t, SENDER)
    assert sent.height > 0
    for (path, direction), g in sent.group_by("path", "direction"):
        # Every data frame dropped on the wire is retransmitted once (TCP recovers each
        # loss); these runs have no spurious retransmission.
        assert g["retransmitted_packets"].sum() == data_drops(t, path, direction), (path, direction)


def test_packets_missing_at_the_receiver_equal_emulator_drops(run):
    t, _ = run
    sent = bulk(t, SENDER).group_by("path", "direction").agg(pl.col("data_packets").sum().alias("sent"))
    got = bulk(t, RECEIVER).group_by("path", "direction").agg(pl.col("data_packets").sum().alias("got"))
    for r in sent.join(got, on=["path", "direction"]).iter_rows(named=True):
        assert r["sent"] - r["got"] == data_drops(t, r["path"], r["direction"]), r


def test_min_rtt_matches_configured_delay(run):
    t, meta = run
    for sub in bulk(t, SENDER).filter(pl.col("data_packets") >= BULK).iter_rows(named=True):
        prof = meta["paths"][sub["path"]]
        rtt = prof["down"]["delay_ms"] + prof["up"]["delay_ms"]
        serialise_ms = 1514 * 8 / (prof[sub["direction"]]["rate_mbit"] * 1e3)  # one full frame at the bottleneck
        assert rtt <= sub["rtt_min_ms"] <= rtt + serialise_ms + 0.5, (sub["path"], sub["direction"])


def test_loss_rate_agrees_with_configured_loss(run):
    t, meta = run
    for sub in bulk(t, SENDER).filter(pl.col("data_packets") >= BULK).iter_rows(named=True):
        d = sub["direction"]
        p = meta["paths"][sub["path"]][d].get("loss") or 0
        queue_drops = t["link_truth"].filter(path=sub["path"], direction=d, reason="queue").height
        if queue_drops:
            continue  # the bottleneck queue adds losses the configuration does not state
        n = sub["data_packets"]
        # binomial: within 3 standard deviations of the configured probability
        assert abs(sub["loss_rate"] - p) <= 3 * math.sqrt(p * (1 - p) / n) + 1 / n, (sub["path"], d)
