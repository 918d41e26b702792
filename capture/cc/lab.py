"""Bulk-transfer experiments for the congestion controls, on capture's own testbed
(Topology's namespaces and routing, PathEmulator's linkem links).

A ``Bed`` is a topology with one or two paths (``wifi``: 10.1.0.0/24, ``lte``:
10.2.0.0/24; client .2, .3, ... on the path's interface, server .1) and a set of
flows, each a download from the server to one or more client addresses:

* an MPTCP flow binds its first address (initial subflow) and gets one extra
  subflow per further address (``ip mptcp endpoint ... subflow``);
* a TCP flow binds its one address.

The sender's (server's) congestion control is chosen per flow by host routes
(``congctl``); the server namespace's default is the MPTCP flow's algorithm, since
upstream MPTCP gives a joining subflow its connection's (the namespace default's)
algorithm. Algorithms of capture/cc are registered for the bed's lifetime.
"""
from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..emulator import PathEmulator
from ..topology import Topology
from ..util import REPO, Proc, log, out, sh, wait_for
from . import is_bpf
from .loader import Registered

SERVER_ADDR = "10.100.0.1"


def addr(path: str, host: int) -> str:
    return f"10.{ {'wifi': 1, 'lte': 2}[path] }.0.{host}"


@dataclass
class Flow:
    name: str
    mptcp: bool
    addrs: list[tuple[str, int]]   # (path, host number): ("wifi", 2) -> 10.1.0.2
    cc: str
    port: int = 0

    @property
    def client_addrs(self) -> list[str]:
        return [addr(p, h) for p, h in self.addrs]


