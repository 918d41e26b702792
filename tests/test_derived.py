"""The derived layer (pipeline/derived.py): every run-level quantity on tables written by
hand (tests/labdb.py), where each value is known by construction."""
from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest

from labdb import Lab
from pipeline import derived, store
from pipeline.schema import TABLES, ddl
from pipeline.frames import frame

TWO = {"wifi": (20.0, 0.017, 20.0), "lte": (60.0, 0.0, 8.0)}


def facts(lab: Lab, tmp_path, name="lab.duckdb") -> dict[str, dict]:
    con = derived.connect(lab.write(tmp_path / name))
    try:
        return {r["run_id"]: r for r in frame(con, "SELECT * FROM run_facts").iter_rows(named=True)}
    finally:
        con.close()


def one(con_sql: str, tmp_path, lab: Lab):
    db = tmp_path / "q.duckdb"
    con = derived.connect(db if db.exists() else lab.write(db))
    try:
        return frame(con, con_sql)
    finally:
        con.close()


def test_download_time_goodput_share_contribution(tmp_path):
    lab = Lab()
    rid = lab.run("chen", "att", "MP-2", 1_000_000, paths=TWO, download_s=2.0,
                  bytes_={"wifi": 300_000, "lte": 700_000}, extra_connection_bytes=10)
    f = facts(lab, tmp_path)[rid]
    assert f["download_time_s"] == pytest.approx(2.0)  # the main connection's, not the small one's
    assert f["goodput_mbit"] == pytest.approx(8 * 1_000_000 / 2.0 / 1e6)
    assert (f["bytes_wifi"], f["bytes_cell"]) == (300_000, 700_000)
    assert f["cell_share_pct"] == pytest.approx(70.0)
    assert f["contribution"] == pytest.approx(700 / 300)
    assert f["campaign"] == "chen" and f["transport"] == "MPTCP" and f["size_label"] == "1 MB"


def test_share_comes_from_the_senders_trace(tmp_path):
    lab = Lab()
    rid = lab.run("chen", "att", "MP-2", 1_000_000, paths=TWO, download_s=1.0,
                  bytes_={"wifi": 500_000, "lte": 500_000})
    for r in lab.rows["subflows"]:  # the client saw another split: the server's counts
        if r["vantage"] == "client":
            r["payload_bytes"] = 900_000 if r["path"] == "wifi" else 100_000
    assert facts(lab, tmp_path)[rid]["cell_share_pct"] == pytest.approx(50.0)
    lab.rows["subflows"] = [r for r in lab.rows["subflows"] if r["vantage"] == "client"]
    assert facts(lab, tmp_path, "client-only.duckdb")[rid]["cell_share_pct"] == pytest.approx(10.0)


def test_loss_is_pooled_over_a_sides_subflows(tmp_path):
    lab = Lab()
    paths = {"wifi": (20.0, 0.0, 20.0), "wifi2": (20.0, 0.0, 20.0), "lte": (60.0, 0.0, 8.0)}
    rid = lab.run("chen", "att", "MP-4", 1_000_000, paths=paths, download_s=1.0,
                  retx={"wifi": 10, "wifi2": 90, "lte": 1}, data_packets={"wifi": 1000, "wifi2": 3000, "lte": 500})
    f = facts(lab, tmp_path)[rid]
    assert f["loss_wifi_pct"] == pytest.approx(100 * 100 / 4000)  # pooled: 2.5 %, not the mean 2.0 %
    assert f["loss_cell_pct"] == pytest.approx(0.2)


def test_rtt_ofo_and_application_latency(tmp_path):
    lab = Lab()
    rid = lab.run("chen", "sprint", "MP-2", 1_000_000, paths=TWO, download_s=1.0,
                  rtt={"wifi": [10.0, 20.0, 30.0], "lte": [100.0, 200.0]}, ofo=[0, 0, 0, 200.0, 100.0])
    d = lab.run("ditg", "sym", "MP-2", paths=TWO, workload="ditg-maps", latency=[10.0, 20.0, 30.0])
    f = facts(lab, tmp_path)
    assert (f[rid]["rtt_wifi_mean_ms"], f[rid]["rtt_cell_mean_ms"]) == (pytest.approx(20.0), pytest.approx(150.0))
    assert (f[rid]["rtt_wifi_ms"], f[rid]["rtt_cell_ms"]) == (20.0, 60.0)  # configured
    assert (f[rid]["ofo_packets"], f[rid]["ofo_in_order"], f[rid]["ofo_over_150ms"]) == (5, 3, 1)
    assert f[rid]["ofo_mean_ms"] == pytest.approx(60.0)
    assert f[d]["app_latency_ms"] == pytest.approx(20.0) and f[d]["app_packets"] == 3
    assert f[d]["app"] == "maps" and f[d]["goodput_mbit"] is None


