"""Namespaces, veths, addresses, policy routing, MPTCP endpoints/limits, per-namespace sysctls.

Per path P (``wifi``, ``lte``, and ``eth`` for three-path runs) the wire is::

    client ns [P] ──veth── [c] emulator ns mpl-…-eP [s] ──veth── [P] server ns

The emulator namespace bridges ``c`` and ``s`` (linkem over AF_PACKET, or a Linux
bridge plus tbf when only a rate is needed). Client and server share the path's
subnet ``10.<i>.0.0/24`` (client .2, server .1). The server's service addresses
(10.100.0.1, and 10.100.0.2 for MP-4) live on its loopback and are reachable over
every path; the client routes by source address (one table per path), so each
subflow leaves by its own interface. Nothing here touches the host's namespace.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

from .spec import MODES, PATH_INDEX
from .util import CommandError, log, out, sh

PREFIX = "mpl-"
SERVICE_ADDRS = ["10.100.0.1", "10.100.0.2"]
JOIN_PORT = 9100  # client-side MP_JOIN listener for server-initiated (D-ITG) connections


def path_index(name: str) -> int:
    if name in PATH_INDEX:
        return PATH_INDEX[name]
    raise ValueError(f"unknown path {name!r} (known: {', '.join(PATH_INDEX)})")


@dataclass
class PathWire:
    name: str
    index: int
    emu_ns: str
    client_if: str
    server_if: str
    client_addr: str
    server_addr: str
    subnet: str
    emu_client_if: str = "c"
    emu_server_if: str = "s"

    def as_meta(self) -> dict:
        return {
            "client_if": self.client_if, "server_if": self.server_if,
            "client_addr": self.client_addr, "server_addr": self.server_addr,
            "subnet": self.subnet, "table": 100 + self.index,
            "emulator_ns": self.emu_ns,
            "emulator_ifs": {"client": self.emu_client_if, "server": self.emu_server_if},
        }


def ns_token(run_id: str) -> str:
    """Namespace stem for a run: prefix, owner pid (for sweeping), shortened run id."""
    short = re.sub(r"[^A-Za-z0-9]", "", run_id)[-16:] or "run"
    return f"{PREFIX}{os.getpid()}-{short}"


def list_namespaces() -> list[str]:
    txt = out(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in txt.splitlines() if line.strip()]


def kill_ns_processes(ns: str) -> None:
    pids = out(["ip", "netns", "pids", ns], check=False).split()
    for sig in ("TERM", "KILL"):
        live = []
        for pid in pids:
            try:
                os.kill(int(pid), 15 if sig == "TERM" else 9)
                live.append(pid)
            except (ProcessLookupError, ValueError):
                pass
        if not live:
            return
        for _ in range(20):
            if not out(["ip", "netns", "pids", ns], check=False).split():
                return
            time.sleep(0.05)
        pids = out(["ip", "netns", "pids", ns], check=False).split()


def delete_ns(ns: str) -> None:
    kill_ns_processes(ns)
    sh(["ip", "netns", "del", ns], check=False)


def sweep(all_owners: bool = False) -> list[str]:
    """Delete namespaces (and their processes) left by crashed runs.

    A namespace is ``mpl-<pid>-…``; it is a leftover when that pid no longer lives
    (or when ``all_owners``). Namespaces of live runs in other processes are kept.
    """
    removed = []
    for ns in list_namespaces():
        if not ns.startswith(PREFIX):
            continue
        m = re.match(rf"{PREFIX}(\d+)-", ns)
        if not m:
            continue  # not made by the testbed (or kernel-config/check): not ours to delete
        owner_alive = False
        if not all_owners:
            pid = int(m.group(1))
            owner_alive = pid != os.getpid() and os.path.exists(f"/proc/{pid}")
        if not owner_alive:
            delete_ns(ns)
            removed.append(ns)
    if removed:
        log.info("swept %d leftover namespaces", len(removed))
    return removed


@dataclass
class Topology:
    run_id: str
    paths: list[str]                     # path names in use, e.g. ["wifi", "lte"]
    mode: str
    primary: str
    initiator: str = "client"            # who opens the connection: "client" (wget) or "server" (ITGSend)
    bridge_paths: list[str] = field(default_factory=list)  # paths bridged by the kernel (tbf)
    sysctls: dict[str, str] = field(default_factory=dict)
    route_metrics: dict[str, str] = field(default_factory=dict)  # e.g. {"ssthresh": "45"}
    unplug_paths: list[str] = field(default_factory=list)  # client interfaces unplugged during the run
    stem: str = ""
    wires: dict[str, PathWire] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    applied_sysctls: dict[str, dict[str, str]] = field(default_factory=dict)
    unplugged: dict[str, list[str]] = field(default_factory=dict)  # path -> its removed endpoint's words

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}")
        self.stem = self.stem or ns_token(self.run_id)
        self.client_ns = f"{self.stem}-cl"
        self.server_ns = f"{self.stem}-sv"
        self.park_ns = f"{self.stem}-pk"  # where an unplugged interface waits (no addresses, no routes)
        for p in self.paths:
            i = path_index(p)
            self.wires[p] = PathWire(
                name=p, index=i, emu_ns=f"{self.stem}-e{p}", client_if=p, server_if=p,
                client_addr=f"10.{i}.0.2", server_addr=f"10.{i}.0.1", subnet=f"10.{i}.0.0/24")

    @property
    def namespaces(self) -> list[str]:
        park = [self.park_ns] if self.unplug_paths else []
        return [self.client_ns, self.server_ns] + [w.emu_ns for w in self.wires.values()] + park

    @property
    def service_addr(self) -> str:
        return SERVICE_ADDRS[0]

    @property
    def service_addrs(self) -> list[str]:
        """The server's service addresses in this mode (MP-4 has a second one)."""
        return SERVICE_ADDRS[:2 if self.mode == "MP-4" else 1]

    def bridge(self, path: str) -> None:
        """Join the path's two emulator-side veths with a kernel bridge (``br0``): the
        wire of a tbf path, or a plain wire for a moment before linkem takes it."""
        e, w = self.wires[path].emu_ns, self.wires[path]
        sh(["ip", "link", "add", "br0", "type", "bridge", "forward_delay", "0", "stp_state", "0"], ns=e)
        for ifc in (w.emu_client_if, w.emu_server_if):
            sh(["ip", "link", "set", ifc, "master", "br0"], ns=e)
        sh(["ip", "link", "set", "br0", "up"], ns=e)

    def unbridge(self, path: str) -> None:
        """Remove the path's bridge (its veths stay up, free for linkem)."""
        sh(["ip", "link", "del", "br0"], ns=self.wires[path].emu_ns)

    # ---------------------------------------------------------------- build
    def _add_ns(self, ns: str) -> None:
        sh(["ip", "netns", "add", ns])
        self.created.append(ns)
        sh(["ip", "link", "set", "lo", "up"], ns=ns)
        # no IPv6 noise (router solicitations, DAD) in the captures
        for k in ("net.ipv6.conf.all.disable_ipv6", "net.ipv6.conf.default.disable_ipv6"):
            sh(["sysctl", "-qw", f"{k}=1"], ns=ns, check=False)

    def build(self) -> None:
        for ns in (self.client_ns, self.server_ns):
            self._add_ns(ns)
            for k in ("net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter"):
                sh(["sysctl", "-qw", f"{k}=0"], ns=ns)
        for w in self.wires.values():
            self._add_ns(w.emu_ns)
            e = w.emu_ns
            sh(["ip", "link", "add", w.emu_client_if, "type", "veth", "peer", "name", "tmpc"], ns=e)
            sh(["ip", "link", "add", w.emu_server_if, "type", "veth", "peer", "name", "tmps"], ns=e)
            sh(["ip", "link", "set", "tmpc", "netns", self.client_ns, "name", w.client_if], ns=e)
            sh(["ip", "link", "set", "tmps", "netns", self.server_ns, "name", w.server_if], ns=e)
            for ifc in (w.emu_client_if, w.emu_server_if):
                sh(["ip", "link", "set", ifc, "up"], ns=e)
                offloads_off(e, ifc)
            if w.name in self.bridge_paths:
                self.bridge(w.name)
            for ns, ifc, addr in ((self.client_ns, w.client_if, w.client_addr),
                                  (self.server_ns, w.server_if, w.server_addr)):
                sh(["ip", "addr", "add", f"{addr}/24", "dev", ifc], ns=ns)
                sh(["ip", "link", "set", ifc, "up"], ns=ns)
                offloads_off(ns, ifc)
        self._apply_sysctls()
        self._routes()
        self._mptcp()
        if self.unplug_paths:
            self._add_ns(self.park_ns)

    def _apply_sysctls(self) -> None:
        for ns in (self.client_ns, self.server_ns):
            applied = {}
            for k, v in self.sysctls.items():
                sh(["sysctl", "-qw", f"{k}={v}"], ns=ns)
                applied[k] = out(["sysctl", "-n", k], ns=ns).strip()
            self.applied_sysctls[ns] = applied

    def _route(self, ns: str, args: list[str]) -> None:
        metrics = []
        for k, v in self.route_metrics.items():
            metrics += [k] + str(v).split()  # e.g. ssthresh "lock 45"
        sh(["ip", "route", "replace"] + args + metrics, ns=ns)

    def _routes(self) -> None:
        c, s = self.client_ns, self.server_ns
        for a in self.service_addrs:
            sh(["ip", "addr", "add", f"{a}/32", "dev", "lo"], ns=s)
        for w in self.wires.values():
            self._client_routes(w)
            sh(["ip", "rule", "add", "from", w.client_addr, "table", str(100 + w.index),
                "priority", str(100 + w.index)], ns=c)
            # server: the connected route answers each client address on its own path;
            # the metric (e.g. initial ssthresh) goes on it too.
            self._route(s, [w.subnet, "dev", w.server_if, "src", w.server_addr])

    def _client_routes(self, w: PathWire) -> None:
        """The client's routes over one path (they go with its interface when it is
        unplugged, and come back with it): the path's own table (per-source policy
        routing; its rule outlives the interface) and, for the primary path, the main
        table's default route (the initial subflow's)."""
        c, table = self.client_ns, str(100 + w.index)
        self._route(c, ["default", "via", w.server_addr, "dev", w.client_if, "table", table])
        self._route(c, [w.subnet, "dev", w.client_if, "src", w.client_addr, "table", table])
        if w.name == self.primary:
            self._route(c, ["default", "via", w.server_addr, "dev", w.client_if, "src", w.client_addr])

    def _mptcp(self) -> None:
        """MPTCP endpoints and limits.

        ``initiator == "client"`` (HTTP, iperf3: the client connects): the client creates the
        extra subflows, one per other path (``subflow`` endpoints; ``fullmesh`` for MP-4 with the server
        ``signal``-ing its second service address). ``initiator == "server"`` (D-ITG:
        ITGSend on the server connects to ITGRecv on the client): the client
        ``signal``s its other address(es) and the server joins them (``fullmesh`` on the
        server's two path addresses for MP-4; ITGSend's source is the server's
        address on the primary path).
        """
        c, s = self.client_ns, self.server_ns
        if self.mode.startswith("SP"):
            return
        # room for every extra subflow: MP-4's fullmesh, else one per path (MP-3: the two
        # joins plus one; two-path modes keep their 2)
        n = 8 if self.mode == "MP-4" else max(2, len(self.paths))
        for ns in (c, s):
            sh(["ip", "mptcp", "endpoint", "flush"], ns=ns)
            sh(["ip", "mptcp", "limits", "set", "subflow", str(n), "add_addr_accepted", str(n)], ns=ns)
        others = [w for p, w in self.wires.items() if p != self.primary]
        backup = ["backup"] if self.mode == "backup" else []
        if self.initiator == "client":
            if self.mode in ("MP-2", "MP-3", "backup"):
                for w in others:
                    sh(["ip", "mptcp", "endpoint", "add", w.client_addr, "dev", w.client_if, "subflow"] + backup, ns=c)
            elif self.mode == "MP-4":
                for w in self.wires.values():
                    sh(["ip", "mptcp", "endpoint", "add", w.client_addr, "dev", w.client_if, "subflow", "fullmesh"], ns=c)
                for a in SERVICE_ADDRS[1:2]:
                    sh(["ip", "mptcp", "endpoint", "add", a, "dev", "lo", "signal"], ns=s)
            if self.primary in self.unplug_paths and self.mode in ("MP-2", "backup"):
                # An address manager (NetworkManager, mptcpd) gives every address an
                # endpoint and removes it with the address: upstream's path manager has no
                # netdevice notifier, so an unplugged interface reaches it only that way.
                # The primary's address is the initial subflow's: the kernel counts this
                # endpoint as that subflow's and opens no second subflow from it.
                w = self.wires[self.primary]
                sh(["ip", "mptcp", "endpoint", "add", w.client_addr, "dev", w.client_if, "subflow"], ns=c)
        else:
            # With a port, the kernel opens its own MP_JOIN listener on that address: the
            # application (ITGRecv) binds its data socket to the primary address only,
            # so joins to the application's port on another address would be reset.
            for w in others:
                sh(["ip", "mptcp", "endpoint", "add", w.client_addr, "dev", w.client_if, "signal",
                    "port", str(JOIN_PORT)] + backup, ns=c)
            if self.mode == "MP-4":
                for w in self.wires.values():
                    sh(["ip", "mptcp", "endpoint", "add", w.server_addr, "dev", w.server_if, "subflow", "fullmesh"], ns=s)

    # ------------------------------------------------------------ unplug / replug
    def _endpoint_of(self, addr: str) -> list[str] | None:
        """The client's MPTCP endpoint of ``addr``, as ``ip mptcp endpoint show`` words
        (``10.2.0.2 id 2 subflow backup dev lte``: also what ``endpoint add`` takes)."""
        for line in out(["ip", "mptcp", "endpoint", "show"], ns=self.client_ns, check=False).splitlines():
            words = line.split()
            if words and words[0] == addr:
                return words
        return None

    def unplug(self, path: str, on_device=None) -> list[str] | None:
        """Take the client's interface of ``path`` out of its namespace, as an unplugged
        USB tether leaves the host: the kernel drops its address and routes (then
        ``on_device()``); then its MPTCP endpoint is deleted, as the address manager
        does (the path manager then closes the subflows from that address and signals
        REMOVE_ADDR). The device waits in the parking namespace. Returns the endpoint
        removed (its words)."""
        w = self.wires[path]
        ep = self._endpoint_of(w.client_addr)
        sh(["ip", "link", "set", w.client_if, "netns", self.park_ns], ns=self.client_ns)
        if on_device:
            on_device()
        if ep:
            sh(["ip", "mptcp", "endpoint", "delete", "id", ep[ep.index("id") + 1]], ns=self.client_ns)
        self.unplugged[path] = ep or []
        return ep

    def replug(self, path: str, on_device=None) -> list[str] | None:
        """Give the interface of ``path`` back, as a re-plugged tether comes back: the
        device (up, offloads off), then ``on_device()`` (e.g. a new capture on it), then
        its address, its routes and its MPTCP endpoint as it was (the path manager then
        opens a subflow from it for every established connection). Returns the endpoint."""
        w, c = self.wires[path], self.client_ns
        ep = self.unplugged.pop(path)
        sh(["ip", "link", "set", w.client_if, "netns", c], ns=self.park_ns)
        sh(["ip", "link", "set", w.client_if, "up"], ns=c)
        offloads_off(c, w.client_if)
        if on_device:
            on_device()
        sh(["ip", "addr", "add", f"{w.client_addr}/24", "dev", w.client_if], ns=c)
        self._client_routes(w)
        if ep:
            sh(["ip", "mptcp", "endpoint", "add", *ep], ns=c)
        return ep or None

    def mptcp_state(self) -> dict:
        st = {}
        for role, ns in (("client", self.client_ns), ("server", self.server_ns)):
            st[role] = {
                "endpoints": out(["ip", "mptcp", "endpoint", "show"], ns=ns, check=False).strip().splitlines(),
                "limits": out(["ip", "mptcp", "limits", "show"], ns=ns, check=False).strip(),
                "rules": out(["ip", "rule", "show"], ns=ns, check=False).strip().splitlines(),
                "routes": out(["ip", "route", "show", "table", "all"], ns=ns, check=False).strip().splitlines(),
                "counters": netstat_counters(ns),
            }
        return st

    def destroy(self) -> None:
        for ns in reversed(self.created):
            delete_ns(ns)
        self.created.clear()


