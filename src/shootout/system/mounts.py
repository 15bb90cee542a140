"""Mounts made through the change journal, and deletion that never crosses into a mount.

Every mount here is made in this process's private mount namespace (system.mountns), so
the kernel drops it when the run dies; it is also private (no propagation to or from other
mounts), its undo is recorded before it is made, and the undo only unmounts what is still
mounted, lazily, so replaying it after a kill is safe.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.execution.fsread import unescape
from shootout.system.journal import Journal, Undo
from shootout.system.mountns import private_mounts

# Unmount only if still mounted: a replayed undo after a crash must not fail or hit a parent.
_UMOUNT_IF_MOUNTED = 'if mountpoint -q -- "$1"; then umount -l -- "$1"; fi'


def umount_undo(path: Path) -> Undo:
    return {"argv": ["sh", "-c", _UMOUNT_IF_MOUNTED, "shootout-umount", str(path)]}


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below path, as the kernel lists them for the calling thread's namespace."""
    base = str(path.resolve()) if path.exists() else str(path)
    found = []
    for line in Path("/proc/thread-self/mountinfo").read_text().splitlines():
        point = unescape(line.split()[4])
        if point == base or point.startswith(base.rstrip("/") + "/"):
            found.append(point)
    return found


def mount(journal: Journal, description: str, argv: list[str], point: Path) -> int:
    """Run a mount command for `point` through the journal, in the private mount namespace;
    TargetError with mount's message."""
    private_mounts()
    try:
        return journal.run(description, argv, umount_undo(point))
    except subprocess.CalledProcessError as exc:
        # mount(8) ends with a pointer to dmesg: the line before it says what failed
        said = [line for line in (exc.stderr or "").strip().splitlines() if "dmesg(1)" not in line]
        detail = said[-1:] or [f"exit {exc.returncode}"]
        raise TargetError(f"cannot {description}: {detail[0]}", "run as root; see `findmnt` and dmesg") from None


def bind_private(journal: Journal, source: Path, point: Path, what: str) -> int:
    return mount(journal, f"bind-mount {what} at {point}",
                 ["mount", "--bind", "--make-private", str(source), str(point)], point)


def mount_fs(journal: Journal, fstype: str, point: Path, options: str, what: str) -> int:
    return mount(journal, f"mount {what} at {point}",
                 ["mount", "--make-private", "-t", fstype, "-o", options, f"shootout-{fstype}", str(point)], point)


def make_dir(journal: Journal, path: Path) -> int:
    """Create an empty directory; its undo removes it only if still empty (never recursively)."""

    def do() -> None:
        path.mkdir(parents=False, exist_ok=False)

    undo = {"argv": ["rmdir", "--ignore-fail-on-non-empty", "--", str(path)], "tolerate_failure": True}
    return journal.change(f"create directory {path}", undo, do)


def safe_rmtree(path: Path) -> None:
    """Delete a tree, refusing while anything is mounted inside it (it would delete the host's files)."""
    if not path.exists() and not path.is_symlink():
        return
    if mounted := mounts_under(path):
        raise TargetError(f"{path} is in use: {mounted[0]} is mounted",
                          "stop the run using it, or run `shootout doctor` to undo a killed run's mounts")
    # --one-file-system: a mount that appeared after the check is still not crossed.
    done = subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise TargetError(f"cannot delete {path}: {last[0]}", "check its permissions and what is mounted there")
