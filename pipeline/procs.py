"""Whether a process still lives: the writers of temporary files (a store's copies, a
spill's folders) name their pid, and what a dead writer left is removed. Its own
module so the spill (below the tables) and the store (above them) share it."""
from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
