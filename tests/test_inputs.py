"""Link types, file formats and bad input: each bad file gives a problems row and a
one-line message naming it; the other files of the same call still load."""
import random
import subprocess
import sys

import duckdb
import pytest
from scapy.all import IP, UDP, Ether, Raw, wrpcap

from pcapgen import write
from pipeline import tables
from test_metrics_synthetic import single_path, two_subflows


@pytest.mark.parametrize("link,fmt", [("ether", "pcapng"), ("sll", "pcap"), ("sll2", "pcap"), ("sll2", "pcapng")])
def test_link_types_and_formats_give_the_same_metrics(tmp_path, link, fmt):
    ref, _ = tables.analyze_trace(write(tmp_path / "server.pcap", single_path("server")), "r")
    got, problems = tables.analyze_trace(write(tmp_path / f"server.{fmt}", single_path("server"), link=link, fmt=fmt), "r")
    assert problems == []
    assert got["rtt_samples"]["rtt_ms"].to_list() == ref["rtt_samples"]["rtt_ms"].to_list()
    assert got["subflows"]["loss_rate"].to_list() == ref["subflows"]["loss_rate"].to_list()
    mp, _ = tables.analyze_trace(write(tmp_path / f"client.{fmt}", *two_subflows(), link=link, fmt=fmt), "r")
    assert mp["connections"]["n_subflows"].to_list() == [2]


def bad_files(d):
    good = write(d / "good-server.pcap", single_path("server"))
    (d / "empty.pcap").write_bytes(b"")
    data = good.read_bytes()
    (d / "truncated-server.pcap").write_bytes(data[:-10])
    rnd = random.Random(1)
    (d / "random.pcap").write_bytes(bytes(rnd.randrange(256) for _ in range(4096)))
    wrpcap(str(d / "udp.pcap"), [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP() / Raw(b"x" * 10)])
    sf = single_path("server")
    sf.packets = [p for p in sf.packets if p["IP"].src == "10.0.0.1"]  # server -> client only
    write(d / "oneway-server.pcap", sf)
    return good


EXPECTED = {
    "empty.pcap": "empty file",
    "random.pcap": "not a pcap or pcapng capture",
    "udp.pcap": "no TCP packets",
    "truncated-server.pcap": "truncated",
    "oneway-server.pcap": "only one direction",
}


def test_bad_inputs_each_get_a_problem_row(tmp_path):
    bad_files(tmp_path)
    for name, reason in EXPECTED.items():
        _, problems = tables.analyze_trace(tmp_path / name, "r")
        assert problems, name
        assert any(reason in p["reason"] for p in problems), (name, problems)
        assert all(p["source"].endswith(name) for p in problems)


def test_truncated_file_keeps_the_packets_before_the_cut(tmp_path):
    bad_files(tmp_path)
    t, _ = tables.analyze_trace(tmp_path / "truncated-server.pcap", "r")
    # The cut record is the final ACK (5001): all six data packets remain, and only
    # segments 1 and 2 still have an ACK to time them.
    assert t["subflows"].filter(direction="down")["data_packets"].to_list() == [6]
    assert t["rtt_samples"]["rtt_ms"].to_list() == pytest.approx([100, 100], abs=1e-3)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True)


def test_cli_loads_good_files_beside_bad_ones(tmp_path):
    bad_files(tmp_path)
    files = sorted(str(f) for f in tmp_path.glob("*.pcap"))
    db = tmp_path / "out.duckdb"
    r = cli("analyze", "-q", *files, "--db", str(db))
    assert r.returncode == 0, r.stderr
    for name in EXPECTED:
        lines = [ln for ln in r.stderr.splitlines() if name in ln]
        assert lines, f"no message names {name}: {r.stderr}"
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select count(*) from subflows where trace like '%good-server.pcap' and direction = 'down'").fetchone()[0] == 1
    got = {row[0].rsplit("/", 1)[-1] for row in con.execute("select source from problems").fetchall()}
    assert set(EXPECTED) <= got


def test_cli_exits_nonzero_only_when_nothing_was_usable(tmp_path):
    bad_files(tmp_path)
    r = cli("analyze", "-q", str(tmp_path / "empty.pcap"), str(tmp_path / "random.pcap"), "--db", str(tmp_path / "x.duckdb"))
    assert r.returncode == 1
    assert "empty.pcap: empty file" in r.stderr


def test_cli_help_explains_commands():
    r = cli("--help")
    assert r.returncode == 0 and "analyze" in r.stdout and "Chen" in r.stdout
