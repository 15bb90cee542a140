"""What a side's binaries may assume of the CPU, in words, from what the binary that ran says
(its ELF facts, execution/elf.py), never from the name of its distribution's port.

A compiler assumes its target's baseline and nothing more; a library may still choose a faster
path at run time where it checks the CPU (OpenSSL's capabilities: codepaths.py). The x86 and
arm64 ports have one baseline each, told by the ELF machine and class. 32-bit ARM does not:
Debian's armhf is ARMv7-A with VFPv3-D16 and Thumb-2, Raspberry Pi OS 32-bit (Raspbian) ARMv6
with VFPv2, Debian's armel ARMv5TE with soft float, all EM_ARM ELFCLASS32; what tells them apart
is the float ABI in e_flags and the build attributes in the binary's .ARM.attributes section.
The linker merges the attributes of everything linked in: a program linked to libc says what its
own code assumes, a static one also libc's (glibc's NEON string functions, chosen at run time).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from shootout.base.runfacts import RunFacts

BASELINES: dict[tuple[str, int], str] = {
    ("x86-64", 64): "x86-64: SSE2, 16 general registers",
    ("x86", 32): "i686: x87 floating point (SSE2 not assumed), 8 general registers",
    ("x86-64", 32): "x32: x86-64 instructions and registers, 32-bit pointers",
    ("aarch64", 64): "ARMv8-A: NEON, 31 general registers (AES/SHA only where a library checks the CPU)",
}
# Tag_CPU_arch_profile in readelf's words -> the letter after the architecture (ARMv7-A)
PROFILES = {"Application": "A", "Realtime": "R", "Microcontroller": "M"}


def arm32_words(arm: Mapping[str, Any]) -> str:
    """'ARMv7-A, VFPv3-D16, hard float, Thumb-2, NEON not assumed' from a binary's arm facts
    (elf.arm_build); the architecture said not recorded where its attributes were not read."""
    arch = arm.get("cpu_arch")
    if arch:
        profile = PROFILES.get(arm.get("profile", ""))
        said = [f"ARM{arch}" + (f"-{profile}" if profile else "")]
    else:
        said = ["32-bit ARM (its architecture not recorded in the binary)"]
    fp = arm.get("fp_arch")
    if fp and fp != "No":
        said.append(fp)
    if arm.get("float_abi") == "soft":
        said.append("soft float" + ("" if fp and fp != "No" else " (no FP unit assumed)"))
    elif arm.get("float_abi") == "hard":
        said.append("hard float")
    if arm.get("thumb") in ("Thumb-1", "Thumb-2"):
        said.append(arm["thumb"])
    if arch:
        simd = arm.get("simd_arch")
        said.append(simd if simd and simd != "No" else "NEON not assumed")
    return ", ".join(said)


def baseline(elf: Mapping[str, Any]) -> str | None:
    """The baseline in words from a binary's ELF facts, or None where they do not tell."""
    machine, elf_class = elf.get("machine"), elf.get("elf_class")
    if machine == "arm" and elf_class == 32:
        return arm32_words(elf.get("arm") or {})
    if machine is None or elf_class is None:
        return None
    return BASELINES.get((machine, elf_class))


def side_binary(facts: RunFacts, config: str, workloads: Iterable[str]) -> tuple[str, Mapping[str, Any]]:
    """(what it is, its ELF facts) of a binary that ran on a side: the first workload binary it
    recorded ('ptrtree's native kernel'), else its userspace's shell ('its shell');
    ('', {}) where neither was recorded."""
    for workload in workloads:
        for name, found in facts.workload(config, workload).get("elf", {}).items():
            if isinstance(found, Mapping) and found.get("machine") and found.get("elf_class"):
                return f"{workload}'s {name}", found
    shell = facts.target(config).get("shell_elf")
    return ("its shell", shell) if isinstance(shell, Mapping) and shell.get("machine") else ("", {})
