"""Small helpers: commands in namespaces, background processes, cleanup on signals."""
from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence

log = logging.getLogger("capture")

REPO = Path(__file__).resolve().parent.parent

# The link emulator's binary (capture/linkem, ``make linkem``): the one place its path is
# said. Here, at the bottom of the package, because the emulator runs it, the kernel
# facts record its version and hash, and the test bed starts it by hand.
LINKEM = REPO / "capture" / "linkem" / "target" / "release" / "linkem"


def linkem_available() -> bool:
    return LINKEM.is_file() and LINKEM.stat().st_mode & 0o111 != 0


class CommandError(RuntimeError):
    pass


class Interrupted(BaseException):
    """Raised from the SIGTERM/SIGINT handler so `finally` blocks clean up."""


def in_ns(ns: str | None, cmd: Sequence[str]) -> list[str]:
    return (["ip", "netns", "exec", ns] if ns else []) + [str(c) for c in cmd]


def sh(cmd: Sequence[str], ns: str | None = None, check: bool = True, timeout: float = 60,
       input: str | None = None) -> subprocess.CompletedProcess:
    """Run a command (in namespace ``ns``), return the CompletedProcess (text)."""
    full = in_ns(ns, cmd)
    log.debug("$ %s", shlex.join(full))
    p = subprocess.run(full, capture_output=True, text=True, timeout=timeout, input=input)
    if check and p.returncode != 0:
        raise CommandError(f"command failed ({p.returncode}): {shlex.join(full)}\n{p.stderr.strip()}")
    return p


def out(cmd: Sequence[str], ns: str | None = None, check: bool = True) -> str:
    return sh(cmd, ns=ns, check=check).stdout


class Proc:
    """A background process (own process group) that is always stopped in `stop()`."""

    def __init__(self, name: str, cmd: Sequence[str], ns: str | None = None,
                 stdout: Path | None = None, stderr: Path | None = None, env: dict | None = None,
                 cwd: Path | None = None):
        self.name = name
        self.cmd = in_ns(ns, cmd)
        self.stdout_path, self.stderr_path = stdout, stderr
        so = open(stdout, "wb") if stdout else subprocess.DEVNULL
        se = open(stderr, "wb") if stderr else subprocess.DEVNULL
        log.debug("& %s", shlex.join(self.cmd))
        full_env = None
        if env:
            full_env = dict(os.environ)
            full_env.update(env)
        self.p = subprocess.Popen(self.cmd, stdout=so, stderr=se, stdin=subprocess.DEVNULL,
                                  start_new_session=True, env=full_env, cwd=cwd)
        for f in (so, se):
            if hasattr(f, "close"):
                f.close()

    @property
    def pid(self) -> int:
        return self.p.pid

    def alive(self) -> bool:
        return self.p.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 5.0) -> int | None:
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.p.wait(5)
        return self.p.returncode

    def wait(self, timeout: float | None = None) -> int:
        return self.p.wait(timeout)


def wait_for(pred, timeout: float, what: str, interval: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(interval)
    raise CommandError(f"timed out after {timeout:.0f}s waiting for {what}")


class signals_raise:
    """Context manager: SIGTERM and SIGINT raise `Interrupted` so cleanup code runs."""

    def __enter__(self):
        def handler(signum, frame):
            raise Interrupted(signal.Signals(signum).name)

        self.old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
        return self

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h)
        return False


def block_signals():
    """Block SIGTERM/SIGINT while cleaning up (returns the old mask)."""
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})


def unblock_signals(old):
    signal.pthread_sigmask(signal.SIG_SETMASK, old)
