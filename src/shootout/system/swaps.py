"""Swap areas in use (/proc/swaps), and turning shootout's own on and off through the journal.

shootout's swap areas run at one priority of their own, above anything a distribution sets
up (swapon's default is negative, systemd and zram-tools use up to 100), so that while one is
active the workload's pages go there first. The machine's own swap areas are never touched;
they are read and recorded as a fact.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from shootout.conditions.fsread import unescape
from shootout.errors import TargetError
from shootout.system.journal import Journal

LOCK = Path("/run/lock/shootout-swap.lock")
LOCK_WAIT_S = 120.0
PRIORITY = 31000  # shootout's own swap priority (the kernel allows up to 32767)
TOOLS = {"mkswap": "util-linux", "swapon": "mount", "swapoff": "mount"}


@dataclass(frozen=True)
class SwapArea:
    path: str
    kind: str  # "file" | "partition"
    size_kib: int
    used_kib: int
    priority: int

    def as_fact(self) -> dict[str, object]:
        return asdict(self)


def areas(proc_swaps: Path = Path("/proc/swaps")) -> list[SwapArea]:
    """Every swap area the kernel has in use."""
    found = []
    for line in proc_swaps.read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 5:
            found.append(SwapArea(unescape(fields[0]), fields[1], int(fields[2]), int(fields[3]), int(fields[4])))
    return found


def active(path: str) -> SwapArea | None:
    return next((a for a in areas() if a.path == path), None)


def missing_tool() -> str | None:
    """'mkswap is missing (install ...)' for the first swap tool not installed; None if all are."""
    for tool, package in TOOLS.items():
        if shutil.which(tool) is None and shutil.which(tool, path="/usr/sbin:/sbin") is None:
            return f"{tool} is not installed (install the Debian package {package})"
    return None


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise TargetError(f"{what}: {detail}", "see dmesg for the kernel's reason")


def mkswap(path: str) -> None:
    """Write a swap signature into a file or zram device shootout created (never a disk)."""
    _run(["mkswap", "--quiet", path], f"mkswap {path}")


def swapoff_undo(path: str) -> dict[str, object]:
    # Only if still active: replayed after a kill, the area may be gone already.
    script = 'if awk -v p="$1" \'NR > 1 && $1 == p { f = 1 } END { exit !f }\' /proc/swaps; then swapoff -- "$1"; fi'
    return {"argv": ["sh", "-c", script, "shootout-swapoff", path]}


def swapon(journal: Journal, path: str) -> int:
    """Activate a swap area at shootout's priority; the journal entry's undo turns it off."""
    undo = swapoff_undo(path)
    return journal.change(f"swapon {path}", undo,
                          lambda: _run(["swapon", "--priority", str(PRIORITY), "--", path], f"swapon {path}"))


class MachineLock:
    """zswap and swap areas are machine-wide, so one shootout process at a time switches them.

    An flock: the kernel drops it when the holder dies, so it needs no journal entry."""

    def __init__(self, path: Path = LOCK) -> None:
        self.path = path
        self._fh: IO[str] | None = None

    def acquire(self, wait_s: float = LOCK_WAIT_S) -> None:
        fh = open(self.path, "a+")
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    fh.seek(0)
                    holder = fh.read().strip() or "?"
                    fh.close()
                    raise TargetError(f"another shootout process (pid {holder}) is switching swap and zswap here",
                                      "wait for it to finish; zswap is global, two runs cannot share it") from None
                time.sleep(0.2)
        fh.truncate(0)
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()  # closing drops the flock
            self._fh = None
