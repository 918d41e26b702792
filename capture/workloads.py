"""Workloads: HTTP download (nginx + wget, through ``mptcpize`` for MPTCP), an iperf3
upload (the client sends, as iperf3 does by default) and D-ITG application traffic
(ITGRecv on the client, ITGSend on the server, ITGDec output kept)."""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import random
import re
import socket
import struct
import subprocess
import time
from pathlib import Path

from . import ditg_schedule
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
#
# ITGSend replays a schedule drawn once per repetition (capture/ditg_schedule.py): -Ft
# gaps, -Fs sizes, -z their count. How a test ends: ITGSend writes its last packet and
# close()s its data socket; with the paper's 100 MiB send buffers its writes never
# block, so on a slow or lossy path much of the test can still be queued in the kernel
# then. It then tells ITGRecv "flow closed" over its separate signalling connection, and
# ITGRecv, one second later, cancels its receiving thread and closes the data socket
# (src/ITGRecv/ITGRecv.cpp, TSP_CLOSED_FLOW): unread data makes that close a reset and
# everything still queued is lost (the reference's lossy Netflix runs received 37-47 %
# of their packets). So the test drains: we set SO_LINGER on ITGSend's data socket
# (pidfd_getfd(2): the socket is ITGSend's own, the option is the kernel's), and its
# close() then returns only when every byte and the FIN are acknowledged, or after the
# drain limit (ditg_schedule.drain_limit_s: declared with the schedule, so the duration
# model reads it without the testbed); only then does ITGRecv hear of the end.


def _borrow_fd(pid: int, fd: int) -> int:
    """A duplicate of process ``pid``'s file descriptor ``fd`` (pidfd_getfd(2), Linux >= 5.6)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        getfd = getattr(libc, "pidfd_getfd", None)
        r = getfd(pidfd, fd, 0) if getfd is not None else libc.syscall(438, pidfd, fd, 0)
        if r < 0:
            raise OSError(ctypes.get_errno(), f"pidfd_getfd({pid}, {fd})")
        return r
    finally:
        os.close(pidfd)


def linger_on(pid: int, peer_port: int, seconds: int) -> bool:
    """Set SO_LINGER (on, ``seconds``) on process ``pid``'s socket connected to
    ``peer_port``; False when it has none (yet)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for name in fds:
        try:
            if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                continue
            dup = _borrow_fd(pid, int(name))
        except OSError:
            continue
        with socket.socket(fileno=dup) as s:  # closing our duplicate leaves ITGSend's socket open
            try:
                if s.getpeername()[1] != peer_port:
                    continue
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, seconds))
                return struct.unpack("ii", s.getsockopt(socket.SOL_SOCKET, socket.SO_LINGER, 8)) == (1, seconds)
            except OSError:
                continue
    return False


def timer_slack(pid: int, ns: int = 1) -> bool:
    """Set the timer slack of every thread of process ``pid`` (threads it creates later
    inherit it). ITGSend (2.8.1, built with bursty support) restarts its lateness account
    at every packet, so each gap runs late by its sleep's overshoot, which the default
    50-µs slack dominates; measured here per 0.5-ms gap: +0.11 ms with the default,
    +0.04-0.05 ms with 1 ns."""
    done = False
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:  # /proc/<thread id>/timerslack_ns: /proc/<pid>/task/<tid>/ has none
            Path(f"/proc/{task.name}/timerslack_ns").write_text(str(ns))
            done = True
        except OSError:
            pass
    return done


def _itgdec(log: Path) -> dict:
    """ITGDec's totals of a D-ITG log: packets, bytes, first to last packet in s (None
    when it printed none)."""
    txt = sh(["ITGDec", str(log)], check=False, timeout=120).stdout
    def last(label: str, num: str = r"\d+") -> str | None:
        m = re.findall(rf"{label}\s*=\s*({num})", txt)
        return m[-1] if m else None
    packets, size, span = last("Total packets"), last("Bytes received"), last("Total time", r"[\d.]+")
    return {"text": txt, "packets": int(packets) if packets else None, "bytes": int(size) if size else None,
            "span_s": float(span) if span else None}


