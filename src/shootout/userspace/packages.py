"""Which packages a userspace gets (derived from the workload catalogue), and which it has."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

from shootout.errors import TargetError
from shootout.workloads.base import Workload
from shootout.workloads.registry import REGISTRY
from shootout.workloads.user import CommandWorkload


def workload_packages(*, at_creation: bool = True) -> tuple[str, ...]:
    """The Debian packages the catalogue's workloads need inside a userspace, as they declare
    them. at_creation: only those every userspace gets when it is made; the big ones of
    workloads that say preinstalled = False come on first use (userspace.apt)."""
    return _declared(REGISTRY.values(), at_creation)


def _declared(kinds: Iterable[type[Workload] | Workload], at_creation: bool) -> tuple[str, ...]:
    """The packages the workloads (classes or instances) declare, once each, in order."""
    return tuple(dict.fromkeys(p for k in kinds if k.preinstalled or not at_creation for p in k.debian_packages()))


def packages_at_creation(workloads: Iterable[Workload]) -> tuple[str, ...] | None:
    """What a userspace a run creates gets besides minbase: the packages of the run's
    workloads (the native suite needs a compiler and openssl, not node or fio: a fresh
    machine's first run builds two userspaces, so every package costs it time twice).
    The catalogue's others come on first use, as the big ones always do. None (the whole
    catalogue's) when the run has a user's command, which may call any of them."""
    if any(isinstance(w, CommandWorkload) for w in workloads):
        return None
    return _declared(workloads, at_creation=True)


def installed_versions(root: Path) -> dict[str, str]:
    """package -> version of every installed package, read from the root's dpkg database.

    Read with the host's dpkg-query so a foreign-arch root needs no emulation.
    """
    admindir = root / "var/lib/dpkg"
    try:
        done = subprocess.run(
            ["dpkg-query", f"--admindir={admindir}", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\n"],
            capture_output=True, text=True, timeout=120, check=False,
        )
    except FileNotFoundError:
        raise TargetError("dpkg-query is not available on this machine", "shootout userspaces need a Debian host") from None
    if done.returncode != 0:
        raise TargetError(f"cannot read the package database in {admindir}: {done.stderr.strip()}",
                          "remove and re-create the userspace")
    versions = {}
    for line in done.stdout.splitlines():
        status, _, rest = line.partition("\t")
        name, _, version = rest.partition("\t")
        if status.startswith("ii"):
            versions[name] = version
    return versions


def missing(versions: dict[str, str], packages: Iterable[str]) -> list[str]:
    return [p for p in packages if p not in versions]
