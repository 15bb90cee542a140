"""Where a directory's files really go: filesystem, mount options, and the disk under them.

storage_facts(path) asks findmnt which mount holds the path, follows a loop device to its
backing file's own filesystem, a partition to its disk and a device-mapper device to what it
is built on, and reads the disk's queue settings from sysfs (`sys_root` is a fake tree in tests).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

from shootout.execution.fsread import read_int, read_text, under

RAM_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "devtmpfs"})


def mount_of(path: Path) -> dict[str, str] | None:
    """{"target", "source", "fstype", "options"} of the mount holding path, or None."""
    try:
        done = subprocess.run(["findmnt", "-J", "-T", str(path), "-o", "TARGET,SOURCE,FSTYPE,OPTIONS"],
                              capture_output=True, text=True, timeout=10)
        found = json.loads(done.stdout)["filesystems"][0] if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError):
        return None
    return {k: str(found.get(k) or "") for k in ("target", "source", "fstype", "options")} if found else None


def kernel_name(device: str) -> str | None:
    """/dev/vda1 -> vda1 (from the device number, so udev symlinks and mapper names work too)."""
    try:
        st = os.stat(device.split("[", 1)[0])  # btrfs shows /dev/vda1[/subvolume]
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    link = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    return link.resolve().name if link.exists() else None


def disk_of(name: str, sys_root: Path = Path("/")) -> str:
    """The whole disk a block device lives on: vda1 -> vda, dm-0 -> what it is built on."""
    for _ in range(8):  # dm over dm over a partition is as deep as it gets
        block = under(sys_root, f"/sys/class/block/{name}")
        slaves = sorted(p.name for p in (block / "slaves").iterdir()) if (block / "slaves").is_dir() else []
        if slaves:
            name = slaves[0]
        elif (block / "partition").exists():
            name = block.resolve().parent.name
        else:
            return name
    return name


def discard_max_bytes(name: str, sys_root: Path = Path("/")) -> int | None:
    """The most one discard (TRIM) of block device `name` may cover, 0 when it takes none, None
    when unknown. A partition has no queue of its own: its disk's counts. A loop device offers
    discard when its backing file's filesystem can punch holes; a device-mapper device when its
    target passes discards on (dm-crypt only with allow_discards)."""
    block = under(sys_root, f"/sys/class/block/{name}")
    if (block / "partition").exists():
        name = block.resolve().parent.name
    return read_int(sys_root, f"/sys/class/block/{name}/queue/discard_max_bytes")


def _transport(disk: str, sys_root: Path) -> str | None:
    """usb, nvme, sd, mmc, virtio, sata, scsi, loop, zram, from where the kernel put the device."""
    for prefix in ("loop", "zram", "nbd"):
        if disk.startswith(prefix):
            return prefix
    if disk.startswith("mmcblk"):
        kind = read_text(sys_root, f"/sys/class/block/{disk}/device/type")
        return "sd" if kind == "SD" else "mmc"
    where = str(under(sys_root, f"/sys/class/block/{disk}").resolve())
    for marker, name in (("/usb", "usb"), ("/nvme", "nvme"), ("/virtio", "virtio"), ("/ata", "sata"), ("/host", "scsi")):
        if marker in where:
            return name
    return None


def disk_facts(disk: str, sys_root: Path = Path("/")) -> dict[str, Any]:
    """Model, transport, rotational, scheduler, write cache and discard of a whole disk."""
    base = f"/sys/class/block/{disk}"
    vendor, model = (read_text(sys_root, f"{base}/device/{k}") for k in ("vendor", "model"))
    if model is None:  # SD and eMMC cards name themselves in device/name; virtio has a vendor id only
        model, vendor = read_text(sys_root, f"{base}/device/name"), None
    scheduler = read_text(sys_root, f"{base}/queue/scheduler")
    rotational = read_int(sys_root, f"{base}/queue/rotational")
    discard = discard_max_bytes(disk, sys_root)
    return {
        "disk": disk,
        "model": " ".join(filter(None, (vendor, model))) or None,
        "transport": _transport(disk, sys_root),
        "rotational": None if rotational is None else bool(rotational),
        "scheduler": scheduler.split("[", 1)[1].split("]", 1)[0] if scheduler and "[" in scheduler else scheduler,
        "write_cache": read_text(sys_root, f"{base}/queue/write_cache"),
        "discard": None if discard is None else discard > 0,
    }


def storage_facts(path: Path) -> dict[str, Any]:
    """Filesystem and mount options of path, and the device facts of the disk underneath."""
    mount = mount_of(path)
    if mount is None:
        return {"path": str(path), "filesystem": None}
    facts: dict[str, Any] = {"path": str(path), "filesystem": mount["fstype"], "mount_options": mount["options"],
                             "mount_point": mount["target"], "source": mount["source"]}
    name = kernel_name(mount["source"]) if mount["source"].startswith("/dev/") else None
    if name and name.startswith("loop"):
        backing = read_text(Path("/"), f"/sys/class/block/{name}/loop/backing_file")
        facts["loop"] = {"device": f"/dev/{name}", "backing_file": backing,
                         "autoclear": read_int(Path("/"), f"/sys/class/block/{name}/loop/autoclear") == 1,
                         "direct_io": read_int(Path("/"), f"/sys/class/block/{name}/loop/dio") == 1}
        if backing:
            under_file = storage_facts(Path(backing.removesuffix(" (deleted)")).parent)
            facts["loop"].update(filesystem=under_file.get("filesystem"), mount_options=under_file.get("mount_options"))
            facts["device"] = under_file.get("device")
        return facts
    facts["device"] = disk_facts(disk_of(name)) if name else None
    return facts
