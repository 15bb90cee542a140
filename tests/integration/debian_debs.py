"""Debian's packages for any architecture, read with apt in a private directory: this machine's
dpkg and apt configuration are not touched.

apt_for(tmp, arches) is apt-get with its lists, cache and an empty dpkg status under tmp and
bookworm main's Packages index of those architectures as its sources (signed: apt checks every
download against the archive's key). DebianDebs fetches a package's .deb once per session and
extracts it with dpkg-deb, for tests that read real binaries of other architectures.
Needs root (apt's options as CI runs them) and Debian's mirror: a test fails, never skips,
without them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from shootout.userspace.create import DEFAULT_MIRROR, DEFAULT_RELEASE

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
Apt = Callable[..., subprocess.CompletedProcess[str]]


def apt_for(tmp: Path, arches: Sequence[str]) -> Apt:
    """apt-get over bookworm main for `arches` (the first one apt's own), its state under tmp."""
    (tmp / "lists" / "partial").mkdir(parents=True)
    (tmp / "cache").mkdir()
    (tmp / "status").write_text("")  # nothing installed: every dependency is resolved
    (tmp / "sources.list").write_text(f"deb [signed-by={KEYRING}] {DEFAULT_MIRROR} {DEFAULT_RELEASE} main\n")
    options: dict[str, object] = {
        "APT::Architecture": arches[0],
        "Dir::State::Lists": tmp / "lists", "Dir::State::status": tmp / "status",
        "Dir::State::extended_states": tmp / "extended_states", "Dir::Cache": tmp / "cache",
        "Dir::Etc::SourceList": tmp / "sources.list", "Dir::Etc::SourceParts": tmp / "none",
        "Acquire::Languages": "none", "APT::Sandbox::User": "root",
        # only the Packages index (appstream metadata would double the download)
        **{f"Acquire::IndexTargets::deb::{t}::DefaultEnabled": "false"
           for t in ("DEP-11", "DEP-11-icons", "DEP-11-icons-small", "DEP-11-icons-hidpi")},
    }
    argv = ["apt-get", "-q", *(x for k, v in options.items() for x in ("-o", f"{k}={v}")),
            *(x for arch in arches for x in ("-o", f"APT::Architectures::={arch}"))]

    def apt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=600, cwd=cwd)

    return apt


class DebianDebs:
    """Packages of bookworm for several architectures, downloaded and extracted on first use."""

    def __init__(self, tmp: Path, arches: Sequence[str]) -> None:
        self.tmp, self.apt, self._updated = tmp, apt_for(tmp / "apt", arches), False
        self.arches = tuple(arches)

    def extracted(self, package: str, arch: str) -> Path:
        """The root of `package`'s files for `arch` (package:arch, extracted with dpkg-deb -x)."""
        if arch not in self.arches:
            raise ValueError(f"{arch} is not one of {self.arches}")
        root = self.tmp / "roots" / f"{package}_{arch}"
        if root.is_dir():
            return root
        if not self._updated:
            done = self.apt("update")
            assert done.returncode == 0, f"apt-get update ({', '.join(self.arches)}): {done.stderr}"
            self._updated = True
        debs = self.tmp / "debs" / arch
        debs.mkdir(parents=True, exist_ok=True)
        done = self.apt("download", f"{package}:{arch}", cwd=debs)
        assert done.returncode == 0, f"apt-get download {package}:{arch}: {done.stderr}"
        deb = self._deb(package, arch)
        part = root.with_name(root.name + ".part")
        part.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(part)], check=True, capture_output=True, timeout=300)
        part.rename(root)
        return root

    def _deb(self, package: str, arch: str) -> Path:
        return next((self.tmp / "debs" / arch).glob(f"{package}_*_{arch}.deb"))

    def field(self, package: str, arch: str, name: str) -> str:
        """A field of the package's control file (Depends: of a metapackage names what it stands for)."""
        self.extracted(package, arch)
        done = subprocess.run(["dpkg-deb", "-f", str(self._deb(package, arch)), name], capture_output=True, text=True,
                              check=True, timeout=60)
        return done.stdout.strip()
