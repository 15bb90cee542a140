"""Debootstrap userspaces: create, list, update, remove; configurations that run in them.

The chroot target that runs trials inside one is shootout.targets.chroot.ChrootTarget.
"""

from shootout.userspace.abi import elf_identity, expected_abi, tool_elf, verify_abi
from shootout.userspace.arches import ARCHES, COMPANION_32, host_arch, is_foreign
from shootout.userspace.configs import (
    headline_configs,
    named_userspace_config,
    userspace_config,
)
from shootout.userspace.create import DEFAULT_MIRROR, create_userspace, host_release
from shootout.userspace.packages import WORKLOAD_PACKAGES
from shootout.userspace.registry import (
    Userspace,
    get_ready,
    list_userspaces,
    package_versions,
    remove_userspace,
    version_confounders,
)
from shootout.userspace.update import update_userspace

__all__ = [
    "ARCHES",
    "COMPANION_32",
    "DEFAULT_MIRROR",
    "WORKLOAD_PACKAGES",
    "Userspace",
    "create_userspace",
    "elf_identity",
    "expected_abi",
    "get_ready",
    "headline_configs",
    "host_arch",
    "host_release",
    "is_foreign",
    "list_userspaces",
    "named_userspace_config",
    "package_versions",
    "remove_userspace",
    "tool_elf",
    "update_userspace",
    "userspace_config",
    "verify_abi",
    "version_confounders",
]
