"""install.sh's package list resolves on amd64, arm64 and armhf, as apt on such a machine would resolve it.

The list is install.sh's own (--print-packages ARCH [--test]); apt-get reads bookworm main's
Packages index for that architecture into a temporary directory (lists, cache, an empty dpkg
status) and simulates the install: this machine's dpkg and apt configuration are not touched.
Needs root (apt's options as CI runs them) and Debian's mirror; fails, never skips, without them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import debian_debs
from debian_debs import Apt

pytestmark = pytest.mark.root

INSTALL = Path(__file__).resolve().parents[2] / "install.sh"


def packages(arch: str, *test: str) -> list[str]:
    done = subprocess.run([str(INSTALL), "--print-packages", arch, *test], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.fixture(scope="module", params=["amd64", "arm64", "armhf"])
def apt_for(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            require_root_module: None) -> tuple[str, Apt]:
    arch = request.param
    apt = debian_debs.apt_for(tmp_path_factory.mktemp(f"apt-{arch}"), [arch])
    done = apt("update")
    assert done.returncode == 0, f"apt-get update for {arch}: {done.stderr}"
    return arch, apt


@pytest.fixture(scope="module")
def require_root_module() -> None:
    if os.geteuid() != 0:
        pytest.fail("this test needs root (CI runs as root)")


@pytest.mark.parametrize("test", [(), ("--test",)], ids=["install", "install-test"])
def test_every_package_has_a_candidate(apt_for: tuple[str, Apt], test: tuple[str, ...]) -> None:
    arch, apt = apt_for
    wanted = packages(arch, *test)
    done = apt("install", "--simulate", "--no-install-recommends", *wanted)
    assert done.returncode == 0, f"./install.sh {' '.join(test)} on {arch}: {done.stderr.strip()}"
    installed = {line.split()[1].split(":")[0] for line in done.stdout.splitlines() if line.startswith("Inst ")}
    assert set(wanted) <= installed


def test_a_package_that_cannot_install_is_caught(apt_for: tuple[str, Apt]) -> None:
    # what install.sh once listed: gcc-multilib off x86, and beside the armhf cross compiler on x86 (they
    # conflict); the check must say which package fails
    arch, apt = apt_for
    wanted, why = ((["gcc-multilib", "gcc-arm-linux-gnueabihf"], "unmet dependencies") if arch == "amd64"
                   else (["gcc-multilib", "make"], "no installation candidate"))
    done = apt("install", "--simulate", "--no-install-recommends", *wanted)
    said = done.stdout + done.stderr  # apt prints the unmet dependencies on stdout, its E: line on stderr
    assert done.returncode != 0
    assert why in said and ("gcc-arm-linux-gnueabihf :" if arch == "amd64" else "gcc-multilib") in said


def test_the_lists_differ_by_architecture() -> None:
    assert "gcc-multilib" in packages("amd64") and "gcc-multilib" not in packages("arm64")
    assert "qemu-system-arm" in packages("arm64") and "qemu-system-x86" not in packages("armhf")
    # 32-bit arm: numpy, scipy and matplotlib from Debian (PyPI has no wheels for armhf)
    assert {"python3-numpy", "python3-scipy", "python3-matplotlib"} <= set(packages("armhf"))
    assert "python3-numpy" not in packages("arm64")
    # arm64's tests build the native kernels' 32-bit side with the armhf cross compiler (no gcc-multilib)
    assert "gcc-arm-linux-gnueabihf" in packages("arm64", "--test")
    # on x86 it would conflict with gcc-multilib: the ARMv6 test program links with the armhf binutils
    assert "gcc-arm-linux-gnueabihf" not in packages("amd64", "--test")
    bad = subprocess.run([str(INSTALL), "--print-packages", "sparc"], capture_output=True, text=True)
    assert bad.returncode != 0 and len(bad.stderr.splitlines()) == 1 and "arm64" in bad.stderr
