"""The image kind: a system the user brings, run as a chroot into it, never written.

  image:PATH    a disk image with a partition table (.img, or .img.xz/.img.zst/.img.gz,
                unpacked once into shootout's cache): Raspberry Pi OS, Armbian, Debian's raw
                cloud images; its root is the partition cmdline.txt's root= names, else the
                Linux filesystem holding /etc/os-release (images/layout.py)
  rootfs:PATH   a second root: a directory, or a block device (a whole disk, or its root
                partition: a second SD card in a USB reader, a root on a USB SSD)

Parsing only names the path. Before the run (Kind.prepare) the root is found and read once:
its architecture and release become the configuration's userspace_ref, so that a foreign
image is refused without --emulate as a foreign debian: side is. The target attaches the root
read-only (a read-only loop device, a read-only mount) under an overlay whose upper directory
holds what the run writes, and then runs as a chroot target on that view (places/chroot.py):
the same private mounts, PID namespace and work directory. What a workload needs and the
image lacks is installed by the image's own apt from the image's own sources, into the
overlay; where its mirror cannot be reached the workload is lost on every side, with apt's
one line. Every loop device, mount and directory goes through the journal.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError
from shootout.base.model import Config, UserspaceRef
from shootout.execution.tools import find_tool
from shootout.images.attach import (
    loop_readonly,
    mount_overlay,
    mount_readonly,
    overlay_dir,
)
from shootout.images.inspect import Root, inspect_directory, inspect_disk
from shootout.images.unpack import UNPACKERS
from shootout.places.chroot import ChrootKind, ChrootTarget
from shootout.system.journal import Journal, journal
from shootout.userspace import apt, registry
from shootout.userspace.packages import installed_versions

IMAGE, ROOTFS = "image", "rootfs"  # the option holding the path, by form


def _path(config: Config) -> tuple[str, Path]:
    form = IMAGE if config.option(IMAGE) else ROOTFS
    return form, Path(config.option(form) or "")


def _label(path: Path) -> str:
    """The image's file name without its suffixes (raspios-bookworm-armhf.img.xz -> raspios-bookworm-armhf)."""
    name = path.name
    for suffix in (*UNPACKERS, ".img", ".raw"):
        name = name.removesuffix(suffix)
    return name or str(path)


def brought_root(config: Config, journal: Journal, say: Callable[[str], None]) -> Root:
    """The configuration's root, found and read (an image's answer is cached by its sha256)."""
    form, path = _path(config)
    if form == ROOTFS and path.is_dir():
        return inspect_directory(path)
    return inspect_disk(path, IMAGE if form == IMAGE else "device", journal, say)


class ImageTarget(ChrootTarget):
    def _userspace(self, config: Config) -> registry.Userspace:
        self.brought = brought_root(config, self.journal, lambda line: None)
        tag = self.brought.sha256[:12] if self.brought.sha256 else re.sub(r"[^a-z0-9.+_-]+", "-",
                                                                         _label(Path(self.brought.source)).lower())
        name = f"{IMAGE}-{tag}"[:64]
        # a userspace whose directory is the overlay (made when the target opens), marked brought:
        # its apt sources are the image's own and nothing of it is written to the registry
        meta = {"arch": self.brought.arch, "release": self.brought.release, "image": self.brought.source}
        return registry.Userspace(registry.check_name(name), Path("/nonexistent"), "ready", meta)

    @property
    def root(self) -> Path:
        self.open()
        return self.userspace.root

    def open(self) -> None:
        if self._session is not None:
            return
        try:
            with self.journal.lock:
                directory = overlay_dir(self.journal, self.userspace.name, self._entries)
                if self.brought.kind == "directory":
                    lower = Path(self.brought.source)
                else:
                    device = loop_readonly(self.journal, Path(self.brought.backing), self.brought.partition,
                                           self._entries)
                    lower = directory / "lower"
                    fstype = self.brought.partition.fstype if self.brought.partition else None
                    mount_readonly(self.journal, device, fstype or "auto", lower, self._entries)
                mount_overlay(self.journal, lower, directory, self._entries)
            self.userspace = replace(self.userspace, path=directory,
                                     meta={**self.userspace.meta, "packages": installed_versions(directory / "root")})
            super().open()
        except BaseException:
            self.close()
            raise

    def provide(self, packages: Sequence[str], components: Sequence[str] = (),
                versions: Mapping[str, str] | None = None) -> list[str]:
        installed = apt.provide(self, packages, components, versions)
        if installed:  # into the overlay: this target's own, gone with it
            self.userspace = replace(self.userspace, meta={**self.userspace.meta,
                                                           "packages": installed_versions(self.userspace.root)})
        return installed

    def facts(self, packages: Sequence[str] = ()) -> dict[str, Any]:
        found = super().facts(packages)
        root = self.brought
        part = root.partition
        found.update(
            userspace=_label(Path(root.source)),
            release=root.release,
            os_release={k: v for k, v in root.os_release.items() if k in ("PRETTY_NAME", "ID", "VERSION_ID",
                                                                          "VERSION_CODENAME")},
            brought={"source": root.source, "kind": root.kind, "sha256": root.sha256, "how": root.how,
                     "partition": None if part is None else {"number": part.number, "fstype": part.fstype,
                                                             "partuuid": part.partuuid}},
        )
        return found


class ImageKind(ChrootKind):
    name = "image"
    forms = ("image:PATH", "rootfs:PATH")
    hint = ("use image:PATH for a disk image (.img, .img.xz, .img.zst, .img.gz) or rootfs:PATH for a root "
            "directory or block device")
    target = ImageTarget

    def parse(self, spec: str) -> Config | None:
        form, colon, value = spec.partition(":")
        if form not in (IMAGE, ROOTFS) or not colon:
            return None
        if not value:
            raise UsageError(f"{spec!r} names no path", self.hint)
        path = Path(value).expanduser()
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise UsageError(f"{spec}: {exc.strerror or exc}", self.hint) from None
        if form == IMAGE and not stat.S_ISREG(mode):
            raise UsageError(f"{spec}: not a file", "image: takes a disk image file; a directory or a device is "
                             f"rootfs:{value}")
        if form == ROOTFS and not (stat.S_ISDIR(mode) or stat.S_ISBLK(mode)):
            raise UsageError(f"{spec}: neither a directory nor a block device", f"a disk image file is image:{value}")
        return Config(name=spec, target=self.name, label=_label(path), options=((form, str(path.resolve())),))

    def problem(self, config: Config) -> str | None:
        if os.geteuid() != 0:
            return "a brought image or root needs root (read-only loop devices, mounts and a chroot)"
        for tool, package in (("sfdisk", "fdisk"), ("mtype", "mtools"), ("losetup", "util-linux")):
            if find_tool(tool) is None:
                return f"{tool} is not installed (apt-get install {package})"
        return None

    def prepare(self, config: Config, say: Callable[[str], None]) -> Config:
        """Its root found and read now (an image unpacked once): its architecture and release."""
        with journal() as j:
            root = brought_root(config, j, say)
        say(f"{config.name}: {root.pretty} ({root.arch}), root from {root.how}")
        return replace(config, userspace_ref=UserspaceRef(root.release, root.arch))
