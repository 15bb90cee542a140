"""Scratch storage specs, the checks made before a run, device facts from a fake sysfs, and
the decision to trim a scratch between rounds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.parts.scratch import ScratchPart
from shootout.storage import trim
from shootout.storage.blockdev import (
    discard_max_bytes,
    disk_facts,
    disk_of,
    storage_facts,
)
from shootout.storage.scratch import scratch_problem
from shootout.storage.scratchspec import ScratchSpec
from shootout.storage.trim import ScratchTrim, parse_fstrim

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
    assert scratch_problem(ScratchSpec.of({"dir": str(tmp_path / "nope")})) == f"scratch directory {tmp_path / 'nope'} does not exist"
    (tmp_path / "file").write_text("")
    assert "is not a directory" in scratch_problem(ScratchSpec.of({"dir": str(tmp_path / "file")}))
    assert scratch_problem(ScratchSpec.of({"dir": str(tmp_path)})) is None
    if Path("/dev/shm").is_dir():
        assert "is on tmpfs: a disk workload there measures RAM" in scratch_problem(ScratchSpec.of({"dir": "/dev/shm"}))


def test_a_file_system_larger_than_the_free_space_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("this test needs root (CI runs as root)")
    free = shutil.disk_usage(tmp_path).free
    problem = scratch_problem(ScratchSpec.of({"fs": "ext4", "mount": "", "size": free + 2**30, "in": str(tmp_path)}))
    assert problem is not None and "GiB free in" in problem
    assert scratch_problem(ScratchSpec.of({"fs": "ext4", "mount": "", "size": 2**20, "in": str(tmp_path)})) is None
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
    problem = scratch_problem(ScratchSpec.of({"fs": "btrfs", "mount": "", "size": 2**20, "in": str(tmp_path)}))
    assert problem == ("mkfs.btrfs is not installed on this machine "
                       "(install the Debian package btrfs-progs: apt-get install btrfs-progs)")


def test_discard_is_read_from_the_queue_and_a_partition_has_its_disks(tmp_path):
    root = _sysfs(tmp_path, {"sdb": "pci0/ata1/host0/block/sdb", "sdb1": "pci0/ata1/host0/block/sdb/sdb1",
                             "loop3": "virtual/block/loop3", "mmcblk0": "platform/mmc0/block/mmcblk0"},
                  {"sys/devices/pci0/ata1/host0/block/sdb/queue/discard_max_bytes": "2147450880",
                   "sys/devices/pci0/ata1/host0/block/sdb/sdb1/partition": "1",
                   "sys/devices/virtual/block/loop3/queue/discard_max_bytes": "4294966784",
                   "sys/devices/platform/mmc0/block/mmcblk0/queue/discard_max_bytes": "0"})
    assert discard_max_bytes("sdb1", root) == 2147450880
    assert discard_max_bytes("loop3", root) == 4294966784  # its backing filesystem punches holes
    assert discard_max_bytes("mmcblk0", root) == 0
    assert discard_max_bytes("nvme0n1", root) is None


def test_only_a_scratch_whose_device_takes_discards_is_trimmed(tmp_path, monkeypatch):
    root = _sysfs(tmp_path, {"sdb": "pci0/usb1/host0/block/sdb", "sdc": "pci0/usb1/host1/block/sdc"},
                  {"sys/devices/pci0/usb1/host0/block/sdb/queue/discard_max_bytes": "0",
                   "sys/devices/pci0/usb1/host1/block/sdc/queue/discard_max_bytes": "4194304"})
    monkeypatch.setattr(trim, "kernel_name", lambda source: source.removeprefix("/dev/"))
    gone = str(tmp_path / "not-mounted")  # fstrim must fail here, never trim this machine's disk
    no_discard = ScratchTrim.of({"source": "/dev/sdb", "mount_point": gone}, root)
    no_discard.new_round(1)
    assert no_discard.facts() == {"device": "sdb", "discard": False}  # not tried, so nothing failed
    discard = ScratchTrim.of({"source": "/dev/sdc", "mount_point": gone}, root)
    assert discard.discard is True
    discard.new_round(0)
    discard.new_round(1)
    found = discard.facts()
    assert found["rounds"] == [] and found["failed_rounds"] == [0, 1]  # recorded, not fatal
    assert gone in found["error"] and "\n" not in found["error"]
    assert ScratchTrim.of({"source": "server:/export", "mount_point": "/mnt"}, root).facts() == {
        "device": None, "discard": None}  # no block device: nothing to trim


def test_a_missing_fstrim_names_util_linux(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda cmd, **kw: None)  # no fstrim anywhere
    scratch = ScratchTrim(str(tmp_path), "sdc", True)
    scratch.new_round(3)
    assert scratch.facts()["failed_rounds"] == [3]
    assert scratch.error == ("fstrim is not installed on this machine "
                             "(install the Debian package util-linux: apt-get install util-linux)")


def test_bytes_trimmed_from_fstrims_output():
    assert parse_fstrim("/var/tmp/x: 11.7 MiB (12318720 bytes) trimmed\n") == 12318720
    assert parse_fstrim("/mnt: 0 B (0 bytes) trimmed") == 0
    assert parse_fstrim("/mnt: 12318720 bytes were trimmed") == 12318720  # older util-linux
    assert parse_fstrim("fstrim: /mnt: the discard operation is not supported") is None
