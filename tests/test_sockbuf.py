"""Socket-buffer sampling (capture/sockbuf.py, campaign key ``sample_socket_buffers``).

* The parser on recorded ``ss`` output (tests/data/ss/): every socket's kind, addresses,
  connection token, skmem counts and byte counters, read off the recorded lines.
* The summary on rows built by the test: the connection that moved the most bytes, the
  means and maxima computed by hand.
* meta.json's summary lifted into the runs table and run_facts (pipeline.metadoc,
  pipeline.derived).
* A short real capture with sampling on (root, linkem): samples every 100 ms, buffers
  within the configured caps (tcp_rmem / tcp_wmem maximum), the summary equal to the
  mean of the file's samples.
"""
from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest
from conftest import NEEDS_LINKEM_TESTBED

from capture import sockbuf
from pipeline.frames import Arrow

SS = Path(__file__).resolve().parent / "data" / "ss"


def _sock(kind, local, peer, token, r, rb, t, tb, w, d, received, acked):
    return {"kind": kind, "local": local, "peer": peer, "token": token, "r": r, "rb": rb, "t": t, "tb": tb, "w": w,
            "d": d, "bytes_received": received, "bytes_acked": acked}


def test_parse_recorded_client_output():
    """Client namespace, ``state established`` (no State column): the 2 + 2 subflows of two
    MPTCP connections (tokens 72ff07b3: iperf3's control, 1a086758: its data), their
    MPTCP-level sockets (no byte counters in iproute2 6.1) and two plain TCP sockets."""
    got = sockbuf.parse_ss((SS / "client-established.txt").read_text())
    assert got == [
        _sock("subflow", "10.2.0.2:60347", "10.100.0.1:5201", "72ff07b3", 0, 131072, 0, 69120, 0, 0, 2, 160),
        _sock("tcp", "10.2.0.2:39429", "10.100.0.1:5202", None, 0, 2097152, 0, 69120, 0, 0, 1048576, 38),
        _sock("tcp", "10.2.0.2:44199", "10.100.0.1:5202", None, 0, 131072, 0, 69120, 0, 0, 4, 200),
        _sock("subflow", "10.1.0.2:43983", "10.100.0.1:5201", "1a086758", 0, 2097152, 0, 69120, 0, 0, 2915488, 38),
        _sock("subflow", "10.1.0.2:49009", "10.100.0.1:5201", "72ff07b3", 0, 131072, 0, 69120, 0, 0, 2, 42),
        _sock("subflow", "10.2.0.2:37811", "10.100.0.1:5201", "1a086758", 0, 2097152, 0, 69120, 0, 0, 2720880, 1),
        _sock("mptcp", "10.1.0.2:49009", "10.100.0.1:5201", "72ff07b3", 0, 131072, 0, 142336, 0, 0, None, None),
        _sock("mptcp", "10.1.0.2:43983", "10.100.0.1:5201", "1a086758", 0, 2097152, 0, 142336, 0, 0, None, None),
    ]


def test_parse_recorded_server_output_with_a_state_column():
    """Server namespace without a state filter: the State column is skipped, IPv4-mapped
    addresses of a dual-stack listener are read as IPv4, a 7-digit token stays whole."""
    got = sockbuf.parse_ss((SS / "server-all-states.txt").read_text())
    assert len(got) == 8
    assert got[1] == _sock("subflow", "10.100.0.1:5201", "10.1.0.2:43983", "6bf7b9f", 0, 131072, 0, 380160, 0, 0,
                           37, 2980944)
    assert got[3]["kind"] == "tcp" and got[3]["local"] == "10.100.0.1:5202" and got[3]["token"] is None
    assert got[7] == _sock("mptcp", "10.100.0.1:5201", "10.1.0.2:43983", "6bf7b9f", 0, 131072, 0, 384256, 0, 0,
                           None, None)


def test_parse_ignores_what_is_not_a_socket():
    assert sockbuf.parse_ss("") == []
    assert sockbuf.parse_ss("\t skmem:(r1,rb2)\nudp 0 0 1.2.3.4:5 6.7.8.9:10\n") == []


def _row(t, kind, token, rb, r=0, tb=0, w=0, received=None, acked=None, local="10.1.0.2:1", peer="10.100.0.1:80"):
    return {"t_s": t, "end": "client", "kind": kind, "local": local, "peer": peer, "token": token, "r": r, "rb": rb,
            "t": 0, "tb": tb, "w": w, "d": 0, "bytes_received": received, "bytes_acked": acked}


