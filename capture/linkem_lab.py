"""Throw-away network-namespace topologies for testing and benchmarking linkem.

    client ns --veth-- [emu ns i: c | linkem | s] --veth-- server ns     (one per path)

Path i: client address 10.77.i.1/24 on interface c<i>, server 10.77.i.2/24 on
s<i>. Every namespace name starts with a unique prefix; `Topology` is a context
manager that deletes them (and kills what it started) even on failure.
Used by tests/test_linkem.py and benchmarks/linkem_bench.py (the emulator alone, without
MPTCP: the campaigns' testbed is capture.topology). Needs root.
"""
from __future__ import annotations

import os
import shutil
import signal
import json
import subprocess
import tempfile
import time
from pathlib import Path

from .emulator import LINKEM  # noqa: E402  (the one place the binary's path is said)


def sh(*args: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=check, capture_output=True, text=True, **kw)


def can_run() -> str | None:
    """None if namespaces can be built here, else the reason why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, AF_PACKET)"
    for tool in ("ip", "ethtool"):
        if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
            return f"needs {tool}"
    if not LINKEM.exists():
        return f"{LINKEM} not built (cargo build --release --manifest-path capture/linkem/Cargo.toml)"
    return None


class Topology:
    def __init__(self, n_paths: int = 1, prefix: str | None = None, linkem: Path | None = None):
        self.n = n_paths
        self.linkem = Path(linkem or LINKEM)
        # an older build (to compare against) may not know --stats
        self.has_stats = "--stats" in sh(str(self.linkem), "--help", check=False).stdout
        self.prefix = prefix or f"lkt-{os.getpid()}-"
        self.client = self.prefix + "c"
        self.server = self.prefix + "s"
        self.emus = [f"{self.prefix}e{i}" for i in range(n_paths)]
        self.procs: list[subprocess.Popen] = []
        self.tmp = Path(tempfile.mkdtemp(prefix=self.prefix))

    # addresses
    def client_ip(self, i: int) -> str:
        return f"10.77.{i}.1"

    def server_ip(self, i: int) -> str:
        return f"10.77.{i}.2"

    def ns(self, ns: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", ns, *cmd, check=check)

    def popen(self, ns: str, *cmd: str, **kw) -> subprocess.Popen:
        p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def __enter__(self) -> "Topology":
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _build(self) -> None:
        for ns in [self.client, self.server, *self.emus]:
            sh("ip", "netns", "add", ns)
            self.ns(ns, "ip", "link", "set", "lo", "up")
            for k in ("all", "default"):
                self.ns(ns, "sysctl", "-qw", f"net.ipv6.conf.{k}.disable_ipv6=1", check=False)
        for i, emu in enumerate(self.emus):
            sh("ip", "link", "add", f"c{i}", "netns", self.client, "type", "veth", "peer", "name", "c", "netns", emu)
            sh("ip", "link", "add", "s", "netns", emu, "type", "veth", "peer", "name", f"s{i}", "netns", self.server)
            for ns, ifc in ((self.client, f"c{i}"), (emu, "c"), (emu, "s"), (self.server, f"s{i}")):
                self.ns(ns, "sysctl", "-qw", f"net.ipv6.conf.{ifc}.disable_ipv6=1", check=False)
                self.ns(ns, "ethtool", "-K", ifc, "tso", "off", "gso", "off", "gro", "off", check=False)
                self.ns(ns, "ip", "link", "set", ifc, "up")
            self.ns(self.client, "ip", "addr", "add", f"{self.client_ip(i)}/24", "dev", f"c{i}")
            self.ns(self.server, "ip", "addr", "add", f"{self.server_ip(i)}/24", "dev", f"s{i}")
            # Permanent neighbours: ARP never crosses the emulator. Otherwise a burst sent
            # while an entry is unresolved (new, or expired between tests) queues behind
            # ARP and the kernel drops all but unres_qlen_bytes of it before linkem sees it.
            mac = {ifc: json.loads(self.ns(ns, "ip", "-j", "link", "show", "dev", ifc).stdout)[0]["address"]
                   for ns, ifc in ((self.client, f"c{i}"), (self.server, f"s{i}"))}
            self.ns(self.client, "ip", "neigh", "replace", self.server_ip(i), "lladdr", mac[f"s{i}"],
                    "nud", "permanent", "dev", f"c{i}")
            self.ns(self.server, "ip", "neigh", "replace", self.client_ip(i), "lladdr", mac[f"c{i}"],
                    "nud", "permanent", "dev", f"s{i}")

    def start_linkem(self, i: int, config: str, log: Path, extra: tuple[str, ...] = (), timeout: float = 5.0) -> subprocess.Popen:
        cfg = self.tmp / f"linkem{i}.json"
        cfg.write_text(config)
        ready = self.tmp / f"ready{i}"
        err = open(self.tmp / f"linkem{i}.stderr", "w")
        stats = ("--stats", str(self.stats_path(i))) if self.has_stats else ()
        p = self.popen(self.emus[i], str(self.linkem), "--client-if", "c", "--server-if", "s",
                       "--config", str(cfg), "--log", str(log), "--ready-file", str(ready),
                       *stats, *extra, stderr=err)
        deadline = time.time() + timeout
        while not ready.exists():
            if p.poll() is not None:
                raise RuntimeError(f"linkem exited with {p.returncode}: {(self.tmp / f'linkem{i}.stderr').read_text()}")
            if time.time() > deadline:
                raise RuntimeError("linkem did not become ready")
            time.sleep(0.01)
        return p

    def stats_path(self, i: int) -> Path:
        """linkem's --stats JSON of path i (written when it exits)."""
        return self.tmp / f"linkem{i}.stats.json"

    def stop(self, p: subprocess.Popen, timeout: float = 10.0) -> int:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        try:
            return p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    pass
        for ns in [self.client, self.server, *self.emus]:
            sh("ip", "netns", "del", ns, check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)


def read_log(path: Path) -> list[dict]:
    import csv
    with open(path) as f:
        return list(csv.DictReader(f))
