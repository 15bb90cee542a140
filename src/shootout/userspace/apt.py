"""apt-get inside a userspace, through its chroot target (journalled, private mounts).

Used by `shootout userspace update` and to install, on first use, a package a selected
workload needs but the userspace was created without (big ones, such as a browser, are
never installed at creation). What was installed is recorded in userspace.json.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from shootout.errors import TargetError
from shootout.targets.process import ProcResult
from shootout.userspace import registry
from shootout.userspace.packages import installed_versions

if TYPE_CHECKING:
    from shootout.targets.chroot import ChrootTarget

APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
_SOURCES = "/etc/apt/sources.list"


def copy_resolv_conf(target: ChrootTarget) -> None:
    """apt inside needs the host's name servers; never write through a symlink in the root."""
    source = Path("/etc/resolv.conf")
    if source.exists():
        target.remove("/etc/resolv.conf")
        target.put(source.read_bytes(), "/etc/resolv.conf")


def apt_get(target: ChrootTarget, args: Sequence[str], what: str, hint: str, timeout: float = 3600) -> ProcResult:
    """apt-get ARGS in the userspace; a failure is a one-line TargetError."""
    done = target.run(["apt-get", *args], env=APT_ENV, timeout=timeout)
    if done.exit_status != 0 or done.timed_out:
        raise TargetError(f"{what} failed in {target.userspace.name}: "
                          f"{done.stderr_tail(1) or 'exit ' + str(done.exit_status)}", hint)
    return done


def enable_components(target: ChrootTarget, components: Sequence[str]) -> bool:
    """Add archive components (e.g. non-free) to the userspace's Debian lines; True if changed."""
    try:
        text = target.read(_SOURCES).decode()
    except TargetError:
        return False
    lines = []
    for line in text.splitlines():
        fields = line.split()
        if fields[:1] == ["deb"] and len(fields) >= 4:
            fields += [c for c in components if c not in fields[3:]]
        lines.append(" ".join(fields) if fields[:1] == ["deb"] else line)
    new = "\n".join(lines) + "\n"
    if new == text:
        return False
    target.put(new.encode(), _SOURCES)
    return True


def provide(target: ChrootTarget, packages: Sequence[str], components: Sequence[str] = ()) -> list[str]:
    """Install the packages the userspace lacks and record them; returns what was installed."""
    name = target.userspace.name
    wanted = [p for p in dict.fromkeys(packages) if p not in installed_versions(target.root)]
    if not wanted:
        return []
    with registry.locked(name, wait=True):  # one install at a time per userspace
        wanted = [p for p in wanted if p not in installed_versions(target.root)]
        if not wanted:
            return []
        copy_resolv_conf(target)
        install = ["-y", "--no-install-recommends", "-o", "Dpkg::Options::=--force-confold", "install", *wanted]
        hint = (f"check the network connection to the mirror, or install {' '.join(wanted)} "
                f"into {name} by hand")
        # The package lists debootstrap left are usually enough; refresh them only if not.
        if enable_components(target, components) or target.run(["apt-get", *install], env=APT_ENV,
                                                               timeout=3600).exit_status != 0:
            apt_get(target, ["update"], "apt-get update", hint, timeout=1800)
            apt_get(target, install, f"installing {' '.join(wanted)}", hint)
        target.run(["apt-get", "clean"], env=APT_ENV, timeout=300)
        versions = installed_versions(target.root)
        if absent := [p for p in wanted if p not in versions]:
            raise TargetError(f"{', '.join(absent)} did not install in {name}", hint)
        found = registry.get_ready(name)
        on_use = dict(found.meta.get("installed_on_use", {}))
        on_use.update({p: {"version": versions[p], "at": time.time()} for p in wanted})
        registry.write_meta(found.path, dict(found.meta, packages=versions, installed_on_use=on_use))
    return wanted
