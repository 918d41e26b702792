"""Workloads: HTTP download (nginx + wget, through ``mptcpize`` for MPTCP), an iperf3
upload (the client sends, as iperf3 does by default) and D-ITG application traffic
(ITGRecv on the client, ITGSend on the server, ITGDec output kept)."""
from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
import time
from pathlib import Path

from .util import CommandError, Proc, out, sh, wait_for

HTTP_PORT = 80
IPERF_PORT = 5201
ITG_PORT = 8999
ITG_SIG_PORT = 9000

# ---------------------------------------------------------------------- HTTP

NGINX_CONF = """\
daemon off;
master_process off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
user root;
events {{ worker_connections 64; }}
http {{
    access_log {work}/nginx-access.log;
    client_body_temp_path {work}/tmp;
    proxy_temp_path {work}/tmp;
    fastcgi_temp_path {work}/tmp;
    uwsgi_temp_path {work}/tmp;
    scgi_temp_path {work}/tmp;
    sendfile on;
    tcp_nopush off;
    keepalive_timeout 0;
    default_type application/octet-stream;
    server {{
        listen {port} reuseport;
        root {root};
    }}
}}
"""


def listening(ns: str, port: int) -> bool:
    txt = out(["ss", "-Hltn", f"sport = :{port}"], ns=ns, check=False)
    return bool(txt.strip())


def make_file(root: Path, size: int, seed: int) -> tuple[Path, str]:
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"file-{size}"
    rnd = random.Random(seed)
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            chunk = rnd.randbytes(n)
            f.write(chunk)
            h.update(chunk)
            left -= n
    return path, h.hexdigest()


