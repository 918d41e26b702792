#!/usr/bin/env python3
"""Does the lab's coupled congestion control couple? (capture/cc, issue 12)

Shared bottleneck: one emulated link (default 20 Mbit/s, 20 ms each way, drop-tail
queue of one bandwidth-delay product) carries an MPTCP download with two subflows
(two client addresses routed over the same link) and one single-path TCP Reno
download, all for the same time. R = MPTCP goodput / TCP goodput. RFC 6356's goal 2
(do no harm) means R ~ 1 for LIA and OLIA; two uncoupled Reno subflows take ~2.

Two paths: wifi and lte, same rate and delay; two single-path TCP Reno downloads
share wifi with the MPTCP subflow there, lte carries only the MPTCP subflow. A
coupled controller moves MPTCP's traffic away from the congested wifi (smaller
share on wifi than uncoupled Reno's) and leaves more to the TCP flows.

Jitter (default ±1 ms uniform each way, no reordering, linkem's ``jitter_ms``): on a
perfectly deterministic link, drop-tail "phase effects" (Floyd & Jacobson 1992) and
not the congestion controls decide who loses. Measured without jitter (issue 12,
from pcaps at both ends of the link): the two subflows of one MPTCP connection
sit interleaved in the queue (runs of ~5 packets) while the TCP flow's packets come in
runs of ~15-20; overflows then hit both subflows and spare the TCP flow in about half
of them, each subflow has 1.5-2x the TCP flow's loss events, and uncoupled Reno gets
R = 1.0-1.4 instead of ~2. Two separate single-subflow MPTCP connections on the same
deterministic link get R = 2.1 (one run); with 1 ms of jitter (more than the 0.6 ms
a 1500-byte packet takes at 20 Mbit/s, the randomisation Floyd & Jacobson prescribe)
the loss events even out and uncoupled Reno gets 1.5-2.5 per run. ``--jitter-ms 0``
runs the deterministic link.

Each configuration runs ``--runs`` times (interleaved); the figures are medians.
Needs root, upstream MPTCP, linkem (make linkem) and the BPF programs (make cc);
run it under the shared lock: ``flock /work/wt/heavy.lock benchmarks/coupled_cc.py``.
With ``--json`` the last line is ``{"shared_bottleneck": {"lia": R, "olia": R,
"uncoupled_reno": R}}``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


from capture.cc import ALGORITHMS
from capture.cc.lab import Bed, Flow
from capture.cc.loader import unavailable_reason
from capture.topology import sweep
from capture.util import signals_raise

KEY = {"lia": "lia", "olia": "olia", "balia": "balia", "reno": "uncoupled_reno"}


def link_profile(a) -> dict:
    """The bottleneck link (capture/emulator.py format): rate and drop-tail queue
    downstream, delay and jitter both ways. Jitter is there to break drop-tail phase
    effects (see the module docstring): without it, which flow loses at an overflow
    depends on where its ACK-clocked packets sit in the queue's deterministic cycle."""
    return {"delay_ms": a.delay_ms, "jitter_ms": a.jitter_ms,
            "down": {"rate_mbit": a.rate, "queue_bytes": a.queue_bytes}}


def shared_bottleneck(cc: str, a, work: Path, rep: int) -> dict:
    link = link_profile(a)
    flows = [Flow("mptcp", True, [("wifi", 2), ("wifi", 3)], cc), Flow("tcp", False, [("wifi", 4)], "reno")]
    with Bed(f"ccsb{cc}{rep}", {"wifi": link}, flows, work / f"shared-{cc}-{rep}", seed=rep) as bed:
        res = bed.run(a.duration, a.warmup)
    g = res["flows"]
    res["R"] = g["mptcp"]["goodput_mbit"] / g["tcp"]["goodput_mbit"]
    check_cc(res, cc)
    return res


