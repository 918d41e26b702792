"""Whether a process still lives: the writers of temporary files (a store's copies, a
spill's folders) name their pid, and what a dead writer left is removed; and what a
file system says when it, not the data, stops such a write. Its own module so the
spill (below the tables) and the store (above them) share it."""
from __future__ import annotations

import os

# an OSError's (or DuckDB's) words when the file system refuses a write: the machine's
# problem, said in one line, never an internal error
FS_FAULTS = ("No space left on device", "Read-only file system", "Permission denied", "Disk quota exceeded")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