def test_summary_of_the_connection_that_moved_most():
    """Two MPTCP connections: A's two subflows moved 300 + 500 bytes at t = 0.2, B's one
    subflow 700: A is the main one (800 > 700) although no subflow of it moved the most
    alone. Its MPTCP-level socket's rb 100, 200, 600 (mean 300, max 600), r 0, 30, 60
    (mean 30), tb 10, 20, 30 (mean 20, max 30), w 3, 3, 3."""
    rows = [
        _row(0.1, "subflow", "aaaa", 1, received=100), _row(0.1, "subflow", "bbbb", 1, received=50),
        _row(0.1, "mptcp", "aaaa", 100, r=0, tb=10, w=3), _row(0.1, "mptcp", "bbbb", 9999, tb=9999),
        _row(0.2, "subflow", "aaaa", 1, received=300), _row(0.2, "subflow", "aaaa", 1, received=500),
        _row(0.2, "subflow", "bbbb", 1, received=700),
        _row(0.2, "mptcp", "aaaa", 200, r=30, tb=20, w=3), _row(0.2, "mptcp", "bbbb", 9999, tb=9999),
        _row(0.3, "mptcp", "aaaa", 600, r=60, tb=30, w=3),
    ]
    assert sockbuf.main_connection(rows) == ("mptcp", "aaaa")
    assert sockbuf.summarize_end(rows) == {
        "connection": "mptcp aaaa", "socket": "mptcp", "samples": 3, "first_s": 0.1, "last_s": 0.3,
        "rcvbuf_mean_bytes": 300.0, "rcvbuf_max_bytes": 600, "rcvbuf_used_mean_bytes": 30.0,
        "sndbuf_mean_bytes": 20.0, "sndbuf_max_bytes": 30, "sndbuf_queued_mean_bytes": 3.0}


def test_summary_of_single_path_tcp_and_of_nothing():
    rows = [_row(0.1, "tcp", None, 50, received=10, local="10.1.0.2:5"),
            _row(0.1, "tcp", None, 70, acked=1000, local="10.1.0.2:6"),
            _row(0.2, "tcp", None, 90, acked=2000, local="10.1.0.2:6")]
    s = sockbuf.summarize_end(rows)
    assert s["connection"] == "tcp 10.1.0.2:6 10.100.0.1:80" and s["socket"] == "tcp"
    assert (s["samples"], s["rcvbuf_mean_bytes"], s["rcvbuf_max_bytes"]) == (2, 80.0, 90)
    assert sockbuf.summarize_end([]) == {"connection": None, "socket": None, "samples": 0}


def test_summary_lifted_into_runs_and_run_facts():
    """meta.json socket_buffers -> runs columns (pipeline.metadoc) -> run_facts (derived)."""
    import duckdb

    from pipeline import derived, metadoc, schema, tables

    meta = {"run_id": "r1", "campaign": "ferlin", "mode": "MP-2",
            "socket_buffers": {"client": {"samples": 42, "rcvbuf_mean_bytes": 1990000.5, "rcvbuf_max_bytes": 2097152,
                                          "rcvbuf_used_mean_bytes": 1234.5},
                               "server": {"samples": 40, "sndbuf_mean_bytes": 555.25}}}
    want = {"rcvbuf_mean_bytes": 1990000.5, "rcvbuf_max_bytes": 2097152, "rcvbuf_used_mean_bytes": 1234.5,
            "rcvbuf_samples": 42, "sndbuf_mean_bytes": 555.25}
    cols = metadoc.run_columns(meta)
    assert {k: cols[k] for k in want} == want
    assert {k: metadoc.run_columns({})[k] for k in want} == dict.fromkeys(want)
    con = duckdb.connect()
    for t in schema.TABLES:
        con.execute(schema.ddl(t))
    con.register("r", Arrow(tables.meta_tables(meta, "r1")["runs"]))
    con.execute("INSERT INTO runs SELECT * FROM r")
    derived.install(con)
    got = con.execute(f"SELECT {', '.join(want)} FROM run_facts").fetchall()
    assert got == [tuple(want.values())]


# ------------------------------------------------------------------ a real capture

def needs_testbed(test):
    """Root, upstream MPTCP and the built link emulator (tests/conftest.py)."""
    for mark in NEEDS_LINKEM_TESTBED:
        test = mark(test)
    return test


