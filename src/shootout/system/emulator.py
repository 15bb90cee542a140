"""Whether this process runs under qemu-user: a foreign-architecture machine emulated on another.

qemu-user answers uname(2) with the emulated architecture, so `uname -m`, dpkg and Python all
say aarch64 inside an arm64 root filesystem run through binfmt_misc on an x86-64 machine, and
every figure measured there is the emulator's. The kernel itself is not emulated: its own
/proc/sys/kernel/arch and /proc/cpuinfo still describe the real CPU, so a different family
there gives the emulation away.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from shootout.execution.fsread import read_text

_FAMILIES = {"x86_64": "x86", "i386": "x86", "i486": "x86", "i586": "x86", "i686": "x86",
             "aarch64": "arm", "aarch64_be": "arm", "armv7l": "arm", "armv8l": "arm", "armv6l": "arm"}


def family(machine: str) -> str:
    """The CPU family of a `uname -m` name: x86 and arm each run their own 32-bit code natively."""
    return _FAMILIES.get(machine, machine)


def _cpuinfo_family(cpuinfo: str) -> str | None:
    """x86 or arm from /proc/cpuinfo's keys (vendor_id is x86's, CPU implementer arm's)."""
    keys = {line.partition(":")[0].strip() for line in cpuinfo.splitlines()}
    if "vendor_id" in keys:
        return "x86"
    if "CPU implementer" in keys:
        return "arm"
    return None


def emulator(root: Path = Path("/"), machine: str | None = None) -> str | None:
    """One line saying why this process runs under an emulator (qemu-user); None on real hardware."""
    machine = machine or os.uname().machine
    kernel = read_text(root, "/proc/sys/kernel/arch")
    if kernel and family(kernel) != family(machine):
        return (f"uname -m says {machine} but the kernel is {kernel} (/proc/sys/kernel/arch): "
                "this machine runs under qemu-user")
    cpu = _cpuinfo_family(read_text(root, "/proc/cpuinfo") or "")
    if cpu and cpu != family(machine):
        return f"uname -m says {machine} but /proc/cpuinfo describes an {cpu} CPU: this machine runs under qemu-user"
    return None


@cache
def here() -> str | None:
    """This process's answer, read once."""
    return emulator()
