"""apt-get inside a userspace, through its chroot target (journalled, private mounts).

Used by `shootout userspace update` and to install, on first use, a package a selected
workload needs but the userspace was created without (big ones, such as a browser, are
never installed at creation). What was installed is recorded in userspace.json.

A userspace lists its release, release-updates and release-security (the last from Debian's
security mirror), so the sides of a comparison get current versions and a browser with its
security fixes. A suite other than the release itself that cannot be fetched (a mirror caught
mid-sync) is a warning: apt keeps what it had. Then the sides may be offered different versions
(here bookworm-security's i386 index lags): the runner installs, on every side, the newest
version all of them offer (`common_versions`, pinned by source package for that install only).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from shootout.base.errors import TargetError
from shootout.execution.place import Place
from shootout.execution.process import ProcResult
from shootout.userspace import registry
from shootout.userspace.packages import installed_versions

APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
_SOURCES = "/etc/apt/sources.list"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
_NO_UPDATES = {"sid", "unstable", "experimental"}  # suites without -updates and -security
_FAILED = re.compile(r"^[WE]: Failed to fetch (\S+)\s*(.*)$")
_IP = re.compile(r"\s*\[IP:.*")  # the mirror's address apt appends
_INST = re.compile(r"^Inst (\S+) ")  # a package `apt-get -s install` would unpack
LISTS_FRESH_S = 3600.0  # lists this process refreshed less long ago are not fetched again
_refreshed: dict[str, list[tuple[float, frozenset[str]]]] = {}  # userspace -> (when, components) refreshed
_MISSING = re.compile(r"^E: (?:Unable to locate package (\S+)|Package '?([^' ]+)'? has no installation candidate)")


class UserspacePlace(Place, Protocol):
    """A place that is a userspace on this machine (a chroot target): apt runs in it, and its
    files are also reached from the host side through its root."""

    userspace: registry.Userspace

    @property
    def root(self) -> Path: ...


def sources_list(release: str, mirror: str, components: Sequence[str] = ()) -> str:
    """The release, its -updates and -security suites, with main and `components`."""
    parts = " ".join(dict.fromkeys(["main", *components]))
    lines = [f"deb {mirror} {release} {parts}"]
    if release not in _NO_UPDATES:
        lines += [f"deb {mirror} {release}-updates {parts}", f"deb {SECURITY_MIRROR} {release}-security {parts}"]
    return "\n".join(lines) + "\n"


def write_sources(root: Path, release: str, mirror: str) -> None:
    """At creation, on the host side of the new root."""
    (root / _SOURCES.lstrip("/")).write_text(sources_list(release, mirror))


def copy_resolv_conf(target: UserspacePlace) -> None:
    """apt inside needs the host's name servers; never write through a symlink in the root."""
    source = Path("/etc/resolv.conf")
    if source.exists():
        target.remove("/etc/resolv.conf")
        target.put(source.read_bytes(), "/etc/resolv.conf")


def apt_get(target: UserspacePlace, args: Sequence[str], what: str, hint: str, timeout: float = 3600) -> ProcResult:
    """apt-get ARGS in the userspace; a failure is a one-line TargetError."""
    done = target.run(["apt-get", *args], env=APT_ENV, timeout=timeout)
    return done.check(TargetError, f"{what} failed in {target.userspace.name}", hint)


def update_sources(target: UserspacePlace, components: Sequence[str] = ()) -> bool:
    """The sources this version of shootout writes (a userspace made by an older one lists its
    release only), with `components` (e.g. non-free) and those already enabled; True if changed.
    A brought system's sources are its own (Raspbian's mirror is not Debian's): never rewritten."""
    if target.userspace.brought:
        return False
    try:
        text = target.read(_SOURCES).decode()
    except TargetError:
        text = ""
    lines = [fields for line in text.splitlines() if (fields := line.split())[:1] == ["deb"] and len(fields) >= 4]
    mirror = next((f[1] for f in lines if f[2] == target.userspace.release), target.userspace.meta.get("mirror"))
    enabled = [c for f in lines for c in f[3:]]
    new = sources_list(target.userspace.release, str(mirror), [*enabled, *components])
    if new == text:
        return False
    target.put(new.encode(), _SOURCES)
    return True