def test_buffer_from_the_applied_tcp_rmem(tmp_path):
    lab = Lab()
    rid = lab.run("cs244", "buf50k", "SP-wifi", 1_000_000, paths={"wifi": (12.0, 0.03, 2.0)}, download_s=40.0,
                  buffer=50_000)
    f = facts(lab, tmp_path)
    assert f[rid]["goodput_mbit"] == pytest.approx(0.2)
    assert f[rid]["buffer_bytes"] == 50_000  # from the applied, tab-separated net.ipv4.tcp_rmem


def test_window_throughput_from_the_bytes_received_per_second(tmp_path):
    """run_delivery: the client's new bytes per second of the main connection, per path
    side; a window's throughput is their sum over the window's seconds ÷ its length."""
    lab = Lab()
    rid = lab.run("cs244", "buf50k", "MP-2", 0, paths=TWO, download_s=40.0)
    for sec in range(40):
        for path, b in (("wifi", 250_000), ("lte", 50_000)):
            lab.rows["delivered_1s"].append(dict(run_id=rid, trace=f"{rid}/client.pcap", conn_id=0, subflow_id=0,
                                                 path=path, second=sec, payload_bytes=b if sec >= 10 else 1,
                                                 packets=1))
    lab.rows["delivered_1s"].append(dict(run_id=rid, trace=f"{rid}/server.pcap", conn_id=0, subflow_id=0,
                                         path="wifi", second=12, payload_bytes=10 ** 9, packets=1))  # not the receiver
    con = derived.connect(lab.write(tmp_path / "w.duckdb"))
    try:
        got = dict(con.sql("SELECT side, sum(payload_bytes) FILTER (WHERE second >= 10 AND second < 40) * 8 / 30 / 1e6 "
                           "FROM run_delivery GROUP BY side").fetchall())
    finally:
        con.close()
    assert got == {"wifi": pytest.approx(2.0), "cell": pytest.approx(0.4)}


THREE = {**TWO, "eth": (4.0, 0.0, 10.0)}


def test_delivery_per_path_of_a_three_path_run(tmp_path):
    """run_delivery keeps the path: a three-path run (CS244's handover: Ethernet, WiFi,
    3G) gives each path its own bytes per second; the side columns are as before (eth is
    on the cell side, with lte), and an outage on eth alone makes a handover run."""
    lab = Lab()
    two = lab.run("cs244", "handover", "MP-2", 0, paths=TWO, download_s=10.0)
    three = lab.run("cs244", "handover3", "MP-3", 0, paths=THREE, download_s=10.0, outages={"eth": [[2, 6]]})
    per_s = {"wifi": 100_000, "lte": 20_000, "eth": 500_000}
    for rid, paths in ((two, ("wifi", "lte")), (three, ("wifi", "lte", "eth"))):
        for sec in range(10):
            for p in paths:
                lab.rows["delivered_1s"].append(dict(run_id=rid, trace=f"{rid}/client.pcap", conn_id=0, subflow_id=0,
                                                     path=p, second=sec, payload_bytes=per_s[p], packets=1))
    db = lab.write(tmp_path / "three.duckdb")
    con = derived.connect(db)
    try:
        by_path = dict(con.sql(f"SELECT path, sum(payload_bytes) FROM run_delivery WHERE run_id = '{three}' "
                               "GROUP BY path").fetchall())
        by_side = dict(con.sql(f"SELECT side, sum(payload_bytes) FROM run_delivery WHERE run_id = '{three}' "
                               "GROUP BY side").fetchall())
        rows_two = con.sql(f"SELECT second, side, path, payload_bytes FROM run_delivery WHERE run_id = '{two}' "
                           "ORDER BY second, side").fetchall()
        has = dict(con.sql("SELECT run_id, has_outages FROM run_facts").fetchall())
        od = con.sql("SELECT path, down_s, up_s FROM outage_delivery").fetchall()
    finally:
        con.close()
    assert by_path == {"wifi": 1_000_000, "lte": 200_000, "eth": 5_000_000}
    assert by_side == {"wifi": 1_000_000, "cell": 5_200_000}
    # a two-path run: one row per second and side, as before, each with its path
    assert rows_two == [(s, side, p, per_s[p]) for s in range(10) for side, p in (("cell", "lte"), ("wifi", "wifi"))]
    assert has == {two: False, three: True}
    assert od == [("eth", 2.0, 6.0)]


