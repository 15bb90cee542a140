"""apt inside a userspace: its sources, an index update, installs, and what they would bring in.

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
from pathlib import Path

from shootout.errors import TargetError
from shootout.targets.base import Target

SECURITY_MIRROR = "http://deb.debian.org/debian-security"
_NO_UPDATES = {"sid", "unstable", "experimental"}  # suites without -updates and -security
APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
_FAILED = re.compile(r"^[WE]: Failed to fetch (\S+)\s*(.*)$")
_IP = re.compile(r"\s*\[IP:.*")  # the mirror's address apt appends
_INST = re.compile(r"^Inst (\S+) (?:\[[^]]*\] )?\((\S+) ")  # apt-get -s: Inst NAME [OLD] (NEW SUITE [ARCH])
_MISSING = re.compile(r"^E: (?:Unable to locate package (\S+)|Package '?([^' ]+)'? has no installation candidate)")


def sources_list(release: str, mirror: str) -> str:
    lines = [f"deb {mirror} {release} main"]
    if release not in _NO_UPDATES:
        lines += [f"deb {mirror} {release}-updates main", f"deb {SECURITY_MIRROR} {release}-security main"]
    return "\n".join(lines) + "\n"


def write_sources(root: Path, release: str, mirror: str) -> None:
    (root / "etc/apt/sources.list").write_text(sources_list(release, mirror))


def prepare_apt(root: Path, release: str, mirror: str) -> None:
    """Before apt runs inside: the host's name servers, and the sources of this version of
    shootout in a userspace made by an older one (release main only)."""
    copy_resolv_conf(root)
    if sources_list(release, mirror) not in (root / "etc/apt/sources.list").read_text():
        write_sources(root, release, mirror)


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
    return [f"{name}: apt ignored {url.split('/dists/')[-1]} ({_IP.sub('', why).strip()[:80] or 'failed'}); "
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


def common_version(targets: list[Target], package: str) -> str | None:
    """The newest version of `package` that every target can install, or None."""
    lists = [candidates(t, package) for t in targets]
    return next((v for v in lists[0] if all(v in other for other in lists[1:])), None)


def planned(target: Target, packages: list[str]) -> dict[str, str]:
    """What `apt-get install packages` would install here: package -> version (a dry run)."""
    done = target.run(["apt-get", "-s", "install", "--no-install-recommends", *packages], env=APT_ENV, timeout=600)
    return {m.group(1): m.group(2) for line in done.stdout.splitlines() if (m := _INST.match(line))}