def two_paths(cc: str, a, work: Path, rep: int) -> dict:
    link = link_profile(a)
    flows = [Flow("mptcp", True, [("wifi", 2), ("lte", 2)], cc),
             Flow("tcp1", False, [("wifi", 3)], "reno"), Flow("tcp2", False, [("wifi", 4)], "reno")]
    with Bed(f"cctp{cc}{rep}", {"wifi": link, "lte": dict(link)}, flows, work / f"two-{cc}-{rep}",
             seed=rep) as bed:
        res = bed.run(a.duration, a.warmup)
    sub = [s for s in res["subflows"] if s["flow"] == "mptcp"]
    tot = sum(s["bytes_acked_window"] for s in sub)
    wifi = sum(s["bytes_acked_window"] for s in sub if s["path"] == "wifi")
    res["mptcp_share_wifi"] = wifi / tot if tot else float("nan")
    g = res["flows"]
    res["tcp_mean_mbit"] = (g["tcp1"]["goodput_mbit"] + g["tcp2"]["goodput_mbit"]) / 2
    check_cc(res, cc)
    return res


def check_cc(res: dict, cc: str) -> None:
    """Every data-carrying socket of the MPTCP flow ran ``cc`` (the sender's side)."""
    got = {s["cc"] for s in res["subflows"] if s["flow"] == "mptcp"}
    n = sum(1 for s in res["subflows"] if s["flow"] == "mptcp")
    if got != {cc} or n < 2:
        raise RuntimeError(f"MPTCP subflows ran {sorted(got)} ({n} subflows), expected {cc} on 2")


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="runs per configuration (median reported; default 3)")
    p.add_argument("--duration", type=float, default=25, help="seconds per run (default 25)")
    p.add_argument("--warmup", type=float, default=5, help="seconds excluded at the start (default 5)")
    p.add_argument("--rate", type=float, default=20, help="bottleneck rate, Mbit/s (default 20)")
    p.add_argument("--delay-ms", type=float, default=20, help="one-way delay, ms (default 20: RTT 40 ms)")
    p.add_argument("--queue-bytes", type=int, default=None, help="drop-tail queue (default: one BDP)")
    p.add_argument("--jitter-ms", type=float, default=1.0,
                   help="uniform jitter each way, ms, no reordering (default 1; 0 = deterministic link, "
                        "where drop-tail phase effects decide who loses)")
    p.add_argument("--algs", default="lia,olia,balia,reno",
                   help="comma-separated; reno = uncoupled Reno subflows (default lia,olia,balia,reno)")
    p.add_argument("--no-two-path", action="store_true", help="only the shared-bottleneck experiment")
    p.add_argument("--out", default=None, help="keep per-run files here (default: a temporary folder, removed)")
    p.add_argument("--json", action="store_true", help="print the summary JSON as the last line")
    return p.parse_args()