RMEM_MAX, WMEM_MAX = 2097152, 1048576  # the ferlin campaign's caps (tcp_rmem / tcp_wmem maximum)


@pytest.fixture(scope="module")
def sampled_run(tmp_path_factory):
    from capture.campaign import run_campaign
    out = tmp_path_factory.mktemp("sockbuf")
    camp = out / "sockbuf.yaml"
    camp.write_text(f"""
name: sockbuf-test
seed: 5
timeout_s: 60
congestion_control: reno
sample_socket_buffers: true
sysctls:
  net.ipv4.tcp_rmem: "4096 131072 {RMEM_MAX}"
  net.ipv4.tcp_wmem: "4096 16384 {WMEM_MAX}"
  net.ipv4.tcp_moderate_rcvbuf: 1
scenarios:
  s:
    wifi: {{rate_mbit: 8, rtt_ms: 40, queue_bytes: 100000}}
    lte: {{rate_mbit: 4, rtt_ms: 80, queue_bytes: 100000}}
modes: [MP-2]
sizes: [3MB]
""")
    s = run_campaign(camp, out / "raw", progress=False)
    assert not s["failed"], s["failed"]
    d = next((out / "raw" / "sockbuf-test").glob("s_MP-2_*"))
    with open(d / "sockbuf.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return d, json.loads((d / "meta.json").read_text()), rows


@needs_testbed
def test_samples_every_100_ms(sampled_run):
    _, meta, rows = sampled_run
    msk = [r for r in rows if r["end"] == "client" and r["kind"] == "mptcp"]
    assert len({r["token"] for r in msk}) == 1  # one download, one MPTCP connection
    times = sorted(float(r["t_s"]) for r in msk)
    assert len(times) >= 15, len(times)  # 3 MB at ~12 Mbit/s: 2 s or more
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert 0.09 <= statistics.median(gaps) <= 0.12, statistics.median(gaps)
    assert min(gaps) >= 0.08 and sum(g > 0.25 for g in gaps) <= len(gaps) // 10, gaps
    assert meta["socket_buffers"]["interval_s"] == 0.1


@needs_testbed
def test_buffers_within_the_configured_caps(sampled_run):
    _, meta, rows = sampled_run
    assert meta["sysctls_applied"]["net.ipv4.tcp_rmem"].split()[-1] == str(RMEM_MAX)
    rb = [int(r["rb"]) for r in rows if r["end"] == "client"]
    assert rb and all(4096 <= x <= RMEM_MAX for x in rb)
    # every TCP socket's send buffer within tcp_wmem's maximum; an MPTCP-level socket's
    # is its subflows' together (upstream sums them): at most 2 subflows here
    tb_tcp = [int(r["tb"]) for r in rows if r["end"] == "server" and r["kind"] != "mptcp"]
    tb_msk = [int(r["tb"]) for r in rows if r["end"] == "server" and r["kind"] == "mptcp"]
    assert tb_tcp and all(x <= WMEM_MAX for x in tb_tcp)
    assert tb_msk and all(x <= 2 * WMEM_MAX for x in tb_msk)


@needs_testbed
def test_summary_is_the_mean_of_the_file(sampled_run):
    d, meta, rows = sampled_run
    cl = meta["socket_buffers"]["client"]
    msk = [r for r in rows if r["end"] == "client" and r["kind"] == "mptcp"]
    rb = [int(r["rb"]) for r in msk]
    assert cl["socket"] == "mptcp" and cl["connection"] == f"mptcp {msk[0]['token']}"
    assert cl["samples"] == len(rb) and cl["rcvbuf_max_bytes"] == max(rb)
    assert cl["rcvbuf_mean_bytes"] == pytest.approx(sum(rb) / len(rb), rel=1e-12)
    used = [int(r["r"]) for r in msk]
    assert cl["rcvbuf_used_mean_bytes"] == pytest.approx(sum(used) / len(used), rel=1e-12)
    sv = [int(r["tb"]) for r in rows if r["end"] == "server" and r["kind"] == "mptcp"]
    assert meta["socket_buffers"]["server"]["sndbuf_mean_bytes"] == pytest.approx(sum(sv) / len(sv), rel=1e-12)
    assert "meta_schema_problems" not in meta and (d / ".done").exists()
    assert not list(d.glob(".sockbuf-*"))  # the samplers' own files merged and removed
