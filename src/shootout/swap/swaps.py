"""Swap areas in use (/proc/swaps), and turning shootout's own on and off through the journal.

shootout's swap areas run at one priority of their own, above anything a distribution sets
up (swapon's default is negative, systemd and zram-tools use up to 100), so that while one is
active the workload's pages go there first. The machine's own swap areas are never touched;
they are read and recorded as a fact.

/proc/swaps names an area by its path as the reader's mount namespace sees it. An area turned
on inside a run's private mount namespace (system.mountns) is, once that namespace is gone,
named relative to its filesystem's root: /dev/zram1 becomes /zram1, a swap file on a
filesystem mounted at /data becomes /shootout-swap-... So an area is matched by path *suffix*
at a component boundary (same_area), and its undo runs swapoff by the path shootout used,
which the kernel matches by inode whatever /proc/swaps shows.
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.fsread import unescape
from shootout.execution.tools import find_tool
from shootout.system import machinelock
from shootout.system.journal import Journal

LOCK = machinelock.lock_file("swap")
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


def same_area(shown: str, path: str) -> bool:
    """Whether /proc/swaps' name `shown` may be the area at `path` (see the module's note)."""
    shown = shown.removesuffix(" (deleted)")
    return shown == path or (shown.startswith("/") and path.endswith(shown))


def active(path: str) -> SwapArea | None:
    return next((a for a in areas() if same_area(a.path, path)), None)


def left_on() -> list[SwapArea]:
    """Areas at shootout's own priority: made by a shootout run (one holding LOCK, or a
    killed one whose undo has not happened yet)."""
    return [a for a in areas() if a.priority == PRIORITY]


def missing_tool() -> str | None:
    """'mkswap is missing (install ...)' for the first swap tool not installed; None if all are."""
    for tool, package in TOOLS.items():
        if find_tool(tool) is None:
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


# Listed in /proc/swaps under its path or a suffix of it (same_area, in awk).
_LISTED = ('awk -v p="$1" \'NR > 1 { s = $1; sub(/\\\\040\\(deleted\\)$/, "", s); '
           'if (s == p || (substr(s, 1, 1) == "/" && substr(p, length(p) - length(s) + 1) == s)) f = 1 } '
           'END { exit !f }\' /proc/swaps')
# swapoff whenever the path is there (the kernel knows best whether it is on); a failure only
# counts while the area is still listed, and an area still listed afterwards is an error.
_SWAPOFF = (f'if [ -e "$1" ]; then err=$(swapoff -- "$1" 2>&1) || {{ ! {_LISTED} || {{ echo "$err" >&2; exit 1; }}; }}; fi; '
            f'if {_LISTED}; then echo "$1 is still in use as swap (see /proc/swaps)" >&2; exit 1; fi')


def swapoff_undo(path: str) -> dict[str, object]:
    return {"argv": ["sh", "-c", _SWAPOFF, "shootout-swapoff", path]}


def swapon(journal: Journal, path: str) -> int:
    """Activate a swap area at shootout's priority; the journal entry's undo turns it off."""
    undo = swapoff_undo(path)
    return journal.change(f"swapon {path}", undo,
                          lambda: _run(["swapon", "--priority", str(PRIORITY), "--", path], f"swapon {path}"))


class MachineLock:
    """zswap and swap areas are machine-wide, so one shootout process at a time switches them
    (system/machinelock.py; the journal lets go of it, also after a kill)."""

    def __init__(self, journal: Journal, path: Path = LOCK) -> None:
        self.journal = journal
        self.path = path
        self._entry: int | None = None

    def acquire(self, wait_s: float = LOCK_WAIT_S) -> None:
        entry, holder = self.journal.take_lock("the machine's swap switching, this run's", self.path, wait_s)
        if entry is None:
            raise TargetError(f"another shootout process (pid {holder.pid if holder else '?'}) is switching swap "
                              "and zswap here", "wait for it to finish; zswap is global, two runs cannot share it")
        self._entry = entry

    def release(self) -> None:
        if self._entry is not None:
            self.journal.undo_entry(self._entry)
            self._entry = None
