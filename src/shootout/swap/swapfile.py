"""A swap file on storage the user names: checked, created, removed through the journal.

Only a directory is accepted, never a device: shootout writes a file it creates and deletes
it afterwards. The directory must be on a filesystem that can hold swap and must be the same
directory for `shootout doctor` as for the run. A run may keep its mounts in a private mount
namespace (the filesystems shootout makes for a configuration's scratch); a swap file on one
of those could not be turned off from outside once the run is killed, and would keep the
filesystem alive until reboot. So the directory's filesystem must also be mounted, at the
same place, in the mount namespace shootout was started in (its parent's): that is where the
user runs `shootout doctor`. Swap files therefore belong in a directory on a host filesystem
(the configuration's `on`, or /var/tmp), not inside a scratch filesystem of the run.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from shootout.base.errors import TargetError, ToolMissing, UsageError
from shootout.execution.fsread import unescape
from shootout.execution.tools import find_tool
from shootout.swap import swaps
from shootout.system.journal import Journal

# Filesystems whose files the kernel can swap to (it needs bmap or a swap_activate hook).
CAN_HOLD_SWAP = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "vfat", "jfs"}
IN_MEMORY = {"tmpfs", "ramfs", "devtmpfs"}
FREE_MARGIN = 64 << 20  # leave this much free beside the file


@dataclass(frozen=True)
class Storage:
    directory: Path
    fstype: str
    mount: str
    source: str
    options: str

    def as_fact(self) -> dict[str, str]:
        return {"directory": str(self.directory), "filesystem": self.fstype, "mount": self.mount,
                "source": self.source, "options": self.options}


def storage(directory: Path) -> Storage:
    """The filesystem a directory is on (findmnt), or UsageError when it is no directory."""
    if not directory.is_dir():
        what = "a device" if directory.is_block_device() else "not a directory"
        raise UsageError(f"swap on {directory}: {what}",
                         "name a directory on a disk; shootout makes its swap file there (never on a raw device)")
    if find_tool("findmnt") is None:
        raise ToolMissing("findmnt", "util-linux")
    done = subprocess.run(["findmnt", "-J", "-T", str(directory), "-o", "FSTYPE,TARGET,SOURCE,OPTIONS"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TargetError(f"swap on {directory}: cannot find its filesystem", "check the path with findmnt -T")
    fs = json.loads(done.stdout)["filesystems"][0]
    return Storage(directory.resolve(), fs["fstype"], fs["target"], fs.get("source") or "", fs.get("options") or "")


def visible_outside(where: Storage, pid: int | None = None) -> bool:
    """Whether the directory's filesystem is mounted at the same place in the mount namespace
    shootout was started in (its parent's), where `shootout doctor` will run."""
    pid = pid or os.getppid()
    try:
        if os.readlink(f"/proc/{pid}/ns/mnt") == os.readlink("/proc/self/ns/mnt"):
            return True
        lines = Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
    except OSError:
        return True  # the parent is gone or hidden: nothing to compare with, so trust the path
    for line in lines:
        left, _, right = line.partition(" - ")
        fstype, source = (right.split() + ["", ""])[:2]
        if unescape(left.split()[4]) == where.mount and fstype == where.fstype and source == where.source:
            return True
    return False


def problem(where: Storage, size: int) -> str | None:
    """Why a swap file of `size` bytes cannot go into this directory, in one line; None if it can."""
    d = where.directory
    if where.fstype in IN_MEMORY:
        return (f"swap on {d}: {where.fstype} lives in memory, so swapping there would move pages from RAM to RAM "
                "(name a directory on a disk)")
    if where.fstype not in CAN_HOLD_SWAP:
        return (f"swap on {d}: a {where.fstype} filesystem cannot hold a swap file "
                f"(use one of {', '.join(sorted(CAN_HOLD_SWAP))})")
    if where.fstype == "btrfs" and find_tool("chattr") is None:
        return "swap on btrfs needs chattr to make the file nocow (install the Debian package e2fsprogs)"
    if not visible_outside(where):
        return (f"swap on {d}: {where.mount} is mounted only in this run's private mount namespace, so "
                "`shootout doctor` could not turn the swap off after a kill (name a directory on a host filesystem)")
    stat = os.statvfs(d)
    free = stat.f_bavail * stat.f_frsize
    if free < size + FREE_MARGIN:
        return f"swap on {d}: {size >> 20} MiB asked, {free >> 20} MiB free (free space or ask for less)"
    return None


def _allocate(path: Path, size: int) -> None:
    with open(path, "r+b") as fh:
        try:
            os.posix_fallocate(fh.fileno(), 0, size)
        except OSError:  # filesystems without fallocate (vfat): write the zeros
            block = bytes(1 << 20)
            for _ in range(size // len(block)):
                fh.write(block)
            fh.write(bytes(size % len(block)))
        fh.flush()
        os.fsync(fh.fileno())


@dataclass(frozen=True)
class SwapFile:
    path: str
    entry: int  # the journal entry that removes it


def create(journal: Journal, where: Storage, size: int, name: str) -> SwapFile:
    """A swap file of `size` bytes, formatted (not yet active); its removal is journalled first.

    On btrfs the file is made nocow while still empty (chattr +C), which the kernel requires
    and which also keeps it out of compression and snapshots."""
    if (reason := problem(where, size)) is not None:
        raise UsageError(reason)
    path = where.directory / name

    def make() -> None:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        if where.fstype == "btrfs":
            done = subprocess.run(["chattr", "+C", str(path)], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise TargetError(f"chattr +C {path}: {done.stderr.strip() or done.returncode}",
                                  "btrfs swap files must be nocow; is this really btrfs?")
        _allocate(path, size)

    try:
        entry = journal.change(f"create swap file {path}", {"remove": str(path)}, make)
    except OSError as exc:
        raise TargetError(f"cannot create swap file {path}: {exc.strerror or exc}", "run as root") from None
    try:
        swaps.mkswap(str(path))
    except BaseException:
        journal.undo_entry(entry)
        raise
    return SwapFile(str(path), entry)
