"""Userspaces that the registry reads as made and ready (a directory and its metadata, no root
filesystem): for tests of which configurations a machine's default job picks."""

from __future__ import annotations

from shootout.userspace import registry


def arm_pair_ready(release: str = "bookworm") -> None:
    """debian-RELEASE-arm64 and debian-RELEASE-armhf, as if made."""
    for arch_name in ("arm64", "armhf"):
        name = f"debian-{release}-{arch_name}"
        path = registry.userspaces_dir() / name
        (path / "root").mkdir(parents=True)
        registry.write_meta(path, {"name": name, "arch": arch_name, "release": release, "ready": True,
                                   "packages": {}})
