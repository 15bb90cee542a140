"""Debian architectures shootout can build userspaces for, and how this machine runs them."""

from __future__ import annotations

import platform
import subprocess
from dataclasses import dataclass
from functools import cache

from shootout.base.errors import UsageError
from shootout.execution.tools import find_tool


@dataclass(frozen=True)
class Arch:
    name: str  # Debian architecture name
    bits: int  # ELF class of its binaries
    machine: str  # ELF machine as shootout.execution.elf names it
    qemu: str  # qemu-user binary suffix (qemu-<qemu>-static) that emulates it


ARCHES: dict[str, Arch] = {
    a.name: a
    for a in [
        Arch("amd64", 64, "x86-64", "x86_64"),
        Arch("i386", 32, "x86", "i386"),
        Arch("arm64", 64, "aarch64", "aarch64"),
        Arch("armhf", 32, "arm", "arm"),
        Arch("armel", 32, "arm", "arm"),
        Arch("ppc64el", 64, "EM_PPC64", "ppc64le"),
        Arch("s390x", 64, "EM_S390", "s390x"),
        Arch("riscv64", 64, "EM_RISCV", "riscv64"),
        Arch("mips64el", 64, "EM_MIPS", "mips64el"),
    ]
}

# The 32-bit userspace a 64-bit kernel of this arch runs natively: the headline comparison.
COMPANION_32 = {"amd64": "i386", "arm64": "armhf"}

# Arches a kernel runs without emulation, besides its own (compat syscalls).
_NATIVE_COMPAT = {"amd64": {"i386"}, "arm64": {"armhf", "armel"}}

_MACHINE_TO_DEBIAN = {"x86_64": "amd64", "i686": "i386", "i386": "i386", "aarch64": "arm64",
                      "armv7l": "armhf", "armv8l": "armhf", "ppc64le": "ppc64el", "s390x": "s390x",
                      "riscv64": "riscv64", "mips64": "mips64el"}


def arch(name: str) -> Arch:
    """The Arch for a Debian name; UsageError naming the known ones otherwise."""
    try:
        return ARCHES[name]
    except KeyError:
        raise UsageError(f"unknown architecture {name!r}", "use one of: " + ", ".join(ARCHES)) from None


@cache
def host_arch() -> str:
    """This machine's Debian architecture (dpkg's answer, else from uname -m)."""
    if find_tool("dpkg"):
        done = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    machine = platform.machine()
    return _MACHINE_TO_DEBIAN.get(machine, machine)


@cache
def kernel_arch() -> str:
    """The running kernel's Debian architecture (uname -m): arm64 under the armhf userspace of a
    32-bit Raspberry Pi OS booted with its default 64-bit kernel."""
    machine = platform.machine()
    return _MACHINE_TO_DEBIAN.get(machine, machine)


def headline_arches(userspace: str, kernel: str) -> tuple[str, str] | None:
    """The default main job's userspaces: the kernel's 64-bit arch and its 32-bit companion, on a
    64-bit userspace or on the companion's own (armhf userspace, arm64 kernel); None elsewhere."""
    companion = COMPANION_32.get(kernel)
    if companion is None or userspace not in (kernel, companion):
        return None
    return kernel, companion


def _runs_armhf() -> bool:
    from shootout.arm.aarch32 import (
        here,  # probes once: personality, binfmt_misc, a tiny program
    )

    found = here()
    return found is None or (found.native and not found.binfmt)


def is_foreign(name: str) -> bool:
    """True when this machine can only run `name` binaries through qemu."""
    kernel = kernel_arch()
    if name in (host_arch(), kernel):
        return False
    if name not in _NATIVE_COMPAT.get(kernel, set()):
        return True
    return kernel == "arm64" and not _runs_armhf()  # AArch32 at EL0 is optional on arm64 cores


def arch_problem(name: str) -> tuple[str, str] | None:
    """(why, fix) when a userspace of `name` would run only under qemu on this ARM machine (the
    figures would be the emulator's); None where it runs natively, and on other hosts (which
    compare foreign userspaces as emulated, marked so)."""
    kernel = kernel_arch()
    if kernel not in ("arm64", "armhf") or not is_foreign(name):
        return None
    if name in ("armhf", "armel") and kernel == "arm64":
        from shootout.arm.aarch32 import armhf_problem, here, page_size

        if (problem := armhf_problem(here(), page_size())) is not None:
            return problem
    if name == "arm64" and kernel == "armhf":
        return ("this kernel is 32-bit: arm64 programs need a 64-bit kernel (here only qemu would run them)",
                "on a Raspberry Pi 3, 4 or 5 set arm_64bit=1 in /boot/firmware/config.txt and reboot, or pass "
                "--emulate to check that it works (results marked emulated, no verdicts)")
    return (f"{name} programs do not run on this {kernel} machine but under qemu, and the figures would be the "
            "emulator's", "the 32-bit side of an ARM machine is armhf (debian:RELEASE:armhf), or pass --emulate to "
            "check that it works (results marked emulated, no verdicts)")