def test_configuration_from_meta(tmp_path):
    lab = Lab()
    sym = lab.run("ditg", "sym-rtt40", "MP-2", paths={"wifi": (40.0, 0.0, 100.0), "lte": (40.0, 0.02, 100.0)},
                  workload="ditg-netflix", latency=[1.0], incomplete=True)
    asym = lab.run("deng", "lte-better", "MP-2", 10_000, paths={"wifi": (80.0, 0.01, 2.0), "lte": (50.0, 0.0, 9.0)},
                   download_s=0.2, outages={"wifi": [[8, 16]]})
    ge = lab.run("chen", "att", "SP-wifi", 64_000, paths={"wifi": (20.0, 0.0, 20.0)}, download_s=0.1)
    late = lab.run("chen", "att", "SP-lte", 64_000, paths={"lte": (60.0, 0.0, 8.0)}, download_s=0.1)
    run = next(r for r in lab.rows["runs"] if r["run_id"] == late)
    run["meta_json"] = json.dumps({**json.loads(run["meta_json"]), "stalls": {"stalled": True, "worst_late_ms": 9.0}})
    run = next(r for r in lab.rows["runs"] if r["run_id"] == ge)
    meta = json.loads(run["meta_json"])
    meta["paths"]["wifi"]["down"]["loss"] = {"model": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.09,
                                             "loss_good": 0.0, "loss_bad": 0.5}
    run["meta_json"] = json.dumps(meta)
    f = facts(lab, tmp_path)
    assert (f[sym]["rtt_wifi_ms"], f[sym]["rtt_cell_ms"], f[sym]["loss_cell"], f[sym]["rate_cell_mbit"]) == \
        (40.0, 40.0, pytest.approx(0.02), 100.0)
    assert f[sym]["symmetric_rtt"] and not f[sym]["has_outages"]
    # D-ITG's sender stopped at its limit: a transport stall, kept (not a host stall) and flagged
    assert not f[sym]["stalled"] and f[sym]["complete"] is False
    assert not f[asym]["symmetric_rtt"] and f[asym]["faster_path"] == "lte" and f[asym]["has_outages"]
    assert f[asym]["size_label"] == "10 KB" and not f[asym]["stalled"]
    assert f[ge]["loss_wifi"] == pytest.approx((0.09 * 0 + 0.01 * 0.5) / 0.10)  # Gilbert–Elliott stationary mean
    assert f[ge]["rtt_cell_ms"] is None and f[ge]["transport"] == "TCP" and not f[ge]["stalled"]
    assert f[late]["stalled"]  # the emulator's stall record (issue 13)


def test_macros(tmp_path):
    con = derived.connect(Lab().write(tmp_path / "m.duckdb"))
    try:
        got = con.sql("""SELECT size_label(64000), size_label(1000000), size_label(33554432), size_label(65536),
                                size_label(1500), size_label(0), rel_diff(3, 2), rel_change(1, 2), rel_diff(1, 0)
                      """).fetchall()[0]
    finally:
        con.close()
    assert got == ("64 KB", "1 MB", "32 MiB", "64 KiB", "1500 B", None, 0.5, -0.5, None)


def test_pairs(tmp_path):
    lab = Lab()
    kw = dict(paths=TWO, rep=1)
    w = lab.run("deng", "wifi-better", "MP-2", 1_000_000, primary="wifi", download_s=2.0, **kw)  # 4 Mbit/s
    lt = lab.run("deng", "wifi-better", "MP-2", 1_000_000, primary="lte", download_s=8 / 6, **kw)  # 6 Mbit/s
    c = lab.run("deng", "wifi-better", "MP-2", 1_000_000, primary="wifi", cc="lia", download_s=1.0, **kw)  # 8
    lab.run("deng", "wifi-better", "MP-2", 1_000_000, primary="lte", download_s=1.0, rep=2, paths=TWO)  # unpaired
    pp = one("SELECT * FROM primary_pairs", tmp_path, lab)
    assert pp.height == 1 and (pp["lte_run"][0], pp["wifi_run"][0]) == (lt, w)
    assert pp["rel_diff_pct"][0] == pytest.approx(50.0) and pp["ratio"][0] == pytest.approx(1.5)
    cp = one("SELECT * FROM cc_pairs", tmp_path, lab)
    assert cp.height == 1 and (cp["decoupled_run"][0], cp["coupled_run"][0]) == (w, c)
    assert cp["rel_diff_pct"][0] == pytest.approx(50.0)  # |4 − 8| / 8


