"""Whether an arm64 machine runs 32-bit ARM (armhf) programs natively, and why not.

Some arm64 cores have no AArch32 at EL0 (AmpereOne, Apple's, recent Cortex-X), and a kernel with
16K or 64K pages has no 32-bit compat layer (arm64's COMPAT needs 4K pages): a Raspberry Pi 5's
default kernel_2712.img is such a kernel. There, only qemu-arm would run an armhf userspace, and
a comparison with it would measure the emulator.

Two probes, each reliable for what it says:
- the kernel's personality syscall: arm64 refuses PER_LINUX32 (`setarch linux32`) with EINVAL
  unless the kernel has COMPAT and every CPU it runs on has AArch32 at EL0;
- a 100-byte static armhf program that exits 42, executed directly. binfmt_misc is consulted
  before the kernel's own ELF loader, so this proves native execution only while no enabled
  binfmt_misc entry claims 32-bit ARM ELF files (one that does is named: armhf programs would
  then go to qemu even on a CPU that runs them).
/proc/cpuinfo does not tell: a 64-bit process sees arm64's Features, and "CPU architecture: 8"
is printed alike for cores with and without AArch32.
"""

from __future__ import annotations

import os
import struct
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from shootout.execution.fsread import read_text, under
from shootout.execution.tools import find_tool
from shootout.system.emulator import here as emulator_here

PAGE_4K = 4096
EXIT_CODE = 42


def tiny_armhf() -> bytes:
    """A static 32-bit ARM (EABI5, hard-float) ELF executable: mov r0, #42; mov r7, #1 (exit); svc #0."""
    code = struct.pack("<3I", 0xE3A0002A, 0xE3A07001, 0xEF000000)
    base, header, phdr = 0x10000, 52, 32
    size = header + phdr + len(code)
    ident = b"\x7fELF\x01\x01\x01" + bytes(9)
    elf = ident + struct.pack("<HHIIIIIHHHHHH", 2, 0x28, 1, base + header + phdr, header, 0, 0x05000400,
                              header, phdr, 1, 0, 0, 0)
    program = struct.pack("<8I", 1, 0, base, base, size, size, 5, 0x10000)
    return elf + program + code


def page_size(root: Path = Path("/")) -> int | None:
    """The kernel's page size in bytes (a fake root: KernelPageSize of its /proc/self/smaps)."""
    if Path(root) == Path("/"):
        return os.sysconf("SC_PAGE_SIZE")
    for line in (read_text(root, "/proc/self/smaps") or "").splitlines():
        if line.startswith("KernelPageSize:") and line.split()[1].isdigit():
            return int(line.split()[1]) * 1024
    return None


def _matches(head: bytes, entry: str) -> bool:
    lines = entry.splitlines()
    if not lines or lines[0] != "enabled":
        return False
    fields = dict(line.split(" ", 1) for line in lines[1:] if " " in line)
    if "magic" not in fields:
        return False  # an extension entry (E), not a magic one
    try:
        offset = int(fields.get("offset", "0"))
        magic = bytes.fromhex(fields["magic"])
        mask = bytes.fromhex(fields.get("mask", "ff" * len(magic)))
    except ValueError:
        return False
    part = head[offset:offset + len(magic)]
    return len(part) == len(magic) and all(h & m == g & m for h, g, m in zip(part, magic, mask))


def arm32_binfmt_entries(root: Path = Path("/")) -> list[str]:
    """Enabled binfmt_misc entries that would take a 32-bit ARM ELF program (qemu-arm's)."""
    base = under(root, "/proc/sys/fs/binfmt_misc")
    if not base.is_dir():
        return []
    head = tiny_armhf()
    return sorted(p.name for p in base.iterdir()
                  if p.name not in ("register", "status") and _matches(head, read_text(root, p) or ""))


