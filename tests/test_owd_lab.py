"""One-way delay on the lab's own run (capture/campaigns/owd.yaml: 20 ms and 40 ms each
way, 100 Mbit/s, short queues so the packets hardly queue): per subflow, the median
one-way delay is the configured delay plus one frame's serialisation (within 1 ms), and
per path it matches the emulator's own per-packet sojourn (link_truth)."""
import json
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
    return tables.analyze_run(d), json.loads((d / "meta.json").read_text())


def test_median_is_configured_delay_plus_serialisation(run):
    t, meta = run
    o = t["owd_samples"].filter(pl.col("direction") == "down")
    assert (o["clock"] == owd.SAME_HOST).all()
    per = o.group_by("subflow_id", "path").agg(pl.len().alias("n"), pl.col("owd_ms").median().alias("median"))
    assert set(per["path"]) == {"wifi", "lte"}, per  # both subflows carried data
    for r in per.iter_rows(named=True):
        link = meta["paths"][r["path"]]["down"]
        want = link["delay_ms"] + 1514 * 8 / (link["rate_mbit"] * 1e3)
        assert r["n"] >= 100 and abs(r["median"] - want) <= 1.0, (r, want)


def test_matches_the_emulators_sojourn(run):
    t, _ = run
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