@dataclass
class Bed:
    run_id: str
    links: dict[str, dict]             # path -> link profile (capture/emulator.py format)
    flows: list[Flow]
    work: Path
    trace: bool = False                 # record the BPF programs' steps (trace-<cc>.jsonl in work)
    seed: int = 1
    topo: Topology | None = None
    emus: list[PathEmulator] = field(default_factory=list)
    registered: dict[str, Registered] = field(default_factory=dict)
    servers: list[Proc] = field(default_factory=list)

    def __post_init__(self):
        mp = [f for f in self.flows if f.mptcp]
        if len(mp) > 1:
            raise ValueError("a bed has at most one MPTCP flow (it sets the namespace default)")
        for i, f in enumerate(self.flows):
            f.port = f.port or 5201 + i

    # ------------------------------------------------------------------ set-up
    def __enter__(self) -> "Bed":
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def _build(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        for cc in sorted({f.cc for f in self.flows if is_bpf(f.cc)}):
            trace = self.work / f"trace-{cc}.jsonl" if self.trace else None
            self.registered[cc] = Registered(cc, trace=trace).start()
        paths = list(self.links)
        mp = next((f for f in self.flows if f.mptcp), None)
        self.topo = Topology(run_id=self.run_id, paths=paths, mode="SP-" + paths[0] if len(paths) == 1 else "MP-2",
                             primary=paths[0], sysctls={"net.mptcp.enabled": "1"})
        self.topo.build()
        c, s = self.topo.client_ns, self.topo.server_ns
        if len(paths) > 1:   # MP-2 made an endpoint for every path; this bed sets its own
            sh(["ip", "mptcp", "endpoint", "flush"], ns=c)
        n_sub = max((len(f.addrs) for f in self.flows if f.mptcp), default=1)
        for ns in (c, s):
            sh(["ip", "mptcp", "limits", "set", "subflow", str(max(n_sub, 2)), "add_addr_accepted", "2"], ns=ns)
        if mp:
            sh(["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={mp.cc}"], ns=s)
        for f in self.flows:
            for i, (p, h) in enumerate(f.addrs):
                a, w = addr(p, h), self.topo.wires[p]
                if h != 2:
                    sh(["ip", "addr", "add", f"{a}/24", "dev", w.client_if], ns=c)
                    sh(["ip", "rule", "add", "from", a, "table", str(100 + w.index)], ns=c)
                if f.mptcp and i > 0:
                    sh(["ip", "mptcp", "endpoint", "add", a, "dev", w.client_if, "subflow"], ns=c)
                sh(["ip", "route", "replace", f"{a}/32", "dev", w.server_if, "src", w.server_addr,
                    "congctl", f.cc], ns=s)
        for i, p in enumerate(paths):
            e = PathEmulator(self.topo.wires[p], self.links[p], self.work, seed=self.seed * 10 + i)
            e.start()
            self.emus.append(e)

    def close(self) -> None:
        for p in self.servers:
            p.stop()
        self.servers.clear()
        for e in self.emus:
            e.stop()
        self.emus.clear()
        if self.topo is not None:
            self.topo.destroy()
        for r in self.registered.values():
            r.stop()

    # ------------------------------------------------------------------ running
    def run(self, duration: float, warmup: float, snapshot_every: float = 0, probe=None) -> dict:
        """All flows at once for ``duration`` s. Goodput per flow over [warmup,
        duration - 0.5]; per-subflow bytes (server's ``ss``) over the same window.
        ``probe()``, if given, is called at each snapshot (its results in ``probes``)."""
        c, s = self.topo.client_ns, self.topo.server_ns
        py = sys.executable
        self.servers = [Proc(f"serve-{f.name}", [py, "-m", "capture.cc.bulk", "serve", "--port", str(f.port),
                                                 "--duration", str(duration)] + (["--mptcp"] if f.mptcp else []),
                             ns=s, cwd=REPO, stderr=self.work / f"serve-{f.name}.err")
                        for f in self.flows]
        for f in self.flows:
            wait_for(lambda: bool(out(["ss", "-Hltn", f"sport = :{f.port}"], ns=s, check=False).strip()),
                     10, f"bulk server of {f.name}")
        t0 = time.monotonic()
        fetch = [Proc(f"fetch-{f.name}", [py, "-m", "capture.cc.bulk", "fetch", "--addr", SERVER_ADDR,
                                          "--port", str(f.port), "--bind", f.client_addrs[0]]
                      + (["--mptcp"] if f.mptcp else []), ns=c, cwd=REPO,
                      stdout=self.work / f"fetch-{f.name}.json", stderr=self.work / f"fetch-{f.name}.err")
                 for f in self.flows]
        snaps: list[tuple[float, list[dict]]] = []
        probes: list = []
        end = t0 + duration - 1.0
        marks = [t0 + warmup, end]
        if snapshot_every:
            marks = sorted(set(marks + [t0 + x * snapshot_every for x in range(1, int(duration / snapshot_every))
                                        if t0 + x * snapshot_every < end]))
        for m in marks:
            time.sleep(max(0.0, m - time.monotonic()))
            snaps.append((time.monotonic() - t0, subflows(s)))
            if probe is not None:
                probes.append(probe())
        try:
            for p in fetch:
                p.wait(duration + 60)
        finally:
            for p in fetch:
                p.stop()
        res: dict = {"duration_s": duration, "warmup_s": warmup, "flows": {}}
        for f in self.flows:
            try:
                d = json.loads((self.work / f"fetch-{f.name}.json").read_text())
            except (OSError, ValueError):
                err = (self.work / f"fetch-{f.name}.err").read_text(errors="replace")[-400:]
                raise RuntimeError(f"flow {f.name}: no result from its receiver: {err}") from None
            res["flows"][f.name] = {"goodput_mbit": window_goodput(d["samples"], warmup, duration - 0.5),
                                    "bytes": d["bytes"], "cc": f.cc, "mptcp": f.mptcp}
        w0 = next(sn for t, sn in snaps if t >= warmup - 0.5)
        res["subflows"] = subflow_window(w0, snaps[-1][1], self.flows)
        res["snapshots"] = snaps if snapshot_every else None
        res["probes"] = probes
        for p in self.servers:
            p.stop()
        self.servers.clear()
        return res


def window_goodput(samples: list, t1: float, t2: float) -> float:
    """Mbit/s received between the samples nearest t1 and t2."""
    a = min(samples, key=lambda x: abs(x[0] - t1))
    b = min(samples, key=lambda x: abs(x[0] - t2))
    if b[0] <= a[0]:
        raise RuntimeError(f"receiver stopped before {t2:.1f} s (last sample at {samples[-1][0]:.1f} s)")
    return (b[1] - a[1]) * 8 / (b[0] - a[0]) / 1e6


_SS_KV = re.compile(r"\b(cwnd|bytes_acked|bytes_retrans|rtt|ssthresh):([0-9.]+)")


def subflows(ns: str) -> list[dict]:
    """The namespace's established TCP sockets (MPTCP subflows included) from ``ss``:
    local and peer address, congestion control, cwnd, bytes acked, RTT."""
    rows, cur = [], None
    for line in out(["ss", "-tinH", "state", "established"], ns=ns, check=False).splitlines():
        if not line[:1].isspace():
            parts = line.split()
            cur = {"local": parts[-2], "peer": parts[-1]}
            rows.append(cur)
        elif cur is not None:
            toks = line.split()
            cur["cc"] = toks[0] if toks else None
            cur["mptcp_subflow"] = "tcp-ulp-mptcp" in line
            for k, v in _SS_KV.findall(line):
                cur[k] = float(v) if "." in v else int(v)
    return rows


def subflow_window(before: list[dict], after: list[dict], flows: list[Flow]) -> list[dict]:
    """Per data-carrying socket of the flows: bytes acked between two snapshots."""
    port_flow = {f.port: f for f in flows}
    prev = {(r["local"], r["peer"]): r for r in before}
    res = []
    for r in after:
        port = int(r["local"].rsplit(":", 1)[1])
        if port not in port_flow:
            continue
        b0 = prev.get((r["local"], r["peer"]), {}).get("bytes_acked", 0)
        f = port_flow[port]
        peer_ip = r["peer"].rsplit(":", 1)[0]
        path = next((p for (p, h) in f.addrs if addr(p, h) == peer_ip), None)
        res.append({"flow": f.name, "peer": r["peer"], "path": path, "cc": r.get("cc"),
                    "bytes_acked_window": r.get("bytes_acked", 0) - b0, "cwnd": r.get("cwnd"),
                    "mptcp_subflow": r.get("mptcp_subflow", False)})
    return res


def log_result(name: str, res: dict) -> None:
    log.info("%s: %s", name, {k: round(v["goodput_mbit"], 2) for k, v in res["flows"].items()})
