"""A Raspberry Pi's kernel images: which image a kernel release is, and what each image is.

The firmware loads one file of the boot partition as the kernel: config.txt's `kernel=`, else
the board's default (kernel7l.img on a Pi 4 in 32-bit mode, kernel8.img in 64-bit mode,
kernel_2712.img on a Pi 5 when it is present). Raspberry Pi OS names each image's kernel
release after its flavour (6.6.51+rpt-rpi-v7l, older 5.15.84-v7l+), so the running release
says which image booted. Pure data and functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Image:
    file: str  # on the boot partition
    bits: int  # 32: arm_64bit=0, uname -m armv7l; 64: arm_64bit=1, uname -m aarch64
    page_kib: int  # the kernel's page size: armhf programs need 4
    package: str  # the Raspberry Pi OS (bookworm) package that installs it

    @property
    def machine(self) -> str:
        return "aarch64" if self.bits == 64 else "armv7l"

    @property
    def arm_64bit(self) -> str:
        return "1" if self.bits == 64 else "0"


IMAGES = {i.file: i for i in (
    Image("kernel.img", 32, 4, "linux-image-rpi-v6"),
    Image("kernel7.img", 32, 4, "linux-image-rpi-v7"),
    Image("kernel7l.img", 32, 4, "linux-image-rpi-v7l"),
    Image("kernel8.img", 64, 4, "linux-image-rpi-v8"),
    Image("kernel_2712.img", 64, 16, "linux-image-rpi-2712"),
)}
# before bookworm, one package held every image
OLD_PACKAGE = "raspberrypi-kernel"

# release flavour -> image: 6.6.51+rpt-rpi-v8, 6.1.0-rpi4-rpi-2712, 5.15.84-v7l+, 6.1.58-v8-16k+
_FLAVOUR = re.compile(r"-(?:rpi-)?(2712|v8[-_]16k|v8|v7l|v7|v6)\+?$")
_BY_FLAVOUR = {"2712": "kernel_2712.img", "v8-16k": "kernel_2712.img", "v8_16k": "kernel_2712.img",
               "v8": "kernel8.img", "v7l": "kernel7l.img", "v7": "kernel7.img", "v6": "kernel.img"}


def is_pattern(release: str) -> bool:
    """Whether a wanted release is a shell pattern rather than one exact release."""
    return any(c in release for c in "*?[")


def kernel_image(release: str) -> str | None:
    """The image file a Raspberry Pi OS kernel release boots from; None for a pattern or another naming."""
    if is_pattern(release):
        return None
    m = _FLAVOUR.search(release)
    return _BY_FLAVOUR[m.group(1)] if m else None


def is_image(name: str) -> bool:
    return name in IMAGES


def install_hint(image: str) -> str:
    """What to install for a missing image, in one phrase."""
    package = IMAGES[image].package
    return (f"install {package} (apt install {package}; {OLD_PACKAGE} on releases before bookworm), "
            f"which puts {image} on the boot partition")


@dataclass(frozen=True)
class Board:
    """Which kernel images a family of Raspberry Pi boards boots, and how it switches between them."""

    family: str
    kernel32: str | None  # its 32-bit kernel's image; None: the board boots 64-bit kernels only
    kernel64: str  # the 64-bit kernel with 4K pages (runs armhf programs too)
    kernel64_own: str | None  # a 64-bit kernel of its own, tried first when present (the Pi 5's, 16K pages)
    arm_64bit: str  # the firmware's default when config.txt says nothing
    tryboot: bool  # the EEPROM boot loader's one-shot tryboot.txt


# Raspberry Pi documentation, config.txt "kernel" and "arm_64bit": the default image is kernel7.img on
# a Pi 3 / Zero 2 W / CM3 (arm_64bit defaults to 0 there), kernel8.img on a Pi 4 / 400 / CM4 (64-bit
# by default), kernel_2712.img on a Pi 5 / 500 / CM5, else kernel8.img (no 32-bit kernel exists for it).
# A Pi 2 Model B v1.2 has the Pi 3's BCM2837 (Cortex-A53): it boots kernel8.img with arm_64bit=1, as
# a Pi 3 does; v1.1's BCM2836 (Cortex-A7) has no 64-bit mode.
# tryboot needs the EEPROM boot loader of the Pi 4 and later.
_BOARDS = (
    (re.compile(r"Raspberry Pi (5|500|Compute Module 5)\b"), Board("Pi 5", None, "kernel8.img", "kernel_2712.img",
                                                                   "1", True)),
    (re.compile(r"Raspberry Pi (4|400|Compute Module 4S?)\b"), Board("Pi 4", "kernel7l.img", "kernel8.img", None,
                                                                     "1", True)),
    (re.compile(r"Raspberry Pi (3|Zero 2|Compute Module 3)\b"), Board("Pi 3", "kernel7.img", "kernel8.img", None,
                                                                      "0", False)),
    (re.compile(r"Raspberry Pi 2 Model B Rev 1\.2\b"), Board("Pi 2 v1.2", "kernel7.img", "kernel8.img", None,
                                                            "0", False)),
)


def board_of(model: str) -> Board | None:
    """The board family of a device-tree model string; None for a board without a 64-bit kernel."""
    return next((board for pattern, board in _BOARDS if pattern.match(model)), None)
