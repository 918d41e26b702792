"""The initial ssthresh a route's ``ssthresh`` metric asks for, made effective.

Upstream Linux does not give new connections a route's ``ssthresh`` directly:
``tcp_init_metrics()`` (net/ipv4/tcp_metrics.c, 6.18) sets ``snd_ssthresh`` only from
the tcp_metrics cache entry of the connection's (source, destination) address pair, and
only when ``net.ipv4.tcp_no_ssthresh_metrics_save`` is 0 (default 1). An entry is made
when a connection of that pair closes (``tcp_update_metrics()``, only when
``tcp_no_metrics_save`` is 0) and copies the route's metrics then (``tcpm_suck_dst``);
a *locked* ssthresh is never changed by later closes.

So when a run's route metrics set ``ssthresh`` (a sysctl profile's ``route``), the run
(``seed``, after the namespaces are built, before emulators, captures and workload):

1. has ``tcp_no_ssthresh_metrics_save=0`` in both namespaces (``SYSCTLS``, applied with
   the run's sysctls);
2. joins each path's wire with a kernel bridge (linkem is not running yet: nothing of
   this reaches linkem's log, its random streams or the pcaps);
3. sets ``tcp_no_metrics_save=0`` for the moment and opens and closes one empty TCP
   connection per address pair the run's connections can use (``address_pairs``):
   each end's close leaves a cache entry holding the route's ssthresh;
4. puts ``tcp_no_metrics_save`` back (a profile's 1 keeps the run's own connections out
   of the cache, as the paper's server did), opens a second connection per pair and
   reads the ssthresh both ends start with (TCP_INFO right after the handshake), and
   reads both caches (``ip -j tcp_metrics show``);
5. removes the bridges it added.

A pair whose new connection does not start at the requested value (e.g. under a
congestion control whose ``init`` resets ssthresh, as bbr's does) fails the run.

What else the warm-up leaves in the cache, and why it does not matter: rtt/rttvar of
the handshake over the bridge (tens of µs; ``tcp_init_metrics`` uses the cached RTT
only to seed the first RTO when it is above the new connection's handshake RTT, which on
a path with any delay it never is, and the RTO it gives is then the 200 ms floor); an
unlocked cwnd (not applied: only a locked cwnd, a
clamp, is); no reordering (an empty connection sees none). Each pair also has a
TIME-WAIT socket on ``PORT`` and resolved neighbours.

    python -m capture.ssthresh serve --port P --count N     # (server namespace)
    python -m capture.ssthresh connect --port P CLIENT,SERVER ...   # (client namespace)
"""
from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time
from pathlib import Path

from .util import CommandError, Proc, out, sh, wait_for

PORT = 9011
SYSCTLS = {"net.ipv4.tcp_no_ssthresh_metrics_save": "0"}
NO_METRICS_SAVE = "net.ipv4.tcp_no_metrics_save"
TIMEOUT_S = 10.0
# struct tcp_info (include/uapi/linux/tcp.h): 8 bytes of u8 fields, then u32 tcpi_rto
# at 8 ... tcpi_snd_ssthresh at 76, tcpi_snd_cwnd at 80
_TCP_INFO = struct.Struct("=8xI64xII")
INFINITE = 0x7FFFFFFF   # TCP_INFINITE_SSTHRESH: "not set"


def requested(route: dict, where: str = "route") -> int | None:
    """The ssthresh (segments) route metrics ask for (``45`` or ``lock 45``), or None."""
    v = route.get("ssthresh")
    if v is None:
        return None
    words = str(v).split()
    if words[:1] == ["lock"]:
        words = words[1:]
    if len(words) != 1 or not words[0].isdigit() or int(words[0]) < 1:
        raise ValueError(f"{where}.ssthresh: {v!r} is not a number of segments (`45` or `lock 45`)")
    return int(words[0])


def address_pairs(topo) -> list[dict]:
    """Every (client address, server address) pair a run's TCP connections or MPTCP
    subflows can use: each client path address with each server address (service
    addresses, which the client connects to, and the server's path addresses, from which
    D-ITG's server connects). A pair goes over the client address's path."""
    servers = list(topo.service_addrs) + [w.server_addr for w in topo.wires.values()]
    return [{"path": p, "client_addr": w.client_addr, "server_addr": s}
            for p, w in topo.wires.items() for s in servers]


# ------------------------------------------------------------------ run side

