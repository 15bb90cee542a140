"""The mmdebstrap userspaces the integration tests share: this machine's native pair (bookworm
amd64 and i386 on x86-64; arm64 and armhf on an arm64 machine, as inside emulated-arm64.sh) and,
on x86-64, foreign armhf and arm64 ones run under qemu.

Created once (in parallel) by the `spaces` fixture of conftest.py, in SHOOTOUT_TEST_HOME when
set (kept between runs; ready ones are reused), else in a temporary directory.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shootout.system.journal import journal
from shootout.system.mountns import private_mounts
from shootout.userspace.arches import kernel_arch
from shootout.userspace.create import create_userspace
from shootout.userspace.registry import find
from shootout.workloads.debpackages import workload_packages

RELEASE = "bookworm"
AMD64, I386, ARMHF, ARM64 = f"debian-{RELEASE}-amd64", f"debian-{RELEASE}-i386", "test-armhf", "test-arm64"
# the native pair: its 64-bit architecture and its 32-bit companion (AMD64 and I386 on x86-64)
NATIVE_ARCH, COMPANION_ARCH = ("arm64", "armhf") if kernel_arch() == "arm64" else ("amd64", "i386")
NATIVE, COMPANION = f"debian-{RELEASE}-{NATIVE_ARCH}", f"debian-{RELEASE}-{COMPANION_ARCH}"
FOREIGN = ARMHF if NATIVE_ARCH == "amd64" else None  # an arm64 machine runs armhf natively: its companion
WANTED = [(NATIVE, NATIVE_ARCH, workload_packages()), (COMPANION, COMPANION_ARCH, workload_packages()),
          # foreign ones under qemu: armhf with a compiler, arm64 bare (an SD card image's root, test_images.py)
          *([(ARMHF, "armhf", ("gcc", "libc6-dev")), (ARM64, "arm64", ())] if FOREIGN else [])]


@dataclass
class Spaces:
    home: Path
    seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, BaseException] = field(default_factory=dict)

    def need(self, name: str) -> None:
        if name in self.errors:
            raise self.errors[name]


def _ready(name: str) -> bool:
    return any(u.state == "ready" for u in find(name))


def _timed_create(name: str, arch: str, packages: tuple[str, ...], j) -> float:
    t0 = time.monotonic()
    create_userspace(name, arch, RELEASE, packages=packages, journal=j)
    return time.monotonic() - t0


def make_spaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spaces]:
    """The `spaces` fixture: SHOOTOUT_HOME points at their home while a module uses them."""
    if os.geteuid() != 0:
        pytest.fail("userspace tests need root (CI runs as root)")
    home = Path(os.environ.get("SHOOTOUT_TEST_HOME") or tmp_path_factory.mktemp("userspaces"))
    home.mkdir(parents=True, exist_ok=True)
    saved = os.environ.get("SHOOTOUT_HOME")
    os.environ["SHOOTOUT_HOME"] = str(home)
    found = Spaces(home)
    try:
        private_mounts()  # before the threads: their creates then mount in this one namespace
        with journal() as j, ThreadPoolExecutor(max_workers=len(WANTED)) as pool:
            futures = {n: pool.submit(_timed_create, n, a, p, j) for n, a, p in WANTED if not _ready(n)}
            for name, future in futures.items():
                try:
                    found.seconds[name] = future.result()
                except BaseException as exc:  # noqa: BLE001 (each test that needs it fails with this)
                    found.errors[name] = exc
        if (artifacts := os.environ.get("SHOOTOUT_ARTIFACTS")) and found.seconds:  # later modules made none
            Path(artifacts).mkdir(parents=True, exist_ok=True)
            (Path(artifacts) / "userspace-create-seconds.json").write_text(json.dumps(found.seconds, indent=2))
        yield found
    finally:
        if saved is None:
            os.environ.pop("SHOOTOUT_HOME", None)
        else:
            os.environ["SHOOTOUT_HOME"] = saved



def mounts_anywhere(path: Path) -> dict[str, int]:
    """Mount namespace -> number of mounts under path, over every process on the machine:
    what the kernel still holds, whichever namespace it is in."""
    found: dict[str, int] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ns = os.readlink(proc / "ns/mnt")
            lines = (proc / "mountinfo").read_text().splitlines()
        except OSError:
            continue  # gone meanwhile
        points = [ln.split()[4] for ln in lines]
        count = sum(1 for p in points if p == str(path) or p.startswith(f"{path}/"))
        if count and ns not in found:
            found[ns] = count
    return found
