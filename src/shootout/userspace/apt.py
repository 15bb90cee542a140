"""apt inside a userspace: its sources, an index update, and installing more packages.

A userspace lists its release, release-updates and release-security (the last from
Debian's security mirror), so both sides of a comparison get the same current versions and
a browser with its security fixes. A suite other than the release itself that cannot be
fetched (a mirror caught mid-sync) is a warning, not a failure: apt keeps using what it
has, the recorded package versions show what was installed, and a version that then
differs between two userspaces is reported as a confounder.
"""

from __future__ import annotations

import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from shootout.errors import TargetError
from shootout.targets.base import Target

SECURITY_MIRROR = "http://deb.debian.org/debian-security"
_NO_UPDATES = {"sid", "unstable", "experimental"}  # suites without -updates and -security
APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
_FAILED = re.compile(r"^[WE]: Failed to fetch (\S+)\s*(.*)$")
_MISSING = re.compile(r"^E: (?:Unable to locate package (\S+)|Package '?([^' ]+)'? has no installation candidate)")


def sources_list(release: str, mirror: str) -> str:
    lines = [f"deb {mirror} {release} main"]
    if release not in _NO_UPDATES:
        lines += [f"deb {mirror} {release}-updates main", f"deb {SECURITY_MIRROR} {release}-security main"]
    return "\n".join(lines) + "\n"


def write_sources(root: Path, release: str, mirror: str) -> None:
    (root / "etc/apt/sources.list").write_text(sources_list(release, mirror))


def copy_resolv_conf(root: Path) -> None:
    """apt inside needs the host's name servers; never write through a symlink in the root."""
    source = Path("/etc/resolv.conf")
    if not source.exists():
        return
    dest = root / "etc/resolv.conf"
    if dest.is_symlink() or dest.exists():
        dest.unlink()
    shutil.copyfile(source, dest)


def apt_update(target: Target, name: str, release: str) -> list[str]:
    """`apt-get update` inside; warnings for extra suites that failed, TargetError if the release did."""
    done = target.run(["apt-get", "-o", "Acquire::Retries=3", "update"], env=APT_ENV, timeout=1800)
    failed = [(m.group(1), m.group(2)) for line in (done.stdout + "\n" + done.stderr).splitlines()
              if (m := _FAILED.match(line.strip()))]
    if any(f"/dists/{release}/" in url for url, _ in failed) or (done.exit_status != 0 and not failed):
        raise TargetError(f"apt-get update failed in {name}: {done.stderr_tail(1) or done.exit_status}",
                          "check the network connection to the mirror")
    return [f"{name}: apt ignored {url.split('/dists/')[-1]} ({why.strip()[:80] or 'failed'}); "
            "older versions from it may be used" for url, why in failed]


def apt_install(target: Target, name: str, arch: str, release: str, packages: list[str]) -> None:
    """`apt-get install` inside; a package the release lacks for this arch is a one-line error."""
    done = target.run(["apt-get", "install", "-y", "--no-install-recommends", "-o",
                       "Dpkg::Options::=--force-confold", *packages], env=APT_ENV, timeout=3600)
    if done.exit_status == 0:
        target.run(["apt-get", "clean"], env=APT_ENV, timeout=300)
        return
    for line in done.stderr.splitlines():
        if m := _MISSING.match(line.strip()):
            package = m.group(1) or m.group(2)
            raise TargetError(f"Debian {release} has no {package} package for {arch} (userspace {name})",
                              "use another architecture or release for this workload")
    raise TargetError(f"installing {' '.join(packages)} in {name} failed: {done.stderr_tail(1) or done.exit_status}",
                      "run `shootout userspace update` on it, or remove it and create it again")


def candidates(target: Target, package: str) -> list[str]:
    """The versions of `package` apt could install here, newest first."""
    done = target.run(["apt-cache", "madison", package], env=APT_ENV, timeout=120)
    return [cols[1] for line in done.stdout.splitlines() if len(cols := [c.strip() for c in line.split("|")]) >= 3]


def source_of(target: Target, package: str, version: str) -> str:
    """The source package `package` at `version` was built from (pins cover all its binaries)."""
    done = target.run(["apt-cache", "show", f"{package}={version}"], env=APT_ENV, timeout=120)
    for line in done.stdout.splitlines():
        if line.startswith("Source:"):
            return line.split()[1]
    return package


def common_version(targets: list[Target], package: str) -> str | None:
    """The newest version of `package` that every target can install, or None."""
    lists = [candidates(t, package) for t in targets]
    return next((v for v in lists[0] if all(v in other for other in lists[1:])), None)


def install_packages(names: list[str], packages: list[str], *, journal=None) -> list[str]:
    """Install Debian packages into the ready userspaces `names` where missing, each package
    at the newest version all of them can install (so the sides of a comparison run the
    same version; when there is none, each gets its own and the recorded versions differ).
    The new versions are recorded. Returns apt's warnings, one line each."""
    from contextlib import ExitStack

    from shootout.model import Config
    from shootout.targets.chroot import ChrootTarget  # the target imports this package
    from shootout.userspace import registry
    from shootout.userspace.create import _journal_for, require_root

    require_root("installing packages into a userspace")
    with ExitStack() as stack:
        for name in sorted(set(names)):  # one order for every caller: no deadlock
            stack.enter_context(registry.locked(name, wait=True))
        spaces = [registry.get_ready(n) for n in names]
        if all(p in u.packages for u in spaces for p in packages):
            return []
        j = stack.enter_context(_journal_for(journal))
        targets = []
        for u in spaces:
            target = ChrootTarget(Config(name=f"userspace:{u.name}", target="chroot", userspace=u.name), j)
            stack.callback(target.close)
            target.open()
            targets.append(target)
        with ThreadPoolExecutor(max_workers=len(spaces)) as pool:
            warnings = [w for ws in pool.map(_refresh, spaces, targets) for w in ws]
            pins = {p: v for p in packages if (v := common_version(targets, p))}
            list(pool.map(lambda u, t: _install(u, t, [p for p in packages if p not in u.packages], pins),
                          spaces, targets))
    return warnings


def _refresh(space, target: Target) -> list[str]:
    copy_resolv_conf(space.root)
    if "-security" not in (space.root / "etc/apt/sources.list").read_text():
        write_sources(space.root, space.release, str(space.meta.get("mirror")))
    return apt_update(target, space.name, space.release)


def _install(space, target: Target, wanted: list[str], pins: dict[str, str]) -> None:
    """Install `wanted` (pinned where a common version exists) and record the versions."""
    from shootout.userspace import registry
    from shootout.userspace.packages import installed_versions

    if not wanted:
        return
    marker = space.path / registry.UPDATING
    before = installed_versions(space.root)
    preferences = space.root / "etc/apt/preferences.d/shootout-install"
    preferences.write_text("".join(f"Package: src:{source_of(target, p, pins[p])}\nPin: version {pins[p]}\n"
                                   f"Pin-Priority: 1001\n\n" for p in wanted if p in pins))
    marker.touch()  # not ready until the packages are in (left behind if dpkg fails midway)
    try:
        apt_install(target, space.name, space.arch, space.release, wanted)
    except TargetError:
        if installed_versions(space.root) == before:
            marker.unlink()  # nothing was installed: the userspace is as it was
        raise
    finally:
        preferences.unlink()  # the pin chose this install's version; later upgrades are free
    registry.write_meta(space.path, dict(space.meta, packages=installed_versions(space.root), updated_at=time.time()))
    marker.unlink()
