"""Bulk transfer for the congestion-control experiments: ``serve`` sends as fast
as TCP allows for a fixed time to each client that connects; ``fetch`` connects
and counts what arrives. MPTCP sockets are opened natively (IPPROTO_MPTCP), so
neither side needs mptcpize.

    python -m capture.cc.bulk serve --port 5201 [--mptcp] --duration 20 [--congestion NAME]
    python -m capture.cc.bulk fetch --addr 10.100.0.1 --port 5201 [--mptcp] [--bind ADDR]

``fetch`` prints one JSON line: bytes received and (t, bytes) every 100 ms, t from
its connect(), so goodput can be taken over any window.
"""
from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time

IPPROTO_MPTCP = getattr(socket, "IPPROTO_MPTCP", 262)
CHUNK = 1 << 16
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)


def _sock(mptcp: bool) -> socket.socket:
    return socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP if mptcp else 0)


def serve(port: int, mptcp: bool, duration: float, congestion: str | None, clients: int, pacing: bool = False) -> int:
    srv = _sock(mptcp)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if congestion:
        srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion.encode())
    srv.bind(("0.0.0.0", port))
    srv.listen(8)
    print(json.dumps({"listening": port}), flush=True)
    buf = b"\0" * CHUNK
    for _ in range(clients):
        c, _ = srv.accept()
        if pacing:
            try:
                c.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("I", 0xfffffffe))
            except OSError as e:
                print(json.dumps({"pacing_error": str(e)}), flush=True)
        end = time.monotonic() + duration
        try:
            while time.monotonic() < end:
                c.send(buf)
        except OSError:
            pass
        c.close()
    return 0


def fetch(addr: str, port: int, mptcp: bool, bind: str | None, timeout: float) -> int:
    s = _sock(mptcp)
    if bind:
        s.bind((bind, 0))
    s.settimeout(timeout)
    t0 = time.monotonic()
    s.connect((addr, port))
    got, samples, next_t = 0, [], 0.1
    while True:
        try:
            n = len(s.recv(1 << 20))
        except (TimeoutError, OSError):
            break
        if not n:
            break
        got += n
        t = time.monotonic() - t0
        while t >= next_t:
            samples.append([round(next_t, 3), got])
            next_t += 0.1
    samples.append([round(time.monotonic() - t0, 3), got])
    s.close()
    print(json.dumps({"bytes": got, "samples": samples}))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m capture.cc.bulk", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--mptcp", action="store_true")
    s.add_argument("--duration", type=float, default=20)
    s.add_argument("--congestion", help="TCP_CONGESTION for the accepted sockets (default: the route's or namespace's)")
    s.add_argument("--pacing", action="store_true", help="TCP internal pacing (SO_MAX_PACING_RATE) on the accepted socket")
    s.add_argument("--clients", type=int, default=1, help="serve this many clients one after the other, then exit")
    f = sub.add_parser("fetch")
    f.add_argument("--addr", required=True)
    f.add_argument("--port", type=int, required=True)
    f.add_argument("--mptcp", action="store_true")
    f.add_argument("--bind")
    f.add_argument("--timeout", type=float, default=30, help="give up after this long without data (s)")
    a = p.parse_args(argv)
    if a.cmd == "serve":
        return serve(a.port, a.mptcp, a.duration, a.congestion, a.clients, a.pacing)
    return fetch(a.addr, a.port, a.mptcp, a.bind, a.timeout)


if __name__ == "__main__":
    sys.exit(main())
