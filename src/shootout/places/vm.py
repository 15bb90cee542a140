"""The vm kind: a QEMU guest on this machine with a Debian userspace and kernel
(vm:debian:RELEASE:ARCH:KERNEL); hardware KVM, or TCG under --emulate (no verdicts)."""

from __future__ import annotations

from dataclasses import replace

from shootout.base.errors import UsageError
from shootout.places.kind import Kind
from shootout.base.model import Config
from shootout.vm import kvm


class VmKind(Kind):
    name = "vm"
    forms = ("vm:debian:RELEASE:ARCH:KERNEL",)
    hint = "use vm:debian:RELEASE:ARCH:KERNEL, e.g. vm:debian:bookworm:i386:686-pae"
    target = "shootout.places.vmtarget:VmTarget"
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
                  options=(("release", release), ("arch", arch), ("flavour", flavour)))
