"""tcpdump on every path interface of both ends (Ethernet link type, one pcap per
interface), merged per end with mergecap.

An interface unplugged during the run (capture/ifevents.py) ends its tcpdump ("The
interface disappeared"): that pcap holds the packets up to the unplug. When the
interface comes back, ``restart`` starts a new tcpdump on it into a new segment
(``client-lte-2.pcap``); the end's merged pcap holds every segment, so it misses only
the time the interface was not there (when it had nothing to capture)."""
from __future__ import annotations

import signal
import time
from pathlib import Path

from .util import CommandError, Proc, sh

SNAPLEN = 256  # Ethernet 14 + IPv4 ≤60 + TCP ≤60 (options included) + some payload


class Capture:
    def __init__(self, run_dir: Path, ends: dict[str, tuple[str, list[str]]], snaplen: int = SNAPLEN):
        """``ends``: {"client": (ns, [ifaces]), "server": (ns, [ifaces])}."""
        self.run_dir, self.ends, self.snaplen = run_dir, ends, snaplen
        self.procs: list[tuple[str, str, Path, Proc]] = []

    def _err(self, pcap: Path) -> Path:
        return self.run_dir / f".tcpdump-{pcap.stem}.stderr"

    def _spawn(self, end: str, ifc: str, pcap: Path) -> tuple[str, str, Path, Proc]:
        p = Proc(f"tcpdump-{end}-{ifc}",
                 ["tcpdump", "-i", ifc, "-n", "-s", str(self.snaplen), "-U", "-Z", "root",
                  "--immediate-mode", "-w", str(pcap)],
                 ns=self.ends[end][0], stderr=self._err(pcap))
        return end, ifc, pcap, p

    def _wait_listening(self, procs: list[tuple[str, str, Path, Proc]]) -> None:
        end_t = time.monotonic() + 10
        for end, ifc, pcap, p in procs:
            err = self._err(pcap)
            while "listening on" not in (err.read_text(errors="replace") if err.exists() else ""):
                if not p.alive():
                    raise CommandError(f"tcpdump on {end}/{ifc} exited: {err.read_text(errors='replace')}")
                if time.monotonic() > end_t:
                    raise CommandError(f"tcpdump on {end}/{ifc} not listening after 10 s")
                time.sleep(0.02)

    def start(self) -> None:
        new = [self._spawn(end, ifc, self.run_dir / f"{end}-{ifc}.pcap")
               for end, (_, ifaces) in self.ends.items() for ifc in ifaces]
        self.procs += new
        self._wait_listening(new)

    def restart(self, end: str, ifc: str) -> Path:
        """A new segment on ``ifc`` (back after an unplug): ``<end>-<ifc>-<n>.pcap``."""
        n = 1 + sum(1 for e, i, _, _ in self.procs if (e, i) == (end, ifc))
        new = [self._spawn(end, ifc, self.run_dir / f"{end}-{ifc}-{n}.pcap")]
        self.procs += new
        self._wait_listening(new)
        return new[0][2]

    def stop(self) -> dict:
        """Stop all tcpdumps, merge per end; return {end: {"pcap":…, "interfaces": {…}}}:
        per interface its pcap and tcpdump's counters, and ``segments`` (each pcap with
        its own counters and its end: "The interface disappeared") when it has several."""
        for _, _, _, p in self.procs:
            p.stop(sig=signal.SIGINT, timeout=5)
        result: dict = {}
        for end in self.ends:
            parts = [(ifc, pcap) for e, ifc, pcap, _ in self.procs if e == end]
            merged = self.run_dir / f"{end}.pcap"
            stats: dict = {}
            for ifc, pcap in parts:
                err = self._err(pcap)
                txt = err.read_text(errors="replace") if err.exists() else ""
                seg = {"pcap": pcap.name,
                       "tcpdump": [ln for ln in txt.splitlines() if "packets" in ln or "pcap_loop" in ln]}
                err.unlink(missing_ok=True)
                if ifc in stats:
                    stats[ifc].setdefault("segments", [dict(stats[ifc])]).append(seg)
                else:
                    stats[ifc] = seg
            if parts:
                sh(["mergecap", "-F", "pcap", "-w", str(merged)] + [str(p) for _, p in parts])
            result[end] = {"pcap": merged.name, "interfaces": stats}
        self.procs.clear()
        return result

    def abort(self) -> None:
        for _, _, _, p in self.procs:
            p.stop()
        self.procs.clear()
