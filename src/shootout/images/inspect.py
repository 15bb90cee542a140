"""What a brought root is: os-release, Debian architecture and release, and where it was found.

An image is inspected once: its root partition mounted read-only for a moment, read, and
unmounted; the answer kept beside the unpacked image (images/KEY.json), so a later run (or
the target of this one) reads it without mounting. A directory is read in place.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.elf import elf_identity
from shootout.images.attach import loop_readonly, mount_readonly
from shootout.images.layout import Partition, candidates
from shootout.images.unpack import images_dir, raw_image, sha256
from shootout.system.journal import Journal
from shootout.system.mounts import make_dir
from shootout.userspace.arches import ARCHES
from shootout.userspace.rootfs import resolve_in_root

OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
_looks = itertools.count(1)


@dataclass(frozen=True)
class Root:
    """A brought root, found and read."""

    source: str  # the user's path: an image, a device or a directory
    kind: str  # "image" | "device" | "directory"
    backing: str  # what a loop device is attached to: the raw image or the device ("" for a directory)
    partition: Partition | None  # where the root is in backing (None: a directory)
    how: str  # how the root was chosen
    os_release: dict[str, str]
    arch: str
    release: str
    sha256: str | None = None  # of the user's image file

    @property
    def pretty(self) -> str:
        return self.os_release.get("PRETTY_NAME") or self.os_release.get("NAME") or "an unnamed Linux system"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Root:
        part = data.get("partition")
        fields = {**data, "partition": Partition(**part) if isinstance(part, dict) else None}
        return cls(**fields)  # type: ignore[arg-type]


def os_release(root: Path) -> dict[str, str] | None:
    for name in OS_RELEASE:
        path = resolve_in_root(root, name)
        if path is not None and path.is_file():
            pairs = (line.split("=", 1) for line in path.read_text(errors="replace").splitlines() if "=" in line)
            return {k.strip(): v.strip().strip('"').strip("'") for k, v in pairs}
    return None


def root_arch(root: Path) -> str | None:
    """The root's Debian architecture (its dpkg's), else its shell's ELF machine in Debian's names."""
    admindir = root / "var/lib/dpkg"
    if admindir.is_dir():
        done = subprocess.run(["dpkg-query", f"--admindir={admindir}", "-W", "-f", "${Architecture}", "dpkg"],
                              capture_output=True, text=True, timeout=60, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    shell = resolve_in_root(root, "/bin/sh")
    elf = elf_identity(shell) if shell is not None else {}
    # the first of Debian's architectures with that ELF machine and class (armhf before armel)
    return next((a.name for a in ARCHES.values() if (a.machine, a.bits) == (elf.get("machine"), elf.get("elf_class"))),
                None)


def read_root(root: Path, source: str, kind: str, backing: str, part: Partition | None, how: str,
              digest: str | None) -> Root | None:
    """The Root of a mounted or plain directory, None when it holds no os-release."""
    found = os_release(root)
    if found is None:
        return None
    arch = root_arch(root)
    if arch is None:
        raise TargetError(f"{source}: cannot tell the architecture of its root ({how})",
                          "its /bin/sh is no ELF binary of a known architecture and it has no dpkg")
    release = found.get("VERSION_CODENAME") or found.get("VERSION_ID") or found.get("ID", "unknown")
    return Root(source, kind, backing, part, how, found, arch, release, digest)


def _cached(key: str) -> Path:
    return images_dir() / f"{key}.json"


def inspect_directory(path: Path) -> Root:
    found = read_root(path, str(path), "directory", "", None, "the directory", None)
    if found is None:
        raise TargetError(f"{path}: no /etc/os-release in it: not the root of an installed system",
                          "give the directory that holds the system's /etc and /usr")
    return found


def inspect_disk(path: Path, kind: str, journal: Journal, say: Callable[[str], None]) -> Root:
    """An image (unpacked into the cache when compressed) or a block device: its root found,
    mounted read-only for a moment, read. An image's answer is kept by its sha256."""
    digest = sha256(path) if kind == "image" else None
    if digest and (memo := _cached(digest)).is_file():
        found = Root.from_dict(json.loads(memo.read_text()))
        if not found.backing or Path(found.backing).exists():
            return found
    backing = raw_image(path, journal, say) if kind == "image" else path
    tried, how, parts = candidates(backing)
    for part in tried:
        found = _mounted_read(journal, path, kind, backing, part, how, digest)
        if found is not None:
            if digest:  # written whole or not at all: another run may read it meanwhile
                part = _cached(digest).with_suffix(f".{os.getpid()}.tmp")
                part.write_text(json.dumps(found.as_dict(), indent=1))
                part.replace(_cached(digest))
            return found
    listed = ", ".join(p.describe() for p in parts)
    raise TargetError(f"{path}: no partition holds a Linux root with /etc/os-release (found {listed})",
                      "give an image of an installed Linux system")


def _mounted_read(journal: Journal, source: Path, kind: str, backing: Path, part: Partition, how: str,
                  digest: str | None) -> Root | None:
    """Mount the partition read-only for a moment and read it; everything undone at once."""
    point = images_dir() / f".inspect-{os.getpid()}-{next(_looks)}"
    entries = [make_dir(journal, point)]
    try:
        device = loop_readonly(journal, backing, part, entries)
        mount_readonly(journal, device, part.fstype or "auto", point, entries)
        return read_root(point, str(source), kind, str(backing), part, how, digest)
    finally:
        for entry in reversed(entries):
            journal.undo_entry(entry)
