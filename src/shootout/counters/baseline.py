"""What a side's binaries may assume of the CPU: the instruction-set baseline of Debian's port
that built them, by the ELF machine and class a workload's binary has (execution/elf.py).

A compiler for a port assumes its baseline and nothing more; a library may still choose a
faster path at run time where it checks the CPU (OpenSSL's capabilities: codepaths.py). The
32-bit ARM ports differ in what the ELF header alone cannot tell: Debian's armhf is ARMv7,
Raspberry Pi OS 32-bit (Raspbian) ARMv6 with VFPv2, so the dpkg architecture is said with it.
"""

from __future__ import annotations

BASELINES: dict[tuple[str, int], str] = {
    ("x86-64", 64): "x86-64: SSE2, 16 general registers",
    ("x86", 32): "i686: x87 floating point (SSE2 not assumed), 8 general registers",
    ("x86-64", 32): "x32: x86-64 instructions and registers, 32-bit pointers",
    ("aarch64", 64): "ARMv8-A: NEON, 31 general registers (AES/SHA only where a library checks the CPU)",
}
ARM32 = {
    "armhf": "ARMv7-A, VFPv3-D16, Thumb-2, NEON not assumed (Debian armhf; Raspbian's is ARMv6 with VFPv2)",
    "armel": "ARMv5TE, soft float (Debian armel)",
}


def baseline(machine: str | None, elf_class: int | None, dpkg_arch: str | None = None) -> str | None:
    """The baseline in words, or None where the binary's ELF identity is not known."""
    if machine == "arm" and elf_class == 32:
        return ARM32.get(dpkg_arch or "", "32-bit ARM (its architecture level is not known here)")
    if machine is None or elf_class is None:
        return None
    return BASELINES.get((machine, elf_class))