def main() -> int:
    a = _args()
    logging.basicConfig(level=logging.WARNING)
    if os.geteuid() != 0:
        print("error: needs root (network namespaces, BPF)", file=sys.stderr)
        return 2
    a.queue_bytes = a.queue_bytes or int(a.rate * 1e6 / 8 * 2 * a.delay_ms / 1000)
    algs = [x for x in a.algs.split(",") if x]
    skipped = {}
    for cc in algs:
        if cc in ALGORITHMS and (why := unavailable_reason(cc)):
            skipped[cc] = why
    algs = [cc for cc in algs if cc not in skipped]
    for cc, why in skipped.items():
        print(f"skipped {cc}: {why}", file=sys.stderr)
    tmp = None
    if a.out:
        work = Path(a.out)
        work.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="coupled-cc-")
        work = Path(tmp.name)
    print(f"bottleneck {a.rate:g} Mbit/s, {a.delay_ms:g} ms each way (RTT {2 * a.delay_ms:g} ms), "
          f"jitter ±{a.jitter_ms:g} ms, queue {a.queue_bytes} B; {a.runs} x {a.duration:g} s per configuration, first {a.warmup:g} s "
          f"excluded", file=sys.stderr)
    sweep()
    shared: dict[str, list] = {cc: [] for cc in algs}
    two: dict[str, list] = {cc: [] for cc in algs}
    t0 = time.monotonic()
    with signals_raise():
        try:
            for rep in range(1, a.runs + 1):
                for cc in algs:
                    r = shared_bottleneck(cc, a, work, rep)
                    shared[cc].append(r)
                    g = r["flows"]
                    print(f"  run {rep} shared  {cc:6s} MPTCP {g['mptcp']['goodput_mbit']:5.2f}  TCP "
                          f"{g['tcp']['goodput_mbit']:5.2f} Mbit/s  R {r['R']:.2f}", file=sys.stderr)
                    if not a.no_two_path:
                        r = two_paths(cc, a, work, rep)
                        two[cc].append(r)
                        print(f"  run {rep} 2-path  {cc:6s} MPTCP {r['flows']['mptcp']['goodput_mbit']:5.2f} "
                              f"(wifi share {r['mptcp_share_wifi']:.2f})  TCP on wifi {r['tcp_mean_mbit']:5.2f} "
                              f"Mbit/s each", file=sys.stderr)
        finally:
            if tmp:
                tmp.cleanup()
    med = statistics.median
    print(f"\nshared bottleneck (median of {a.runs}; R = MPTCP goodput / TCP goodput; RFC 6356 goal: R ~ 1)")
    print(f"{'congestion control':20s} {'MPTCP Mbit/s':>12s} {'TCP Mbit/s':>11s} {'R':>6s}  R per run")
    for cc in algs:
        rs = shared[cc]
        print(f"{KEY[cc]:20s} {med(r['flows']['mptcp']['goodput_mbit'] for r in rs):12.2f} "
              f"{med(r['flows']['tcp']['goodput_mbit'] for r in rs):11.2f} {med(r['R'] for r in rs):6.2f}  "
              + " ".join(f"{r['R']:.2f}" for r in rs))
    summary = {"shared_bottleneck": {KEY[cc]: round(med(r["R"] for r in shared[cc]), 3)
                                     for cc in ("lia", "olia", "reno") if shared.get(cc)}}
    detail = {"config": {k: getattr(a, k) for k in ("runs", "duration", "warmup", "rate", "delay_ms", "jitter_ms",
                                                    "queue_bytes")},
              "skipped": skipped, "wall_s": round(time.monotonic() - t0, 1),
              "shared_bottleneck": {KEY[cc]: [r["R"] for r in shared[cc]] for cc in algs}}
    if not a.no_two_path:
        print(f"\ntwo paths, two TCP Reno flows on wifi (median of {a.runs}): MPTCP's share of its bytes on "
              f"the congested wifi path")
        print(f"{'congestion control':20s} {'MPTCP Mbit/s':>12s} {'wifi share':>10s} {'TCP Mbit/s each':>16s}")
        for cc in algs:
            rs = two[cc]
            print(f"{KEY[cc]:20s} {med(r['flows']['mptcp']['goodput_mbit'] for r in rs):12.2f} "
                  f"{med(r['mptcp_share_wifi'] for r in rs):10.2f} {med(r['tcp_mean_mbit'] for r in rs):16.2f}")
        detail["two_paths"] = {KEY[cc]: {"mptcp_share_wifi": [r["mptcp_share_wifi"] for r in two[cc]],
                                         "mptcp_mbit": [r["flows"]["mptcp"]["goodput_mbit"] for r in two[cc]],
                                         "tcp_mbit_each": [r["tcp_mean_mbit"] for r in two[cc]]} for cc in algs}
    if a.out:
        (work / "coupled_cc.json").write_text(json.dumps(detail, indent=1) + "\n")
    if a.json:
        print(json.dumps({"detail": detail}))
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
