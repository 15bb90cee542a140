"""Root filesystems as the kernel and the mount table name them: a command line's root=, the
device a PARTUUID=, UUID= or LABEL= stands for, where a device is mounted, what an fstab mounts.

Read under a root (the real "/", or a fake tree in tests) through the symlinks udev keeps in
/dev/disk/by-partuuid, by-uuid and by-label; nothing is written or mounted here.
"""

from __future__ import annotations

import os
from pathlib import Path

from shootout.execution.fsread import read_text, under

# fstab's and the kernel's names for a filesystem -> the udev directory that resolves them
_BY = {"PARTUUID": "by-partuuid", "UUID": "by-uuid", "LABEL": "by-label"}


def cmdline_root(cmdline: str) -> str | None:
    """The root= of a kernel command line; the last one wins, as the kernel reads it."""
    found = [word.partition("=")[2] for word in cmdline.split() if word.startswith("root=")]
    return found[-1] if found else None


def replace_root(cmdline: str, new_root: str) -> str:
    """The command line booting `new_root`: its first root= replaced, later ones (which would win) dropped;
    put first where there is none."""
    words, out = cmdline.split(), []
    for word in words:
        if not word.startswith("root="):
            out.append(word)
        elif not any(w.startswith("root=") for w in out):
            out.append(f"root={new_root}")
    return " ".join(out if cmdline_root(cmdline) is not None else [f"root={new_root}", *out])


def device_of(name: str, root: Path = Path("/")) -> str | None:
    """The /dev path a root=/fstab name stands for (PARTUUID=…, UUID=…, LABEL=…, /dev/…), as seen
    from `root`; None when no such device exists."""
    key, eq, value = name.partition("=")
    if eq and key in _BY:  # udev writes PARTUUIDs in lower case, a FAT volume's UUID in upper case
        links = [under(root, f"/dev/disk/{_BY[key]}/{v}") for v in dict.fromkeys((value, value.lower()))]
    elif name.startswith("/dev/"):
        links = [under(root, name)]
    else:
        return None
    link = next((p for p in links if os.path.lexists(p)), None)
    if link is None:
        return None
    resolved = link.resolve()
    try:
        return "/" + str(resolved.relative_to(Path(root).resolve()))
    except ValueError:
        return str(resolved)


def partuuid_of(device: str, root: Path = Path("/")) -> str | None:
    """The PARTUUID of a /dev path, from udev's by-partuuid links; None where none points at it."""
    links = under(root, "/dev/disk/by-partuuid")
    if not links.is_dir():
        return None
    return next((link.name for link in sorted(links.iterdir()) if device_of(f"PARTUUID={link.name}", root) == device),
                None)


def mounts(root: Path = Path("/")) -> list[tuple[str, str]]:
    """(source, mount point) of every mount this process sees, in mount order."""
    text = read_text(root, "/proc/self/mounts") or read_text(root, "/proc/mounts") or ""
    return [(fields[0], fields[1].replace("\\040", " ")) for fields in (line.split() for line in text.splitlines())
            if len(fields) >= 2]


def mounted_at(device: str, root: Path = Path("/")) -> str | None:
    """Where the device is mounted (the first such mount), as seen from `root`; None when it is not."""
    return next((point for source, point in mounts(root) if device_of(source, root) == device), None)


def mount_holding(path: str, root: Path = Path("/")) -> tuple[str, str] | None:
    """(source, mount point) of the filesystem that holds `path`: the longest mount point above it."""
    found = [(source, point) for source, point in mounts(root)
             if path == point or path.startswith(point.rstrip("/") + "/")]
    return max(found, key=lambda m: len(m[1])) if found else None


def fstab(text: str) -> list[tuple[str, str]]:
    """(filesystem, mount point) of each fstab line."""
    return [(fields[0], fields[1]) for fields in (line.split("#", 1)[0].split() for line in text.splitlines())
            if len(fields) >= 2]