def test_outage_delivery(tmp_path):
    lab = Lab()
    # WiFi down from 2 to 6 s after the first SYN (t0 = 1000): whole seconds 3, 4, 5;
    # data arrives in seconds 3 and 5, and on WiFi again at 7 s (within 5 s of 6 s).
    rid = lab.run("cs244", "handover", "MP-2", 1_000_000, paths=TWO, download_s=12.0, outages={"wifi": [[2, 6]]},
                  ofo=[0, 0, 0], ofo_times=[("lte", 1003.5), ("lte", 1005.2), ("wifi", 1007.0)])
    d = one("SELECT * FROM outage_delivery", tmp_path, lab).row(0, named=True)
    assert d["run_id"] == rid and d["path"] == "wifi" and (d["down_s"], d["up_s"]) == (2.0, 6.0)
    assert (d["outage_seconds"], d["seconds_with_data"], d["comeback_checkable"], d["came_back"]) == (3, 2, 1, 1)


def test_only_downloads_count(tmp_path):
    """With a `direction` column (issue 9), upload rows never enter a download metric."""
    plain = Lab()
    kw = dict(paths=TWO, download_s=2.0, bytes_={"wifi": 300_000, "lte": 700_000}, retx={"wifi": 10},
              rtt={"wifi": [10.0, 30.0]})
    a = plain.run("chen", "att", "MP-2", 1_000_000, **kw)
    directed = Lab(direction=True)
    b = directed.run("chen", "att", "MP-2", 1_000_000, **kw)
    directed.upload_rows(b)
    fa, fb = facts(plain, tmp_path, "a.duckdb")[a], facts(directed, tmp_path, "b.duckdb")[b]
    for k in ("download_time_s", "cell_share_pct", "loss_wifi_pct", "rtt_wifi_mean_ms", "contribution", "bytes_cell"):
        assert fa[k] == fb[k], k


def test_store_creates_the_views_and_connect_reads_older_databases(tmp_path):
    db = store.write_duckdb({}, tmp_path / "new.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    views = {r[0] for r in con.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    con.close()
    assert {"run_config", "run_metrics", "run_facts", "primary_pairs", "cc_pairs"} <= views
    old = tmp_path / "old.duckdb"  # tables only, as earlier versions wrote them
    con = duckdb.connect(str(old))
    for t in TABLES:
        con.execute(ddl(t))
    con.close()
    con = derived.connect(old)
    assert con.sql("SELECT count(*) FROM run_facts").fetchall() == [(0,)]
    con.close()


def test_every_definition_cites_what_it_is():
    for d in derived.definitions({}):
        assert len(d.doc) > 40, d.name
    docs = " ".join(d.doc for d in derived.definitions({}))
    for source in ("Chen §3.3", "CS244", "Deng", "Ferlin", "D-ITG"):
        assert source in docs, source
    assert pl.Series([d.name for d in derived.definitions({})]).is_unique().all()


class Counting:
    """A connection that counts the statements run through it."""

    def __init__(self, con):
        self.con, self.statements = con, []

    def execute(self, sql, *args):
        self.statements.append(sql)
        return self.con.execute(sql, *args)


def test_install_leaves_views_of_this_version_and_replaces_older_ones(tmp_path, monkeypatch):
    db = store.write_duckdb({}, tmp_path / "lab.duckdb")
    con = Counting(duckdb.connect(str(db)))
    version = derived.installed_version(con)
    defs = derived.definitions(derived._columns(con))
    assert version == derived.fingerprint(defs)
    derived.install(con)  # this version's already: nothing created
    assert not [s for s in con.statements if s.startswith("CREATE")]
    changed = [derived.Definition(d.name, d.kind, d.sql + " " if d.kind == "view" else d.sql, d.doc) for d in defs]
    monkeypatch.setattr(derived, "definitions", lambda cols: changed)
    derived.install(con)  # another version's definitions: all replaced, with their fingerprint
    assert len([s for s in con.statements if s.startswith("CREATE")]) == len(changed) + 1
    assert derived.installed_version(con) == derived.fingerprint(changed) != version
    con.con.close()
