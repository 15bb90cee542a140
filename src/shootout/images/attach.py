"""A root attached read-only, with a writable overlay on top, every step through the journal.

The image (or device) is reached only through a read-only loop device, so the kernel itself
refuses any write to it; the filesystem is mounted read-only without replaying its journal
(which would write). What a run writes (apt's installs, a workload's inputs) goes to the
overlay's upper directory in shootout's data directory, removed with the overlay. After a
kill, the mounts go with the process's mount namespace and the journal detaches the loop
device and removes the directory (`shootout doctor`, or the next run).
"""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.tools import CLEAN_PATH
from shootout.images.layout import Partition
from shootout.images.unpack import images_dir
from shootout.system.journal import Journal
from shootout.system.mounts import mount

# read-only without touching the device: no journal replay (ext4, xfs) or log replay (btrfs)
READ_ONLY = {"ext4": "ro,noload", "ext3": "ro,noload", "ext2": "ro", "btrfs": "ro,rescue=nologreplay",
             "xfs": "ro,norecovery", "f2fs": "ro,norecovery"}
_overlays = itertools.count(1)


def loop_readonly(journal: Journal, backing: Path, part: Partition | None, entries: list[int]) -> str:
    """A read-only loop device on the file or device (the partition's bytes only); its path.
    The journal entries of this and the functions below go to `entries`, for their undo."""
    window = ["--offset", str(part.offset), "--sizelimit", str(part.size)] if part and part.number else []
    attached: list[str] = []

    def attach() -> None:
        done = subprocess.run(["losetup", "--find", "--show", "--read-only", *window, str(backing)], check=False,
                              capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": CLEAN_PATH})
        if done.returncode != 0 or not done.stdout.strip().startswith("/dev/"):
            raise TargetError(f"cannot attach a loop device to {backing}: {done.stderr.strip() or done.returncode}",
                              "free a loop device (losetup -l) or load the loop module")
        attached.append(done.stdout.strip())

    entries.append(journal.change(f"attach a read-only loop device to {backing}", {"detach_loops": str(backing)},
                                  attach))
    return attached[0]


def mount_readonly(journal: Journal, device: str, fstype: str, point: Path, entries: list[int]) -> None:
    options = READ_ONLY.get(fstype, "ro")
    entries.append(mount(journal, f"mount {device} ({fstype}) read-only at {point}",
                         ["mount", "--make-private", "-t", fstype, "-o", options, device, str(point)], point))


def overlay_dir(journal: Journal, name: str, entries: list[int]) -> Path:
    """A fresh directory of this process for one overlay: lower/, upper/, work/ and root/."""
    base = images_dir() / ".overlays"
    base.mkdir(exist_ok=True)
    path = base / f"{name}-{os.getpid()}-{next(_overlays)}"
    # --one-file-system: never into the image's mount, should its unmount have failed
    undo = {"argv": ["rm", "-rf", "--one-file-system", "--", str(path)]}

    def make() -> None:
        for sub in ("lower", "upper", "work", "root"):
            (path / sub).mkdir(parents=True)

    entries.append(journal.change(f"create the overlay directory {path}", undo, make))
    return path


def mount_overlay(journal: Journal, lower: Path, directory: Path, entries: list[int]) -> Path:
    """The writable view: lower read-only below, directory/upper above; mounted at directory/root."""
    point = directory / "root"
    options = f"lowerdir={lower},upperdir={directory / 'upper'},workdir={directory / 'work'}"
    try:
        entries.append(mount(journal, f"mount an overlay on {lower} at {point}",
                             ["mount", "--make-private", "-t", "overlay", "-o", options, "shootout-overlay", str(point)],
                             point))
    except TargetError as exc:
        raise TargetError(f"{exc.message} (its upper directory is in {directory.parent})",
                          "keep shootout's data directory (SHOOTOUT_HOME) on ext4, xfs, btrfs or tmpfs") from None
    return point
