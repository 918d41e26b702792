"""An interrupted run (SIGTERM/SIGINT mid-run) leaves no namespace or process behind,
and the half run is redone on resume. Needs root and upstream MPTCP."""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import NEEDS_TESTBED
import yaml

REPO = Path(__file__).resolve().parent.parent


pytestmark = [
    *NEEDS_TESTBED,
]


def namespaces(prefix):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.startswith(prefix)]


def procs_mentioning(s):
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if s in cmd:
                found.append((d.name, cmd))
    return found


def campaign(tmp_path, size):
    doc = {"name": "intr", "seed": 1, "force_tbf": True,
           "scenarios": {"slow": {"wifi": {"rate_mbit": 2}, "lte": {"rate_mbit": 1}}},
           "runs": [{"id": "mp2-slow", "scenario": "slow", "mode": "MP-2", "size": size}]}
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(doc))
    return f


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_interrupt_cleans_up_and_resume_redoes(tmp_path, sig):
    out = tmp_path / "out"
    f = campaign(tmp_path, "8MB")  # ~20 s at 3 Mbit/s: certainly mid-download when signalled
    p = subprocess.Popen([sys.executable, "-m", "capture", "run", str(f), "--out", str(out), "--no-progress"],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    prefix = f"mpl-{p.pid}-"
    run_dir = out / "intr" / "mp2-slow"
    try:
        end = time.monotonic() + 30
        # wait until the download is running: namespaces exist and tcpdump has written packets
        while time.monotonic() < end:
            pc = run_dir / "client-wifi.pcap"
            if namespaces(prefix) and pc.exists() and pc.stat().st_size > 20000:
                break
            assert p.poll() is None, p.communicate()
            time.sleep(0.1)
        else:
            pytest.fail("run did not start within 30 s")
        assert len(namespaces(prefix)) == 4   # client, server, 2 emulator namespaces
        p.send_signal(sig)
        rc = p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 130, p.stderr.read()
    assert namespaces(prefix) == []
    assert procs_mentioning(str(tmp_path)) == []
    assert procs_mentioning("/mpl-mp2-slow-") == []   # nginx/wget work dir
    assert not (run_dir / ".done").exists()
    assert (run_dir / ".started").exists()

    # resume: the half run is cleaned and redone (smaller file so it is quick)
    f = campaign(tmp_path, "200KB")
    r = subprocess.run([sys.executable, "-m", "capture", "run", str(f), "--out", str(out), "--no-progress"],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (run_dir / ".done").exists() and (run_dir / "meta.json").exists()
    assert not (run_dir / ".started").exists() and not (run_dir / "error.txt").exists()
    # a tbf run (no linkem, nothing measured of stalls) matches pipeline/meta.schema.yaml
    meta = json.loads((run_dir / "meta.json").read_text())
    assert "meta_schema_problems" not in meta and meta["stalls"]["measured"] is False
    # finished runs are skipped
    r = subprocess.run([sys.executable, "-m", "capture", "run", str(f), "--out", str(out), "--no-progress"],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "0 ran, 1 already done" in r.stdout


def test_sweep_removes_leftovers_of_dead_runs():
    dead = 999999
    while Path(f"/proc/{dead}").exists():
        dead -= 1
    ns = f"mpl-{dead}-leftover-cl"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        from capture.topology import sweep
        assert ns in sweep()
        assert namespaces(ns) == []
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
