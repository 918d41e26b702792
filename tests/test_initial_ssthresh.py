"""A route's ``ssthresh`` metric made effective (capture/ssthresh.py).

Pure parts: the metric's value, the address pairs a run's connections use, the record,
the coupled-cc check with warm-up sockets. On the testbed: a single-path download over a
deep, loss-free queue (8 Mbit/s, 60 ms, 1 MB) with the chen2013 profile (route
``ssthresh lock 45``) and with the same sysctls but no route ssthresh, and an MP-2
download with the profile. Reno (no HyStart, which would end slow start by delay on its
own): with the ssthresh, slow start stops at 45 segments and the flight then grows by
about one segment per RTT; without it, slow start doubles the flight past 90 segments
and fills the queue.
"""
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import NEEDS_LINKEM_TESTBED

from capture import ssthresh
from capture.experiment import _check_coupled
from capture.spec import RunSpec
from capture.topology import Topology

WANT = 45           # kernel-config/profiles/chen2013.yaml: ssthresh lock 45
MSS = 1448
BASE_RTT = 0.060    # s, the emulated path's


# ------------------------------------------------------------------ pure

@pytest.mark.parametrize("value, want", [("lock 45", 45), ("45", 45), (45, 45), ("lock 7", 7)])
def test_requested_reads_the_metric(value, want):
    assert ssthresh.requested({"ssthresh": value, "congctl": "cubic"}) == want


def test_requested_without_ssthresh_is_none():
    assert ssthresh.requested({"congctl": "cubic"}) is None


@pytest.mark.parametrize("value", ["lock", "lock 45 46", "45k", "0", "lock -3"])
def test_requested_names_the_field(value):
    with pytest.raises(ValueError, match=r"sysctl profile x: route\.ssthresh"):
        ssthresh.requested({"ssthresh": value}, "sysctl profile x: route")


def test_address_pairs_cover_service_and_path_addresses():
    sp = Topology(run_id="t", paths=["lte"], mode="SP-lte", primary="lte")
    assert [(p["path"], p["client_addr"], p["server_addr"]) for p in ssthresh.address_pairs(sp)] == [
        ("lte", "10.2.0.2", "10.100.0.1"), ("lte", "10.2.0.2", "10.2.0.1")]
    mp4 = Topology(run_id="t", paths=["wifi", "lte"], mode="MP-4", primary="wifi")
    got = {(p["path"], p["client_addr"], p["server_addr"]) for p in ssthresh.address_pairs(mp4)}
    assert got == {(path, client, server) for path, client in (("wifi", "10.1.0.2"), ("lte", "10.2.0.2"))
                   for server in ("10.100.0.1", "10.100.0.2", "10.1.0.1", "10.2.0.1")}


def test_record_says_what_each_end_started_with():
    pairs = [{"path": "lte", "client_addr": "10.2.0.2", "server_addr": "10.100.0.1"},
             {"path": "lte", "client_addr": "10.2.0.2", "server_addr": "10.2.0.1"}]
    entry = {"ssthresh": 45, "cwnd": 10, "reordering": None, "rtt_us": 20, "rttvar_us": 20}
    caches = {"server": {("10.100.0.1", "10.2.0.2"): entry, ("10.2.0.1", "10.2.0.2"): dict(entry, ssthresh=30)},
              "client": {("10.2.0.2", "10.100.0.1"): entry}}
    client = [{"local": "10.2.0.2", "remote": "10.100.0.1", "ssthresh": 45},
              {"local": "10.2.0.2", "remote": "10.2.0.1", "ssthresh": None}]
    server = [{"local": "10.100.0.1", "remote": "10.2.0.2", "ssthresh": 45},
              {"local": "10.2.0.1", "remote": "10.2.0.2", "ssthresh": 30}]
    r = ssthresh.record(45, pairs, caches, client, server, {"client": "1", "server": "1"})
    assert [p["started_with"] for p in r["pairs"]] == [{"server": 45, "client": 45},
                                                       {"server": 30, "client": None}]
    assert r["pairs"][1]["client_cache"] is None and r["pairs"][0]["server_cache"] == entry
    assert r["server_cache_ssthresh"] == {"lte": 30}
    assert r["verified"] is False and r["connections"] == 4 and r["sockets"] == 8


def test_warmup_sockets_do_not_count_as_the_workloads():
    sp = RunSpec(run_id="x", campaign="c", scenario="s", mode="SP-lte", profiles={}, congestion_control="lia")
    _check_coupled(sp, {"plain_tcp_sockets": 9, "subflows_coupled": 0}, warmup_sockets=8)
    with pytest.raises(RuntimeError, match="no socket of the workload"):
        _check_coupled(sp, {"plain_tcp_sockets": 8, "subflows_coupled": 0}, warmup_sockets=8)


# ------------------------------------------------------------------ testbed

DEEP = {"rate_mbit": 8, "rtt_ms": 60, "loss": 0, "queue_bytes": 1_000_000}


def _campaign(tmp: Path, name: str, mode: str, profile: bool) -> Path:
    doc = {"name": name, "seed": 3, "congestion_control": "reno", "keep_interface_pcaps": False,
           "scenarios": {"deep": {"wifi": DEEP, "lte": DEEP}},
           "runs": [{"id": "r", "scenario": "deep", "mode": mode, "size": "2MB", "primary_path": "lte"}]}
    if profile:
        doc["sysctl_profile"] = "chen2013"
    else:  # chen2013's sysctls, without its route ssthresh
        doc["sysctls"] = {"net.ipv4.tcp_no_metrics_save": 1, "net.ipv4.tcp_rmem": "4096 131072 8388608",
                          "net.ipv4.tcp_sack": 1}
    f = tmp / f"{name}.yaml"
    f.write_text(yaml.safe_dump(doc))
    return f


