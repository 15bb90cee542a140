"""Make the target a configuration names."""

from __future__ import annotations

from shootout.errors import UsageError
from shootout.model import Config
from shootout.system.journal import Journal
from shootout.targets.base import Target


def target_problem(config: Config) -> str | None:
    """Why the configuration's target cannot be used here, in one line, before anything starts."""
    if config.target == "vm" and config.option("emulate") != "yes":
        from shootout.vm.kvm import kvm_problem

        if (problem := kvm_problem(guest=config.option("arch"))) is not None:
            return (f"no hardware KVM here ({problem}): a VM would measure the emulator, not the kernel; "
                    "pass --emulate to check that it works (results marked emulated, no verdicts)")
    return None


def runs_emulated(config: Config) -> bool:
    """A vm: configuration that --emulate puts under TCG here (no hardware KVM): no verdicts."""
    if config.target != "vm" or config.option("emulate") != "yes":
        return False
    from shootout.vm.kvm import kvm_problem

    return kvm_problem(guest=config.option("arch")) is not None


def make_target(config: Config, journal: Journal) -> Target:
    if config.target == "host":
        from shootout.targets.host import HostTarget

        return HostTarget(config, journal)
    if config.target == "chroot":
        from shootout.targets.chroot import ChrootTarget

        return ChrootTarget(config, journal)
    if config.target == "ssh":
        from shootout.targets.ssh import SshTarget

        return SshTarget(config, journal)
    if config.target == "vm":
        from shootout.targets.vm import VmTarget

        return VmTarget(config, journal)
    if config.target == "fake":
        from shootout.targets.fake import FakeTarget

        return FakeTarget(config, journal)
    raise UsageError(f"unknown target {config.target!r} in configuration {config.name}", "use host, chroot, ssh or vm")
