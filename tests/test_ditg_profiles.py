"""D-ITG runs replay their schedule exactly and drain (capture/workloads.ditg).

Two set-ups: the loopback of a throw-away namespace (plain TCP, optionally a tbf rate
limit: the workload alone), and the namespaces testbed (a TCP and an MPTCP run of one
repetition over different emulated paths, through the campaign runner). The expected
values are the schedule's own files, written before ITGSend starts, and for the drain a
limit the test chooses against a rate it configures.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import NEEDS_LINKEM_TESTBED

from capture import ditg_schedule as ds
from capture.workloads import ditg

REPO = Path(__file__).resolve().parents[1]
needs_ditg = pytest.mark.skipif(shutil.which("ITGSend") is None or os.geteuid() != 0,
                                reason="needs D-ITG (make system installs it) and root for a namespace")


def in_testbed(test):
    """Marks of a test that captures in the namespaces testbed (tests/conftest.py)."""
    for m in [*NEEDS_LINKEM_TESTBED, needs_ditg]:
        test = m(test)
    return test
_LINE = re.compile(r"Seq>\s*(\d+).*?txTime>\s*(\d+):(\d+):([\d.]+).*?Size>\s*(\d+)")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def netns():
    """A namespace with its loopback up at a 1500-B MTU (a tbf can then pace it), no
    offloads, and the paper's 100 MiB send buffers from the start, as the ditg-cloud
    sysctl profiles set them (ITGSend's writes never block)."""
    name = f"mpl-{os.getpid()}-ditgtest"
    _ip("netns", "add", name)
    try:
        _ip("-n", name, "link", "set", "lo", "up", "mtu", "1500")
        subprocess.run(["ip", "netns", "exec", name, "ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"],
                       check=False, capture_output=True)
        subprocess.run(["ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv4.tcp_wmem=4096 104857600 104857600"],
                       check=True)
        yield name
    finally:
        for pid in subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split():
            subprocess.run(["kill", "-9", pid], check=False)
        subprocess.run(["ip", "netns", "del", name], check=False)


def _sent(run_dir: Path) -> dict[int, tuple[float, int]]:
    """seq -> (send time of day in s, size) of each packet ITGRecv logged (ITGDec -l)."""
    out = {}
    for line in (run_dir / "ditg-recv.txt").read_text().splitlines():
        m = _LINE.search(line)
        if m:
            g = m.groups()
            out[int(g[0])] = (int(g[1]) * 3600 + int(g[2]) * 60 + float(g[3]), int(g[4]))
    return out


def _schedule(run_dir: Path) -> tuple[np.ndarray, list[int]]:
    """(gaps in ms before packets 2..N, sizes) as written for ITGSend."""
    idt = [float(x) for x in (run_dir / ds.IDT_FILE).read_text().split()]
    return np.array(idt[1:]), [int(x) for x in (run_dir / ds.SIZE_FILE).read_text().split()]


def _replayed(run_dir: Path, res: dict) -> None:
    """ITGSend sent the schedule: its packets, in order, with the file's sizes, each gap
    at least the scheduled one and never more than 5 ms late in all."""
    gaps, sizes = _schedule(run_dir)
    assert res["sent_packets"] == res["schedule_packets"] == len(sizes)
    assert res["sent_bytes"] == res["schedule_bytes"] == sum(sizes)
    got = _sent(run_dir)
    missing = sorted(set(range(1, len(sizes) + 1)) - set(got))
    assert not missing and len(got) == len(sizes), (
        f"ITGRecv logged {len(got)} of {len(sizes)} (missing {missing[:5]}); waited "
        f"{res.get('itgrecv_log_wait_s')} s; ITGRecv said: {(run_dir / '.itgrecv.out').read_text()[-300:]!r}")
    assert [got[k][1] for k in sorted(got)] == sizes
    tx = np.array([got[k][0] for k in sorted(got)])
    late = np.diff(tx) * 1000 - gaps
    assert late.min() > -0.05, late.min()  # ITGSend only ever sleeps longer
    assert tx[-1] - tx[0] < res["schedule_span_s"] * 1.5 + 0.5


@needs_ditg
@pytest.mark.parametrize("profile", sorted(ds.PROFILES))
def test_itgsend_replays_the_schedule_exactly(netns, tmp_path, profile):
    res = ditg(netns, netns, "127.0.0.1", profile, 3, False, tmp_path, ds.schedule_seed(2015, profile, 3))
    _replayed(tmp_path, res)
    assert res["drained"] and res["complete"] and res["delivered_share"] == 1.0
    assert res["received_packets"] == res["sent_packets"] and 0 <= res["drain_s"] < 1
    assert res["itgsend_timer_slack_ns"] == 1  # every ITGSend thread's, set from outside


@needs_ditg
def test_a_test_drains_or_says_it_did_not(netns, tmp_path):
    """A 4-Mbit/s loopback and a Netflix schedule of ~1.3 MB more than 3 s carry: with a
    1-s drain limit packets are still queued at the end (drained false, fewer received,
    the run flagged incomplete); with the default limit every packet arrives, after the
    schedule's end."""
    subprocess.run(["ip", "netns", "exec", netns, "tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "4mbit",
                    "burst", "16kb", "latency", "10s"], check=True)
    seed = ds.schedule_seed(2015, "netflix", 1)
    s = ds.draw("netflix", 3, seed)
    assert s.bytes * 8 / 4e6 > 3 + 1.5  # cannot be delivered within the test and a 1-s drain
    short, full = tmp_path / "short", tmp_path / "full"
    short.mkdir(), full.mkdir()
    res = ditg(netns, netns, "127.0.0.1", "netflix", 3, False, short, seed, drain_s=1)
    assert res["generated_all"] and res["sent_packets"] == s.packets
    assert not res["drained"] and not res["complete"] and res["drain_s"] is None and res["drain_limit_s"] == 1
    assert res["received_packets"] < res["sent_packets"] and res["delivered_share"] < 1
    res = ditg(netns, netns, "127.0.0.1", "netflix", 3, False, full, seed)
    assert res["drain_limit_s"] == 4 * 3 + 20
    assert res["drained"] and res["complete"] and res["received_packets"] == res["sent_packets"] == s.packets
    assert res["drain_s"] > 1


# ------------------------------------------------------------------ the namespaces testbed

CAMPAIGN = """\
name: ditg-replay
paper: "tests/test_ditg_profiles.py: one schedule, TCP and MPTCP over different paths"
seed: 2015
sysctl_profile: ditg-cloud-mptcp
congestion_control: cubic
timeout_s: 120
profiles_file: {profiles}
scenarios:
  clean: {{wifi: {{profile: ditg-100m, rtt_ms: 40}}, lte: {{profile: ditg-100m, rtt_ms: 40}}, modes: [SP-wifi]}}
  lossy: {{wifi: {{profile: ditg-10m, rtt_ms: 40, down: {{loss: 0.04}}}}, lte: {{profile: ditg-10m, rtt_ms: 80}},
          modes: [MP-2]}}
modes: [SP-wifi, MP-2]
primary_paths: [wifi]
ditg: {{profiles: [netflix, maps, docs], duration_s: 3}}
repetitions: 1
"""


@pytest.fixture(scope="module")
def pair_runs(tmp_path_factory):
    """TCP over a clean 100-Mbit/s 40-ms path and MPTCP over 10-Mbit/s paths with 4 % loss
    on P1 and 80 ms on P2, each profile, one repetition: {profile: {mode: run folder}}."""
    from capture.campaign import run_campaign
    d = tmp_path_factory.mktemp("ditgpair")
    f = d / "campaign.yaml"
    f.write_text(CAMPAIGN.format(profiles=REPO / "papers" / "ditg" / "profiles.yaml"))
    s = run_campaign(f, d / "out", progress=False)
    assert not s["failed"], s["failed"]
    runs: dict[str, dict[str, Path]] = {}
    for meta in (d / "out" / "ditg-replay").glob("*/meta.json"):
        m = json.loads(meta.read_text())
        runs.setdefault(m["workload"][5:], {})[m["mode"]] = meta.parent
    return runs


def _result(run_dir: Path) -> dict:
    return json.loads((run_dir / "meta.json").read_text())["result"]


@in_testbed
@pytest.mark.parametrize("profile", sorted(ds.PROFILES))
def test_tcp_and_mptcp_are_offered_the_same_packets(pair_runs, profile):
    tcp, mp = pair_runs[profile]["SP-wifi"], pair_runs[profile]["MP-2"]
    for f in (ds.IDT_FILE, ds.SIZE_FILE):
        assert (tcp / f).read_bytes() == (mp / f).read_bytes()
    a, b = _result(tcp), _result(mp)
    for k in ("schedule_sha256", "schedule_packets", "schedule_bytes", "sent_packets", "sent_bytes"):
        assert a[k] == b[k], k
    for run_dir, res in ((tcp, a), (mp, b)):
        assert res["generated_all"]
        if res["drained"]:
            _replayed(run_dir, res)
            assert res["received_packets"] == res["sent_packets"] and res["delivered_share"] == 1.0
        else:
            assert res["received_packets"] < res["sent_packets"] and not res["complete"]


@in_testbed
def test_what_the_pair_wrote_matches_the_schema(pair_runs):
    from pipeline.metadoc import problems as meta_problems
    for runs in pair_runs.values():
        for run_dir in runs.values():
            assert meta_problems(json.loads((run_dir / "meta.json").read_text())) == []
