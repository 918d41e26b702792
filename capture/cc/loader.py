"""Register one of the lab's BPF congestion controls for a while, and say why not
when this machine cannot.

The C loader (build/mptcp-cc) registers the algorithm as a BPF link and stays in
the foreground: stopping it (SIGTERM), killing it (SIGKILL) or killing its parent
(it asks for a parent-death signal) unregisters the algorithm. Sockets that
already use it keep it until they close; new ones can no longer pick it.
"""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from . import ALGORITHMS, LOADER, object_path

BTF = Path("/sys/kernel/btf/vmlinux")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


class LoadError(RuntimeError):
    pass


def registered() -> list[str]:
    try:
        return AVAILABLE.read_text().split()
    except OSError:
        return []


@functools.lru_cache(maxsize=None)
def probe(name: str) -> dict:
    """Load and verify ``name`` without registering it: ``{"ok": True, ...}`` or
    ``{"ok": False, "reason": ...}`` naming what is missing or what the kernel said."""
    if name not in ALGORITHMS:
        return {"ok": False, "reason": f"unknown algorithm {name!r}"}
    if not BTF.exists():
        return {"ok": False, "reason": f"kernel without BTF ({BTF} missing): the BPF programs cannot be built"}
    if not LOADER.is_file() or not object_path(name).is_file():
        missing = LOADER if not LOADER.is_file() else object_path(name)
        return {"ok": False, "reason": f"not built ({missing} missing): run `make cc`"}
    if os.geteuid() != 0:
        return {"ok": False, "reason": "loading BPF struct_ops needs root (CAP_BPF and CAP_NET_ADMIN)"}
    try:
        p = subprocess.run([str(LOADER), "probe", str(object_path(name))], capture_output=True, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"ok": False, "reason": f"loader failed to run: {e}"}
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"ok": False, "reason": f"loader said nothing readable (rc {p.returncode}): {p.stderr.strip()[-300:]}"}
    if not res.get("ok"):
        last = [line for line in (res.get("log") or "").splitlines() if line.strip()][-3:]
        res["reason"] = (f"the kernel refused it at the {res.get('stage')} stage: {res.get('error')}"
                         + (f" ({' | '.join(last)})" if last else ""))
    return res


def unavailable_reason(name: str) -> str | None:
    """None when ``name`` can be loaded here, else why not (one line)."""
    r = probe(name)
    return None if r.get("ok") else r["reason"]


class Registered:
    """``name`` registered while the context is open (or between start() and stop()).

    ``trace``: a file that receives one JSON line per coupled congestion-avoidance
    step (the inputs and the result; see src/mptcp_cc.h, struct mpl_event).
    After stop(), ``stats`` holds the program's counters (subflows coupled,
    plain-TCP sockets, coupled steps, ...)."""

    def __init__(self, name: str, trace: str | Path | None = None, timeout: float = 20):
        self.name, self.trace, self.timeout = name, trace, timeout
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}
        self.stats: dict = {}
        self._dir: str | None = None

    def start(self) -> "Registered":
        why = unavailable_reason(self.name)
        if why:
            raise LoadError(f"congestion control {self.name!r} unavailable: {why}")
        if self.name in registered():
            raise LoadError(f"a congestion control named {self.name!r} is already registered "
                            f"(another run's loader? `bpftool struct_ops show` lists it)")
        self._dir = tempfile.mkdtemp(prefix=f"mpl-cc-{self.name}-")
        ready = Path(self._dir) / "ready.json"
        cmd = [str(LOADER), "load", str(object_path(self.name)), "--ready", str(ready)]
        if self.trace:
            cmd += ["--trace", str(self.trace)]
        self._out = Path(self._dir) / "stdout"
        self._err = Path(self._dir) / "stderr"
        with open(self._out, "wb") as so, open(self._err, "wb") as se:
            self.proc = subprocess.Popen(cmd, stdout=so, stderr=se, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        end = time.monotonic() + self.timeout
        while not ready.exists():
            if self.proc.poll() is not None:
                out = self._read(self._out)
                self._cleanup_dir()
                raise LoadError(f"loading {self.name} failed: {out.strip()[-600:]}")
            if time.monotonic() > end:
                self.stop()
                raise LoadError(f"loading {self.name}: not registered after {self.timeout:.0f} s")
            time.sleep(0.02)
        self.info = json.loads(ready.read_text())
        if self.name not in registered():
            self.stop()
            raise LoadError(f"{self.name}: the loader says registered but the kernel does not list it")
        return self

    @staticmethod
    def _read(p: Path) -> str:
        try:
            return p.read_text(errors="replace")
        except OSError:
            return ""

    def _cleanup_dir(self) -> None:
        if self._dir:
            for f in Path(self._dir).iterdir():
                f.unlink(missing_ok=True)
            os.rmdir(self._dir)
            self._dir = None

    def stop(self) -> None:
        """Unregister (idempotent); raise LoadError if the kernel still lists it."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()   # closes the link: unregistered all the same
                self.proc.wait(5)
        for line in self._read(self._out).splitlines():
            try:
                self.stats = json.loads(line).get("stats", self.stats)
            except ValueError:
                pass
        rc = self.proc.returncode
        err = self._read(self._err).strip()
        self.proc = None
        self._cleanup_dir()
        for _ in range(50):
            if self.name not in registered():
                break
            time.sleep(0.02)
        else:
            raise LoadError(f"{self.name} still registered after its loader exited (rc {rc}): {err[-300:]}")

    def as_meta(self) -> dict:
        return {"name": self.name, "implementation": "BPF struct_ops tcp_congestion_ops (capture/cc)",
                "about": ALGORITHMS[self.name], "object": str(object_path(self.name).name),
                "struct_ops_map_id": self.info.get("struct_ops_map_id"),
                "conns_map_id": self.info.get("conns_map_id"), "stats": self.stats}

    def __enter__(self) -> "Registered":
        return self.start()

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False