def netstat_counters(ns: str, groups: tuple[str, ...] = ("MPTcpExt", "TcpExt")) -> dict[str, dict[str, int]]:
    """The namespace's non-zero MPTCP and TCP extended counters (/proc/net/netstat).

    A namespace made for one run starts at zero, so these are the run's own: they say
    why a transfer stalled when the trace cannot (e.g. MPTcpExt RcvPruned: data the
    MPTCP socket dropped for lack of receive memory after its subflow had ACKed it).
    """
    text = out(["cat", "/proc/net/netstat"], ns=ns, check=False)
    lines = text.splitlines()
    found: dict[str, dict[str, int]] = {}
    for names, values in zip(lines[::2], lines[1::2]):
        group, _, keys = names.partition(":")
        if group not in groups or not values.startswith(group + ":"):
            continue
        found[group] = {k: int(v) for k, v in zip(keys.split(), values.partition(":")[2].split())
                        if v.lstrip("-").isdigit() and int(v) != 0}
    return found


def offloads_off(ns: str, ifc: str) -> None:
    p = sh(["ethtool", "-K", ifc, "tso", "off", "gso", "off", "gro", "off"], ns=ns, check=False)
    if p.returncode not in (0, 80):  # 80: "nothing changed"/not supported on some drivers
        raise CommandError(f"ethtool -K {ifc} in {ns} failed: {p.stderr.strip()}")
