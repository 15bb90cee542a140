"""Where the root of a brought image is: cmdline.txt's root= read as the kernel reads it, and
the partition it names (an MBR PARTUUID is the disk signature and the number in hex)."""

from __future__ import annotations

from shootout.images.layout import Partition, named_root, root_argument
from shootout.places.image import _label

PARTS = [
    Partition(1, 4 << 20, 64 << 20, "vfat", "5ab1e001-01", "B00T-1D", "bootfs"),
    Partition(2, 68 << 20, 1 << 30, "ext4", "5ab1e001-02", "6c1a9a5e-0d1f-4e0a-9a64-3f4f2a0c5e11", "rootfs"),
    Partition(10, 2 << 30, 1 << 30, "ext4", "5ab1e001-0a", None, "data"),
]


def test_root_argument_is_the_last_root_on_the_command_line() -> None:
    line = "console=serial0,115200 root=/dev/mmcblk0p2 rootfstype=ext4 root=PARTUUID=5AB1E001-02 rootwait"
    assert root_argument(line) == "PARTUUID=5AB1E001-02"
    assert root_argument("console=tty1 quiet") is None


def test_a_root_is_named_by_partuuid_uuid_label_or_device() -> None:
    assert named_root(PARTS, "PARTUUID=5AB1E001-02") is PARTS[1]  # the kernel compares without case
    assert named_root(PARTS, "PARTUUID=5ab1e001-0a") is PARTS[2]  # partition 10: its number in hex
    assert named_root(PARTS, "UUID=6C1A9A5E-0D1F-4E0A-9A64-3F4F2A0C5E11") is PARTS[1]
    assert named_root(PARTS, "LABEL=rootfs") is PARTS[1]
    assert named_root(PARTS, "/dev/mmcblk0p2") is PARTS[1]
    assert named_root(PARTS, "/dev/sda10") is PARTS[2]
    assert named_root(PARTS, "PARTUUID=deadbeef-02") is None


def test_an_images_label_is_its_name_without_suffixes() -> None:
    from pathlib import Path

    assert _label(Path("/x/2024-11-19-raspios-bookworm-armhf-lite.img.xz")) == "2024-11-19-raspios-bookworm-armhf-lite"
    assert _label(Path("debian-12-generic-arm64.raw")) == "debian-12-generic-arm64"
    assert _label(Path("/dev/sda")) == "sda"
