"""Kernel settings in files (sysctl under /proc/sys, parameters under /sys), switched per
configuration through the change journal.

A run names, per configuration, a value for some of these files. Configurations that do not
name a file run with the machine's own value, so a switch always knows, for every file any
configuration names, either the wanted value or the original. The first write to a file is
journalled with the original as its undo; later writes in the same run are not, since the
undo is the same. Reads go through `root` so that tests can use a fake tree.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shootout.base.errors import TargetError, UsageError
from shootout.system.journal import Journal

_SYSCTL_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+/-]*$")

# Files of which the kernel keeps one in force: writing one zeroes the other. Restoring such a
# file means writing whichever of the pair was non-zero (relative to /proc/sys).
_PARTNERS = {"vm/dirty_ratio": "vm/dirty_bytes", "vm/dirty_background_ratio": "vm/dirty_background_bytes"}
_PARTNERS |= {b: a for a, b in _PARTNERS.items()}

_TRUE, _FALSE = {"1", "y", "yes", "on", "true"}, {"0", "n", "no", "off", "false"}


@dataclass(frozen=True)
class SysFile:
    name: str  # as the user wrote it: "vm.dirty_ratio" or "/sys/module/zswap/parameters/enabled"
    real: str  # the file on a real machine, e.g. "/proc/sys/vm/dirty_ratio"

    def path(self, root: Path) -> Path:
        return Path(root) / self.real.lstrip("/")


def sysctl_file(name: str, where: str) -> SysFile:
    """vm.dirty_ratio -> /proc/sys/vm/dirty_ratio; with a '/' in the name, '/' separates and '.'
    is literal (as sysctl(8) reads net.ipv4.conf.eth0/1.forwarding)."""
    parts = name.split("/") if "/" in name else name.split(".")
    if not _SYSCTL_NAME.match(name) or any(p in ("", "..", ".") for p in parts):
        raise UsageError(f"{where}: {name!r} is not a sysctl name", 'write it as sysctl(8) does, e.g. "vm.dirty_ratio"')
    return SysFile(name, "/proc/sys/" + "/".join(parts))


def sysfs_file(path: str, where: str) -> SysFile:
    parts = path.split("/")
    if not path.startswith("/sys/") or any(p in ("", "..", ".") for p in parts[1:]):
        raise UsageError(f"{where}: {path!r} is not a file under /sys",
                         'give the full path, e.g. "/sys/module/zswap/parameters/enabled"')
    return SysFile(path, path)


def exclusive(files: Iterable[SysFile]) -> tuple[str, str] | None:
    """Two of the files of which the kernel keeps only one in force (e.g. vm.dirty_ratio and
    vm.dirty_bytes), or None."""
    named = {f.real.removeprefix("/proc/sys/") for f in files}
    for real in sorted(named):
        if (partner := _PARTNERS.get(real)) in named:
            return real.replace("/", "."), partner.replace("/", ".")
    return None


def normalize(text: str) -> str:
    """Whitespace collapsed; of a choice list such as "always [madvise] never", the chosen one."""
    chosen = re.search(r"\[([^\]]+)\]", text)
    return chosen.group(1) if chosen else " ".join(text.split())


def same(current: str, wanted: str) -> bool:
    """Whether `current` (read from the kernel) is `wanted`, as the kernel spells it back
    (zswap's enabled reads "Y" after "1" was written)."""
    have, want = normalize(current), normalize(wanted)
    if have == want:
        return True
    for truth in (_TRUE, _FALSE):
        if have.lower() in truth and want.lower() in truth:
            return True
    return False


def _read(f: SysFile, root: Path) -> str:
    try:
        return " ".join(f.path(root).read_text().split())
    except OSError as exc:
        raise TargetError(f"cannot read {f.name}: {exc.strerror or exc}", "check that the file exists here") from None


def _write(f: SysFile, root: Path, value: str) -> None:
    f.path(root).write_text(value)


def _restore(f: SysFile, root: Path, originals: Mapping[SysFile, str]) -> tuple[SysFile, str]:
    """The write that puts f's original state back (its partner, if the partner was in force)."""
    partner_real = _PARTNERS.get(f.real.removeprefix("/proc/sys/"))
    if partner_real is not None and originals.get(f, "0") == "0":
        partner = SysFile(partner_real.replace("/", "."), "/proc/sys/" + partner_real)
        value = originals.get(partner) or _read(partner, root)
        if value != "0":
            return partner, value
    return f, originals[f]


def write_problem(f: SysFile, value: str, root: Path, journal: Journal) -> str | None:
    """Why `value` cannot be set in f here, one line, or None. The value is really written
    (through the journal) and read back, then the original is put back at once: only the
    kernel knows which values it takes."""
    path = f.path(root)
    what = "sysctl" if f.real.startswith("/proc/sys/") else "sysfs file"
    if not path.exists():
        return f"no {what} {f.name} on this kernel (no {f.real})"
    if not path.is_file():
        return f"{f.name} is a directory, not a setting"
    if path.stat().st_mode & 0o222 == 0:
        return f"{f.name} is read-only"
    try:
        current = _read(f, root)
    except TargetError as exc:
        return exc.message
    if same(current, value):
        return None
    target, old = _restore(f, root, {f: current})
    entry = journal.record(f"try {f.name} = {value}", {"write": str(target.path(root)), "content": old})
    try:
        _write(f, root, value)
        taken = _read(f, root)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"cannot write {f.name}: permission denied (settings need root)"
        return f"the kernel refuses {value!r} for {f.name} ({exc.strerror or exc})"
    finally:
        journal.undo_entry(entry)
    if not same(taken, value):
        return f"the kernel kept {taken!r} after {value!r} was written to {f.name}"
    return None


class SettingSwitch:
    """Puts each configuration's values in force, and the machine's own where it names none."""

    def __init__(self, wanted: Mapping[str, Mapping[SysFile, str]], journal: Journal, root: Path = Path("/")) -> None:
        self.wanted = wanted  # configuration name -> {file: value}
        self.journal = journal
        self.root = root
        files = {f for values in wanted.values() for f in values}
        self.files = sorted(files, key=lambda f: f.name)
        self.originals = {f: _read(f, root) for f in self.files}
        self._entries: dict[SysFile, int] = {}

    def apply(self, config: str) -> None:
        """Write what differs from the configuration's values (before each of its trials)."""
        values = self.wanted.get(config, {})
        for f in self.files:
            current = _read(f, self.root)
            if f in values:
                if not same(current, values[f]):
                    self._set(f, f, values[f])
            elif not same(current, self.originals[f]):
                self._set(f, *_restore(f, self.root, self.originals))

    def _set(self, f: SysFile, target: SysFile, value: str) -> None:
        try:
            if f not in self._entries:
                undo_file, old = _restore(f, self.root, self.originals)
                undo = {"write": str(undo_file.path(self.root)), "content": old}
                self._entries[f] = self.journal.change(f"set {f.name} (was {self.originals[f]})", undo,
                                                       lambda: _write(target, self.root, value))
            else:
                _write(target, self.root, value)
        except OSError as exc:
            raise TargetError(f"cannot set {target.name} = {value}: {exc.strerror or exc}",
                              "something else may be changing it; see `shootout doctor`") from None
        if not same(taken := _read(target, self.root), value):  # measured under the wrong value otherwise
            raise TargetError(f"the kernel kept {taken!r} after {value!r} was written to {target.name}",
                              "something else may be changing it; see `shootout doctor`")

    def in_force(self) -> dict[str, str]:
        """Every switched file as read back now, by the name the user gave."""
        return {f.name: _read(f, self.root) for f in self.files}

    def close(self) -> list[str]:
        """Put the originals back (newest first); returns what could not be undone."""
        errors: list[str] = []
        for entry in reversed(list(self._entries.values())):
            errors += self.journal.undo_entry(entry)
        self._entries.clear()
        return errors
