"""kernel-config/check output and the sysctl profiles."""
import json
import subprocess
from pathlib import Path

import pytest

from capture import kernel

REPO = Path(__file__).resolve().parent.parent
CHECK = REPO / "kernel-config" / "check"


@pytest.fixture(scope="module")
def facts():
    p = subprocess.run([str(CHECK)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_check_is_executable():
    assert CHECK.stat().st_mode & 0o111


def test_check_reports_mptcp_and_cc(facts):
    for k in ("kernel", "mptcp", "congestion_control", "qdiscs", "out_of_tree_sysctls", "netem"):
        assert k in facts
    m = facts["mptcp"]
    on_disk = Path("/proc/sys/net/mptcp/enabled")
    assert m["upstream"] == on_disk.exists()
    if on_disk.exists():
        assert m["enabled"] == (on_disk.read_text().strip() == "1")
        assert "kernel" in " ".join(m["available_path_managers"])
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    assert facts["congestion_control"]["available"] == avail


def test_out_of_tree_never_faked(facts):
    for name, v in facts["out_of_tree_sysctls"].items():
        exists = Path("/proc/sys/" + name.replace(".", "/")).exists()
        assert v["available"] == exists
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    from capture.cc.loader import probe
    for cc in ("lia", "olia", "balia"):
        rep = facts["congestion_control"]["mptcp_coupled"][cc]
        # available only as the kernel's own or as the lab's BPF program that loads here
        ours = probe(cc)
        assert rep["available"] == (cc in avail or ours["ok"]), rep
        if ours["ok"]:
            assert rep["implementation"].startswith("BPF struct_ops")
        elif cc not in avail:
            assert rep["note"] == ours["reason"]
    assert facts["congestion_control"]["mptcp_coupled"]["wvegas"]["available"] == ("wvegas" in avail)


def test_netem_reported_as_probed(facts):
    import os
    if os.geteuid() != 0:
        pytest.skip("netem probing needs root (a throw-away namespace)")
    assert isinstance(facts["qdiscs"]["netem"], bool)
    assert facts["qdiscs"]["tbf"] is True or facts["qdiscs"]["tbf"] is False
    assert facts["netem"]["available"] == facts["qdiscs"]["netem"]


@pytest.mark.parametrize("name", ["chen2013", "ditg-cloud-tcp", "ditg-cloud-mptcp", "cs244-buffer"])
def test_profiles_load(name):
    p = kernel.load_profile(name)
    assert p["sysctl"]
    # the global net.core.* limits are never applied inside namespaces
    assert not any(k.startswith("net.core.") for k in p["sysctl_netns"])


def test_chen_profile_values():
    p = kernel.load_profile("chen2013")
    assert p["sysctl"]["net.ipv4.tcp_no_metrics_save"] == "1"
    assert p["sysctl"]["net.ipv4.tcp_rmem"].split()[-1] == str(8 * 1024 * 1024)
    assert p["route"]["ssthresh"].split()[-1] == "45"
    from capture import ssthresh
    assert ssthresh.requested(p["route"]) == 45   # what the capture makes the initial ssthresh


@pytest.mark.parametrize("name", ["ditg-cloud-tcp", "ditg-cloud-mptcp"])
def test_ditg_buffers_start_at_the_papers_100_mib(name):
    """§III: send and receive buffers of 100 MiB. Both start there (the default is the
    maximum): from 87380, sends stalled on the send side and MPTCP receives stalled
    for good behind a gap (kernel-config/profiles/ditg-cloud-*.yaml)."""
    p = kernel.load_profile(name)
    for key in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"):
        assert p["sysctl"][key].split()[1:] == [str(100 * 1024 * 1024)] * 2, key


def test_cs244_sweep_param():
    p = kernel.load_profile("cs244-buffer", {"buffer": 50000})
    assert p["sysctl"]["net.ipv4.tcp_rmem"] == "4096 50000 50000"


def test_fragment_lists_mptcp():
    txt = (REPO / "kernel-config" / "kernel.fragment").read_text()
    assert "CONFIG_MPTCP=y" in txt and "CONFIG_VETH=y" in txt