def seed(topo, want: int, work: Path, bridged: list[str] = ()) -> dict:
    """Fill both ends' tcp_metrics caches so every pair's new connections start with
    ssthresh ``want``; return what was applied and verified (meta.json
    ``initial_ssthresh``). ``bridged``: paths whose wire is already a bridge (tbf).
    Raises CommandError when a pair's connection does not start at ``want``."""
    pairs = address_pairs(topo)
    ends = {"client": topo.client_ns, "server": topo.server_ns}
    added = [p for p in topo.wires if p not in bridged]
    srv, t0 = None, time.monotonic()
    try:
        for p in added:
            topo.bridge(p)
        srv = Proc("ssthresh-serve", [sys.executable, "-m", "capture.ssthresh", "serve", "--port", str(PORT),
                                      "--count", str(2 * len(pairs))],
                   ns=topo.server_ns, cwd=Path(__file__).resolve().parent.parent,
                   stdout=work / "ssthresh-serve.jsonl", stderr=work / "ssthresh-serve.err")
        _wait_listening(topo.server_ns, srv, work)
        before = {e: _sysctl(ns, NO_METRICS_SAVE) for e, ns in ends.items()}
        try:
            for ns in ends.values():
                sh(["sysctl", "-qw", f"{NO_METRICS_SAVE}=0"], ns=ns)
            _connect(topo.client_ns, pairs)                      # the warm-up: fills the caches
            caches = _wait_caches(ends, pairs)
        finally:
            for e, ns in ends.items():
                sh(["sysctl", "-qw", f"{NO_METRICS_SAVE}={before[e]}"], ns=ns)
        client_side = _connect(topo.client_ns, pairs)           # the check: what a new one starts with
        if srv.wait(TIMEOUT_S) != 0:
            raise CommandError(f"ssthresh warm-up server failed: {_tail(work / 'ssthresh-serve.err')}")
        server_side = [json.loads(line) for line in (work / "ssthresh-serve.jsonl").read_text().splitlines()
                       if line.startswith("{")][len(pairs):]
    finally:
        if srv is not None:
            srv.stop()
        for p in added:
            topo.unbridge(p)
    rec = record(want, pairs, caches, client_side, server_side, before)
    rec["duration_s"] = round(time.monotonic() - t0, 3)
    bad = [f"{r['client_addr']}-{r['server_addr']} ({r['path']}): {end} started at {_say(v)}"
           for r in rec["pairs"] for end, v in r["started_with"].items() if v != want]
    if bad:
        raise CommandError(f"the route's initial ssthresh ({want} segments) is not in effect: "
                           + "; ".join(bad) + " (see capture/ssthresh.py)")
    return rec


def record(want: int, pairs: list[dict], caches: dict, client_side: list[dict], server_side: list[dict],
           no_metrics_save: dict) -> dict:
    """meta.json ``initial_ssthresh``: per pair both caches' entries and the ssthresh a
    new connection started with at each end; per path the server cache's ssthresh."""
    started = {("client", c["local"], c["remote"]): c["ssthresh"] for c in client_side}
    started.update({("server", s["remote"], s["local"]): s["ssthresh"] for s in server_side})
    rows = []
    for p in pairs:
        c, s = p["client_addr"], p["server_addr"]
        rows.append({**p, "server_cache": caches["server"].get((s, c)), "client_cache": caches["client"].get((c, s)),
                     "started_with": {e: started.get((e, c, s)) for e in ("server", "client")}})
    held: dict[str, list] = {}
    for r in rows:
        held.setdefault(r["path"], []).append((r["server_cache"] or {}).get("ssthresh"))
    return {
        "requested_segments": want,
        "method": "tcp_metrics cache seeded by one empty TCP connection per address pair over a bridged "
                  "wire before the emulators start (capture/ssthresh.py)",
        "sysctls": dict(SYSCTLS),
        "no_metrics_save": {"during_warmup": "0", "restored": no_metrics_save},
        "port": PORT, "connections": 2 * len(pairs), "sockets": 4 * len(pairs),
        # per path, the smallest ssthresh the server's cache holds for its pairs (null: a pair has none)
        "server_cache_ssthresh": {p: None if None in v else min(v) for p, v in held.items()},
        "pairs": rows,
        "verified": all(v == want for r in rows for v in r["started_with"].values()),
    }


def _say(v) -> str:
    return "infinity (not set)" if v is None or v >= INFINITE else str(v)


def _tail(f: Path) -> str:
    try:
        return f.read_text(errors="replace").strip()[-500:]
    except OSError:
        return ""


