"""kernel-modes on a Raspberry Pi: which kernel each boot runs and which userspaces it measures.

The write-up (D) compared 32/32, a 64-bit kernel with the 32-bit userspace, and 64/64 by
rebooting one Pi. Here each side is a kernel configuration with the userspace its trials run
in (kernel:IMAGE/debian:bookworm:ARCH, shootout's own userspaces as chroots): the two sides of
the 64-bit kernel share its boots, interleaved in their rounds, and the boots of the two
kernels alternate A B B A (measure/bootcampaign.py). The 32-bit kernel boots the machine's own
system too, so that system must be armhf (32-bit Raspberry Pi OS, whose Pi 4 boots the 64-bit
kernel by default). A Pi 5 has no 32-bit kernel: its sides are kernel8.img (4K pages) with
each userspace, and its own kernel_2712.img (16K pages, no armhf) with arm64. Pure: the board,
the boot partition and the system's architecture are passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

from shootout.base.errors import TargetError
from shootout.boots.images import board_of, install_hint
from shootout.boots.partition import BootPartition

RELEASE = "bookworm"
K32, K64_16K = "k32-u32", "k64-16k-u64"  # the sides only some boards have
RPI64 = "compare the userspaces under one kernel instead: shootout run --experiment rpi64"


@dataclass(frozen=True)
class PiSide:
    name: str
    label: str
    image: str  # the kernel image its boots run
    arch: str  # the userspace its trials run in

    @property
    def spec(self) -> str:
        return f"kernel:{self.image}/debian:{RELEASE}:{self.arch}"


def pi_sides(model: str, part: BootPartition | None, system_arch: str) -> list[PiSide]:
    """The sides of kernel-modes on this board; TargetError, in one line with the fix, where it cannot run."""
    board = board_of(model)
    if board is None:
        raise TargetError(f"kernel-modes across reboots needs a Raspberry Pi 2 v1.2, 3, 4 or 5; a {model} boots "
                          "no 64-bit kernel", "run it on a Pi 3B+, 4, 400 or 5")
    if part is None:
        raise TargetError("kernel-modes on a Raspberry Pi switches kernels in config.txt, and there is none in "
                          "/boot/firmware or /boot", "mount the boot partition (it holds config.txt)")
    k64 = board.kernel64
    sides = [PiSide("k64-u32", f"64-bit kernel + 32-bit userspace ({k64}, armhf)", k64, "armhf"),
             PiSide("k64-u64", f"64/64 ({k64}, arm64)", k64, "arm64")]
    if board.kernel32 is not None:
        if system_arch != "armhf":
            raise TargetError(f"kernel-modes on a {board.family}: its 32/32 boots run the 32-bit kernel "
                              f"{board.kernel32}, which cannot run this {system_arch} system",
                              "install 32-bit Raspberry Pi OS (armhf: it boots the 64-bit kernel too), or " + RPI64)
        sides.insert(0, PiSide(K32, f"32/32 ({board.kernel32}, armhf)", board.kernel32, "armhf"))
    elif board.kernel64_own is not None and part.has(board.kernel64_own):
        sides.append(PiSide(K64_16K, f"64/64 with its own kernel ({board.kernel64_own}, 16K pages, arm64)",
                            board.kernel64_own, "arm64"))
    else:
        raise TargetError(f"kernel-modes on a {board.family} has one kernel to boot ({k64}): it boots no 32-bit "
                          f"kernel, and {part.file(board.kernel64_own or 'kernel_2712.img')} is missing", RPI64)
    for image in dict.fromkeys(side.image for side in sides):
        if not part.has(image):
            raise TargetError(f"kernel-modes needs {part.file(image)}, which is missing", install_hint(image))
    return sides


def missing_sides(names: set[str]) -> list[str]:
    """What a run's report says of a write-up side that this board cannot boot: a Pi 5 (its
    16K-page side present) has no 32-bit kernel, so the write-up's 32/32 is not measured."""
    if K64_16K in names and K32 not in names:
        return ["no 32/32 side: a Pi 5 boots no 32-bit kernel (the write-up's 32/32 ran on a Pi 4 and a 3B+); "
                "its own 16K-page kernel with arm64 is measured in its place"]
    return []


def boots(sides: list[PiSide]) -> dict[str, list[str]]:
    """Kernel image -> the userspaces its boots measure, in order: the plan of boots."""
    out: dict[str, list[str]] = {}
    for side in sides:
        out.setdefault(side.image, []).append(side.arch)
    return out


def pi_toml(sides: list[PiSide], workloads: list[str]) -> str:
    """The experiment's tables on this Pi: one [[config]] per side."""
    names = ", ".join(f'"{s.name}"' for s in sides)
    chosen = ", ".join(f'"{w}"' for w in workloads)
    return f"[run]\nconfigs = [{names}]\nworkloads = [{chosen}]\n" + "".join(
        f'\n[[config]]\nname = "{s.name}"\nspec = "{s.spec}"\nlabel = "{s.label}"\n' for s in sides)
