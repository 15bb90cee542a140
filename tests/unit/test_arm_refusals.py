"""On an ARM machine: the default main job's two userspaces, and the one-line refusals (host+m32,
an armhf side this CPU runs only under qemu, i386), made before any userspace is created."""

from __future__ import annotations

from pathlib import Path

import pytest
from ready_spaces import arm_pair_ready

from shootout.arm import aarch32 as a32
from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.configs import userspaces as uconfigs
from shootout.configs.specs import abi_problem, parse_spec
from shootout.request.preparation import prepare
from shootout.request.request import Wish, build_request
from shootout.system import emulator
from shootout.userspace import arches, registry


def quiet(line: str) -> None:
    """Messages of a request nobody reads here."""


NATIVE = a32.AArch32(True, "a static armhf program ran natively")
NO_AARCH32 = a32.AArch32(False, "the kernel refuses the 32-bit personality (setarch linux32)")


@pytest.fixture
def arm64(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """This process believes it runs on an arm64 kernel, with `userspace` as dpkg's architecture."""
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))

    def machine(userspace: str = "arm64", found: a32.AArch32 | None = NATIVE, page: int = 4096) -> None:
        for module in (arches, uconfigs):
            monkeypatch.setattr(module, "kernel_arch", lambda: "arm64")
            monkeypatch.setattr(module, "host_arch", lambda: userspace)
        monkeypatch.setattr(a32, "here", lambda: found)
        monkeypatch.setattr(a32, "page_size", lambda root=Path("/"): page)
        monkeypatch.setattr(emulator, "here", lambda: None)  # a real arm64 machine, also inside emulated-arm64.sh
    return machine


@pytest.mark.parametrize("userspace, kernel, pair", [
    ("amd64", "amd64", ("amd64", "i386")),
    ("i386", "amd64", ("amd64", "i386")),
    ("arm64", "arm64", ("arm64", "armhf")),
    ("armhf", "arm64", ("arm64", "armhf")),  # 32-bit Raspberry Pi OS on a Pi 4's default 64-bit kernel
    ("armhf", "armhf", None),  # a 32-bit kernel: no 64-bit side
    ("ppc64el", "ppc64el", None),
])
def test_headline_arches(userspace: str, kernel: str, pair: tuple[str, str] | None) -> None:
    assert arches.headline_arches(userspace, kernel) == pair


def test_armhf_userspace_on_an_arm64_kernel_runs_both_natively(arm64) -> None:  # type: ignore[no-untyped-def]
    arm64(userspace="armhf")
    assert not arches.is_foreign("arm64") and not arches.is_foreign("armhf")
    assert arches.is_foreign("i386") and arches.arch_problem("armhf") is None


def test_headline_on_a_pi4_with_the_32bit_os(arm64, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    arm64(userspace="armhf")
    monkeypatch.setattr(uconfigs, "host_release", lambda: "bookworm")
    monkeypatch.setattr(uconfigs.os, "geteuid", lambda: 0)
    arm_pair_ready()
    found, reason = uconfigs.headline_configs()
    assert reason is None and [c.name for c in found] == ["debian:bookworm:arm64", "debian:bookworm:armhf"]


def test_headline_without_aarch32_says_why(arm64, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    arm64(found=a32.AArch32(False, "the kernel uses 16K pages: arm64 has no 32-bit compat layer then"), page=16384)
    monkeypatch.setattr(uconfigs, "host_release", lambda: "bookworm")
    found, reason = uconfigs.headline_configs()
    assert found == [] and reason is not None and "16K pages" in reason and "kernel=kernel8.img" in reason


def test_host_m32_refused_on_arm64(arm64) -> None:  # type: ignore[no-untyped-def]
    arm64()
    with pytest.raises(UsageError) as err:
        parse_spec("host+m32")
    assert "x86 compiler option" in err.value.message and "armhf" in err.value.message
    assert "debian:bookworm:armhf" in err.value.hint
    assert "x86 compiler option" in (abi_problem(Config(name="host+m32", target="host", abi="m32")) or "")


def _refused(spec: str, emulate: bool = False) -> UsageError:
    with pytest.raises(UsageError) as err:
        prepare(build_request(Wish(configs=[spec], workloads=["intmix"], emulate=emulate), quiet), quiet)
    return err.value


def test_armhf_without_aarch32_refused_before_anything_is_made(arm64) -> None:  # type: ignore[no-untyped-def]
    arm64(found=NO_AARCH32)
    err = _refused("debian:bookworm:armhf")
    assert "does not run 32-bit ARM (armhf) programs natively" in err.message and "--emulate" in err.hint
    assert "\n" not in err.message and list(registry.userspaces_dir().glob("*")) == []
    assert arches.is_foreign("armhf")  # with --emulate it runs as emulated (marked, no verdicts)


def test_armhf_on_16k_pages_refused_with_the_fix(arm64) -> None:  # type: ignore[no-untyped-def]
    arm64(found=a32.AArch32(False, "the kernel uses 16K pages"), page=16384)
    err = _refused("debian:bookworm:armhf")
    assert "16K pages" in err.message and "kernel=kernel8.img" in err.hint


def test_i386_refused_on_an_arm_host(arm64) -> None:  # type: ignore[no-untyped-def]
    arm64()
    err = _refused("debian:bookworm:i386")
    assert "i386 programs do not run on this arm64 machine" in err.message and "armhf" in err.hint
    assert list(registry.userspaces_dir().glob("*")) == []


def test_x86_host_keeps_emulated_userspaces(monkeypatch: pytest.MonkeyPatch) -> None:
    # an armhf userspace on x86 stays allowed (run through qemu, marked emulated): only ARM hosts refuse
    monkeypatch.setattr(arches, "kernel_arch", lambda: "amd64")
    monkeypatch.setattr(arches, "host_arch", lambda: "amd64")
    assert arches.is_foreign("armhf") and arches.arch_problem("armhf") is None


def test_arm64_on_a_32bit_kernel_names_arm_64bit(monkeypatch: pytest.MonkeyPatch) -> None:
    # a Pi 3B+ with the 32-bit OS and its armv7l kernel
    monkeypatch.setattr(arches, "kernel_arch", lambda: "armhf")
    monkeypatch.setattr(arches, "host_arch", lambda: "armhf")
    why, fix = arches.arch_problem("arm64") or ("", "")
    assert "64-bit kernel" in why and "arm_64bit=1" in fix
    assert arches.arch_problem("armhf") is None and arches.headline_arches("armhf", "armhf") is None
