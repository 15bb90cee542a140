"""A disk image as a file the kernel can attach: the user's own when it is raw, else its
unpacked copy in the cache (images/SHA256.img), made once per compressed file's checksum.

The user's file is only ever read. An unpacking runs into a .part file whose removal the
journal holds, so a kill leaves no half image that a later run would take for whole.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from shootout.base.errors import TargetError, ToolMissing
from shootout.base.paths import data_subdir
from shootout.execution.tools import CLEAN_PATH
from shootout.system.journal import Journal

# suffix -> (the command that writes the unpacked image to stdout, its Debian package)
UNPACKERS: dict[str, tuple[tuple[str, ...], str]] = {
    ".xz": (("xz", "-dc", "-T0"), "xz-utils"),
    ".zst": (("zstd", "-dcq"), "zstd"),
    ".gz": (("gzip", "-dc"), "gzip"),
}
_SUMS = "checksums.json"  # path -> [size, mtime_ns, sha256]: a file unchanged is not hashed again


def images_dir() -> Path:
    return data_subdir("images")


def compressed(path: Path) -> str | None:
    """The suffix of a compressed image (.xz, .zst, .gz), None for a raw one."""
    return path.suffix if path.suffix in UNPACKERS else None


def sha256(path: Path) -> str:
    """The file's sha256, remembered by size and modification time (a 1 GB image takes seconds)."""
    stat = path.stat()
    memo = images_dir() / _SUMS
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    key = str(path.resolve())
    if isinstance(known.get(key), list) and known[key][:2] == [stat.st_size, stat.st_mtime_ns]:
        return str(known[key][2])
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    known[key] = [stat.st_size, stat.st_mtime_ns, digest.hexdigest()]
    part = memo.with_suffix(f".{os.getpid()}.tmp")
    part.write_text(json.dumps(known, indent=1))
    part.replace(memo)
    return digest.hexdigest()


def raw_image(path: Path, journal: Journal, say: Callable[[str], None]) -> Path:
    """The raw disk image of `path`: itself, or its unpacked copy in the cache (made now once)."""
    suffix = compressed(path)
    if suffix is None:
        return path
    cached = images_dir() / f"{sha256(path)}.img"
    if cached.is_file():
        return cached
    with open(cached.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another shootout unpacking the same image: wait for its copy
        return cached if cached.is_file() else _unpack(path, suffix, cached, journal, say)


def _unpack(path: Path, suffix: str, cached: Path, journal: Journal, say: Callable[[str], None]) -> Path:
    command, package = UNPACKERS[suffix]
    if shutil.which(command[0], path=CLEAN_PATH) is None:
        raise ToolMissing(command[0], package)
    part = cached.with_suffix(".part")
    say(f"unpacking {path.name} into shootout's cache (once: its copy is kept, keyed by its sha256)")

    def unpack() -> None:
        with open(path, "rb") as source, open(part, "wb") as out:
            done = subprocess.run(command, stdin=source, stdout=out, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "PATH": CLEAN_PATH}, check=False)
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise TargetError(f"cannot unpack {path}: {why}",
                              "the file is damaged or truncated: download it again and check its checksum")

    entry = journal.record(f"unpack {path} into {part}", {"remove": str(part)})
    try:
        unpack()
        part.replace(cached)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise TargetError(f"cannot unpack {path} into {part.parent}: {exc.strerror or exc}",
                          "free some space in shootout's data directory (SHOOTOUT_HOME)") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    journal.undo_entry(entry)  # the .part is gone: nothing left to undo
    return cached
