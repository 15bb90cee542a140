"""The Raspberry Pi's one-shot boot of another kernel: tryboot.

The firmware has a one-shot flag: set, it is cleared and the firmware reads tryboot.txt
instead of config.txt, for that boot only; a crash, a power cut or a plain reboot boots
config.txt as before. The flag is set by the reboot itself: `reboot "0 tryboot"` (the
partition number must be given when an argument follows). So shootout writes tryboot.txt
beside config.txt — config.txt with the scheduled kernel's lines appended in an [all]
section, since later lines win — and tells the user that reboot command; it never reboots.
Documented for the boards with the EEPROM boot loader (Pi 4, 400, CM4, Pi 5); an A/B
partition setup (tryboot_a_b=1) uses the flag to switch partitions, so it is refused.
"""

from __future__ import annotations

import re
from pathlib import Path

from shootout.boots.identity import CONFIG_TXT, KernelWant, is_pattern
from shootout.conditions.fsread import read_text, under
from shootout.errors import TargetError, UsageError
from shootout.system.journal import Journal

TRYBOOT_BOARDS = ("Raspberry Pi 4", "Raspberry Pi 400", "Raspberry Pi Compute Module 4", "Raspberry Pi 5",
                  "Raspberry Pi Compute Module 5", "Raspberry Pi 500")
REBOOT = "sudo reboot '0 tryboot'"
# Raspberry Pi OS kernels (6.6.51+rpt-rpi-v8, older 5.15.84-v7l+) -> the image the firmware loads.
_FLAVOUR = re.compile(r"-(?:rpi-)?(2712|v8|v7l|v7|v6)\+?$")
_IMAGES = {"2712": "kernel_2712.img", "v8": "kernel8.img", "v7l": "kernel7l.img", "v7": "kernel7.img",
           "v6": "kernel.img"}


def kernel_image(release: str) -> str | None:
    """The kernel image file of a Raspberry Pi OS release, None for a pattern or another naming."""
    if is_pattern(release):
        return None
    m = _FLAVOUR.search(release)
    return _IMAGES[m.group(1)] if m else None


def tryboot_text(config_txt: str, want: KernelWant) -> str:
    """config.txt with the lines that boot `want` appended; later lines win in config.txt."""
    lines = [f"kernel={image}"] if (image := kernel_image(want.release)) else []
    if want.arm_64bit is not None:
        lines.append(f"arm_64bit={want.arm_64bit}")
    if not lines:
        raise UsageError(f"tryboot cannot tell which kernel image boots {want.release}",
                         "name the release exactly (e.g. kernel:6.6.51+rpt-rpi-v8), or set option arm_64bit")
    return (config_txt.rstrip("\n") + "\n\n# written by shootout --next-kernel: boot the scheduled kernel once\n"
            "[all]\n" + "\n".join(lines) + "\n")


def write_tryboot(want: KernelWant, board: str, root: Path, journal: Journal) -> str:
    """Write tryboot.txt (journalled); returns the one line that says how to boot it and undo it."""
    if not any(board.startswith(b) for b in TRYBOOT_BOARDS):
        raise TargetError(f"--next-kernel: tryboot is documented for the Raspberry Pi 4, 400, CM4 and 5, not a {board}",
                          "edit config.txt for the next kernel by hand")
    config = next((path for path in CONFIG_TXT if under(root, path).is_file()), None)
    if config is None:
        raise TargetError("--next-kernel: this Raspberry Pi has no config.txt in /boot/firmware or /boot",
                          "mount the boot partition")
    text = read_text(root, config) or ""
    if re.search(r"^\s*tryboot_a_b\s*=\s*1", text, re.M):
        raise TargetError("--next-kernel: config.txt sets tryboot_a_b=1, so tryboot switches partitions here",
                          "boot the next kernel by hand")
    boot = str(Path(config).parent)
    new = tryboot_text(text, want)
    image = kernel_image(want.release)
    if image and not under(root, f"{boot}/{image}").is_file():
        raise TargetError(f"--next-kernel: there is no {boot}/{image} for kernel {want.release}",
                          "install that kernel first")
    tryboot = f"{boot}/tryboot.txt"
    target = under(root, tryboot)
    if target.exists():
        raise TargetError(f"{tryboot} exists already", "move it away, or `shootout doctor` if shootout left it")
    journal.change(f"{tryboot}: kernel {want.release} for one boot", {"remove": str(target)},
                   lambda: target.write_text(new))
    return (f"{tryboot} boots {want.release} once, when you reboot with: {REBOOT} "
            f"(undo: rm {tryboot}, or shootout doctor)")
