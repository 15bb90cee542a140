"""The Debian packages the workload catalogue needs inside a userspace, as its workloads declare them.

The userspace layer sits below the workloads: whoever makes a userspace passes these in.
"""

from __future__ import annotations

from collections.abc import Iterable

from shootout.workloads.catalogue import REGISTRY
from shootout.workloads.contract import Workload
from shootout.workloads.user import CommandWorkload


def workload_packages(*, at_creation: bool = True) -> tuple[str, ...]:
    """The Debian packages the catalogue's workloads need inside a userspace, as they declare
    them. at_creation: only those every userspace gets when it is made; the big ones of
    workloads that say preinstalled = False come on first use (userspace.apt)."""
    return _declared(REGISTRY.values(), at_creation)


def _declared(kinds: Iterable[type[Workload] | Workload], at_creation: bool) -> tuple[str, ...]:
    """The packages the workloads (classes or instances) declare, once each, in order."""
    return tuple(dict.fromkeys(p for k in kinds if k.preinstalled or not at_creation for p in k.debian_packages()))


def packages_at_creation(workloads: Iterable[Workload]) -> tuple[str, ...]:
    """What a userspace a run creates gets besides minbase: the packages of the run's
    workloads (the native suite needs a compiler and openssl, not node or fio: a fresh
    machine's first run builds two userspaces, so every package costs it time twice).
    The catalogue's others come on first use, as the big ones always do. The whole
    catalogue's when the run has a user's command, which may call any of them."""
    if any(isinstance(w, CommandWorkload) for w in workloads):
        return workload_packages()
    return _declared(workloads, at_creation=True)