def personality32() -> bool | None:
    """Whether the kernel accepts the 32-bit personality (`setarch linux32 true`); None without setarch."""
    tool = find_tool("setarch")
    if tool is None:
        return None
    try:
        return subprocess.run([tool, "linux32", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return None


def run_tiny() -> str:
    """Execute the tiny armhf program; 'ran' when it exited 42, else what happened."""
    with tempfile.TemporaryDirectory(prefix="shootout-aarch32-") as tmp:
        path = Path(tmp) / "exit42"
        path.write_bytes(tiny_armhf())
        path.chmod(0o755)
        try:
            done = subprocess.run([str(path)], capture_output=True, timeout=10)
        except OSError as exc:
            return f"exec failed: {exc.strerror}"
        except subprocess.TimeoutExpired:
            return "did not exit within 10 s"
    return "ran" if done.returncode == EXIT_CODE else f"exit status {done.returncode}"


@dataclass(frozen=True)
class AArch32:
    native: bool  # armhf programs run on this CPU without emulation
    how: str  # what was tried and what it showed, one line
    binfmt: tuple[str, ...] = ()  # binfmt_misc entries that take armhf programs to an emulator

    def as_dict(self) -> dict[str, object]:
        return {"native": self.native, "how": self.how, "binfmt": list(self.binfmt)}


def aarch32(root: Path = Path("/"), kernel_machine: str | None = None,
            personality: Callable[[], bool | None] = personality32,
            run: Callable[[], str] = run_tiny) -> AArch32 | None:
    """Whether this arm64 machine runs armhf programs natively; None on other kernels."""
    machine = kernel_machine or os.uname().machine
    if machine != "aarch64":
        return None
    if Path(root) == Path("/") and (why := emulator_here()) is not None:
        # the tiny program would "run natively": through the real kernel's binfmt_misc, which this
        # emulated machine cannot see
        return AArch32(False, f"{why}: armhf programs run under qemu-arm too")
    size = page_size(root)
    if size is not None and size != PAGE_4K:
        return AArch32(False, f"the kernel uses {size // 1024}K pages: arm64 has no 32-bit compat layer then")
    accepted = personality()
    if accepted is False:
        return AArch32(False, "the kernel refuses the 32-bit personality (setarch linux32): this CPU has no "
                              "AArch32 at EL0, or the kernel was built without COMPAT")
    entries = tuple(arm32_binfmt_entries(root))
    if entries:
        return AArch32(bool(accepted), "the kernel accepts the 32-bit personality (setarch linux32); binfmt_misc "
                                       f"entry {', '.join(entries)} takes armhf programs to an emulator", entries)
    outcome = run()
    if outcome == "ran":
        return AArch32(True, "a static armhf program ran natively (no binfmt_misc entry for 32-bit ARM)")
    return AArch32(False, f"a static armhf program did not run natively ({outcome})")


@cache
def here() -> AArch32 | None:
    """This machine's answer, probed once per process."""
    return aarch32()


def armhf_problem(found: AArch32 | None, size: int | None) -> tuple[str, str] | None:
    """(why, fix) when armhf programs cannot run natively here; None when they can (or not arm64)."""
    if found is None or (found.native and not found.binfmt):
        return None
    if size is not None and size != PAGE_4K:
        return (f"this kernel uses {size // 1024}K pages and cannot run 32-bit ARM (armhf) programs",
                "on a Raspberry Pi 5 boot the 4K-page kernel: add kernel=kernel8.img to /boot/firmware/config.txt "
                "and reboot (or pass --emulate to check that it works: results marked emulated, no verdicts)")
    if found.native:  # the CPU could, but binfmt_misc hands the programs to qemu
        entry = found.binfmt[0]
        return (f"armhf programs would run under an emulator (binfmt_misc entry {entry}) although this CPU runs "
                "them natively", f"disable the entry for the run: echo 0 > /proc/sys/fs/binfmt_misc/{entry}")
    return (f"this CPU does not run 32-bit ARM (armhf) programs natively ({found.how}); only qemu-arm would, "
            "and the figures would be the emulator's",
            "compare arm64 configurations, or pass --emulate to check that it works (results marked emulated, "
            "no verdicts)")
