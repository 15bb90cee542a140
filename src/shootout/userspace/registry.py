"""Userspaces on disk: where they live, which are ready, their recorded package versions.

Layout under the data directory:
  userspaces/NAME/root                  the chroot
  userspaces/NAME/userspace.json        metadata: release, arch, mirror, package versions
  userspaces/.incomplete-NAME/          a create that has not finished (never run)
  userspaces/NAME/.updating             present while `update` runs: not ready either
  userspaces/.sessions/                 mount points of open chroot targets
  userspaces/.locks/NAME.lock           serialises create/update/remove of one name
A userspace is ready only when its directory has the final name, its metadata says
ready, and no update is under way.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from shootout.base.errors import TargetError, UsageError
from shootout.base.paths import data_subdir

META = "userspace.json"
INCOMPLETE = ".incomplete-"
UPDATING = ".updating"
_NAME = re.compile(r"^[a-z0-9][a-z0-9.+_-]{0,63}$")


def userspaces_dir() -> Path:
    return data_subdir("userspaces")


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise UsageError(f"invalid userspace name {name!r}",
                         "use lower-case letters, digits and . + _ - (e.g. debian-bookworm-i386)")
    return name


def default_name(release: str, arch: str) -> str:
    return f"debian-{release}-{arch}"


def default_name_parts(name: str) -> tuple[str, str] | None:
    """(release, arch) of a name default_name gives, None for any other name."""
    made = re.fullmatch(r"debian-([a-z0-9]+)-([a-z0-9]+)", name)
    return (made[1], made[2]) if made else None


@dataclass(frozen=True)
class Userspace:
    name: str
    path: Path  # directory holding root/ and userspace.json
    state: str  # "ready" | "incomplete"
    meta: dict[str, Any]

    @property
    def root(self) -> Path:
        return self.path / "root"

    @property
    def arch(self) -> str:
        return str(self.meta.get("arch", "?"))

    @property
    def release(self) -> str:
        return str(self.meta.get("release", "?"))

    @property
    def packages(self) -> dict[str, str]:
        return dict(self.meta.get("packages", {}))

    @property
    def brought(self) -> bool:
        """A system the user brought (places/image.py), not one of the registry's: its apt
        sources are its own, and what is installed into it is not recorded here."""
        return "image" in self.meta


def read_meta(directory: Path) -> dict[str, Any]:
    try:
        data = json.loads((directory / META).read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def write_meta(directory: Path, meta: dict[str, Any]) -> None:
    """Atomic: a reader sees the old file or the new one, never half of one."""
    tmp = directory / (META + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(meta, fh, indent=2, sort_keys=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(directory / META)


def _load(path: Path) -> Userspace | None:
    if not path.is_dir() or (path.name.startswith(".") and not path.name.startswith(INCOMPLETE)):
        return None
    meta = read_meta(path)
    if path.name.startswith(INCOMPLETE):
        return Userspace(path.name.removeprefix(INCOMPLETE), path, "incomplete", meta)
    ready = meta.get("ready") is True and (path / "root").is_dir() and not (path / UPDATING).exists()
    return Userspace(path.name, path, "ready" if ready else "incomplete", meta)


def list_userspaces() -> list[Userspace]:
    """Every userspace on disk, ready or half-made, sorted by name."""
    found = [u for p in userspaces_dir().iterdir() if (u := _load(p)) is not None]
    return sorted(found, key=lambda u: (u.name, u.state))


def find(name: str) -> list[Userspace]:
    """The ready userspace `name` and any half-made one of that name."""
    base = userspaces_dir()
    return [u for p in (base / name, base / f"{INCOMPLETE}{name}") if (u := _load(p)) is not None]


def get_ready(name: str) -> Userspace:
    check_name(name)
    found = find(name)
    for u in found:
        if u.state == "ready":
            return u
    if found:
        raise TargetError(f"userspace {name} is incomplete (a create or update did not finish)",
                          f"shootout userspace remove {name}, then create it again")
    raise UsageError(f"no userspace named {name!r}", "shootout userspace list (a configuration with "
                     'spec = "debian:RELEASE:ARCH" creates its userspace on first use)')


def package_versions(name: str) -> dict[str, str]:
    """package -> version of everything installed in the ready userspace `name`."""
    return get_ready(name).packages


def _describe(version: str | None) -> str:
    return version if version is not None else "not installed"


def version_confounders(names: list[str], packages: Iterable[str] | None = None) -> list[str]:
    """One line per package whose version differs between the named userspaces.

    Without `packages`, every package installed in all of them is compared (a package only
    one arch needs, e.g. binutils-i686-linux-gnu, is not a confounder); with `packages`, a
    package missing on one side is reported too.
    """
    versions = {n: package_versions(n) for n in names}
    if packages is None:
        sets = [set(v) for v in versions.values()]
        wanted = sorted(set.intersection(*sets)) if sets else []
    else:
        wanted = list(dict.fromkeys(packages))
    lines = []
    for pkg in wanted:
        seen: dict[str | None, list[str]] = {}
        for n in names:
            seen.setdefault(versions[n].get(pkg), []).append(n)
        if len(seen) > 1:
            lines.append(f"{pkg}: " + " vs ".join(f"{_describe(v)} ({', '.join(ns)})" for v, ns in seen.items()))
    return lines


def _lock_file(name: str, kind: str) -> Path:
    directory = userspaces_dir() / ".locks"
    directory.mkdir(exist_ok=True)
    return directory / f"{name}.{kind}"


@contextmanager
def locked(name: str, *, wait: bool) -> Iterator[None]:
    """Hold the lock of userspace `name`; without wait, TargetError when another process has it."""
    with open(_lock_file(name, "lock"), "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise TargetError(f"userspace {name} is being created or changed by another shootout process",
                              "wait for it to finish") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def claim(name: str) -> IO[str]:
    """A shared claim on userspace `name` while a target runs in it; closing the file (or the
    process dying) gives it up. Its mounts are in that process's private namespace, out of
    other processes' sight, so this is how they see that it is in use."""
    fh = open(_lock_file(name, "use"), "a")
    fcntl.flock(fh, fcntl.LOCK_SH)
    return fh


def _refuse_if_claimed(name: str) -> None:
    with open(_lock_file(name, "use"), "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TargetError(f"userspace {name} is in use by a running shootout",
                              "wait for that run to finish (or stop it)") from None


def remove_userspace(name: str) -> list[str]:
    """Delete userspace `name`, ready or half-made; returns the directories removed.

    Mounts a killed shootout left inside are undone first (from its journal); a userspace
    a live process runs in, or still has mounted, is refused, never deleted under it.
    """
    from shootout.system.journal import recover
    from shootout.system.mounts import safe_rmtree

    check_name(name)
    with locked(name, wait=False):
        found = find(name)
        if not found:
            raise UsageError(f"no userspace named {name!r}", "shootout userspace list")
        _refuse_if_claimed(name)
        recover()
        removed = []
        for u in found:
            safe_rmtree(u.path)
            removed.append(str(u.path))
        return removed
