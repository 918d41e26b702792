"""The BPF congestion controls (capture/cc) on this kernel: they load, register and
unregister (also when their loader or its parent is killed), couple the subflows of
a real MPTCP connection through the per-connection map, and compute the same
increases as the reference model (capture/cc/model.py) from the same windows and
RTTs.

BPF_PROG_TEST_RUN cannot run tcp_congestion_ops programs (the kernel's struct_ops
test_run serves only bpf_dummy_ops), so the comparison is a loaded-socket
experiment: an MPTCP download over two emulated paths of different RTTs with the
program's trace on; every congestion-avoidance step it took (the subflows' windows,
RTTs and loss intervals it read, the increase it computed, the window before and
after) is fed to the model.

Skipped, with the reason, where struct_ops cannot load (no BTF, not built, not
root) or there is no MPTCP testbed.
"""
import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import NEEDS_TESTBED

from capture.cc import ALGORITHMS, model
from capture.cc.loader import Registered, registered, unavailable_reason

REPO = Path(__file__).resolve().parent.parent
ONE = 1 << 32


def _skip_unless_loadable(name: str) -> None:
    why = unavailable_reason(name)
    if why:
        pytest.skip(f"BPF {name} cannot load here: {why}")


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_loads_and_unregisters(name):
    _skip_unless_loadable(name)
    assert name not in registered()
    with Registered(name) as r:
        assert name in registered()
        assert r.info["struct_ops_map_id"] > 0 and r.info["conns_map_id"] > 0
    assert name not in registered()
    assert set(r.stats) >= {"subflows_coupled", "plain_tcp_sockets", "coupled_steps"}


def _until(pred, timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def test_sigkill_of_the_loader_unregisters():
    _skip_unless_loadable("lia")
    r = Registered("lia").start()
    try:
        os.kill(r.proc.pid, signal.SIGKILL)   # the link's last descriptor closes
        assert _until(lambda: "lia" not in registered())
    finally:
        r.stop()


def test_sigkill_of_the_parent_unregisters(tmp_path):
    """The run that loaded the algorithm dies without cleaning up: the loader gets its
    parent-death signal and unregisters."""
    _skip_unless_loadable("olia")
    ready = tmp_path / "ready"
    code = ("import time\n"
            "from capture.cc.loader import Registered\n"
            "Registered('olia').start(); open(%r, 'w').write('x'); time.sleep(60)\n") % (str(ready),)
    p = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    try:
        assert _until(ready.exists, 10)
        assert "olia" in registered()
        p.kill()
        p.wait(5)
        assert _until(lambda: "olia" not in registered())
    finally:
        if p.poll() is None:
            p.kill()


def test_probe_names_what_is_missing(monkeypatch):
    import capture.cc.loader as L
    L.probe.cache_clear()
    monkeypatch.setattr(L, "LOADER", Path("/nonexistent/mptcp-cc"))
    try:
        why = L.unavailable_reason("lia")
        assert why and ("make cc" in why or "BTF" in why)
    finally:
        L.probe.cache_clear()


def _bpftool_conns(map_id: int) -> list[dict]:
    p = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)], capture_output=True, text=True,
                       timeout=10)
    if p.returncode != 0:
        return [{"error": p.stderr.strip()}]
    return json.loads(p.stdout)


def _slots(entry: dict) -> list[dict]:
    v = entry.get("formatted", entry).get("value", {})
    return [s for s in v.get("slot", []) if isinstance(s, dict) and s.get("sk")]


def _testbed(f):
    for m in NEEDS_TESTBED:
        f = m(f)
    return f


