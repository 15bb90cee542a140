"""A Raspberry Pi's boot of another kernel: tryboot where the board has it, else config.txt.

The firmware has a one-shot flag: set, it is cleared and the firmware reads tryboot.txt
instead of config.txt, for that boot only; a crash, a power cut or a plain reboot boots
config.txt as before. The flag is set by the reboot itself: `reboot "0 tryboot"` (the
partition number must be given when an argument follows). So shootout writes tryboot.txt
beside config.txt — config.txt with the scheduled kernel's lines appended in an [all]
section, since later lines win — and tells the user that reboot command; it never reboots.
Documented for the boards with the EEPROM boot loader (Pi 4, 400, CM4, Pi 5); with
autoboot.txt's tryboot_a_b=1 the flag switches partitions instead, so that is refused.
A Pi 3 (no tryboot) gets the same lines appended to config.txt itself; the journal keeps
config.txt's old text, which `shootout doctor` (or the block's resumed run) writes back.
When config.txt already boots the scheduled image, nothing is written: a plain reboot does.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from shootout.arm.board import config_reader
from shootout.arm.configtxt import Reader
from shootout.base.errors import TargetError, UsageError
from shootout.boots.identity import KernelWant
from shootout.boots.images import IMAGES, board_of, install_hint, kernel_image
from shootout.boots.partition import (
    BootPartition,
    boot_partition,
    default_image,
    tryboot_switches_partitions,
)
from shootout.execution.fsread import under
from shootout.system.journal import Journal

REBOOT = "sudo reboot '0 tryboot'"
MARK = "# written by shootout --next-kernel: boot the scheduled kernel"


def wanted_image(want: KernelWant) -> str | None:
    return want.image or kernel_image(want.release)


def _named(want: KernelWant) -> str:
    """The kernel as the user named it: its release, or its image."""
    return want.image if want.image and want.release == "*" else want.release


def switch_lines(want: KernelWant) -> list[str]:
    """The config.txt lines that boot `want`: its image, and arm_64bit to match."""
    image = wanted_image(want)
    lines = [f"kernel={image}"] if image else []
    bit = IMAGES[image].arm_64bit if image else want.arm_64bit
    if bit is not None:
        lines.append(f"arm_64bit={bit}")
    if not lines:
        raise UsageError(f"tryboot cannot tell which kernel image boots {want.release}",
                         "name the release exactly (e.g. kernel:6.6.51+rpt-rpi-v8), its image "
                         "(kernel:kernel8.img), or set option arm_64bit")
    return lines


def tryboot_text(config_txt: str, want: KernelWant) -> str:
    """config.txt with the lines that boot `want` appended; later lines win in config.txt."""
    return config_txt.rstrip("\n") + f"\n\n{MARK}\n[all]\n" + "\n".join(switch_lines(want)) + "\n"


def write_tryboot(want: KernelWant, model: str, root: Path, journal: Journal) -> str:
    """Make the next boot run `want` (journalled); returns the one line that says how, and its undo."""
    board = board_of(model)
    if board is None:
        raise TargetError(f"--next-kernel: a {model} boots no 64-bit kernel shootout can switch to",
                          "edit config.txt for the next kernel by hand")
    part = boot_partition(root)
    if part is None:
        raise TargetError("--next-kernel: this Raspberry Pi has no config.txt in /boot/firmware or /boot",
                          "mount the boot partition")
    image = wanted_image(want)
    if image and not part.has(image):
        raise TargetError(f"--next-kernel: there is no {part.file(image)} for kernel {_named(want)}",
                          install_hint(image) if image in IMAGES else "install that kernel first")
    reader = replace(config_reader(root), model=model)  # config.txt's sections as this board reads them
    if image and default_image(board, part.config_txt, part.files, reader) == image:
        return f"{part.file('config.txt')} boots {image} already: reboot with: sudo reboot"
    if board.tryboot:
        return _tryboot(want, part, reader, root, journal)
    return _config_txt(want, board.family, part, root, journal)


def _tryboot(want: KernelWant, part: BootPartition, reader: Reader, root: Path, journal: Journal) -> str:
    if setter := tryboot_switches_partitions(part, reader):
        raise TargetError(f"--next-kernel: {setter} sets tryboot_a_b=1, so tryboot switches partitions here",
                          "boot the next kernel by hand")
    new = tryboot_text(under(root, part.file("config.txt")).read_text(), want)
    tryboot = part.file("tryboot.txt")
    target = under(root, tryboot)
    if target.exists():
        raise TargetError(f"{tryboot} exists already", "move it away, or `shootout doctor` if shootout left it")
    journal.change(f"{tryboot}: kernel {_named(want)} for one boot", {"remove": str(target)},
                   lambda: target.write_text(new))
    return (f"{tryboot} boots {_named(want)} once, when you reboot with: {REBOOT} "
            f"(undo: rm {tryboot}, or shootout doctor)")


def _config_txt(want: KernelWant, family: str, part: BootPartition, root: Path, journal: Journal) -> str:
    config = part.file("config.txt")
    target = under(root, config)
    old = target.read_text()
    if MARK in old:
        raise TargetError(f"{config} holds lines of an earlier --next-kernel", "`shootout doctor` restores it")
    new = tryboot_text(old, want)
    journal.change(f"{config}: kernel {_named(want)} (restored by shootout doctor)",
                   {"write": str(target), "content": old}, lambda: target.write_text(new))
    return (f"{config} boots {_named(want)} from now on (a {family} has no tryboot): reboot with: sudo reboot "
            f"(undo: shootout doctor, or the next block's run, restores {config})")
