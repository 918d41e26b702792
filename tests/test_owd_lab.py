"""One-way delay on the lab's own run (capture/campaigns/owd.yaml: 20 ms and 40 ms each
way, 100 Mbit/s, short queues so the packets hardly queue): per subflow, the median
one-way delay is the configured delay plus one frame's serialisation (within 1 ms), and
per path it matches the emulator's own per-packet sojourn (link_truth)."""
import json
import subprocess
from pathlib import Path

import polars as pl
import pytest
from conftest import NEEDS_LINKEM_TESTBED

from pipeline import owd, tables

REPO = Path(__file__).resolve().parent.parent
CAMPAIGN = REPO / "capture" / "campaigns" / "owd.yaml"

pytestmark = NEEDS_LINKEM_TESTBED


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from capture.campaign import run_campaign
    out = tmp_path_factory.mktemp("owd")
    s = run_campaign(CAMPAIGN, out, progress=False)
    assert not s["failed"], s["failed"]
    d = out / "owd" / "mp2-owd"
    return tables.analyze_run(d), json.loads((d / "meta.json").read_text()), d


def test_median_is_configured_delay_plus_serialisation(run):
    t, meta, _ = run
    o = t["owd_samples"].filter(pl.col("direction") == "down")
    assert (o["clock"] == owd.SAME_HOST).all()
    per = o.group_by("subflow_id", "path").agg(pl.len().alias("n"), pl.col("owd_ms").median().alias("median"))
    assert set(per["path"]) == {"wifi", "lte"}, per  # both subflows carried data
    for r in per.iter_rows(named=True):
        link = meta["paths"][r["path"]]["down"]
        want = link["delay_ms"] + 1514 * 8 / (link["rate_mbit"] * 1e3)
        assert r["n"] >= 100 and abs(r["median"] - want) <= 1.0, (r, want)


def test_matches_the_emulators_sojourn(run):
    t, _, _ = run
    o = t["owd_samples"].filter(pl.col("direction") == "down")
    lt = t["link_truth"].filter(pl.col("direction") == "down", ~pl.col("dropped"), pl.col("size_bytes") > 1000)
    for path in ("wifi", "lte"):
        ours = o.filter(pl.col("path") == path)["owd_ms"]
        emu = ((lt.filter(pl.col("path") == path)["departure_s"] - lt.filter(pl.col("path") == path)["arrival_s"])
               * 1000)
        # the emulator's time in the link is what the wire adds; the veth hops and the two
        # captures add tens of microseconds either way
        for q in (0.1, 0.5, 0.9):
            assert abs(ours.quantile(q) - emu.quantile(q)) < 0.3, (path, q, ours.quantile(q), emu.quantile(q))


def _tshark_data(pcap: Path) -> pl.DataFrame:
    """Every data packet of ``pcap`` as tshark reads it, with its TCP timestamp (TSval)."""
    fields = ["frame.number", "frame.time_epoch", "ip.src", "tcp.srcport", "ip.dst", "tcp.dstport", "tcp.seq_raw",
              "tcp.len", "tcp.options.timestamp.tsval"]
    r = subprocess.run(["tshark", "-r", str(pcap), "-Y", "tcp.len > 0", "-T", "fields", "-E", "separator=,",
                        *(a for f in fields for a in ("-e", f))], capture_output=True, text=True, check=True)
    rows = [ln.split(",") for ln in r.stdout.splitlines() if ln.count(",") == len(fields) - 1]
    return pl.DataFrame(rows, schema=["frame", "t", "src", "sport", "dst", "dport", "seq", "len", "tsval"],
                        orient="row").filter(pl.col("tsval") != "").with_columns(
        pl.col("frame").cast(pl.UInt32), pl.col("t").cast(pl.Float64))


def test_retransmitted_copies_are_timed_as_tsval_matching_times_them(run):
    """issue 43: the copies of a retransmitted segment are told apart by their IP ID; the
    median one-way delay over what we match is within 1 ms of the median over every
    delivered packet matched by its TSval (tshark's fields: an independent matching), and
    copies of segments sent more than once are among ours."""
    t, _, d = run
    key = ["src", "sport", "dst", "dport", "seq", "len", "tsval"]
    sent, got = _tshark_data(d / "server.pcap"), _tshark_data(d / "client.pcap")
    once = [x.filter(pl.len().over(key) == 1) for x in (sent, got)]
    by_tsval = once[0].join(once[1], on=key, suffix="_rcv").select(owd_ms=(pl.col("t_rcv") - pl.col("t")) * 1000)
    # the server's frames of segments it sent more than once
    again = sent.filter(pl.len().over("src", "sport", "seq", "len") > 1)
    assert again.height > 0, "no segment was sent twice: the run has no retransmission to tell apart"
    ours = t["owd_samples"].filter(pl.col("direction") == "down")
    assert by_tsval.height > 100 and abs(ours["owd_ms"].median() - by_tsval["owd_ms"].median()) <= 1.0
    assert ours.join(again.select("frame"), on="frame").height > 0, "no copy of a retransmitted segment matched"
