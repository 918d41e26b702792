"""The files the store keeps beside a database (``pipeline.store``): the writers' lock
``.<db>.lock``, temporary copies ``.<db>.<pid>-<8 hex>.tmp`` (a write is built in one and
renamed into place), and the names both can take. Nothing here is a user's: a file
merely named like ours is never ours."""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
import time
import uuid
from pathlib import Path

from .procs import pid_alive

LOCK_WAIT_S = 600.0


class StoreError(Exception):
    """The target cannot be written; the message is one line naming it and why."""


# the longest name beside --db the lab writes: ``.<db>.<pid>-<8 hex>.tmp.wal``
_BESIDE = len(".." + "4194304-01234567.tmp.wal")
NAME_MAX = 255


def check_name(name: str, what: str) -> None:
    """``StoreError`` for a name DuckDB or the file system cannot take: bytes that are not
    UTF-8 (DuckDB opens paths as UTF-8), or a file name too long for the lock file and
    the temporary copies the lab writes beside it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise StoreError(f"{what} {shown}: the name is not UTF-8 text, which DuckDB cannot open; rename it") from None
    base = Path(name).name.encode()
    if len(base) + _BESIDE > NAME_MAX:
        raise StoreError(f"{what} {name[:60]}...: a file name of {len(base)} bytes; the lab writes its lock file and "
                         f"temporary copies beside it, so at most {NAME_MAX - _BESIDE} bytes")


@contextlib.contextmanager
def writer_lock(db: Path, wait_s: float = LOCK_WAIT_S):
    """Exclusive lock for writers of ``db`` (a lock file beside it, never removed)."""
    lock = db.with_name(f".{db.name}.lock")
    try:  # never through a link: the lock file is truncated and written below
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:
        what = "a symbolic link" if lock.is_symlink() else "a folder" if lock.is_dir() else None
        if what is None:
            raise  # the file system's fault (read-only, full): said by upsert
        raise StoreError(f"{db}: its lock file {lock.name} is {what}, not a lock file of ours: remove it (or choose "
                         "another --db); nothing written") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            print(f"{db}: waiting for another writer (pid {holder}) to finish...", file=sys.stderr)
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise StoreError(f"{db}: another writer (pid {holder}) held it for {wait_s:.0f} s; "
                                         "nothing written") from None
                    time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


# what ``new_temp`` names (and DuckDB's log beside it): ``.<db>.<pid>-<8 hex>.tmp[.wal]``
_TEMP = re.compile(r"\.\d+-[0-9a-f]{8}\.tmp(\.wal)?")


def _temp_names(db: Path) -> list[Path]:
    """Our temporary copies of ``db``: files named exactly as ``new_temp`` names them (a
    user's ``.lab.duckdb.backup.tmp``, a folder or a link of such a name is not ours)."""
    return [f for f in sorted(db.parent.glob(f".{db.name}.*.tmp*"))
            if _TEMP.fullmatch(f.name[len(db.name) + 1:]) and f.is_file() and not f.is_symlink()]


def _temp_pid(tmp: Path, db: Path) -> int | None:
    """The writer's pid in a temporary file's name (``.<db>.<pid>-<hex>.tmp``)."""
    head = tmp.name[len(db.name) + 2:].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def clean_stale_temps(db: Path) -> None:
    """Under the writer lock, a temporary file is a killed writer's, unless its writer
    is alive: that one is a copy ``prepare`` is building ahead of taking the lock."""
    for f in _temp_names(db):
        pid = _temp_pid(f, db)
        if pid is not None and pid_alive(pid):
            continue
        try:
            f.unlink()
            print(f"{db}: removed {f.name}, left by an interrupted write", file=sys.stderr)
        except FileNotFoundError:
            pass


def new_temp(real: Path) -> Path:
    return real.with_name(f".{real.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")


def remove_temp(tmp: Path) -> None:
    for f in (tmp, Path(f"{tmp}.wal")):
        f.unlink(missing_ok=True)
