"""A run folder as the testbed writes it -> every table, with known values."""
import json

import duckdb
import pytest

from pcapgen import write
from pipeline import ditg, store, tables
from test_metrics_synthetic import LTE, WIFI, single_path, two_subflows

DITG = """\
Flow>0001 Seq>      1 Src>        10.0.0.1/48736 Dest>        10.0.1.2/8999 txTime>8:19:48.882029 rxTime>8:19:48.902529 Size>  400
Flow>0001 Seq>      2 Src>        10.0.0.1/48736 Dest>        10.0.1.2/8999 txTime>23:59:59.990000 rxTime>0:00:00.015000 Size> 1500
"""


def test_ditg_delays_and_midnight():
    t, problems = ditg.app_latency(DITG, "r", day_start_s=1000.0)
    assert problems == []
    assert t["seq"].to_list() == [1, 2]
    assert t["delay_ms"].to_list() == pytest.approx([20.5, 25.0], abs=1e-6)
    assert t["sent_s"][0] == pytest.approx(1000 + 8 * 3600 + 19 * 60 + 48.882029)
    assert t["size_bytes"].to_list() == [400, 1500]


@pytest.fixture
def run_dir(tmp_path):
    d = tmp_path / "chen" / "run-0001"
    d.mkdir(parents=True)
    write(d / "client.pcap", *two_subflows())
    write(d / "client-wifi.pcap", two_subflows()[0])  # per-interface copy: must be ignored
    write(d / "server.pcap", single_path("server"))
    meta = {"run_id": "run-0001", "campaign": "chen", "scenario": "home", "mode": "MP-2", "size_bytes": 7000,
            "repetition": 2, "congestion_control": "cubic", "started_at": "2026-11-23T08:00:00+00:00",
            "paths": {"wifi": {"client_addr": WIFI}, "lte": {"client_addr": LTE}}}
    (d / "meta.json").write_text(json.dumps(meta))
    (d / "linkem-wifi.csv").write_text(
        "direction,packet_id,size_bytes,arrival_s,departure_s,dropped,reason\n"
        "down,2,1514,10.5,,1,loss\n"
        "down,1,1514,10.0,10.015,0,\n"
        "up,1,66,10.1,10.115,0,\n")
    (d / "ditg-recv.txt").write_text(DITG)
    return d


def test_run_folder_tables(run_dir, tmp_path):
    t = tables.analyze_run(run_dir)
    assert t["runs"].row(0, named=True)["mode"] == "MP-2"
    assert t["runs"]["size_bytes"].to_list() == [7000]
    c = t["connections"].filter(vantage="client")
    assert c["n_subflows"].to_list() == [2], "the per-interface pcap must not be analysed again"
    assert sorted(t["subflows"].filter(vantage="client")["path"].to_list()) == ["lte", "wifi"]
    lt = t["link_truth"]
    assert lt["packet_id"].to_list() == [1, 2, 1] and lt["path"].unique().to_list() == ["wifi"]
    assert lt["dropped"].to_list() == [False, True, False]
    assert lt["reason"].to_list()[1] == "loss"
    assert lt["attempts"].to_list() == [None, None, None]  # a log from before linkem counted attempts
    assert t["app_latency"]["delay_ms"].to_list() == pytest.approx([20.5, 25.0], abs=1e-6)
    assert t["problems"].height == 0

    out = store.write_tables(t, tmp_path / "tables" / "run-0001")
    db = store.load_table_dirs([out], tmp_path / "lab.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select count(*) from app_latency").fetchone()[0] == 2
    assert con.execute("select download_time_s from connections where vantage='client'").fetchone()[0] == \
        pytest.approx(0.182)


def test_link_truth_attempts(tmp_path):
    """linkem's attempts column (link-layer retransmission) is loaded as written; a row
    that says a forwarded frame was never sent is not linkem's and is skipped."""
    d = tmp_path / "run"
    d.mkdir()
    (d / "linkem-lte.csv").write_text(
        "direction,packet_id,size_bytes,arrival_s,departure_s,dropped,reason,attempts\n"
        "down,0,1514,10.0,10.031,0,,1\n"
        "down,1,1514,10.001,10.047,0,,3\n"
        "down,2,1514,10.002,,1,loss,5\n"
        "down,3,1514,10.003,,1,queue,0\n"
        "down,4,1514,10.004,10.05,0,,0\n")
    lt, problems = tables.link_truth(d, "r")
    assert lt["packet_id"].to_list() == [0, 1, 2, 3]
    assert lt["attempts"].to_list() == [1, 3, 5, 0]
    assert lt.schema["attempts"] == tables.schema.TABLES["link_truth"]["attempts"]
    assert len(problems) == 1 and "1 of 5 rows are not valid linkem records" in problems[0]["reason"]


def test_tables_cli_writes_parquet_atomically(run_dir, tmp_path):
    import subprocess
    import sys
    out = tmp_path / "t"
    r = subprocess.run([sys.executable, "-m", "pipeline", "tables", str(run_dir), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.parquet" for n in tables.schema.TABLES)
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")], "no temporary folder left behind"
