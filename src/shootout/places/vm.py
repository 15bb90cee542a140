"""The vm kind: a QEMU guest on this machine with a Debian userspace and kernel
(vm:debian:RELEASE:ARCH:KERNEL); hardware KVM, or TCG under --emulate (no verdicts). Its
target is a Debian userspace image with a Debian kernel, booted by qemu, reached over SSH.

`vm:debian:RELEASE:ARCH:FLAVOUR`, e.g. vm:debian:bookworm:i386:686-pae (32-bit kernel),
vm:debian:bookworm:i386:amd64 (64-bit kernel, 32-bit userspace), vm:debian:bookworm:amd64:amd64;
on arm: vm:debian:bookworm:armhf:armmp-lpae, vm:debian:bookworm:armhf:arm64, vm:debian:bookworm:arm64:arm64
(on an x86-64 host those run only emulated, --emulate).
open() checks for hardware KVM (refused without it unless --emulate asked for TCG), builds
or reuses the image, boots it and waits until its sshd answers with the image's own host
key; from then on everything is the ssh target's. close() ends the ssh side, then qemu.
A VM cannot install what a workload lacks once it runs (its disk is a snapshot): the run
says which packages its workloads need before open(), and the image is made from a
userspace that has them (installed there first, through apt in a chroot).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config, UserspaceRef
from shootout.base.paths import data_dir
from shootout.places.kind import Kind
from shootout.places.ssh import SshTarget
from shootout.remote.channel import SshAddress, SshChannel
from shootout.system.journal import Journal
from shootout.userspace import registry
from shootout.vm import kvm, qemu
from shootout.vm.image import VmImage, build_image
from shootout.vm.kvm import Accel, choose_accel

BOOT_TIMEOUT_S = {"kvm": 180.0, "tcg": 900.0}
_runs = itertools.count(1)


def emulated(config: Config) -> Config:
    """The configuration with --emulate: TCG instead of refusing when KVM is not hardware-backed."""
    return VmKind().emulate(config)


def image_for(config: Config, packages: Sequence[str], journal: Journal) -> VmImage:
    """The image a vm: configuration boots: its userspace (created on first use) with the
    packages given, where its release offers them, and the configuration's kernel."""
    from shootout.places.chroot import (  # creates the userspace on first use
        ChrootTarget,
        userspace_config,
    )

    opt = config.option
    chroot_config = userspace_config(opt("release") or "", opt("arch") or "", packages=packages)
    name = chroot_config.userspace or ""
    userspace = registry.get_ready(name)
    if lacking := [p for p in dict.fromkeys(packages) if p not in userspace.packages]:
        chroot = ChrootTarget(chroot_config, journal)
        try:
            offered, _ = chroot.offers(lacking)
            # one the release lacks is not an error here: its workload says so when it is prepared
            if available := [p for p in lacking if offered.get(p)]:
                chroot.provide(available)
        finally:
            chroot.close()
        userspace = registry.get_ready(name)
    return build_image(userspace, opt("flavour") or "", journal)


class VmTarget(SshTarget):
    def __init__(self, config: Config, journal: Journal, shape: qemu.VmShape | None = None) -> None:
        # The address is known only once qemu has a port: a placeholder until open().
        super().__init__(config, journal, channel=SshChannel(SshAddress("root@127.0.0.1"), journal))
        self.shape = shape or qemu.VmShape()
        self.vm: qemu.RunningVm | None = None
        self.accel: Accel | None = None
        self.boot_s: float | None = None
        self._packages: list[str] = []

    def expect_packages(self, packages: Sequence[str]) -> None:
        self._packages = list(packages)

    def open(self) -> None:
        if self.vm is not None:
            return
        opt = self.config.option
        release, arch, flavour = opt("release"), opt("arch"), opt("flavour")
        if not (release and arch and flavour):
            raise UsageError(f"configuration {self.config.name} lacks release, arch or flavour", VmKind.hint)
        self.accel = choose_accel(emulate=opt("emulate") == "yes", guest=arch)
        image = image_for(self.config, self._packages, self.journal)
        run_dir = data_dir() / "vm-runs" / f"{os.getpid()}-{next(_runs)}"
        self.vm = qemu.boot(image, self.shape, self.accel, self.journal, run_dir)
        try:
            address = SshAddress("root@127.0.0.1", self.vm.port, identity=str(image.client_key),
                                 known_hosts=str(self.vm.known_hosts))
            self.channel = SshChannel(address, self.journal)
            self.where = f"VM {self.config.name}"
            self._wait_for_ssh(BOOT_TIMEOUT_S[self.accel.name])
            super().open()
        except BaseException:
            self.close()
            raise

    def _wait_for_ssh(self, timeout: float) -> None:
        assert self.vm is not None
        t0 = time.monotonic()
        while True:
            qemu.check_alive(self.vm)
            try:
                self.channel.open()
                self.boot_s = time.monotonic() - t0
                return
            except TargetError as exc:
                if "host key" in exc.message or time.monotonic() - t0 > timeout:
                    raise TargetError(f"the VM {self.config.name} did not answer over SSH within {timeout:.0f} s "
                                      f"({exc.message}); its console: {self.vm.console_reason()}",
                                      f"{self.vm.keep_console()}; under TCG a boot takes about a minute") from None
            time.sleep(1.0)

    def close(self) -> None:
        super().close()
        if self.vm is not None:
            qemu.stop(self.vm, self.journal)
            self.vm = None

    def facts(self, packages: Sequence[str] = ()) -> dict[str, Any]:
        found = super().facts(packages)
        assert self.vm is not None and self.accel is not None
        found.update(
            emulated=self.accel.emulated, channel="ssh to a qemu VM",
            vm={"qemu_argv": self.vm.argv, "accel": self.accel.name, "why_not_kvm": self.accel.why_not_kvm,
                "shape": asdict(self.shape), "boot_s": self.boot_s, "image": self.vm.image.meta},
        )
        return found


class VmKind(Kind):
    name = "vm"
    forms = ("vm:debian:RELEASE:ARCH:KERNEL",)
    hint = "use vm:debian:RELEASE:ARCH:KERNEL, e.g. vm:debian:bookworm:i386:686-pae"
    target = VmTarget
    elsewhere = True  # its own kernel: this machine's settings are not the guest's

    def parse(self, spec: str) -> Config | None:
        return vm_config(spec) if spec.startswith("vm:") else None

    def problem(self, config: Config) -> str | None:
        if config.option("emulate") != "yes" and (problem := kvm.kvm_problem(guest=config.option("arch"))) is not None:
            return (f"no hardware KVM here ({problem}): a VM would measure the emulator, not the kernel; "
                    "pass --emulate to check that it works (results marked emulated, no verdicts)")
        return None

    def emulate(self, config: Config) -> Config:
        return replace(config, options=(*config.options, ("emulate", "yes")))

    def emulated_here(self, config: Config) -> bool:
        return config.option("emulate") == "yes" and kvm.kvm_problem(guest=config.option("arch")) is not None


def vm_config(spec: str) -> Config:
    parts = spec.split(":")
    if len(parts) != 5 or parts[1] != "debian" or not all(parts[2:]):
        raise UsageError(f"bad VM configuration {spec!r}", VmKind.hint)
    _, _, release, arch, flavour = parts
    return Config(name=spec, target=VmKind.name, label=f"VM: {arch} userspace, {flavour} kernel",
                  options=(("release", release), ("arch", arch), ("flavour", flavour)),
                  userspace_ref=UserspaceRef(release, arch))
