"""Scratch storage specs, the checks made before a run, and device facts from a fake sysfs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from shootout.errors import UsageError
from shootout.parts.scratch import ScratchPart
from shootout.system.blockdev import disk_facts, disk_of, storage_facts
from shootout.system.scratch import scratch_problem

part = ScratchPart()


def test_a_directory_or_a_filesystem_in_a_file():
    assert part.parse({"scratch": "/mnt/usb/"}, "f") == {"dir": "/mnt/usb"}
    assert part.parse({"scratch": {"dir": "/mnt/usb"}}, "f") == {"dir": "/mnt/usb"}
    assert part.parse({"scratch": {"fs": "btrfs", "mount": "compress=zstd:3", "size": "4G", "in": "/srv"}}, "f") == {
        "fs": "btrfs", "mount": "compress=zstd:3", "size": 4 * 2**30, "in": "/srv"}
    assert part.parse({"scratch": {"fs": "ext4"}}, "f") == {"fs": "ext4", "mount": "", "size": 2 * 2**30, "in": "/var/tmp"}


@pytest.mark.parametrize("given, message", [
    ("relative/dir", "not an absolute path"),
    (3, "must be a directory or a table"),
    ({"fs": "zfs"}, "unknown filesystem 'zfs'"),
    ({"fs": "ext4", "size": "lots"}, "is not a size"),
    ({"fs": "ext4", "sise": "1G"}, "unknown key(s) sise"),
    ({"fs": "ext4", "mount": "loop,ro"}, "mount must be a string of mount options"),
    ({"dir": "/mnt", "fs": "ext4"}, "fs cannot go with dir"),
])
def test_bad_scratch_specs_are_one_line_usage_errors(given, message):
    with pytest.raises(UsageError) as err:
        part.parse({"scratch": given}, "shootout.toml: [[config]] #1")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_directory_problems(tmp_path):
    assert scratch_problem({"dir": str(tmp_path / "nope")}) == f"scratch directory {tmp_path / 'nope'} does not exist"
    (tmp_path / "file").write_text("")
    assert "is not a directory" in scratch_problem({"dir": str(tmp_path / "file")})
    assert scratch_problem({"dir": str(tmp_path)}) is None
    if Path("/dev/shm").is_dir():
        assert "is on tmpfs: a disk workload there measures RAM" in scratch_problem({"dir": "/dev/shm"})


def test_a_file_system_larger_than_the_free_space_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("this test needs root (CI runs as root)")
    free = shutil.disk_usage(tmp_path).free
    problem = scratch_problem({"fs": "ext4", "mount": "", "size": free + 2**30, "in": str(tmp_path)})
    assert problem is not None and "GiB free in" in problem
    assert scratch_problem({"fs": "ext4", "mount": "", "size": 2**20, "in": str(tmp_path)}) is None
    assert list(tmp_path.iterdir()) == []  # checking made nothing


def _sysfs(tmp_path: Path, links: dict[str, str], files: dict[str, str]) -> Path:
    """A fake /sys: class/block entries as symlinks into devices/, like the kernel's."""
    root = tmp_path / "root"
    for name, device_dir in links.items():
        real = root / "sys/devices" / device_dir
        real.mkdir(parents=True, exist_ok=True)
        (root / "sys/class/block").mkdir(parents=True, exist_ok=True)
        (root / "sys/class/block" / name).symlink_to(real)
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    return root


def test_partitions_and_device_mapper_lead_to_the_disk(tmp_path):
    root = _sysfs(tmp_path, {"sda": "pci0/usb2/2-1/host0/block/sda", "sda2": "pci0/usb2/2-1/host0/block/sda/sda2",
                             "dm-0": "virtual/block/dm-0"},
                  {"sys/devices/pci0/usb2/2-1/host0/block/sda/sda2/partition": "2",
                   "sys/devices/virtual/block/dm-0/slaves/sda2": ""})
    assert disk_of("sda2", root) == "sda"
    assert disk_of("dm-0", root) == "sda"
    assert disk_of("sda", root) == "sda"


@pytest.mark.parametrize("name, device_dir, files, expected", [
    ("sda", "pci0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda",
     {"device/vendor": "Samsung", "device/model": "PSSD T7", "queue/rotational": "0",
      "queue/scheduler": "none [mq-deadline] kyber", "queue/write_cache": "write back", "queue/discard_max_bytes": "0"},
     {"model": "Samsung PSSD T7", "transport": "usb", "rotational": False, "scheduler": "mq-deadline",
      "write_cache": "write back", "discard": False}),
    ("mmcblk0", "platform/emmc2bus/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0",
     {"device/name": "SC64G", "device/type": "SD", "queue/rotational": "0", "queue/discard_max_bytes": "4194304"},
     {"model": "SC64G", "transport": "sd", "rotational": False, "discard": True}),
    ("nvme0n1", "pci0/0000:01:00.0/nvme/nvme0/nvme0n1", {"device/model": "WD Blue SN570"},
     {"model": "WD Blue SN570", "transport": "nvme"}),
    ("vda", "pci0/0000:00:04.0/virtio1/block/vda", {"device/vendor": "0x1af4", "queue/rotational": "1"},
     {"model": None, "transport": "virtio", "rotational": True}),
])
def test_disk_facts_from_sysfs(tmp_path, name, device_dir, files, expected):
    root = _sysfs(tmp_path, {name: device_dir}, {f"sys/devices/{device_dir}/{k}": v for k, v in files.items()})
    found = disk_facts(name, root)
    assert {k: found[k] for k in expected} == expected


def test_storage_facts_of_this_machine_name_a_filesystem(tmp_path):
    found = storage_facts(tmp_path)
    assert found["filesystem"] and found["mount_options"]
    assert found["path"] == str(tmp_path)


def test_a_missing_mkfs_names_the_debian_package(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.fail("this test needs root (CI runs as root)")
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda cmd, **kw: None if cmd == "mkfs.btrfs" else real_which(cmd, **kw))
    problem = scratch_problem({"fs": "btrfs", "mount": "", "size": 2**20, "in": str(tmp_path)})
    assert problem == ("mkfs.btrfs is not installed on this machine "
                       "(install the Debian package btrfs-progs: apt-get install btrfs-progs)")
