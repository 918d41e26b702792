"""tcpdump on every path interface of both ends (Ethernet link type, one pcap per
interface), merged per end with mergecap."""
from __future__ import annotations

import time
from pathlib import Path

from .util import CommandError, Proc, sh

SNAPLEN = 256  # Ethernet 14 + IPv4 ≤60 + TCP ≤60 (options included) + some payload


class Capture:
    def __init__(self, run_dir: Path, ends: dict[str, tuple[str, list[str]]], snaplen: int = SNAPLEN):
        """``ends``: {"client": (ns, [ifaces]), "server": (ns, [ifaces])}."""
        self.run_dir, self.ends, self.snaplen = run_dir, ends, snaplen
        self.procs: list[tuple[str, str, Path, Proc]] = []

    def start(self) -> None:
        for end, (ns, ifaces) in self.ends.items():
            for ifc in ifaces:
                pcap = self.run_dir / f"{end}-{ifc}.pcap"
                err = self.run_dir / f".tcpdump-{end}-{ifc}.stderr"
                p = Proc(f"tcpdump-{end}-{ifc}",
                         ["tcpdump", "-i", ifc, "-n", "-s", str(self.snaplen), "-U", "-Z", "root",
                          "--immediate-mode", "-w", str(pcap)],
                         ns=ns, stderr=err)
                self.procs.append((end, ifc, pcap, p))
        end_t = time.monotonic() + 10
        for end, ifc, pcap, p in self.procs:
            err = self.run_dir / f".tcpdump-{end}-{ifc}.stderr"
            while "listening on" not in (err.read_text(errors="replace") if err.exists() else ""):
                if not p.alive():
                    raise CommandError(f"tcpdump on {end}/{ifc} exited: {err.read_text(errors='replace')}")
                if time.monotonic() > end_t:
                    raise CommandError(f"tcpdump on {end}/{ifc} not listening after 10 s")
                time.sleep(0.02)

    def stop(self) -> dict:
        """Stop all tcpdumps, merge per end; return {end: {"pcap":…, "interfaces": {…}}}."""
        import signal
        for _, _, _, p in self.procs:
            p.stop(sig=signal.SIGINT, timeout=5)
        result: dict = {}
        for end in self.ends:
            parts = [(ifc, pcap) for e, ifc, pcap, _ in self.procs if e == end]
            merged = self.run_dir / f"{end}.pcap"
            stats = {}
            for ifc, pcap in parts:
                err = self.run_dir / f".tcpdump-{end}-{ifc}.stderr"
                txt = err.read_text(errors="replace") if err.exists() else ""
                stats[ifc] = {"pcap": pcap.name, "tcpdump": [l for l in txt.splitlines() if "packets" in l]}
                err.unlink(missing_ok=True)
            if parts:
                sh(["mergecap", "-F", "pcap", "-w", str(merged)] + [str(p) for _, p in parts])
            result[end] = {"pcap": merged.name, "interfaces": stats}
        self.procs.clear()
        return result

    def abort(self) -> None:
        for _, _, _, p in self.procs:
            p.stop()
        self.procs.clear()
