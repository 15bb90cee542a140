"""A whole machine under qemu-user (an arm64 root filesystem run through binfmt_misc on x86-64):
found from the kernel's own answers, refused without --emulate, every figure marked emulated."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from ready_spaces import arm_pair_ready

from shootout.arm import aarch32 as a32
from shootout.base.errors import UsageError
from shootout.base.model import Config
from shootout.configs import userspaces as uconfigs
from shootout.places import host as host_target
from shootout.request.preparation import prepare
from shootout.request.request import Wish, build_request
from shootout.system import emulator
from shootout.userspace import arches, registry


def quiet(line: str) -> None:
    """Messages of a request nobody reads here."""


ARM = Path(__file__).resolve().parents[1] / "fixtures" / "arm"
X86_CPUINFO = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu vme sse2\n"


@pytest.mark.parametrize("board", ["pi3bplus", "pi4", "pi5", "neoverse-n1"])
def test_real_arm_machines_are_not_emulated(board: str) -> None:
    assert emulator.emulator(ARM / board, machine="aarch64") is None


def test_arm64_on_an_x86_kernel_is_emulated(tmp_path: Path) -> None:
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/arch").write_text("x86_64\n")
    (tmp_path / "proc/cpuinfo").write_text(X86_CPUINFO)
    why = emulator.emulator(tmp_path, machine="aarch64")
    assert why is not None and "x86_64" in why and "qemu-user" in why and "\n" not in why


def test_an_x86_cpuinfo_under_an_arm_machine_name_is_emulated(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(X86_CPUINFO)
    assert "x86 CPU" in (emulator.emulator(tmp_path, machine="armv7l") or "")
    assert emulator.emulator(tmp_path, machine="x86_64") is None and emulator.emulator(tmp_path, machine="i686") is None


def test_this_machine_is_emulated_exactly_when_qemu_runs_this_process() -> None:
    # independent of the kernel's arch: the program the kernel runs as this process, as another
    # process reads it (qemu-user fakes /proc/self/exe for its own process only)
    exe = subprocess.run(["readlink", f"/proc/{os.getpid()}/exe"], capture_output=True, text=True, check=True)
    assert (emulator.here() is not None) == ("qemu" in exe.stdout), exe.stdout


@pytest.fixture
def emulated_arm64(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process believes it is an arm64 machine emulated by qemu-user on x86-64."""
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))
    for module in (arches, uconfigs):
        monkeypatch.setattr(module, "kernel_arch", lambda: "arm64")
        monkeypatch.setattr(module, "host_arch", lambda: "arm64")
    # binfmt_misc's qemu-arm takes armhf programs: not native
    monkeypatch.setattr(a32, "here", lambda: a32.AArch32(True, "binfmt_misc entry qemu-arm", ("qemu-arm",)))
    monkeypatch.setattr(a32, "page_size", lambda root=Path("/"): 4096)
    monkeypatch.setattr(emulator, "here", lambda: "uname -m says aarch64 but the kernel is x86_64: qemu-user")
    monkeypatch.setattr(host_target, "emulator_here", emulator.here)
    monkeypatch.setattr(uconfigs, "host_release", lambda: "bookworm")
    monkeypatch.setattr(uconfigs.os, "geteuid", lambda: 0)


def test_the_main_job_is_refused_without_emulate(emulated_arm64: None) -> None:
    with pytest.raises(UsageError) as err:
        prepare(build_request(Wish(workloads=["intmix"]), quiet), quiet)
    assert "qemu-user" in err.value.message and "--emulate" in err.value.hint and "\n" not in err.value.message
    assert list(registry.userspaces_dir().glob("*")) == []  # refused before anything is made


def test_a_host_config_is_refused_without_emulate(emulated_arm64: None) -> None:
    with pytest.raises(UsageError) as err:
        prepare(build_request(Wish(configs=["host"], workloads=["intmix"]), quiet), quiet)
    assert "emulator's" in err.value.message


def test_with_emulate_the_main_job_is_arm64_against_armhf(emulated_arm64: None) -> None:
    arm_pair_ready()
    found, reason = uconfigs.headline_configs()
    assert found == [] and reason is not None and "qemu" in reason  # armhf runs only under qemu here
    found, reason = uconfigs.headline_configs(emulate=True)
    assert reason is None and [c.name for c in found] == ["debian:bookworm:arm64", "debian:bookworm:armhf"]
    request = prepare(build_request(Wish(workloads=["intmix"], emulate=True), quiet), quiet)
    assert [c.name for c in request.configs] == ["debian:bookworm:arm64", "debian:bookworm:armhf"]


def test_the_host_target_says_emulated(emulated_arm64: None) -> None:
    target = host_target.HostTarget(Config(name="host"))
    try:
        facts = target.facts()
    finally:
        target.close()  # its work directory, which the probe made
    assert facts["emulated"] is True and "qemu-user" in facts["emulator"]


def test_on_an_emulated_machine_armhf_is_not_native(monkeypatch: pytest.MonkeyPatch) -> None:
    # the tiny armhf program exits 42 there too, through binfmt_misc entries the machine cannot see
    monkeypatch.setattr(a32, "emulator_here", lambda: "uname -m says aarch64 but the kernel is x86_64: qemu-user")
    found = a32.aarch32(kernel_machine="aarch64", personality=lambda: True, run=lambda: "ran")
    assert found is not None and not found.native and "qemu-user" in found.how
    monkeypatch.setattr(a32, "emulator_here", lambda: None)
    assert a32.aarch32(kernel_machine="aarch64", personality=lambda: True, run=lambda: "ran").native is True