def _sysctl(ns: str, key: str) -> str:
    return out(["sysctl", "-n", key], ns=ns).strip()


def _wait_listening(ns: str, srv, work: Path) -> None:
    wait_for(lambda: not srv.alive() or bool(out(["ss", "-Hltn", f"sport = :{PORT}"], ns=ns, check=False).strip()),
             TIMEOUT_S, "the ssthresh warm-up server to listen")
    if not srv.alive():
        raise CommandError(f"ssthresh warm-up server exited: {_tail(work / 'ssthresh-serve.err')}")


def _connect(ns: str, pairs: list[dict]) -> list[dict]:
    p = sh([sys.executable, "-m", "capture.ssthresh", "connect", "--port", str(PORT)]
           + [f"{x['client_addr']},{x['server_addr']}" for x in pairs],
           ns=ns, check=False, timeout=TIMEOUT_S * (1 + len(pairs)))
    if p.returncode != 0:
        raise CommandError(f"ssthresh warm-up connections failed: {p.stderr.strip()[-500:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def cache_entries(ns: str) -> dict[tuple[str, str], dict]:
    """The namespace's tcp_metrics cache: (source, destination) -> ssthresh, cwnd,
    rtt_us, rttvar_us, reordering (what ``ip -j tcp_metrics show`` lists; absent ones null)."""
    found = {}
    for e in json.loads(out(["ip", "-j", "tcp_metrics", "show"], ns=ns) or "[]"):
        found[(e.get("source"), e.get("dst"))] = {
            "ssthresh": e.get("ssthresh"), "cwnd": e.get("cwnd"), "reordering": e.get("reordering"),
            "rtt_us": round(e["rtt"] * 1e6) if "rtt" in e else None,
            "rttvar_us": round(e["rttvar"] * 1e6) if "rttvar" in e else None}
    return found


def _wait_caches(ends: dict, pairs: list[dict]) -> dict:
    """Both caches once every pair has its entry at both ends (the last close completes
    a moment after the client's program has returned)."""
    want = {"server": {(p["server_addr"], p["client_addr"]) for p in pairs},
            "client": {(p["client_addr"], p["server_addr"]) for p in pairs}}
    end = time.monotonic() + TIMEOUT_S
    while True:
        caches = {e: cache_entries(ns) for e, ns in ends.items()}
        missing = {e: sorted(want[e] - set(caches[e])) for e in ends}
        if not any(missing.values()):
            return caches
        if time.monotonic() > end:
            raise CommandError(f"no tcp_metrics entry after the warm-up connections for {missing} "
                               "(tcp_no_metrics_save=0 was set; did the connections close?)")
        time.sleep(0.02)


# ------------------------------------------------------------------ helper program

def tcp_start(s: socket.socket) -> dict:
    """The socket's ssthresh (None while unset: infinity), cwnd and RTO (TCP_INFO)."""
    rto, ssthresh, cwnd = _TCP_INFO.unpack_from(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104))
    return {"ssthresh": None if ssthresh >= INFINITE else ssthresh, "cwnd": cwnd, "rto_us": rto}


def serve(port: int, count: int) -> int:
    """Accept ``count`` connections; print each one's start (one JSON line) and close it."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(64)
    srv.settimeout(TIMEOUT_S * 3)
    for _ in range(count):
        c, (remote, _) = srv.accept()
        print(json.dumps({"local": c.getsockname()[0], "remote": remote, **tcp_start(c)}), flush=True)
        c.close()
    return 0


def connect(port: int, pairs: list[str]) -> int:
    """One connection per ``client,server`` pair, bound to the client address: print its
    start (one JSON line), wait for the server's close, close."""
    for pair in pairs:
        local, remote = pair.split(",")
        s = socket.socket()
        s.settimeout(TIMEOUT_S)
        s.bind((local, 0))
        s.connect((remote, port))
        print(json.dumps({"local": local, "remote": remote, **tcp_start(s)}), flush=True)
        while s.recv(4096):
            pass
        s.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m capture.ssthresh", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("serve")
    a.add_argument("--port", type=int, default=PORT)
    a.add_argument("--count", type=int, required=True)
    b = sub.add_parser("connect")
    b.add_argument("--port", type=int, default=PORT)
    b.add_argument("pairs", nargs="+", metavar="CLIENT,SERVER")
    args = ap.parse_args(argv)
    return serve(args.port, args.count) if args.cmd == "serve" else connect(args.port, args.pairs)


if __name__ == "__main__":
    sys.exit(main())
