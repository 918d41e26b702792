"""Socket-buffer sampling (campaign key ``sample_socket_buffers``): every 100 ms during
the workload, ``ss`` in the client's and the server's namespace reads the socket
memory (``skmem``) of every established TCP and MPTCP socket.

What upstream MPTCP (Linux 6.18, iproute2's ss) shows: one ``mptcp`` line per MPTCP
connection (the MPTCP-level socket, ``token:<its token>``) and one ``tcp`` line per
subflow (``tcp-ulp-mptcp ... token:<peer's>(id)/<its connection's>(id)``), each with
``skmem:(r…,rb…,t…,tb…,f…,w…,o…,bl…,d…)``: ``rb`` the socket's receive buffer size
(sk_rcvbuf), ``r`` the receive memory in use (data held), ``tb`` the send buffer size
(sk_sndbuf), ``w`` the data queued to send. Receive-buffer auto-tuning
(tcp_moderate_rcvbuf) is done on the MPTCP-level socket (mptcp_rcv_space_adjust, capped
by tcp_rmem's maximum), which copies its rb to the subflows: the MPTCP socket's ``rb``
is the connection's auto-tuned receive buffer, its ``r`` the data waiting for the
application (in order or not). Single-path TCP: the TCP socket's.

Each end's sampler is a process in its namespace (``python -m capture.sockbuf``, one
``ss`` a tick); the runner merges both into ``sockbuf.csv`` and summarises the run's
main connection (the one that moved the most bytes) in meta.json ``socket_buffers``.
"""
from __future__ import annotations

import argparse
import csv
import math
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from .util import REPO, CommandError, Proc

FILE = "sockbuf.csv"
INTERVAL_S = 0.1
SS = ["ss", "-H", "-n", "-t", "-M", "-m", "-i", "state", "established"]
COLUMNS = ("t_s", "end", "kind", "local", "peer", "token", "r", "rb", "t", "tb", "w", "d",
           "bytes_received", "bytes_acked")
COUNTS = ("r", "rb", "t", "tb", "w", "d", "bytes_received", "bytes_acked")

_ADDR = re.compile(r"^\[?(?:::ffff:)?([^\]%]+?)(?:%[^\]:]*)?\]?:(\d+|\*)$")
_SKMEM = re.compile(r"skmem:\(([^)]*)\)")
_SUBFLOW_TOKEN = re.compile(r"token:[0-9a-f]+\(id:\d+\)/([0-9a-f]+)\(id:\d+\)")
_MPTCP_TOKEN = re.compile(r"\btoken:([0-9a-f]+)\b")


def _addr(text: str) -> str:
    """``10.1.0.2%wifi:40983`` / ``[::ffff:10.100.0.1]:5201`` -> ``10.1.0.2:40983``."""
    m = _ADDR.match(text)
    return f"{m.group(1)}:{m.group(2)}" if m else text


def _counter(info: str, name: str) -> int | None:
    m = re.search(rf"\b{name}:(\d+)", info)
    return int(m.group(1)) if m else None


def parse_ss(text: str) -> list[dict]:
    """The sockets of one ``ss -H -n -t -M -m -i`` output: per socket ``kind`` (``mptcp``:
    an MPTCP-level socket; ``subflow``: a TCP subflow of one; ``tcp``: plain TCP), its
    addresses, ``token`` (its MPTCP connection's, for both kinds), the ``skmem`` counts
    (``r, rb, t, tb, w, d``) and ``bytes_received``/``bytes_acked`` (TCP sockets)."""
    records: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0].isspace():  # the socket's details, on the lines after it
            if records:
                records[-1][1] += " " + line.strip()
            continue
        records.append([line, ""])
    return [r for r in (_socket(head, info) for head, info in records) if r]


def _socket(head: str, info: str) -> dict | None:
    words = head.split()
    if not words or words[0] not in ("tcp", "mptcp"):
        return None
    rest = words[1:]
    if rest and not rest[0].isdigit():
        rest = rest[1:]  # a State column (shown when no state filter is given)
    if len(rest) < 4:
        return None
    info = " ".join([*rest[4:], info])
    skm = _SKMEM.search(info)
    mem = {k: int(v) for k, v in re.findall(r"([a-z]+)(\d+)", skm.group(1))} if skm else {}
    if words[0] == "mptcp":
        kind, tok = "mptcp", _MPTCP_TOKEN.search(info)
    elif "tcp-ulp-mptcp" in info:
        kind, tok = "subflow", _SUBFLOW_TOKEN.search(info)
    else:
        kind, tok = "tcp", None
    return {"kind": kind, "local": _addr(rest[2]), "peer": _addr(rest[3]), "token": tok.group(1) if tok else None,
            **{k: mem.get(k) for k in ("r", "rb", "t", "tb", "w", "d")},
            "bytes_received": _counter(info, "bytes_received"), "bytes_acked": _counter(info, "bytes_acked")}


# --------------------------------------------------------------- the sampler process

def sample(out: Path, end: str, interval: float) -> int:
    """Run ``ss`` every ``interval`` seconds (ticks on a fixed grid from the start; a late
    tick is skipped, not crowded) and append its sockets to ``out`` until SIGTERM/SIGINT."""
    stop = []
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.append(1))
    m0 = time.monotonic()
    k = 0
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        while not stop:
            t = time.time()
            p = subprocess.run(SS, capture_output=True, text=True)
            if p.returncode != 0 and stop:
                break  # the stop signal reached ss too (the sampler's process group): not a failure
            if p.returncode != 0:
                print(f"{' '.join(SS)} failed ({p.returncode}): {p.stderr.strip()}", file=sys.stderr)
                return 1
            for s in parse_ss(p.stdout):
                w.writerow([f"{t:.6f}", end, *(("" if s[c] is None else s[c]) for c in COLUMNS[2:])])
            f.flush()
            k = max(k + 1, math.ceil((time.monotonic() - m0) / interval))
            time.sleep(max(0.0, m0 + k * interval - time.monotonic()))
    return 0


