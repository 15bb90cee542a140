"""Machine-wide locks: what one shootout process at a time may change on a machine.

Two runs at once, even from different SHOOTOUT_HOMEs, must not both reserve CPUs (each would
move the other's trials off the CPUs it pins them to, and their `taskset` would fail), nor both
switch swap areas and zswap (system/cpureserve.py, swap/swaps.py).

A lock is an flock on a file under /run/lock, kept by an open descriptor, so the kernel releases
it when its process dies, SIGKILL included. The file holds its holder's pid and change journal
while held; the holder deletes it before letting go. A file that is there when a lock is taken
was left by a killed holder, whose journal the new holder undoes first (system/cpureserve.py).
Taking a lock is a journaled change (Journal.take_lock); a journal replayed after a kill deletes
the file its killed holder left, and lets go of no live process's lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

LOCKS = Path("/run/lock") if Path("/run/lock").is_dir() else Path("/run")

_held: dict[Path, tuple[int, str]] = {}  # file: (descriptor, journal), the locks this process holds


@dataclass(frozen=True)
class Holder:
    pid: int
    journal: str  # its change journal's file


def _read(fd: int) -> Holder | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode(errors="replace")
    try:
        found = json.loads(text)
        return Holder(int(found["pid"]), str(found["journal"]))
    except (ValueError, KeyError, TypeError):
        return None  # empty: a holder killed between creating and writing it


def lock_file(name: str, locks: Path = LOCKS) -> Path:
    return locks / f"shootout-{name}.lock"


def take(path: Path, me: Holder, wait_s: float = 0.0) -> tuple[bool, Holder | None]:
    """(True, a killed holder's record or None) when taken; (False, the holder, if known) when
    another process still holds it after wait_s."""
    deadline = time.monotonic() + wait_s
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                return False, holder
            time.sleep(0.2)
            continue
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # its holder deleted it between our open and our lock: try the new one
    left = _read(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({"pid": me.pid, "journal": me.journal}).encode(), 0)
    _held[path] = (fd, me.journal)
    return True, left


def release(path: Path, journal: str) -> None:
    """Let go of the lock the holder with this journal took, deleting its file first so none is
    left. Replaying a killed holder's journal: delete its file if no one holds the lock (this
    process may, having just taken it from the killed one)."""
    mine = _held.get(path)
    if mine is not None and mine[1] == journal:
        del _held[path]
        fd: int | None = mine[0]
    else:
        fd = _unheld(path)
    if fd is not None:
        path.unlink(missing_ok=True)
        os.close(fd)


def _unheld(path: Path) -> int | None:
    """A descriptor holding the lock of a file no process holds (its holder was killed); None
    when a live process holds it, or the file is gone."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino == os.stat(path).st_ino:
            return fd
    except (BlockingIOError, FileNotFoundError):
        pass
    os.close(fd)  # held, or replaced meanwhile: not ours to delete
    return None