def _run(tmp: Path, name: str, mode: str, profile: bool) -> tuple[Path, dict]:
    import json

    from capture.campaign import run_campaign
    s = run_campaign(_campaign(tmp, name, mode, profile), tmp / "out", progress=False)
    assert not s["failed"], s["failed"]
    d = tmp / "out" / name / "r"
    return d, json.loads((d / "meta.json").read_text())


def _tshark(pcap: Path, fields: list[str], filt: str) -> list[list[str]]:
    cmd = ["tshark", "-r", str(pcap), "-2", "-Y", filt, "-T", "fields", "-E", "separator=|"]
    for f in fields:
        cmd += ["-e", f]
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}, timeout=120)
    assert p.returncode == 0, p.stderr
    return [line.split("|") for line in p.stdout.splitlines() if line]


def flights(pcap: Path) -> dict[str, list[int]]:
    """Per subflow (client address), the largest flight in segments in each base-RTT
    window from the subflow's first data segment (the server's trace)."""
    rows = _tshark(pcap, ["frame.time_epoch", "ip.dst", "tcp.analysis.bytes_in_flight"],
                   "tcp.srcport == 80 && tcp.len > 0")
    out: dict[str, list[int]] = {}
    t0: dict[str, float] = {}
    for t, dst, flight in rows:
        if not flight:
            continue
        t0.setdefault(dst, float(t))
        w = int((float(t) - t0[dst]) / BASE_RTT)
        series = out.setdefault(dst, [])
        series.extend([0] * (w + 1 - len(series)))
        series[w] = max(series[w], round(int(flight) / MSS))
    return out


def mean_rtt_ms(pcap: Path) -> float:
    rtts = [float(r[0]) for r in _tshark(pcap, ["tcp.analysis.ack_rtt"], "tcp.analysis.ack_rtt && tcp.dstport == 80")]
    assert len(rtts) > 100
    return 1000 * sum(rtts) / len(rtts)


def assert_left_slow_start_at(series: list[int], want: int) -> None:
    """Slow start reached ``want`` segments and stopped there (Reno caps it at ssthresh),
    and from then on the window grew by one segment per RTT: k base-RTT windows later
    the flight is at most ``want`` + k + 1 (+ 1 for a window that straddles two rounds)."""
    first = next(i for i, f in enumerate(series) if f >= want - 1)
    after = series[first:]
    assert all(f <= want + k + 2 for k, f in enumerate(after)), after


@pytest.fixture(scope="module")
def sp_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ssthresh-sp")
    return _run(tmp, "with", "SP-lte", True), _run(tmp, "without", "SP-lte", False)


class TestOnTheTestbed:
    pytestmark = NEEDS_LINKEM_TESTBED

    def test_meta_records_the_seeded_cache(self, sp_runs):
        (_, meta), (_, plain) = sp_runs
        rec = meta["initial_ssthresh"]
        assert rec["requested_segments"] == WANT and rec["verified"] is True
        assert rec["server_cache_ssthresh"] == {"lte": WANT}
        assert {(p["client_addr"], p["server_addr"]) for p in rec["pairs"]} == {("10.2.0.2", "10.100.0.1"),
                                                                               ("10.2.0.2", "10.2.0.1")}
        for p in rec["pairs"]:
            assert p["started_with"] == {"server": WANT, "client": WANT}
            assert p["server_cache"]["ssthresh"] == WANT and p["client_cache"]["ssthresh"] == WANT
        assert rec["no_metrics_save"]["restored"] == {"client": "1", "server": "1"}
        assert meta["sysctls_applied"]["net.ipv4.tcp_no_ssthresh_metrics_save"] == "0"
        assert meta["sysctls_applied"]["net.ipv4.tcp_no_metrics_save"] == "1"
        assert "meta_schema_problems" not in meta
        assert "initial_ssthresh" not in plain

    def test_warmup_is_not_in_the_traces(self, sp_runs):
        (d, _), _ = sp_runs
        assert not _tshark(d / "server.pcap", ["frame.number"], f"tcp.port == {ssthresh.PORT}")

    def test_slow_start_ends_at_the_route_ssthresh(self, sp_runs):
        (d, _), (d0, _) = sp_runs
        [with_], [without] = flights(d / "server.pcap").values(), flights(d0 / "server.pcap").values()
        assert_left_slow_start_at(with_, WANT)
        # without it slow start goes on doubling: past twice the threshold
        assert max(without) >= 2 * WANT, without
        with pytest.raises(AssertionError):
            assert_left_slow_start_at(without, WANT)

    def test_the_queue_stays_short(self, sp_runs):
        (d, _), (d0, _) = sp_runs
        assert mean_rtt_ms(d / "server.pcap") < 0.5 * mean_rtt_ms(d0 / "server.pcap")

    def test_both_subflows_of_mptcp_get_it(self, tmp_path):
        d, meta = _run(tmp_path, "mp", "MP-2", True)
        rec = meta["initial_ssthresh"]
        assert rec["verified"] and rec["server_cache_ssthresh"] == {"wifi": WANT, "lte": WANT}
        per = flights(d / "server.pcap")
        assert set(per) == {"10.1.0.2", "10.2.0.2"}, per.keys()
        for series in per.values():
            assert_left_slow_start_at(series, WANT)