# --------------------------------------------------------------- after the run

def read(path: Path) -> list[dict]:
    """The rows of a samples file, counts as integers (None where empty)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["t_s"] = float(r["t_s"])
        for c in COUNTS:
            r[c] = int(r[c]) if r[c] not in ("", None) else None
    return rows


def main_connection(rows: list[dict]) -> tuple[str, str] | None:
    """(kind, key) of the connection of ``rows`` (one end) that moved the most bytes
    (received + acknowledged, its subflows' summed at one sample): ``("mptcp", token)``
    or ``("tcp", "local peer")``. None without a TCP socket."""
    moved: dict[tuple[str, str], dict[float, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        if r["kind"] == "mptcp":
            continue
        key = ("mptcp", r["token"]) if r["kind"] == "subflow" else ("tcp", f"{r['local']} {r['peer']}")
        moved[key][r["t_s"]] += (r["bytes_received"] or 0) + (r["bytes_acked"] or 0)
    if not moved:
        return None
    return max(moved, key=lambda k: (max(moved[k].values()), k))


def _stats(values: list[int]) -> tuple[float | None, int | None]:
    return (sum(values) / len(values), max(values)) if values else (None, None)


def summarize_end(rows: list[dict]) -> dict:
    """One end's main connection (``main_connection``) over its samples: the buffers of
    its MPTCP-level socket (MPTCP) or of its TCP socket (single-path TCP)."""
    main = main_connection(rows)
    if main is None:
        return {"connection": None, "socket": None, "samples": 0}
    kind, key = main
    if kind == "mptcp":
        mine = [r for r in rows if r["kind"] == "mptcp" and r["token"] == key]
    else:
        mine = [r for r in rows if r["kind"] == "tcp" and f"{r['local']} {r['peer']}" == key]
    mine = [r for r in mine if r["rb"] is not None]
    rb_mean, rb_max = _stats([r["rb"] for r in mine])
    tb_mean, tb_max = _stats([r["tb"] for r in mine])
    return {"connection": f"{kind} {key}", "socket": kind, "samples": len(mine),
            "first_s": mine[0]["t_s"] if mine else None, "last_s": mine[-1]["t_s"] if mine else None,
            "rcvbuf_mean_bytes": rb_mean, "rcvbuf_max_bytes": rb_max,
            "rcvbuf_used_mean_bytes": _stats([r["r"] for r in mine])[0],
            "sndbuf_mean_bytes": tb_mean, "sndbuf_max_bytes": tb_max,
            "sndbuf_queued_mean_bytes": _stats([r["w"] for r in mine])[0]}


class Sampler:
    """The two ends' samplers of one run (``ends``: end -> namespace)."""

    def __init__(self, run_dir: Path, ends: dict[str, str], interval: float = INTERVAL_S):
        self.run_dir, self.ends, self.interval = Path(run_dir), ends, interval
        self.procs: dict = {}

    def _part(self, end: str) -> Path:
        return self.run_dir / f".sockbuf-{end}.csv"

    def start(self) -> None:
        for end, ns in self.ends.items():
            self.procs[end] = Proc(f"sockbuf-{end}", [sys.executable, "-m", "capture.sockbuf", "--end", end,
                                                      "--interval", str(self.interval), "--out", str(self._part(end))],
                                   ns=ns, stderr=self.run_dir / f".sockbuf-{end}.stderr", cwd=REPO,
                                   env={"PYTHONPATH": str(REPO)})

    def stop(self) -> dict:
        """Stop both samplers, merge their rows into sockbuf.csv (time order) and return
        meta.json's ``socket_buffers``. A sampler that failed fails the run."""
        rows: list[dict] = []
        for end, p in self.procs.items():
            rc = p.stop(sig=signal.SIGTERM, timeout=5)
            err = self.run_dir / f".sockbuf-{end}.stderr"
            if rc != 0:
                raise CommandError(f"socket-buffer sampler ({end}) exited {rc}: "
                                   f"{err.read_text(errors='replace')[-300:] if err.exists() else ''}")
            err.unlink(missing_ok=True)
            part = self._part(end)
            rows += read(part) if part.exists() else []
            part.unlink(missing_ok=True)
        self.procs.clear()
        rows.sort(key=lambda r: (r["t_s"], r["end"]))
        with open(self.run_dir / FILE, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows({**r, "t_s": f"{r['t_s']:.6f}"} for r in rows)
        return {"file": FILE, "interval_s": self.interval, "command": " ".join(SS),
                **{end: summarize_end([r for r in rows if r["end"] == end]) for end in self.ends}}

    def abort(self) -> None:
        for p in self.procs.values():
            p.stop()
        self.procs.clear()


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m capture.sockbuf", description="sample socket buffers with ss")
    ap.add_argument("--end", required=True)
    ap.add_argument("--interval", type=float, default=INTERVAL_S)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    return sample(a.out, a.end, a.interval)


if __name__ == "__main__":
    sys.exit(_main())
