"""Tolerant readers for procfs/sysfs files under a root (a fake tree in tests)."""

from __future__ import annotations

import re
from pathlib import Path


def under(root: Path, path: str) -> Path:
    """`path` (absolute, as on a real machine) inside `root`."""
    return Path(root) / path.lstrip("/")


def read_text(root: Path, path: str | Path) -> str | None:
    """Stripped content, or None when missing or unreadable (sysfs files may refuse reads)."""
    p = path if isinstance(path, Path) else under(root, path)
    try:
        return p.read_text(errors="replace").strip()
    except OSError:
        return None


def read_int(root: Path, path: str | Path) -> int | None:
    text = read_text(root, path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def read_key_values(root: Path, path: str, sep: str = ":") -> dict[str, str]:
    """`key<sep> value` lines (e.g. /proc/meminfo); first occurrence of a key wins."""
    out: dict[str, str] = {}
    for line in (read_text(root, path) or "").splitlines():
        key, found, value = line.partition(sep)
        if found and key.strip() not in out:
            out[key.strip()] = value.strip()
    return out


def unescape(field: str) -> str:
    """A path as /proc/self/mountinfo and /proc/swaps print it: space, tab, newline and
    backslash escaped as \\ooo (octal)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)
