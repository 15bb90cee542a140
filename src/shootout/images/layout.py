"""Where the root is in a disk image (or a whole disk): its partition table read with sfdisk,
each partition's filesystem with blkid, a Raspberry Pi boot partition's cmdline.txt with mtools.

The root is the partition cmdline.txt's root= names (PARTUUID=, UUID=, LABEL= or a device
name), as the firmware and the kernel would boot it; without one, the Linux filesystems are
candidates in table order and the caller keeps the first that holds /etc/os-release. A file or
device without a partition table is a filesystem of its own (a partition given directly).
Everything here only reads.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from shootout.base.errors import TargetError, ToolMissing
from shootout.execution.tools import CLEAN_PATH

LINUX_FS = ("ext4", "ext3", "ext2", "btrfs", "xfs", "f2fs")
BOOT_FS = ("vfat", "msdos")
_ENV = {**os.environ, "PATH": CLEAN_PATH, "MTOOLS_SKIP_CHECK": "1", "LC_ALL": "C"}


@dataclass(frozen=True)
class Partition:
    number: int | None  # None: the whole file or device is one filesystem
    offset: int  # bytes
    size: int  # bytes
    fstype: str | None  # as blkid names it; None when it finds none
    partuuid: str | None = None
    uuid: str | None = None
    label: str | None = None

    def describe(self) -> str:
        where = f"partition {self.number}" if self.number is not None else "the whole image"
        return f"{where} ({self.fstype or 'no filesystem'})"


def _run(argv: list[str], package: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=_ENV, timeout=120, check=False)
    except FileNotFoundError:
        raise ToolMissing(argv[0], package) from None


def size_of(path: Path) -> int:
    """Bytes of a file or a block device (read-only open: a device has no useful st_size)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def _probe(path: Path, offset: int, size: int) -> dict[str, str]:
    """blkid's low-level probe of a region: TYPE, UUID, LABEL where found."""
    done = _run(["blkid", "-p", "-O", str(offset), "-S", str(size), "-o", "export", str(path)], "util-linux")
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def partitions(path: Path) -> list[Partition]:
    """The partitions of an image or disk, each with its filesystem; one for a bare filesystem."""
    done = _run(["sfdisk", "--json", str(path)], "fdisk")
    if done.returncode != 0 or not done.stdout.strip():
        whole = size_of(path)
        found = _probe(path, 0, whole)
        return [Partition(None, 0, whole, found.get("TYPE"), None, found.get("UUID"), found.get("LABEL"))]
    table = json.loads(done.stdout)["partitiontable"]
    sector = int(table.get("sectorsize", 512))
    disk_id = str(table.get("id", "")).lower().removeprefix("0x")
    out = []
    for entry in table.get("partitions", []):
        number = int(re.search(r"(\d+)$", entry["node"]).group(1))  # type: ignore[union-attr]
        offset, size = int(entry["start"]) * sector, int(entry["size"]) * sector
        # an MBR partition's PARTUUID is the disk signature and its number in hex (as the kernel makes it)
        partuuid = entry.get("uuid") or (f"{int(disk_id, 16):08x}-{number:02x}" if disk_id else None)
        found = _probe(path, offset, size)
        out.append(Partition(number, offset, size, found.get("TYPE"), str(partuuid).lower() if partuuid else None,
                             found.get("UUID"), found.get("LABEL")))
    return out


def boot_cmdline(path: Path, part: Partition) -> str | None:
    """cmdline.txt of a FAT boot partition (a Raspberry Pi's), None where it has none."""
    if part.fstype not in BOOT_FS:
        return None
    done = _run(["mtype", "-i", f"{path}@@{part.offset}", "::cmdline.txt"], "mtools")
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def root_argument(cmdline: str) -> str | None:
    """The value of the kernel command line's root= (the last one wins, as in the kernel)."""
    found = [word.split("=", 1)[1] for word in cmdline.split() if word.startswith("root=")]
    return found[-1] if found else None


def named_root(parts: list[Partition], root: str) -> Partition | None:
    """The partition a root= value names."""
    key, _, value = root.partition("=")
    value = value.lower()
    for part in parts:
        if key == "PARTUUID" and part.partuuid == value:
            return part
        if key == "UUID" and (part.uuid or "").lower() == value:
            return part
        if key == "LABEL" and (part.label or "").lower() == value:
            return part
    if root.startswith("/dev/") and (m := re.search(r"(\d+)$", root)):
        return next((p for p in parts if p.number == int(m.group(1))), None)
    return None


def candidates(path: Path) -> tuple[list[Partition], str, list[Partition]]:
    """The root candidates in the order to try, how they were chosen, and every partition.

    cmdline.txt's root= first (alone, when it names a partition of this image); else the
    Linux filesystems. TargetError when there is none."""
    parts = partitions(path)
    if not parts or all(p.fstype is None for p in parts):
        raise TargetError(f"{path}: no partition table and no filesystem found",
                          "give a disk image (.img, .img.xz, .img.zst, .img.gz) or a root partition")
    for part in parts:
        if (cmdline := boot_cmdline(path, part)) and (root := root_argument(cmdline)):
            if (named := named_root(parts, root)) is not None:
                if named.fstype not in LINUX_FS:
                    raise TargetError(f"{path}: cmdline.txt's root={root} is {named.describe()}, not a Linux "
                                      "filesystem", "give an image of an installed Linux system")
                return [named], f"cmdline.txt's root={root}", parts
    linux = [p for p in parts if p.fstype in LINUX_FS]
    if not linux:
        found = ", ".join(p.describe() for p in parts)
        raise TargetError(f"{path}: no Linux root filesystem in it (found {found})",
                          "give an image of an installed Linux system, whose root is "
                          f"{', '.join(LINUX_FS)}")
    return linux, "the Linux filesystem holding /etc/os-release", parts