def refresh(target: UserspacePlace, components: Sequence[str] = ()) -> list[str]:
    """Sources up to date, the host's name servers, `apt-get update`; a warning line for each
    extra suite that failed (apt keeps its old index), a TargetError if the release's own did."""
    update_sources(target, components)
    copy_resolv_conf(target)
    name, release = target.userspace.name, target.userspace.release
    done = target.run(["apt-get", "-o", "Acquire::Retries=3", "update"], env=APT_ENV, timeout=1800)
    return update_warnings(done, name, release)


def update_warnings(done: ProcResult, name: str, release: str) -> list[str]:
    failed = [(m.group(1), m.group(2)) for line in (done.stdout + "\n" + done.stderr).splitlines()
              if (m := _FAILED.match(line.strip()))]
    own = next(((url, why) for url, why in failed if f"/dists/{release}/" in url), None)
    if own is not None:  # the release's own index: name the mirror that failed
        raise TargetError(f"apt-get update failed in {name}: {own[0].split('/dists/')[0]} gave no {release} index "
                          f"({_IP.sub('', own[1]).strip()[:80] or 'failed'})", "check the network connection to the mirror")
    if done.exit_status != 0 and not failed:
        raise TargetError(f"apt-get update failed in {name}: {done.stderr_tail(1) or done.exit_status}",
                          "check the network connection to the mirror")
    return [f"{name}: apt ignored {url.split('/dists/')[-1]} ({_IP.sub('', why).strip()[:80] or 'failed'}); "
            "older versions from it may be used" for url, why in failed]


def _refresh_once(target: UserspacePlace, components: Sequence[str]) -> list[str]:
    """refresh(), unless this process refreshed the userspace's lists (with these components)
    within LISTS_FRESH_S: a run prepares workload after workload, and each would fetch the
    lists again and print apt's same warning again."""
    now, wanted = time.monotonic(), frozenset(components)
    done = _refreshed.setdefault(target.userspace.name, [])
    if any(now - when < LISTS_FRESH_S and wanted <= had for when, had in done):
        return []
    warnings = refresh(target, components)
    done.append((now, wanted))
    return warnings


def offers(target: UserspacePlace, packages: Sequence[str], components: Sequence[str] = ()) -> tuple[dict[str, list[str]], list[str]]:
    """Before installing what the userspace lacks: lists refreshed, then per package the
    versions this side could end with (an installed one: that one; else apt's, newest first),
    and the refresh's warnings. The dependencies the install would bring are included: a
    side whose security index failed would otherwise get older libraries than the other.
    Nothing lacking: nothing done."""
    installed = installed_versions(target.root)
    if all(p in installed for p in packages):
        return {p: [installed[p]] for p in packages}, []
    with registry.locked(target.userspace.name, wait=True):
        warnings = _refresh_once(target, components)
        plan = target.run(["apt-get", "-s", "-y", "--no-install-recommends", "install",
                           *[p for p in packages if p not in installed]], env=APT_ENV, timeout=300)
        brought = [m.group(1) for line in plan.stdout.splitlines() if (m := _INST.match(line))]
        names = list(dict.fromkeys([*packages, *brought]))
        done = target.run(["apt-cache", "madison", *names], env=APT_ENV, timeout=300)
        versions: dict[str, list[str]] = {p: [] for p in names}
        for line in done.stdout.splitlines():
            if len(cols := [c.strip() for c in line.split("|")]) >= 3 and cols[0] in versions:
                versions[cols[0]].append(cols[1])
        versions.update({p: [installed[p]] for p in names if p in installed})
    return versions, warnings


