"""A live one-node SLURM of its own, for the test suite (tests/test_slurm.py) and for
trying the cluster profile (profiles/slurm) on one machine.

Debian's packages (``slurmctld``, ``slurmd``, ``munge``: scripts/setup-system.sh) bring
the programs; nothing here uses their system services or /etc/slurm. Everything lives
in a temporary directory: cluster/slurm-test/slurm.conf filled in with free ports, a
unique cluster name and this directory's paths, a munge key of its own, and munged,
``slurmctld -D`` and ``slurmd -D`` started in process groups of their own. Clients find
this cluster through ``SLURM_CONF`` (``env()``); jobs inherit it (sbatch exports the
environment). ``stop()`` cancels the jobs, ends every process that carries this
cluster's marker (the daemons, slurmstepd, job steps) and removes the directory.

    python cluster/testslurm.py -- snakemake --profile profiles/slurm analyze --config capture=false

runs one command against a fresh cluster and stops it afterwards (needs root).
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "slurm-test" / "slurm.conf"
SBIN_PATH = os.environ.get("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin"
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "sinfo", "scontrol", "scancel", "srun", "sacct")
MARKER = "MPTCP_LAB_TESTSLURM"  # in the environment of every process of one cluster


def missing_programs() -> list[str]:
    """The SLURM and munge programs not installed (scripts/setup-system.sh installs them)."""
    return [p for p in DAEMONS + CLIENTS if shutil.which(p, path=SBIN_PATH) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mem_total_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


class LocalSlurm:
    """One controller + one compute node (this host) + munged, all under ``self.dir``."""

    def __init__(self, partition: str = "lab", cpus: int = 2, mem_mb: int | None = None):
        self.partition = partition
        self.cpus = cpus
        # a bit below the real memory, but never below the profile's largest request
        # (load_db: 8000 MB): SlurmdParameters=config_overrides lets slurmd accept it
        self.mem_mb = mem_mb or max(int(_mem_total_mb() * 0.9), 8192)
        self.host = socket.gethostname().split(".")[0]
        self.id = uuid.uuid4().hex[:10]
        self.cluster = f"labtest{self.id}"
        self.dir: Path | None = None
        self.procs: dict[str, subprocess.Popen] = {}
        self._restore_sigterm = False

    # --- paths and environment -------------------------------------------------------
    @property
    def conf(self) -> Path:
        return self.dir / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return self.dir / "munge" / "munge.socket.2"

    def env(self, base: dict | None = None) -> dict:
        """An environment whose SLURM clients (and jobs) talk to this cluster."""
        if self.dir is None:
            raise RuntimeError("the cluster is not running (start() first)")
        env = dict(os.environ if base is None else base)
        env["PATH"] = f"{self.dir}/bin:" + env.get("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        env["SLURM_CONF"] = str(self.conf)
        env[MARKER] = self.id
        for k in ("SLURM_CLUSTERS", "SQUEUE_CLUSTERS", "SBATCH_PARTITION", "SLURM_PARTITION"):
            env.pop(k, None)
        return env

    def run(self, *cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
        """A client command (sinfo, squeue, ...) against this cluster."""
        return subprocess.run(list(cmd), env=self.env(), capture_output=True, text=True, check=check,
                              timeout=timeout)

    def log(self, name: str, tail: int = 60) -> str:
        """The last lines of a daemon's log (munged, slurmctld, slurmd)."""
        if self.dir is None:
            return ""
        f = self.dir / "log" / f"{name}.log"
        lines = f.read_text(errors="replace").splitlines() if f.exists() else []
        return "\n".join(lines[-tail:])

    # --- start -----------------------------------------------------------------------
    def start(self, timeout: float = 90) -> LocalSlurm:
        if os.geteuid() != 0:
            raise RuntimeError("a local SLURM needs root (SlurmUser=root, slurmd)")
        if missing_programs():
            raise RuntimeError(f"not installed: {', '.join(missing_programs())} (scripts/setup-system.sh)")
        atexit.register(self.stop)
        # a SIGTERM (a CI time limit, `timeout`) unwinds like an exception, so the
        # daemons still stop: Python's default would exit without running atexit
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            try:
                signal.signal(signal.SIGTERM, _exit_on_sigterm)
                self._restore_sigterm = True
            except ValueError:  # not the main thread
                pass
        self.dir = Path(tempfile.mkdtemp(prefix=f"mptcp-lab-slurm-{self.id}-"))
        for d in ("state", "spool", "run", "log", "munge"):
            (self.dir / d).mkdir(mode=0o700)
        (self.dir / "plugstack.conf").write_text("")
        # Clients that find this cluster through PATH alone: snakemake-executor-plugin-slurm-jobstep
        # (0.6.1) drops every SLURM_* variable, SLURM_CONF too, before the job's own `srun`, which
        # then stops with "Could not establish a configuration source" (no /etc/slurm/slurm.conf).
        (self.dir / "bin").mkdir()
        for c in CLIENTS:
            w = self.dir / "bin" / c
            w.write_text(f"#!/bin/sh\nSLURM_CONF={self.conf} exec {shutil.which(c, path=SBIN_PATH)} \"$@\"\n")
            w.chmod(0o755)
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.conf.write_text(string.Template(TEMPLATE.read_text()).substitute(
            cluster=self.cluster, host=self.host, addr="127.0.0.1",
            ctld_port=_free_port(), slurmd_port=_free_port(),
            munge_socket=self.munge_socket, dir=self.dir, partition=self.partition,
            cpus=self.cpus, mem_mb=self.mem_mb))
        try:
            self._spawn("munged", "munged", "--foreground", "--force", f"--socket={self.munge_socket}",
                        f"--key-file={key}", f"--pid-file={self.dir}/run/munged.pid",
                        f"--log-file={self.dir}/log/munged.log", f"--seed-file={self.dir}/munge/munged.seed")
            self._wait(lambda: self.munge_socket.exists(), timeout, "munged's socket")
            self._spawn("slurmctld", "slurmctld", "-D", "-f", str(self.conf))
            self._spawn("slurmd", "slurmd", "-D", "-f", str(self.conf), "-N", self.host)
            self._wait(self._node_idle, timeout, f"node {self.host} idle in sinfo")
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, name: str, *cmd: str) -> None:
        out = open(self.dir / "log" / f"{name}.out", "wb")
        exe = shutil.which(cmd[0], path=SBIN_PATH)
        self.procs[name] = subprocess.Popen([exe, *cmd[1:]], env=self.env(), stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True, cwd=self.dir)
        out.close()

    def _node_idle(self) -> bool:
        r = self.run("sinfo", "-h", "-N", "-o", "%N %t", check=False, timeout=10)
        return r.returncode == 0 and f"{self.host} idle" in r.stdout.splitlines()

    def _wait(self, ready, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{dead[0]} exited ({self.procs[dead[0]].returncode}) before {what}:\n"
                                   + self.log(dead[0]) + "\n" + (self.dir / "log" / f"{dead[0]}.out").read_text())
            if ready():
                return
            time.sleep(0.5)
        raise RuntimeError(f"no {what} after {timeout:.0f} s:\n"
                           + "\n".join(f"--- {n}\n{self.log(n)}" for n in DAEMONS))

    # --- jobs ------------------------------------------------------------------------
    def jobs(self) -> list[dict]:
        """Every job slurmctld still knows (finished ones for MinJobAge), as
        ``scontrol -o show job`` says: {"JobId": "3", "JobName": ..., "JobState": "COMPLETED",
        "ExitCode": "0:0", "NodeList": ..., "Comment": ..., "StartTime": ..., "EndTime": ...}."""
        out = self.run("scontrol", "-o", "show", "job").stdout
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines()
                if line.startswith("JobId=")]

    # --- stop ------------------------------------------------------------------------
    def leftovers(self) -> list[int]:
        """Processes of this cluster (daemons, slurmstepd, job steps) still running."""
        needle = f"{MARKER}={self.id}".encode()
        me = os.getpid()
        pids = []
        for p in Path("/proc").iterdir():
            if p.name.isdigit() and int(p.name) != me and needle in _environ(int(p.name)).split(b"\0"):
                pids.append(int(p.name))
        return sorted(pids)

    def stop(self) -> None:
        """Cancel the jobs, end every process of this cluster, remove its directory
        (safe to call twice; registered with atexit)."""
        if self.dir is None:
            return
        if self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
            try:
                active = self.run("squeue", "-h", "-o", "%i", "-t", "PD,R,CG,S", check=False, timeout=10).stdout.split()
                if active:
                    self.run("scancel", *active, check=False, timeout=10)
                    end = time.monotonic() + 20
                    while time.monotonic() < end and self.run(
                            "squeue", "-h", "-o", "%i", "-t", "PD,R,CG,S", check=False, timeout=10).stdout.strip():
                        time.sleep(0.5)
            except (subprocess.SubprocessError, OSError):
                pass
        for name in reversed(DAEMONS):  # slurmd, slurmctld, then munged
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=5)
        # whatever carries this cluster's marker and outlived its daemon (slurmstepd, job steps)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.leftovers()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            end = time.monotonic() + 5
            while pids and time.monotonic() < end and self.leftovers():
                time.sleep(0.2)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        atexit.unregister(self.stop)
        if self._restore_sigterm and signal.getsignal(signal.SIGTERM) is _exit_on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self._restore_sigterm = False

    def __enter__(self) -> LocalSlurm:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(f"usage: {sys.argv[0]} -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    cmd = argv[argv.index("--") + 1:]
    with LocalSlurm() as slurm:
        print(f"SLURM_CONF={slurm.conf} (cluster {slurm.cluster}, partition {slurm.partition})", file=sys.stderr)
        return subprocess.run(cmd, env=slurm.env()).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
