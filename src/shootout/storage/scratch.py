"""Scratch storage: where disk-touching workloads of a configuration put their files.

Three kinds, from the configuration's `scratch` (read as a ScratchSpec: storage/scratchspec.py):
  none                     a fresh directory under /var/tmp
  {"dir": PATH}            a fresh directory inside PATH, the device under test
  {"fs": "btrfs", ...}     a filesystem shootout makes in a file in the directory `in`,
                           mounted through a loop device of its own; never a raw block device
The loop device is attached without autoclear, so it stays attached to the run's file until
its journal entry detaches it, also after a kill frees the run's mount namespace (and with it
the mount): a throttle rule on the device's number (parts.throttle) is lifted first, never left
on a number that the next `losetup` hands to someone else.
Everything made goes through the change journal and is undone by close(), at the end of the
run, or by `shootout doctor` after a kill.

One owner per area: a Scratch holds one configuration's area for one run. The run makes one
per configuration (Scratches: an A/A copy shares its original's) and hands it explicitly to the
target, which opens the area when a workload first asks for scratch("disk") (so CPU-only runs
never make one), and to the parts that trim, throttle and describe it; the run closes it once,
after the targets (which unmount what they bound of it) and the parts. A target used outside a
run makes an owner of its own and closes it itself.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.base.errors import TargetError, ToolMissing
from shootout.base.model import Config, aa_original
from shootout.execution.tools import CLEAN_PATH, find_tool
from shootout.storage.blockdev import RAM_FILESYSTEMS, mount_of, storage_facts
from shootout.storage.scratchspec import DEFAULT, ScratchSpec, scratch_spec
from shootout.system.journal import Journal
from shootout.system.mounts import make_dir, mount

# Filesystem -> (mkfs command with its quiet/force flags, Debian package).
MKFS: dict[str, tuple[tuple[str, ...], str]] = {
    "ext4": (("mkfs.ext4", "-q", "-F"), "e2fsprogs"),
    "ext3": (("mkfs.ext3", "-q", "-F"), "e2fsprogs"),
    "ext2": (("mkfs.ext2", "-q", "-F"), "e2fsprogs"),
    "btrfs": (("mkfs.btrfs", "-q", "-f"), "btrfs-progs"),
    "xfs": (("mkfs.xfs", "-q", "-f"), "xfsprogs"),
    "f2fs": (("mkfs.f2fs", "-q", "-f"), "f2fs-tools"),
}

_names = itertools.count(1)  # unique names of what this process makes


@dataclass
class ScratchArea:
    host_path: Path  # a directory on the host (in shootout's mount namespace), fresh for this run
    facts: dict[str, Any]  # filesystem, mount options, and the device under it (see blockdev)
    journal: Journal
    entries: list[int] = field(default_factory=list)  # journal entries, oldest first
    close_errors: list[str] = field(default_factory=list)

    def close(self) -> list[str]:
        """Unmount and remove what was made, newest first; returns what could not be undone."""
        for entry in reversed(self.entries):
            self.close_errors += self.journal.undo_entry(entry)
        self.entries = []
        return self.close_errors


def ram_backed(path: Path) -> str | None:
    """The RAM filesystem (tmpfs, ramfs) or RAM disk (zram) holding path, or None."""
    found = mount_of(path)
    if found is None:
        return None
    if found["fstype"] in RAM_FILESYSTEMS:
        return found["fstype"]
    return "zram" if found["source"].startswith("/dev/zram") else None


def kernel_has(fs: str) -> bool:
    known = Path("/proc/filesystems").read_text().split()
    modules = Path("/lib/modules") / os.uname().release / "kernel/fs" / fs
    return fs in known or any(modules.glob(f"{fs}.ko*"))


def _directory_problem(path: Path, what: str) -> str | None:
    if not path.is_dir():
        return f"{what} {path} does not exist" if not path.exists() else f"{what} {path} is not a directory"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{what} {path} is not writable"
    if ram := ram_backed(path):
        return f"{what} {path} is on {ram}: a disk workload there measures RAM, not a disk"
    return None


def scratch_problem(spec: ScratchSpec) -> str | None:
    """Why this scratch cannot be made here, in one line (nothing is changed to find out)."""
    if spec.dir is not None:
        return _directory_problem(spec.dir, "scratch directory")
    fs, base, size = spec.fs, spec.within, spec.size
    if problem := _directory_problem(base, "scratch file directory"):
        return problem
    if os.geteuid() != 0:
        return f"a {fs} scratch in a file needs root (to mount it)"
    command, package = MKFS[fs]
    if find_tool(command[0]) is None:
        return str(ToolMissing(command[0], package))
    if not kernel_has(fs):
        return f"this kernel has no {fs} (not in /proc/filesystems, no module)"
    free = shutil.disk_usage(base).free
    if size > free:
        return f"scratch size {size / 2**30:.2f} GiB is more than the {free / 2**30:.2f} GiB free in {base}"
    return None


def _tag() -> str:
    return f"shootout-scratch-{os.getpid()}-{next(_names)}"


def _fresh_dir(journal: Journal, parent: Path, entries: list[int]) -> Path:
    path = parent / _tag()
    # rm --one-file-system: never into a mount someone made inside it.
    undo = {"argv": ["rm", "-rf", "--one-file-system", "--", str(path)]}
    entries.append(journal.change(f"create scratch directory {path}", undo, lambda: path.mkdir(mode=0o755)))
    return path


def _allocate(image: Path, size: int) -> None:
    with open(image, "xb") as fh:  # never an existing file
        os.posix_fallocate(fh.fileno(), 0, size)  # the space is really there, not a sparse promise


def _file_fs(spec: ScratchSpec, journal: Journal, entries: list[int]) -> Path:
    """A filesystem in a file, loop-mounted: image, mkfs, mount point, mount."""
    fs, base, size = spec.fs, spec.within, spec.size
    tag = _tag()
    image, point = base / f"{tag}.img", base / tag
    undo = [{"detach_loops": str(image)}, {"remove": str(image)}]
    try:
        entries.append(journal.change(f"create scratch file {image}", undo, lambda: _allocate(image, size)))
    except OSError as exc:
        raise TargetError(f"cannot create scratch file {image}: {exc.strerror or exc}",
                          "free some space or choose another directory with in = ...") from None
    command, package = MKFS[fs]
    try:
        subprocess.run([*command, str(image)], check=True, capture_output=True, text=True,
                       env={**os.environ, "PATH": CLEAN_PATH})
    except FileNotFoundError:
        raise ToolMissing(command[0], package) from None
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or exc.stdout or "").strip().splitlines()[-1:] or [f"exit {exc.returncode}"]
        raise TargetError(f"{command[0]} failed on {image}: {last[0]}", "check the scratch size and filesystem") from None
    device = _attach_loop(journal, image, entries)
    entries.append(make_dir(journal, point))
    options = ["-o", spec.mount] if spec.mount else []
    entries.append(mount(journal, f"mount the {fs} scratch at {point}",
                         ["mount", "--make-private", "-t", fs, *options, device, str(point)], point))
    _direct_loop(point)
    return point


def _attach_loop(journal: Journal, image: Path, entries: list[int]) -> str:
    """A loop device on image (no autoclear: see the module's docstring); its path."""
    attached: list[str] = []

    def attach() -> None:
        done = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PATH": CLEAN_PATH})
        if done.returncode != 0 or not done.stdout.strip().startswith("/dev/"):
            raise TargetError(f"cannot attach a loop device to {image}: {done.stderr.strip() or done.returncode}",
                              "free a loop device (losetup -l) or load the loop module")
        attached.append(done.stdout.strip())

    entries.append(journal.change(f"attach a loop device to {image}", {"detach_loops": str(image)}, attach))
    return attached[0]


def _direct_loop(point: Path) -> None:
    """Let the loop device read and write its file with O_DIRECT, so the scratch's I/O reaches the
    disk under it instead of the page cache of the backing file (random 4 KiB direct reads of a
    loop ext4 here: 23,000 IOPS from that cache, 300-700 from the disk). Best effort: a backing
    filesystem without O_DIRECT keeps the flag off, and the facts record which (loop.direct_io).
    The flag goes with the loop device."""
    source = (mount_of(point) or {}).get("source", "")
    if source.startswith("/dev/loop"):
        subprocess.run(["losetup", "--direct-io=on", source], capture_output=True, timeout=30,
                       env={**os.environ, "PATH": CLEAN_PATH})


def _make(name: str, spec: ScratchSpec, journal: Journal) -> ScratchArea:
    """Make the area `spec` asks for, through the journal; on failure nothing is left."""
    if problem := scratch_problem(spec):
        raise TargetError(f"configuration {name}: {problem}", "fix scratch = ... in shootout.toml")
    entries: list[int] = []
    try:
        path = _fresh_dir(journal, spec.dir, entries) if spec.dir is not None else _file_fs(spec, journal, entries)
    except BaseException:
        for entry in reversed(entries):
            journal.undo_entry(entry)
        raise
    described = {k: v for k, v in spec.data().items() if k != "dir"}
    facts = {"kind": "file" if spec.in_file else "directory", **described, **storage_facts(path)}
    return ScratchArea(path, facts, journal, entries)


class Scratch:
    """The owner of one configuration's scratch area in one run (see the module's docstring):
    the target and the parts reach the area through this object, handed to each."""

    def __init__(self, config: Config, journal: Journal) -> None:
        self.name = config.name
        self.spec = scratch_spec(config)  # None: the configuration names none (DEFAULT is made)
        self.journal = journal
        self._area: ScratchArea | None = None
        self._lock = threading.Lock()  # lanes of one run may ask for the area at once

    @property
    def area(self) -> ScratchArea | None:
        """The area, once open() made it (and until close())."""
        return self._area

    def open(self) -> ScratchArea:
        """The area, made on the first call; the same one after."""
        with self._lock:
            if self._area is None:
                self._area = _make(self.name, self.spec or DEFAULT, self.journal)
            return self._area

    def close(self) -> list[str]:
        """Undo the area (what others added to its entries first); returns what could not be undone."""
        with self._lock:
            area, self._area = self._area, None
        return area.close() if area is not None else []


class Scratches:
    """The scratch owners of one run, by configuration name: one per configuration, except that
    an A/A copy uses its original's area (as it uses its original's target)."""

    def __init__(self, configs: Sequence[Config], journal: Journal) -> None:
        by_name = {c.name: c for c in configs}
        made: dict[str, Scratch] = {}
        self._owners: dict[str, Scratch] = {}
        for config in configs:
            source = by_name.get(aa_original(config.name), config)
            if source.name not in made:
                made[source.name] = Scratch(source, journal)
            self._owners[config.name] = made[source.name]

    def of(self, config: Config) -> Scratch:
        """The owner of the configuration's area (KeyError for a configuration not of this run)."""
        return self._owners[config.name]

    def owners(self) -> list[Scratch]:
        """Each owner once, in the order of the configurations."""
        return list({id(s): s for s in self._owners.values()}.values())

    def close(self) -> list[str]:
        """Close every area, newest configuration first; returns what could not be undone."""
        return [error for owner in reversed(self.owners()) for error in owner.close()]
