"""Paths inside a userspace root seen from the host: symlinks resolve against the root, not /."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path, PurePosixPath

_MAX_LINKS = 40  # as the kernel's ELOOP limit


def resolve_in_root(root: Path, path: str) -> Path | None:
    """Host path of `path` (as seen inside root), following symlinks as a chroot would.

    Returns None when a component is missing or the links loop.
    """
    parts = list(PurePosixPath("/", path).parts[1:])
    current = PurePosixPath("/")
    links = 0
    while parts:
        part = parts.pop(0)
        if part in (".", ""):
            continue
        if part == "..":
            current = current.parent  # "/.." stays "/": a chroot cannot climb out
            continue
        candidate = current / part
        host = root / str(candidate).lstrip("/")
        if host.is_symlink():
            links += 1
            if links > _MAX_LINKS:
                return None
            target = PurePosixPath(os.readlink(host))
            if target.is_absolute():
                current = PurePosixPath("/")
            parts = list(target.parts[1:] if target.is_absolute() else target.parts) + parts
            continue
        if not host.exists() and not host.is_symlink():
            return None
        current = candidate
    return root / str(current).lstrip("/")


def which_in_root(root: Path, tool: str, search_path: str) -> str | None:
    """The in-root path of an executable `tool` along search_path, or None."""
    candidates = [tool] if "/" in tool else [f"{d.rstrip('/')}/{tool}" for d in search_path.split(":") if d]
    for inside in candidates:
        host = resolve_in_root(root, inside)
        if host is not None and host.is_file() and os.access(host, os.X_OK):
            return inside
    return None


def host_path_in_root(root: Path, path: str) -> Path:
    """Host path of `path` inside root, also for a file about to be made: the longest existing
    prefix resolves as a chroot would see it, the rest is appended."""
    found = resolve_in_root(root, path)
    if found is not None:
        return found
    parent, name = posixpath.split(posixpath.normpath("/" + path))
    if not name:
        return root
    return host_path_in_root(root, parent) / name
