"""The testbed's topology with linkem run by hand, for testing and benchmarking the
emulator alone (tests/test_linkem.py, benchmarks/linkem_bench.py): ``LinkBed``.

    client ns --veth-- [emu ns of path i: c | linkem | s] --veth-- server ns

The namespaces, veths and addresses are ``capture.topology.Topology``'s (one topology
for the whole testbed; its namespaces carry the lab's prefix, so ``python -m capture
sweep`` removes any a crash left). Needs root.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from .topology import Topology
from .util import LINKEM


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


class LinkBed:
    """The testbed's own topology (``capture.topology.Topology``: namespaces, veths,
    addresses, offloads off) with linkem started by hand on each path, for measuring the
    emulator alone. Path i is ``PATHS[i]`` (client 10.<i+1>.0.2, server 10.<i+1>.0.1);
    a context manager that deletes its namespaces (and kills what it started) even on
    failure.

    Not capture.cc.lab.Bed, which shares the Topology: that bed starts each path's
    emulator once, from a link profile (PathEmulator: linkem or tbf), and sets up MPTCP,
    routes and congestion controls for its flows; this one starts linkem by hand, as
    often as a test needs, with a raw config, extra options or another build, and pins
    the neighbours so that no ARP crosses the emulator."""

    PATHS = ("wifi", "lte")

    def __init__(self, n_paths: int = 1, prefix: str | None = None, linkem: Path | None = None):
        if not 1 <= n_paths <= len(self.PATHS):
            raise ValueError(f"1 to {len(self.PATHS)} paths")
        self.n = n_paths
        self.linkem = Path(linkem or LINKEM)
        # an older build (to compare against) may not know --stats
        self.has_stats = "--stats" in sh(str(self.linkem), "--help", check=False).stdout
        paths = list(self.PATHS[:n_paths])
        self.topo = Topology(run_id=f"{prefix or 'linkem-'}{os.getpid()}-{uuid.uuid4().hex[:6]}", paths=paths,
                             mode="MP-2" if n_paths > 1 else f"SP-{paths[0]}", primary=paths[0])
        self.client, self.server = self.topo.client_ns, self.topo.server_ns
        self.emus = [self.topo.wires[p].emu_ns for p in paths]
        self.procs: list[subprocess.Popen] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="linkem-bed-"))

    def _wire(self, i: int):
        return self.topo.wires[self.PATHS[i]]

    # addresses
    def client_ip(self, i: int) -> str:
        return self._wire(i).client_addr

    def server_ip(self, i: int) -> str:
        return self._wire(i).server_addr

    def ns(self, ns: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", ns, *cmd, check=check)

    def popen(self, ns: str, *cmd: str, **kw) -> subprocess.Popen:
        p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def __enter__(self) -> "LinkBed":
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _build(self) -> None:
        self.topo.build()
        for i in range(self.n):
            w = self._wire(i)
            # Permanent neighbours: ARP never crosses the emulator. Otherwise a burst sent
            # while an entry is unresolved (new, or expired between tests) queues behind
            # ARP and the kernel drops all but unres_qlen_bytes of it before linkem sees it.
            mac = {end: json.loads(self.ns(ns, "ip", "-j", "link", "show", "dev", ifc).stdout)[0]["address"]
                   for end, ns, ifc in (("client", self.client, w.client_if), ("server", self.server, w.server_if))}
            self.ns(self.client, "ip", "neigh", "replace", w.server_addr, "lladdr", mac["server"],
                    "nud", "permanent", "dev", w.client_if)
            self.ns(self.server, "ip", "neigh", "replace", w.client_addr, "lladdr", mac["client"],
                    "nud", "permanent", "dev", w.server_if)

    def start_linkem(self, i: int, config: str, log: Path, extra: tuple[str, ...] = (), timeout: float = 5.0) -> subprocess.Popen:
        cfg = self.tmp / f"linkem{i}.json"
        cfg.write_text(config)
        ready = self.tmp / f"ready{i}"
        ready.unlink(missing_ok=True)  # a previous linkem's on this path: wait for this one's
        err = open(self.tmp / f"linkem{i}.stderr", "w")
        stats = ("--stats", str(self.stats_path(i))) if self.has_stats else ()
        w = self._wire(i)   # the emulator namespace's interface names are the topology's
        p = self.popen(self.emus[i], str(self.linkem), "--client-if", w.emu_client_if, "--server-if", w.emu_server_if,
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
        self.topo.destroy()
        shutil.rmtree(self.tmp, ignore_errors=True)


def read_log(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))
