"""Check that what ran is what the configuration's label says: ELF class and machine.

A comparison labelled 32-bit vs 64-bit is only meaningful if the binaries that ran really
are 32-bit and 64-bit; this reads their ELF headers (shootout.execution.elf) and compares.
"""

from __future__ import annotations

from typing import Any

from shootout.base.errors import TargetError
from shootout.base.model import Config
from shootout.places import kind_of
from shootout.userspace import registry
from shootout.userspace.arches import ARCHES, Arch, host_arch


def config_arch(config: Config) -> str | None:
    """The arch of the userspace a configuration runs in: as its registry records it, else as
    its parser said (debian:RELEASE:ARCH not made yet); None when neither tells."""
    if kind_of(config).userspace and config.userspace:
        for found in registry.find(config.userspace):
            if "arch" in found.meta:
                return str(found.meta["arch"])
    return config.userspace_ref.arch if config.userspace_ref is not None else None


def expected_abi(config: Config) -> Arch | None:
    """The arch whose binaries this configuration must run, or None when it cannot be told."""
    kind = kind_of(config)
    if kind.userspace:
        name = config_arch(config)
        return ARCHES.get(name) if name else None
    if kind.host_abi:
        host = ARCHES.get(host_arch())
        if host is None:
            return None
        if config.abi == "m32":
            return ARCHES["i386"] if host.name == "amd64" else ARCHES.get("armhf" if host.name == "arm64" else "")
        if config.abi == "mx32":
            return Arch("x32", 32, "x86-64", "x86_64")  # ELF32 with the x86-64 machine
        return host
    return None


def verify_abi(config: Config, elf: dict[str, Any]) -> None:
    """TargetError when the binary's ELF class or machine contradicts the configuration."""
    want = expected_abi(config)
    if want is None or not elf or "elf_class" not in elf:
        return  # not an ELF binary (a script) or a configuration without a fixed ABI
    got_bits, got_machine = elf["elf_class"], elf.get("machine")
    if got_bits != want.bits or got_machine != want.machine:
        what = f" ({elf['path']})" if elf.get("path") else ""
        raise TargetError(
            f"{config.display} should run {want.bits}-bit {want.machine} ({want.name}) binaries "
            f"but ran a {got_bits}-bit {got_machine} one{what}",
            "the configuration's label does not match its binaries; check its compiler flags and userspace",
        )
