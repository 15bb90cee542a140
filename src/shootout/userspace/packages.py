"""Which packages a userspace has (its dpkg database), and which of those asked for it lacks."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

from shootout.base.errors import TargetError


def installed_versions(root: Path) -> dict[str, str]:
    """package -> version of every installed package, read from the root's dpkg database.

    Read with the host's dpkg-query so a foreign-arch root needs no emulation.
    """
    admindir = root / "var/lib/dpkg"
    try:
        done = subprocess.run(
            ["dpkg-query", f"--admindir={admindir}", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\n"],
            capture_output=True, text=True, timeout=120, check=False,
        )
    except FileNotFoundError:
        raise TargetError("dpkg-query is not available on this machine", "shootout userspaces need a Debian host") from None
    if done.returncode != 0:
        raise TargetError(f"cannot read the package database in {admindir}: {done.stderr.strip()}",
                          "remove and re-create the userspace")
    versions = {}
    for line in done.stdout.splitlines():
        status, _, rest = line.partition("\t")
        name, _, version = rest.partition("\t")
        if status.startswith("ii"):
            versions[name] = version
    return versions


def missing(versions: dict[str, str], packages: Iterable[str]) -> list[str]:
    return [p for p in packages if p not in versions]
