"""The host kind: this machine itself, natively or with a 32-bit compiler ABI (host+m32,
host+mx32), or requiring a running kernel (kernel:RELEASE[:MACHINE], shootout.boots), whose
trials may run in a userspace (kernel:RELEASE/debian:RELEASE:ARCH: then a chroot configuration)."""

from __future__ import annotations

from shootout.base.errors import UsageError
from shootout.places.kind import Kind
from shootout.base.model import Config

ABI_FLAGS: dict[str | None, tuple[str, ...]] = {None: (), "m32": ("-m32",), "mx32": ("-mx32",)}
# Which Debian package makes `cc -<abi>` work on x86-64
ABI_PACKAGES = {"m32": "gcc-multilib", "mx32": "gcc-multilib (and libc6-dev-x32)"}
HOST_LABELS = {None: "host", "m32": "host -m32", "mx32": "host -mx32"}


def x86_abi_problem(abi: str) -> tuple[str, str] | None:
    """(why, fix) when -m32/-mx32 are asked for on a machine that is not x86."""
    from shootout.userspace.arches import kernel_arch

    kernel = kernel_arch()
    if kernel in ("amd64", "i386"):
        return None
    side = "the armhf userspace (debian:RELEASE:armhf)" if kernel in ("arm64", "armhf") else "a 32-bit userspace"
    return (f"-{abi} is an x86 compiler option and this is an {kernel} machine, whose 32-bit side is {side}",
            f"use -c debian:bookworm:armhf, or leave -c out for the default {kernel} against armhf"
            if kernel in ("arm64", "armhf") else "use a debian:RELEASE:ARCH userspace")


class HostKind(Kind):
    name = "host"
    forms = ("host", "host+m32", "host+mx32", "kernel:RELEASE[:MACHINE][/USERSPACE]")
    hint = "use host, host+m32 or host+mx32, or kernel:RELEASE[:MACHINE][/USERSPACE] for a running kernel"
    target = "shootout.places.hosttarget:HostTarget"
    this_kernel = True
    host_abi = True
    disk_scratch = True

    def parse(self, spec: str) -> Config | None:
        base, _, abi = spec.partition("+")
        if base == "host" and (abi or None) in ABI_FLAGS:
            if abi and (problem := x86_abi_problem(abi)):
                raise UsageError(f"{spec}: {problem[0]}", problem[1])
            return Config(name=spec, target=self.name, label=HOST_LABELS[abi or None], abi=abi or None)
        if base == "host":
            raise UsageError(f"unknown configuration {spec!r}", self.hint)
        if spec.startswith("kernel:"):
            from shootout.boots.identity import (
                kernel_config,  # (the CLI imports kinds for its help: kept light)
            )

            userspace = spec.partition("/")[2]
            if not userspace:
                return kernel_config(spec)
            from shootout.places.chroot import ChrootKind

            if (inside := ChrootKind().parse(userspace)) is None:
                raise UsageError(f"{spec}: the userspace after / must be debian:RELEASE:ARCH or userspace:NAME",
                                 "e.g. kernel:kernel8.img/debian:bookworm:arm64")
            return kernel_config(spec, inside)
        return None