def http_download(client_ns: str, server_ns: str, server_addr: str, bind_addr: str,
                  size: int, mptcp: bool, work: Path, seed: int, timeout: float) -> dict:
    """Serve a file of ``size`` bytes with nginx and fetch it with wget; verify it."""
    root = work / "www"
    (work / "tmp").mkdir(parents=True, exist_ok=True)
    fpath, digest = make_file(root, size, seed)
    conf = work / "nginx.conf"
    conf.write_text(NGINX_CONF.format(work=work, root=root, port=HTTP_PORT))
    pre = ["mptcpize", "run"] if mptcp else []
    nginx = Proc("nginx", pre + ["nginx", "-c", str(conf), "-p", str(work)], ns=server_ns,
                 stderr=work / "nginx.stderr")
    try:
        wait_for(lambda: listening(server_ns, HTTP_PORT) or not nginx.alive(), 10, "nginx to listen")
        if not nginx.alive():
            raise CommandError(f"nginx exited: {(work / 'nginx.stderr').read_text(errors='replace')}")
        dest = work / "download"
        cmd = pre + ["wget", "-q", "--tries=1", f"--timeout={int(timeout)}", "--no-proxy",
                     f"--bind-address={bind_addr}", "-O", str(dest),
                     f"http://{server_addr}:{HTTP_PORT}/{fpath.name}"]
        t0 = time.time()
        p = sh(cmd, ns=client_ns, check=False, timeout=timeout + 30)
        t1 = time.time()
        got = dest.stat().st_size if dest.exists() else 0
        ok = False
        if got == size:
            h = hashlib.sha256()
            with open(dest, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            ok = h.hexdigest() == digest
        dest.unlink(missing_ok=True)
        fpath.unlink(missing_ok=True)
        res = {"workload": "http", "tool": "wget", "server": "nginx", "mptcpize": mptcp,
               "url": cmd[-1], "command": " ".join(cmd), "wget_rc": p.returncode,
               "wget_stderr": p.stderr.strip()[-500:], "size_bytes": size,
               "received_bytes": got, "sha256": digest, "complete": ok,
               "wall_start_s": t0, "wall_end_s": t1, "wall_time_s": t1 - t0}
        if not ok:
            raise CommandError(f"download incomplete: {got}/{size} bytes, wget rc {p.returncode}: {p.stderr.strip()[-300:]}")
        return res
    finally:
        nginx.stop()


# ---------------------------------------------------------------------- iperf3


def _iperf3(client_ns: str, server_ns: str, server_addr: str, bind_addr: str, test: list[str], mptcp: bool,
            work: Path, timeout: float) -> tuple[list[str], subprocess.CompletedProcess, float, float, dict | None]:
    """One iperf3 test against ``iperf3 -s -1`` (one test, then the server exits): the
    client's command, its result, start and end times and its JSON report (None when it
    is not one). iperf3 opens a control connection and one data connection; both go
    through ``mptcpize`` for MPTCP (Debian 12's iperf3 3.12 has no --mptcp option)."""
    pre = ["mptcpize", "run"] if mptcp else []
    srv = Proc("iperf3-server", pre + ["iperf3", "-s", "-1", "-J", "-p", str(IPERF_PORT)], ns=server_ns,
               stdout=work / "iperf3-server.json", stderr=work / "iperf3-server.stderr")
    try:
        wait_for(lambda: listening(server_ns, IPERF_PORT) or not srv.alive(), 10, "iperf3 to listen")
        if not srv.alive():
            raise CommandError(f"iperf3 -s exited: {(work / 'iperf3-server.stderr').read_text(errors='replace')}")
        cmd = pre + ["iperf3", "-c", server_addr, "-p", str(IPERF_PORT), "-B", bind_addr, *test, "-J"]
        t0 = time.time()
        p = sh(cmd, ns=client_ns, check=False, timeout=timeout + 30)
        t1 = time.time()
        try:
            srv.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    finally:
        srv.stop()
    try:
        report = json.loads(p.stdout)
    except ValueError:
        report = None
    return cmd, p, t0, t1, report


def iperf3_upload(client_ns: str, server_ns: str, server_addr: str, bind_addr: str,
                  size: int, mptcp: bool, work: Path, timeout: float) -> dict:
    """The client sends ``size`` bytes to the server (iperf3's default direction)."""
    cmd, p, t0, t1, report = _iperf3(client_ns, server_ns, server_addr, bind_addr, ["-n", str(size)], mptcp,
                                     work, timeout)
    try:
        sent = int(report["end"]["sum_sent"]["bytes"])
        received = int(report["end"]["sum_received"]["bytes"])
    except (KeyError, TypeError):
        raise CommandError(f"iperf3 failed (rc {p.returncode}): {p.stdout[-300:]} {p.stderr[-300:]}") from None
    # iperf3's server reports what it had read when the client ended the test, which on
    # a path with a long queue is less than what TCP then delivers; the client's count of
    # bytes handed to TCP and a clean exit are what say the upload ran.
    res = {"workload": "iperf3-up", "tool": "iperf3", "mptcpize": mptcp, "command": " ".join(cmd),
           "iperf3_rc": p.returncode, "size_bytes": size, "sent_bytes": sent,
           "server_reported_bytes": received, "complete": p.returncode == 0 and sent >= size,
           "wall_start_s": t0, "wall_end_s": t1, "wall_time_s": t1 - t0}
    if not res["complete"]:
        raise CommandError(f"upload incomplete: {sent}/{size} bytes sent, iperf3 rc {p.returncode}")
    return res


def iperf3_download(client_ns: str, server_ns: str, server_addr: str, bind_addr: str,
                    duration_s: float, mptcp: bool, work: Path, timeout: float) -> dict:
    """A long-lived download: ``iperf3 -R -t duration_s`` (the server sends for that long).

    The tool and the protocol of iperf-based studies (CS244 took "throughput samples
    beginning 10 seconds after start ... over a period of 30 seconds"): the pipeline
    reads the bytes received per second from the client's trace (``delivered_1s``), so
    any window can be taken afterwards.
    """
    cmd, p, t0, t1, report = _iperf3(client_ns, server_ns, server_addr, bind_addr, ["-R", "-t", f"{duration_s:g}"],
                                     mptcp, work, max(timeout, duration_s))
    try:
        received = int(report["end"]["sum_received"]["bytes"])
        seconds = float(report["end"]["sum_received"]["seconds"])
    except (KeyError, TypeError):
        raise CommandError(f"iperf3 -R failed (rc {p.returncode}): {p.stdout[-300:]} {p.stderr[-300:]}") from None
    res = {"workload": "iperf3-down", "tool": "iperf3", "mptcpize": mptcp, "command": " ".join(cmd),
           "iperf3_rc": p.returncode, "duration_s": duration_s, "received_bytes": received,
           "iperf3_seconds": seconds, "complete": p.returncode == 0 and received > 0,
           "wall_start_s": t0, "wall_end_s": t1, "wall_time_s": t1 - t0}
    if not res["complete"]:
        raise CommandError(f"iperf3 -R incomplete: {received} bytes received, iperf3 rc {p.returncode}")
    return res


# ---------------------------------------------------------------------- D-ITG

# Traffic profiles modelled on the D-ITG study's Fig. 2 descriptions. Each is an
# ITGSend single-flow option list over TCP (duration added by the runner).
DITG_PROFILES: dict[str, dict] = {
    # ON/OFF cycles with blocks of ~0.5–1.5 MiB: 2000 pkt/s × 1448 B ≈ 2.9 MB/s, so an
    # ON period of 180–545 ms carries 0.5–1.5 MiB; OFF 1–3 s.
    "netflix": {"opts": ["-C", "2000", "-c", "1448", "-B", "U", "180", "545", "U", "1000", "3000"],
                "about": "ON/OFF blocks of 0.5-1.5 MiB (uniform), OFF 1-3 s"},
    # irregular, relatively large bursts: exponential ON (mean 150 ms) at 1500 pkt/s,
    # exponential OFF periods (mean 1.2 s), packet sizes 500-1448 B
    "maps": {"opts": ["-C", "1500", "-u", "500", "1448", "-B", "E", "150", "E", "1200"],
             "about": "non-periodic large bursts: exponential ON (mean 150 ms) and OFF (mean 1.2 s)"},
    # sparse ~400 B packets with occasional spikes above twice that size. Pareto sizes
    # (shape 3.5, minimum 300 B: mean 420 B, 3 % above 800 B), Poisson arrivals: -E 8,
    # exponential gaps of mean 125 ms. Not -O 8: ITGSend's -O draws N ~ Poisson(8) and
    # waits 1000/N ms, so N = 0 (p = e^-8 per packet) is an infinite gap on which it
    # busy-waits forever -- the quick-scale Docs run over 10/400 ms "stalled" on every
    # attempt because its seed draws N = 0 at the 6th packet (tests/test_ditg_profiles.py).
    "docs": {"opts": ["-E", "8", "-v", "3.5", "300"],
             "about": "sparse packets ~400 B (Pareto shape 3.5, min 300 B: mean 420 B, 3 % > 800 B), Poisson 8 pkt/s"},
}


def _total_packets(itgdec_summary: str) -> int | None:
    m = re.findall(r"Total packets\s*=\s*(\d+)", itgdec_summary)
    return int(m[-1]) if m else None


def ditg_seed(campaign_seed: int, profile: str, repetition: int) -> str:
    """ITGSend's seed (in (0, 1)): the same for every mode and path configuration of one
    repetition, so TCP and MPTCP runs are offered the same application traffic (the
    paper: "each test was run with both MPTCP and the default Linux TCP")."""
    h = int(hashlib.sha256(f"{campaign_seed}|{profile}|{repetition}".encode()).hexdigest()[:8], 16)
    return f"{(h % 9973 + 1) / 9975:.6f}"


def ditg(client_ns: str, server_ns: str, client_addr: str, profile: str, duration_s: float,
         mptcp: bool, run_dir: Path, seed: str) -> dict:
    if profile not in DITG_PROFILES:
        raise CommandError(f"unknown D-ITG profile {profile!r}")
    pre = ["mptcpize", "run"] if mptcp else []
    recv_log = run_dir / "ditg-recv.log"
    send_log = run_dir / "ditg-send.log"
    recv = Proc("ITGRecv", pre + ["ITGRecv"], ns=client_ns, stdout=run_dir / ".itgrecv.out",
                stderr=run_dir / ".itgrecv.err")
    try:
        wait_for(lambda: listening(client_ns, ITG_SIG_PORT) or not recv.alive(), 10, "ITGRecv")
        cmd = pre + ["ITGSend", "-T", "TCP", "-a", client_addr, "-rp", str(ITG_PORT),
                     "-t", str(int(duration_s * 1000)), "-s", seed,
                     "-l", str(send_log), "-x", str(recv_log)] + DITG_PROFILES[profile]["opts"]
        # ITGSend sends every packet it scheduled in -t, however late: when the
        # connection stalls (seen with MPTCP over a 10 ms + 400 ms path pair, a few
        # packets per second for minutes) it would run on. Stop it after twice the
        # duration (+20 s) and keep what arrived, marked incomplete.
        limit = 2 * duration_s + 20
        stalled = False
        try:
            p = sh(cmd, ns=server_ns, check=False, timeout=limit)
        except subprocess.TimeoutExpired as e:
            stalled = True
            p = subprocess.CompletedProcess(cmd, -9, (e.stdout or b"").decode(errors="replace")
                                            if isinstance(e.stdout, bytes) else (e.stdout or ""), "")
        time.sleep(0.5)
    finally:
        recv.stop(sig=2)
    if not recv_log.exists() or recv_log.stat().st_size == 0 or (p.returncode != 0 and not stalled):
        raise CommandError(f"ITGSend failed ({p.returncode}{', stalled' if stalled else ''}): "
                           f"{p.stdout[-400:]} {p.stderr[-400:]}")
    # ITGDec: summary and per-packet text log (flow, seq, src, dst, times, size)
    dec = sh(["ITGDec", str(recv_log)], check=False, timeout=120)
    # What ITGSend generated: the offered load. With the paper's large send buffers a
    # connection that falls behind queues the traffic instead of skipping it, and what
    # is still queued when ITGSend ends its test is never received (ITGRecv closes on
    # the end-of-flow signal), as in the paper's own runs.
    sent = sh(["ITGDec", str(send_log)], check=False, timeout=120)
    (run_dir / "ditg-recv-summary.txt").write_text(dec.stdout)
    txt = run_dir / "ditg-recv.txt"
    sh(["ITGDec", str(recv_log), "-l", str(txt)], check=False, timeout=120)
    delay = run_dir / "ditg-delay.dat"
    sh(["ITGDec", str(recv_log), "-d", "100", str(delay)], check=False, timeout=120)
    return {"workload": f"ditg-{profile}", "tool": "D-ITG", "profile": profile,
            "about": DITG_PROFILES[profile]["about"], "mptcpize": mptcp, "command": " ".join(cmd),
            "duration_s": duration_s, "send_log": send_log.name, "recv_log": recv_log.name,
            "decoded": txt.name if txt.exists() else None, "summary": "ditg-recv-summary.txt",
            "itgsend_stdout": p.stdout[-1000:], "complete": not stalled,
            "stalled": stalled, "itgsend_limit_s": limit, "sent_packets": _total_packets(sent.stdout),
            "received_packets": _total_packets(dec.stdout)}
