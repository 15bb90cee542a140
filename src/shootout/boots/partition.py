"""A Raspberry Pi's boot partition as the firmware reads it: its files, config.txt, cmdline.txt
and autoboot.txt, and which kernel image a plain boot of it loads.

Read under a root (the real "/", or a fake tree in tests), never written here: the switch
between kernels (boots/tryboot.py) writes through the change journal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from shootout.arm.configtxt import Reader, setting, settings
from shootout.boots.identity import CONFIG_TXT
from shootout.boots.images import Board
from shootout.execution.fsread import read_text, under


@dataclass(frozen=True)
class BootPartition:
    path: str  # where it is mounted, seen from the root: /boot/firmware (bookworm) or /boot
    files: frozenset[str]  # the names in its top directory
    config_txt: str
    cmdline_txt: str | None
    autoboot_txt: str | None

    def has(self, name: str) -> bool:
        return name in self.files

    def file(self, name: str) -> str:
        return f"{self.path}/{name}"


def boot_partition(root: Path = Path("/")) -> BootPartition | None:
    """The mounted boot partition (the directory holding config.txt); None without one."""
    for config in CONFIG_TXT:
        if under(root, config).is_file():
            where = str(Path(config).parent)
            files = frozenset(p.name for p in under(root, where).iterdir())
            return BootPartition(where, files, read_text(root, config) or "", read_text(root, f"{where}/cmdline.txt"),
                                 read_text(root, f"{where}/autoboot.txt"))
    return None


def tryboot_switches_partitions(part: BootPartition, reader: Reader) -> str | None:
    """The file that sets tryboot_a_b=1 for this board (autoboot.txt's setting): the tryboot flag then
    boots another partition's config.txt (A/B updates), not tryboot.txt beside config.txt. None where none does."""
    return next((name for name, text in (("autoboot.txt", part.autoboot_txt), ("config.txt", part.config_txt))
                 if setting(text or "", "tryboot_a_b", reader) == "1"), None)


def default_image(board: Board, text: str, files: frozenset[str], reader: Reader) -> str:
    """The image a plain boot of this board loads with this config.txt text: its kernel= line where
    one applies to the board, else the board's default for its arm_64bit (the Pi 5's own kernel
    first, when the partition holds it)."""
    found = settings(text, replace(reader, tryboot=False))
    if named := found.get("kernel"):
        return named.lstrip("/")
    if board.kernel32 is not None and (found.get("arm_64bit") or board.arm_64bit) == "0":
        return board.kernel32
    if board.kernel64_own is not None and board.kernel64_own in files:
        return board.kernel64_own
    return board.kernel64