@_testbed
@pytest.mark.parametrize("alg", list(ALGORITHMS))
def test_bpf_matches_model_on_a_real_connection(alg, tmp_path):
    _skip_unless_loadable(alg)
    from capture.cc.lab import Bed, Flow
    from capture.emulator import linkem_available
    if not linkem_available():
        pytest.skip("linkem not built (make linkem): the two RTTs need its delay")
    links = {"wifi": {"delay_ms": 5, "down": {"rate_mbit": 10, "queue_bytes": 30000}},
             "lte": {"delay_ms": 20, "down": {"rate_mbit": 6, "queue_bytes": 45000}}}
    flows = [Flow("mptcp", True, [("wifi", 2), ("lte", 2)], alg)]
    with Bed(f"cctest{alg}", links, flows, tmp_path, trace=True) as bed:
        conns_map = bed.registered[alg].info["conns_map_id"]
        res = bed.run(8, 2, snapshot_every=2, probe=lambda: _bpftool_conns(conns_map))
        stats_holder = bed.registered[alg]
    stats = stats_holder.stats

    # the sender's subflows ran the algorithm and took a slot each
    sub = [s for s in res["subflows"] if s["flow"] == "mptcp"]
    assert len(sub) == 2 and {s["cc"] for s in sub} == {alg}, sub
    assert stats["subflows_coupled"] >= 2 and stats["coupled_steps_multipath"] > 0, stats

    # mid-transfer, the map held the connection's two subflows with live windows
    seen = [_slots(e) for snap in res["probes"] for e in snap if "error" not in e]
    assert any(len(s) == 2 and all(x["cwnd"] > 0 and x["srtt_us"] > 0 for x in s) for s in seen), res["probes"]

    events = [json.loads(line) for line in (tmp_path / f"trace-{alg}.jsonl").read_text().splitlines()]
    inc = [e for e in events if e["kind"] == 1]
    multi = [e for e in inc if e["n"] >= 2]
    assert len(multi) >= 50, f"only {len(multi)} coupled steps with two subflows traced"
    rtts = {tuple(sorted(e["srtt_us"])) for e in multi}
    assert any(hi > 1.5 * lo for lo, hi in rtts), "the two paths' RTTs should differ"

    coupled_below_reno = 0
    for e in inc:
        w, rtt, i = e["cwnd"], e["srtt_us"], e["self"]
        want = model.increase(alg, w, rtt, i, ell=e["ell"])
        got = Fraction(e["inc"], ONE)
        assert abs(got - want) <= max(abs(want) / 10**4, Fraction(16, ONE)), (e, float(want))
        # the window update is the model's credit rule applied to the program's increase
        cwnd, credit = model.apply_credit(e["cwnd_before"], Fraction(e["cnt_before"], ONE), e["acked"], got)
        assert (cwnd, credit) == (e["cwnd_after"], Fraction(e["cnt_after"], ONE)), e
        if e["n"] >= 2 and want < model.reno_increase(w[i]) * Fraction(9, 10):
            coupled_below_reno += 1
    # coupling is real: many steps increased by less than one Reno subflow would
    assert coupled_below_reno > len(multi) // 4, (coupled_below_reno, len(multi))

    for e in (e for e in events if e["kind"] == 2):   # BALIA's coupled decrease
        assert e["cwnd"][e["self"]] == e["cwnd_before"]
        want = model.balia_ssthresh(e["cwnd"], e["srtt_us"], e["self"])
        assert abs(e["ssthresh"] - want) <= 1, (e, float(want))


def _campaign(tmp_path, cc, size, rate=(20, 10)):
    import yaml
    doc = {"name": "cc", "seed": 1, "force_tbf": True, "congestion_control": cc,
           "scenarios": {"s": {"wifi": {"rate_mbit": rate[0]}, "lte": {"rate_mbit": rate[1]}}},
           "runs": [{"id": "mp2", "scenario": "s", "mode": "MP-2", "size": size},
                    {"id": "sp", "scenario": "s", "mode": "SP-wifi", "size": size}]}
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(doc))
    return f


def _namespaces(prefix):
    txt = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in txt.splitlines() if line.startswith(prefix)]


@_testbed
def test_campaign_runs_with_lia(tmp_path):
    """congestion_control: lia in a campaign: registered for the run, used by both
    subflows (program counters in meta.json), unregistered afterwards; single-path
    TCP under lia runs Reno."""
    _skip_unless_loadable("lia")
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "capture", "run", str(_campaign(tmp_path, "lia", "3MB")),
                        "--out", str(out), "--no-progress"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "lia" not in registered()
    mp = json.loads((out / "cc" / "mp2" / "meta.json").read_text())
    impl = mp["congestion_control_impl"]
    assert mp["congestion_control"] == "lia" and impl["implementation"].startswith("BPF struct_ops")
    assert impl["stats"]["subflows_coupled"] >= 2 and impl["stats"]["coupled_steps_multipath"] > 0, impl
    assert mp["sysctls_applied"]["net.ipv4.tcp_congestion_control"] == "lia"
    sp = json.loads((out / "cc" / "sp" / "meta.json").read_text())
    assert sp["congestion_control_impl"]["stats"]["plain_tcp_sockets"] >= 1
    assert sp["congestion_control_impl"]["stats"]["subflows_coupled"] == 0


@_testbed
def test_interrupted_run_unregisters(tmp_path):
    """SIGTERM mid-download: the run cleans up, olia is no longer registered, no
    namespace is left."""
    _skip_unless_loadable("olia")
    out = tmp_path / "out"
    f = _campaign(tmp_path, "olia", "8MB", rate=(2, 1))
    p = subprocess.Popen([sys.executable, "-m", "capture", "run", str(f), "--out", str(out), "--no-progress",
                          "--only", "mp2"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    prefix = f"mpl-{p.pid}-"
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:
            pc = out / "cc" / "mp2" / "client-wifi.pcap"
            if "olia" in registered() and _namespaces(prefix) and pc.exists() and pc.stat().st_size > 20000:
                break
            assert p.poll() is None, p.communicate()
            time.sleep(0.1)
        else:
            pytest.fail("run did not start within 30 s")
        p.send_signal(signal.SIGTERM)
        rc = p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 130, p.stderr.read()
    assert "olia" not in registered()
    assert _namespaces(prefix) == []