def common_versions(sides: Sequence[Mapping[str, Sequence[str]]]) -> dict[str, str]:
    """package -> the newest version every side offers, for the packages whose sides would
    otherwise end at different versions (none in common: left out, the sides differ)."""
    pins = {}
    for package in sorted({p for side in sides for p in side}):
        offered = [list(side[package]) for side in sides if side.get(package)]
        if len(offered) < 2 or len({o[0] for o in offered}) == 1:
            continue
        if common := next((v for v in offered[0] if all(v in o for o in offered[1:])), None):
            pins[package] = common
    return pins


def _pin_file(target: UserspacePlace, versions: Mapping[str, str]) -> str:
    """apt preferences holding each package's source package at its version (so that e.g.
    chromium-common follows chromium); their path, for -o Dir::Etc::Preferences."""
    stanzas = []
    for package, version in sorted(versions.items()):
        shown = target.run(["apt-cache", "show", "--no-all-versions", f"{package}={version}"], env=APT_ENV, timeout=120)
        source = next((line.split()[1] for line in shown.stdout.splitlines() if line.startswith("Source:")), package)
        stanzas.append(f"Package: src:{source}\nPin: version {version}\nPin-Priority: 1000\n")
    return target.put("\n".join(stanzas).encode(), f"{target.workdir()}/apt-pins")


def missing_package(done: ProcResult, space: str, arch: str, release: str) -> None:
    """A package the release lacks for this arch: a one-line TargetError."""
    for line in done.stderr.splitlines():
        if m := _MISSING.match(line.strip()):
            raise TargetError(f"Debian {release} has no {m.group(1) or m.group(2)} package for {arch} "
                              f"(userspace {space})", "use another architecture or release for this workload")


def lacking(target: UserspacePlace, packages: Sequence[str]) -> list[str]:
    """The packages, each once, that the userspace has not installed."""
    have = installed_versions(target.root)
    return [p for p in dict.fromkeys(packages) if p not in have]


def provide(target: UserspacePlace, packages: Sequence[str], components: Sequence[str] = (),
            versions: Mapping[str, str] | None = None) -> list[str]:
    """Install the packages the userspace lacks (at `versions` where given) and record them;
    returns what was installed."""
    name = target.userspace.name
    wanted = lacking(target, packages)
    if not wanted:
        return []
    with registry.locked(name, wait=True):  # one install at a time per userspace
        have = installed_versions(target.root)
        wanted = [p for p in wanted if p not in have]
        if not wanted:
            return []
        copy_resolv_conf(target)
        install = ["-y", "--no-install-recommends", "-o", "Dpkg::Options::=--force-confold", "install", *wanted]
        # the workload's packages and every dependency whose version the sides would not share
        if pins := {p: v for p, v in (versions or {}).items() if p not in have}:
            install = ["-o", f"Dir::Etc::Preferences={_pin_file(target, pins)}", *install]
        hint = (f"check the network connection to the mirror, or install {' '.join(wanted)} "
                f"into {name} by hand")
        # The lists are usually fresh (the runner asked for offers first); refresh them if not.
        done = None if update_sources(target, components) else target.run(["apt-get", *install], env=APT_ENV,
                                                                         timeout=3600)
        if done is None or done.exit_status != 0:
            refresh(target, components)
            done = target.run(["apt-get", *install], env=APT_ENV, timeout=3600)
        if done.exit_status != 0 or done.timed_out:
            missing_package(done, name, target.userspace.arch, target.userspace.release)
            raise TargetError(f"installing {' '.join(wanted)} failed in {name}: "
                              f"{done.stderr_tail(1) or 'exit ' + str(done.exit_status)}", hint)
        target.run(["apt-get", "clean"], env=APT_ENV, timeout=300)
        versions = installed_versions(target.root)
        if absent := [p for p in wanted if p not in versions]:
            raise TargetError(f"{', '.join(absent)} did not install in {name}", hint)
        if target.userspace.brought:
            return wanted
        found = registry.get_ready(name)
        on_use = dict(found.meta.get("installed_on_use", {}))
        on_use.update({p: {"version": versions[p], "at": time.time()} for p in wanted})
        registry.write_meta(found.path, dict(found.meta, packages=versions, installed_on_use=on_use))
    return wanted
