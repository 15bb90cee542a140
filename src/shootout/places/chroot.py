"""The chroot kind: a Debian userspace of shootout's on this machine (debian:RELEASE:ARCH, made
on first use, or userspace:NAME, an existing one of any name). Parsing only names the userspace;
shootout.configs.userspaces makes a missing one when a run is about to use it."""

from __future__ import annotations

from shootout.base.errors import TargetError, UsageError
from shootout.places.kind import Kind
from shootout.base.model import Config

# The registry of userspaces is imported where it is read: the CLI imports the kinds for its help.


def ready(name: str) -> bool:
    from shootout.userspace import registry

    return any(u.state == "ready" for u in registry.find(name))


def userspace_config_of(name: str, release: str, arch_name: str) -> Config:
    """The debian:RELEASE:ARCH configuration that runs in the userspace `name`."""
    return Config(name=f"debian:{release}:{arch_name}", target=ChrootKind.name, label=f"{arch_name} userspace",
                  userspace=name)


def debian_config(release: str, arch_name: str) -> Config:
    """debian:RELEASE:ARCH: the userspace debian-RELEASE-ARCH, named (a ready one must hold that
    release and architecture)."""
    from shootout.userspace import registry
    from shootout.userspace.arches import arch

    arch(arch_name)
    name = registry.check_name(registry.default_name(release, arch_name))
    if ready(name):
        found = registry.get_ready(name)
        if (found.arch, found.release) != (arch_name, release):
            raise TargetError(f"userspace {name} holds {found.release} {found.arch}, not {release} {arch_name}",
                              f"shootout userspace remove {name}, or use userspace:{name}")
    return userspace_config_of(name, release, arch_name)


def named_userspace_config(name: str) -> Config:
    """userspace:NAME: an existing userspace of any name."""
    from shootout.userspace import registry

    found = registry.get_ready(name)
    return Config(name=f"userspace:{name}", target=ChrootKind.name, label=f"{name} ({found.arch})", userspace=name)


class ChrootKind(Kind):
    name = "chroot"
    forms = ("debian:RELEASE:ARCH", "userspace:NAME")
    hint = "use debian:RELEASE:ARCH (made on first use) or userspace:NAME (see: shootout userspace list)"
    target = "shootout.places.chroottarget:ChrootTarget"
    this_kernel = True
    userspace = True
    disk_scratch = True

    def parse(self, spec: str) -> Config | None:
        if spec.startswith("debian:") and spec.count(":") == 2:
            _, release, arch_name = spec.split(":")
            return debian_config(release, arch_name)
        if spec.startswith("debian:"):
            raise UsageError(f"unknown configuration {spec!r}", self.hint)
        if spec.startswith("userspace:"):
            return named_userspace_config(spec.removeprefix("userspace:"))
        return None