_TIMES = re.compile(r"Seq>\s*(\d+).*?txTime>\s*(\d+):(\d+):([\d.]+)\s+rxTime>\s*(\d+):(\d+):([\d.]+)")


def drain_time_s(decoded: Path, last_seq: int) -> float | None:
    """Seconds from the sending of packet ``last_seq`` (the schedule's last) to the last
    reception, from ITGDec's per-packet text; None when that packet never arrived."""
    tx_last, rx_max = None, None
    for line in decoded.read_text(errors="replace").splitlines():
        m = _TIMES.search(line)
        if not m:
            continue
        g = m.groups()
        tx = int(g[1]) * 3600 + int(g[2]) * 60 + float(g[3])
        rx = int(g[4]) * 3600 + int(g[5]) * 60 + float(g[6])
        rx += 86400 if rx < tx - 43200 else 0  # crossed midnight
        rx_max = rx if rx_max is None else max(rx_max, rx)
        if int(g[0]) == last_seq:
            tx_last = tx
    if tx_last is None:
        return None
    return max(0.0, rx_max - tx_last)


def ditg(client_ns: str, server_ns: str, client_addr: str, profile: str, duration_s: float,
         mptcp: bool, run_dir: Path, seed: int, drain_s: int | None = None) -> dict:
    """One D-ITG test: ITGRecv on the client, ITGSend on the server replaying the
    schedule of ``profile``, ``duration_s`` and ``seed`` (written into ``run_dir``), then
    draining for up to ``drain_s`` (default ``ditg_schedule.drain_limit_s``)."""
    if profile not in ditg_schedule.PROFILES:
        raise CommandError(f"unknown D-ITG profile {profile!r}")
    sched = ditg_schedule.draw(profile, duration_s, seed)
    files = ditg_schedule.write(sched, run_dir)
    drain = ditg_schedule.drain_limit_s(duration_s) if drain_s is None else int(drain_s)
    pre = ["mptcpize", "run"] if mptcp else []
    recv_log, send_log = run_dir / "ditg-recv.log", run_dir / "ditg-send.log"
    # ITGSend stops generating at -t even if the schedule is not done (a write blocked
    # for that long); past the drain as well it is killed
    gen_ms = int(1000 * (duration_s + drain))
    limit = gen_ms / 1000 + drain + 30
    cmd = pre + ["ITGSend", "-T", "TCP", "-a", client_addr, "-rp", str(ITG_PORT), "-z", str(sched.packets),
                 "-t", str(gen_ms), "-l", str(send_log), "-x", str(recv_log),
                 "-Ft", str(run_dir / files["schedule_idt_file"]), "-Fs", str(run_dir / files["schedule_size_file"])]
    # -q 1: ITGRecv keeps 50 log entries in memory by default, and on the sender's "flow
    # closed" it writes them out, waits 1 s and cancels the receiving thread; a packet
    # the thread reads after that write stayed in memory and was never logged (seen as
    # the last of 1,195 packets missing on loopback). With -q 1 the thread writes each
    # packet as it reads it.
    recv = Proc("ITGRecv", pre + ["ITGRecv", "-q", "1"], ns=client_ns, stdout=run_dir / ".itgrecv.out",
                stderr=run_dir / ".itgrecv.err")
    send = None
    lingered, stalled, slack, lag = False, False, False, None
    try:
        wait_for(lambda: listening(client_ns, ITG_SIG_PORT) or not recv.alive(), 10, "ITGRecv")
        send = Proc("ITGSend", cmd, ns=server_ns, stdout=run_dir / ".itgsend.out", stderr=run_dir / ".itgsend.err")
        timer_slack(send.pid)  # before ITGSend starts its threads: they inherit it
        t0 = time.monotonic()
        while not lingered and send.alive() and time.monotonic() - t0 < limit:
            lingered = linger_on(send.pid, ITG_PORT, drain)
            time.sleep(0 if lingered else 0.02)
        slack = timer_slack(send.pid)  # again: the sending thread exists now
        try:
            rc = send.wait(timeout=max(1.0, limit - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            stalled, rc = True, send.stop(sig=9)
        lag = _await_logged(send_log, recv_log)
    finally:
        if send is not None:
            send.stop()
        recv.stop(sig=2)
    out_txt = (run_dir / ".itgsend.out").read_text(errors="replace")
    if not recv_log.exists() or recv_log.stat().st_size == 0 or (rc != 0 and not stalled):
        raise CommandError(f"ITGSend failed ({rc}{', stalled' if stalled else ''}): {out_txt[-400:]} "
                           f"{(run_dir / '.itgsend.err').read_text(errors='replace')[-400:]}")
    if not lingered and not stalled:
        raise CommandError("could not set SO_LINGER on ITGSend's data socket (pidfd_getfd): the test would not drain")
    res = _ditg_result(run_dir, profile, cmd, mptcp, duration_s, sched, files, drain, limit, stalled, out_txt)
    return {**res, "itgsend_timer_slack_ns": 1 if slack else None, "itgrecv_log_wait_s": lag}


def _await_logged(send_log: Path, recv_log: Path, bound_s: float = 3.0) -> float | None:
    """Seconds from ITGSend's exit until ITGRecv's log holds as many records as
    ITGSend's (both logs are arrays of one fixed-size record per packet); None when it
    never did within ``bound_s``. ITGRecv is interrupted only after this: a fixed 0.5 s
    let one CI run lose the last of 1,195 logged packets, which never happened on a
    quiet host. ITGRecv cancels its receiving thread 1 s after the sender's "flow
    closed", so a record missing 3 s after ITGSend's exit will not come."""
    t0 = time.monotonic()
    want = send_log.stat().st_size if send_log.exists() else 0
    while True:
        waited = time.monotonic() - t0
        if want and recv_log.exists() and recv_log.stat().st_size >= want:
            return round(waited, 3)
        if waited >= bound_s:
            return None
        time.sleep(0.01)


def _ditg_result(run_dir: Path, profile: str, cmd: list[str], mptcp: bool, duration_s: float,
                 sched: ditg_schedule.Schedule, files: dict, drain: int, limit: float, stalled: bool,
                 out_txt: str) -> dict:
    """What the test offered, generated and delivered (meta.json ``result``)."""
    recv_log, send_log = run_dir / "ditg-recv.log", run_dir / "ditg-send.log"
    sent, got = _itgdec(send_log), _itgdec(recv_log)
    (run_dir / "ditg-recv-summary.txt").write_text(got["text"])
    txt = run_dir / "ditg-recv.txt"
    sh(["ITGDec", str(recv_log), "-l", str(txt)], check=False, timeout=120)
    sh(["ITGDec", str(recv_log), "-d", "100", str(run_dir / "ditg-delay.dat")], check=False, timeout=120)
    drained = bool(sent["packets"]) and got["packets"] == sent["packets"]
    drain_took = drain_time_s(txt, sched.packets) if drained and txt.exists() else None
    generated_all = sent["packets"] == sched.packets and sent["bytes"] == sched.bytes
    p = ditg_schedule.PROFILES[profile]
    return {"workload": f"ditg-{profile}", "tool": "D-ITG", "profile": profile, "about": f"{p.about}: {p.text()}",
            "mptcpize": mptcp, "command": " ".join(cmd), "duration_s": duration_s, **files,
            "send_log": send_log.name, "recv_log": recv_log.name, "decoded": txt.name if txt.exists() else None,
            "summary": "ditg-recv-summary.txt", "itgsend_stdout": out_txt[-1000:],
            "sent_packets": sent["packets"], "sent_bytes": sent["bytes"], "send_span_s": sent["span_s"],
            "received_packets": got["packets"], "received_bytes": got["bytes"],
            "delivered_share": got["packets"] / sent["packets"] if sent["packets"] and got["packets"] is not None
            else None,
            "drained": drained, "drain_s": drain_took, "drain_limit_s": drain,
            "generated_all": generated_all, "stalled": stalled, "itgsend_limit_s": limit,
            "complete": not stalled and generated_all and drained}
