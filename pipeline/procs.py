"""Whether a process still lives: the writers of temporary files (a store's copies, a
spill's folders) name their pid, and what a dead writer left is removed; what a file
system says when it, not the data, stops such a write; and the faults of the machine,
not of an input, that stop a call. Its own module so the spill and the decoders (below
the tables) and the store and the command line (above them) share it."""
from __future__ import annotations

import os
import signal
import threading

# an OSError's (or DuckDB's) words when the file system refuses a write: the machine's
# problem, said in one line, never an internal error
FS_FAULTS = ("No space left on device", "Read-only file system", "Permission denied", "Disk quota exceeded")


class MachineFault(RuntimeError):
    """The machine's problem, not the input's (a decoder that cannot run, a spill folder
    that cannot take a piece): the tables re-raise it past their per-input catch-all, and
    the command line stops with its message in one line, exit 2, nothing of the call stored."""


# Set by the command line's SIGINT handler (``catch_interrupts``). A Ctrl-C that lands in a
# native call (DuckDB, polars, the decoder) may come back as an ordinary exception (DuckDB's
# InterruptException) that a per-input catch-all took for a bad file: the analysis ran on,
# stored its tables and exited 0. The catch-alls and the store ask this flag instead.
_INTERRUPTED = threading.Event()


def catch_interrupts() -> None:
    """SIGINT raises KeyboardInterrupt, as Python's own handler does, and is remembered
    (``stop_if_interrupted``). The main thread's call, before any work."""
    def on_sigint(signum, frame):
        _INTERRUPTED.set()
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():  # (signals go to the main thread only)
        signal.signal(signal.SIGINT, on_sigint)


def stop_if_interrupted() -> None:
    """Raise KeyboardInterrupt when a Ctrl-C came, whatever became of its exception."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
