"""Every process one command started, also those that left its process group.

A command runs in a process group of its own, but some programs start processes in
sessions of their own: Chromium (puppeteer starts it with setsid) and its crash handlers
(which double-fork and setsid again) outlive a kill of the command's group and are
re-parented to init, where nothing waits for them. So each command carries a marker in
its environment (MARKER=<this process's prefix>-<random token>), which children inherit;
the command's tree is every process in its group, every process with its marker, and every
process in the group of a marked one (Chromium's zygotes and renderers overwrite their
environment with their title, but stay in the browser's group). A command is over when its
tree is empty. The prefix names this shootout process: a run journals it, so that `shootout
doctor` ends what the commands of a killed run left running (end_marked).
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from collections.abc import Callable

MARKER = "SHOOTOUT_TREE"


_PREFIX = f"{os.getpid()}.{secrets.token_hex(4)}"


def run_prefix() -> str:
    """The prefix of every marker this process gives its commands."""
    return _PREFIX


def new_mark() -> str:
    """Of fixed length within a run: the environment's size must not differ between trials."""
    return f"{_PREFIX}-{secrets.token_hex(8)}"


def _stat(pid: str) -> tuple[str, int, int] | None:
    """(state, process group, start time in clock ticks after boot) of a process, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:  # (not pathlib: this runs after every command)
            text = fh.read()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2:].split()
    return fields[0].decode(), int(fields[2]), int(fields[19])


def _marked(pid: str, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return needle in b"\0" + fh.read()
    except OSError:  # gone, or not ours to read
        return False


class Tree:
    """The processes of one command: found by its marker and its process groups."""

    def __init__(self, needle: bytes, leader: int | None = None) -> None:
        """Processes whose environment holds needle; with a leader, its group's too and only
        processes younger than it."""
        self._needle = needle
        self.groups = {leader} if leader is not None else set()
        stat = _stat(str(leader)) if leader is not None else None  # an older process is not in its tree
        self._since = stat[2] if stat is not None else 0

    @classmethod
    def of_command(cls, mark: str, pid: int) -> Tree:
        """The tree of the command with this marker whose first process is pid (its group's leader)."""
        return cls(f"\0{MARKER}={mark}\0".encode(), pid)

    def members(self) -> list[int]:
        """Live (not zombie) processes of the tree; the groups of marked ones join the tree."""
        found = []
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            stat = _stat(pid)
            if stat is None or stat[0] in "ZX" or stat[2] < self._since:
                continue
            pgid = stat[1]
            if pgid in self.groups or _marked(pid, self._needle):
                self.groups.add(pgid)
                found.append(int(pid))
        return found

    def signal(self, sig: int = signal.SIGKILL) -> list[int]:
        """Send sig to every group and member of the tree (found first, while a group's
        leader still lives to name it); returns the members."""
        found = self.members()
        for pgid in self.groups:
            _quietly(os.killpg, pgid, sig)
        for pid in found:
            _quietly(os.kill, pid, sig)
        return found

    def end(self, timeout: float = 10.0) -> list[int]:
        """SIGKILL the tree until it is empty, waiting up to timeout (a process in
        uninterruptible sleep dies only when it wakes); returns what was still alive then."""
        deadline = time.monotonic() + timeout
        while (left := self.signal()) and time.monotonic() < deadline:
            time.sleep(0.01)
        return left


def _quietly(kill: Callable[[int, int], None], target: int, sig: int) -> None:
    try:
        kill(target, sig)
    except (ProcessLookupError, PermissionError):
        pass


def end_marked(prefix: str) -> list[int]:
    """End every process that a shootout process's commands left (the marker prefix it
    journalled) and their groups; what was still alive after the wait."""
    return Tree(f"\0{MARKER}={prefix}-".encode()).end()
