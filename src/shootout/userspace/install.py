"""More Debian packages into userspaces, at one version on all of them.

What a workload lists in `packages` (the browser's chromium) is not part of every
userspace; this installs it into the userspaces of a comparison, for now from the tests
(standing in for an install on a workload's first use). The sides of a comparison must run
the same code, so the install is first planned on each (apt-get -s): every package it would
bring in at different versions on different sides is pinned to the newest version all of
them offer, and planned again, until nothing differs that can be made equal. What cannot
be (a mirror lacking that version for one arch) is installed as it comes, and the recorded
versions show it as a confounder. The pin is removed afterwards: later upgrades are free.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from shootout.errors import TargetError
from shootout.model import Config
from shootout.system.journal import Journal
from shootout.targets.base import Target
from shootout.targets.chroot import ChrootTarget
from shootout.userspace import registry
from shootout.userspace.apt import apt_install, apt_update, common_version, planned, prepare_apt
from shootout.userspace.create import _journal_for, require_root
from shootout.userspace.packages import installed_versions

PIN_FILE = "etc/apt/preferences.d/shootout-install"
_PLAN_PASSES = 4  # a pin can change what else an install brings in


def install_packages(names: list[str], packages: list[str], *, journal: Journal | None = None) -> list[str]:
    """Install `packages` into the ready userspaces `names` that lack any of them, record the
    new versions; returns apt's warnings, one line each."""
    require_root("installing packages into a userspace")
    with ExitStack() as stack:
        for name in sorted(set(names)):  # one order for every caller: no deadlock
            stack.enter_context(registry.locked(name, wait=True))
        spaces = [registry.get_ready(n) for n in names]
        needy = [u for u in spaces if any(p not in u.packages for p in packages)]
        if not needy:
            return []
        j = stack.enter_context(_journal_for(journal))
        targets = []
        for u in needy:
            target = ChrootTarget(Config(name=f"userspace:{u.name}", target="chroot", userspace=u.name), j)
            stack.callback(target.close)
            stack.callback(lambda root=u.root: (root / PIN_FILE).unlink(missing_ok=True))
            target.open()
            targets.append(target)
        with ThreadPoolExecutor(max_workers=len(needy)) as pool:
            warnings = [w for ws in pool.map(_refresh, needy, targets) for w in ws]
            wanted = [[p for p in packages if p not in u.packages] for u in needy]
            _equal_versions(needy, targets, wanted)
            list(pool.map(_install, needy, targets, wanted))
    return warnings


def _refresh(space: registry.Userspace, target: Target) -> list[str]:
    prepare_apt(space.root, space.release, str(space.meta.get("mirror")))
    return apt_update(target, space.name, space.release)


def _write_pins(root: Path, pins: dict[str, str]) -> None:
    (root / PIN_FILE).write_text("".join(f"Package: {p}\nPin: version {v}\nPin-Priority: 1001\n\n"
                                         for p, v in sorted(pins.items())))


def _equal_versions(spaces: list[registry.Userspace], targets: list[Target], wanted: list[list[str]]) -> dict[str, str]:
    """Pin every package the installs would bring in at differing versions; the pins."""
    pins: dict[str, str] = {}
    for _ in range(_PLAN_PASSES):
        for space in spaces:
            _write_pins(space.root, pins)
        plans = [planned(t, w) for t, w in zip(targets, wanted)]
        shared = set.intersection(*(set(p) for p in plans))
        differing = sorted(p for p in shared if len({plan[p] for plan in plans}) > 1 and p not in pins)
        new = {p: v for p in differing if (v := common_version(targets, p))}
        if not new:
            break
        pins.update(new)
    return pins


def _install(space: registry.Userspace, target: Target, wanted: list[str]) -> None:
    marker = space.path / registry.UPDATING
    before = installed_versions(space.root)
    marker.touch()  # not ready until the packages are in (left behind if dpkg fails midway)
    try:
        apt_install(target, space.name, space.arch, space.release, wanted)
    except TargetError:
        if installed_versions(space.root) == before:
            marker.unlink()  # nothing was installed: the userspace is as it was
        raise
    registry.write_meta(space.path, dict(space.meta, packages=installed_versions(space.root), updated_at=time.time()))
    marker.unlink()
