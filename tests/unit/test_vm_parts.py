"""VM machinery, the pure parts: hardware KVM detection, kernel packages, specs, the qemu line."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from shootout.base.errors import TargetError, ToolMissing, UsageError
from shootout.places.vm import emulated, vm_config
from shootout.vm.image import VmImage, _check_space, kernel_package
from shootout.vm.kvm import choose_accel, kvm_problem
from shootout.vm.qemu import VmShape, pinned_cores, qemu_argv


def machine(tmp_path: Path, flags: str, modules: tuple[str, ...] = (), kvm: bool = True) -> Path:
    (tmp_path / "proc").mkdir(parents=True)
    (tmp_path / "proc/cpuinfo").write_text(f"processor\t: 0\nflags\t\t: fpu sse2 {flags}\n")
    for m in modules:
        (tmp_path / "sys/module" / m).mkdir(parents=True)
    if kvm:
        (tmp_path / "dev").mkdir()
        (tmp_path / "dev/kvm").touch()
    return tmp_path


def test_hardware_kvm_needs_vmx_or_svm_and_not_pvm(tmp_path: Path) -> None:
    assert kvm_problem(machine(tmp_path / "intel", "vmx", ("kvm", "kvm_intel")), "x86_64") is None
    assert kvm_problem(machine(tmp_path / "amd", "svm", ("kvm", "kvm_amd")), "x86_64") is None
    pvm = machine(tmp_path / "pvm", "hypervisor", ("kvm", "kvm_pvm"))
    assert "PVM" in (kvm_problem(pvm, "x86_64") or "")
    assert "no vmx or svm" in (kvm_problem(machine(tmp_path / "none", "hypervisor", ("kvm",)), "x86_64") or "")
    assert "no /dev/kvm" in (kvm_problem(machine(tmp_path / "nodev", "vmx", kvm=False), "x86_64") or "")
    assert "kvm_intel" in (kvm_problem(machine(tmp_path / "nomod", "vmx", ("kvm",)), "x86_64") or "")


def test_without_hardware_kvm_only_emulate_gives_a_vm(tmp_path: Path) -> None:
    pvm = machine(tmp_path, "hypervisor", ("kvm", "kvm_pvm"))
    with pytest.raises(TargetError) as err:
        choose_accel(emulate=False, root=pvm, machine="x86_64")
    assert "no hardware KVM here" in err.value.message and "--emulate" in err.value.hint
    accel = choose_accel(emulate=True, root=pvm, machine="x86_64")
    assert (accel.name, accel.emulated) == ("tcg", True) and "PVM" in (accel.why_not_kvm or "")


def test_kernel_packages() -> None:
    assert kernel_package("i386", "686-pae") == ("linux-image-686-pae", None)
    assert kernel_package("i386", "amd64") == ("linux-image-amd64:amd64", "amd64")  # multiarch
    assert kernel_package("amd64", "amd64") == ("linux-image-amd64", None)
    assert kernel_package("armhf", "arm64") == ("linux-image-arm64:arm64", "arm64")


def test_vm_specs() -> None:
    c = vm_config("vm:debian:bookworm:i386:amd64")
    assert (c.target, c.option("release"), c.option("arch"), c.option("flavour")) == ("vm", "bookworm", "i386", "amd64")
    assert emulated(c).option("emulate") == "yes" and emulated(vm_config("vm:debian:b:a:k")).target == "vm"
    for bad in ("vm:debian:bookworm:i386", "vm:ubuntu:noble:amd64:generic", "vm:debian::i386:amd64"):
        with pytest.raises(UsageError):
            vm_config(bad)


def test_every_vm_gets_the_same_shape_and_a_recorded_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shootout.vm import qemu

    # an x86 guest's qemu, whether or not this machine has it (an arm64 one installs qemu-system-arm)
    monkeypatch.setattr(qemu, "find_tool", lambda name, **_: f"/usr/bin/{name}")
    image = VmImage(tmp_path, {"arch": "i386", "host_key": "ssh-ed25519 AAAA", "kernel_release": "6.1.0-28-686-pae"})
    tcg = choose_accel(True, machine(tmp_path / "m", "hypervisor"), "x86_64")
    argv = qemu_argv(image, VmShape(), tcg, 40022, tmp_path / "serial.log")
    joined = " ".join(argv)
    assert "-accel tcg -cpu max -smp 2 -m 3072" in joined
    assert f"file={tmp_path / 'disk.img'},format=raw,if=virtio,snapshot=on" in argv  # the cached image is never written
    assert "user,id=net0,hostfwd=tcp:127.0.0.1:40022-:22" in argv
    assert argv[argv.index("-append") + 1] == "root=/dev/vda rw console=ttyS0 init=/sbin/shootout-init panic=-1 quiet"
    assert (argv[0] == "taskset") == (pinned_cores(VmShape(), os.cpu_count()) is not None)


def test_vms_are_pinned_only_where_cores_allow() -> None:
    assert pinned_cores(VmShape(vcpus=2), 2) is None and pinned_cores(VmShape(vcpus=2), None) is None
    assert pinned_cores(VmShape(vcpus=2), 3) == [1, 2] and pinned_cores(VmShape(vcpus=2), 8) == [6, 7]


def test_no_space_for_an_image_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"not enough free space for a VM image: .* GB free in") as err:
        _check_space(tmp_path, 10**18)
    assert "\n" not in str(err.value)


# What apt-get update (apt 2.6, bookworm) printed with no route to the mirror, recorded here
# (`unshare -n apt-get update`: exit status 0), and bookworm-security's index caught mid-sync.
RELEASE_DOWN = ("Ign:1 http://deb.debian.org/debian bookworm InRelease\n" * 3
                + "Err:1 http://deb.debian.org/debian bookworm InRelease\n"
                "  Temporary failure resolving 'deb.debian.org'\nReading package lists...\n",
                "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  "
                "Temporary failure resolving 'deb.debian.org'\n"
                "W: Some index files failed to download. They have been ignored, or old ones used instead.\n", 0)
SECURITY_STALE = ("Hit:1 http://deb.debian.org/debian bookworm InRelease\n",
                  "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-i386/"
                  "Packages.xz  File has unexpected size (346968 != 365336). Mirror sync in progress? "
                  "[IP: 151.101.2.132 80]\n"
                  "E: Some index files failed to download. They have been ignored, or old ones used instead.\n", 100)


def recorded(monkeypatch: pytest.MonkeyPatch, output: tuple[str, str, int]) -> list[tuple[str, ...]]:
    """The image recipe's steps answer with recorded output instead of running in a root."""
    from shootout.execution.process import ProcResult
    from shootout.vm import image

    calls: list[tuple[str, ...]] = []

    def step(script: str, root: Path, *args: str) -> ProcResult:
        calls.append(args)
        return ProcResult(("sh",), output[2], output[0], output[1], 1.0, 0.0, 0.0, 0, 0, 0.0)

    monkeypatch.setattr(image, "in_root", step)
    return calls


def test_a_failed_release_index_is_an_error_naming_the_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from shootout.vm.image import update_lists

    userspace = SimpleNamespace(name="debian-bookworm-i386", release="bookworm", arch="i386")
    calls = recorded(monkeypatch, RELEASE_DOWN)
    with pytest.raises(TargetError) as err:  # not "there is no linux-image-… for bookworm/i386"
        update_lists(Path("/nonexistent"), userspace, "amd64")  # type: ignore[arg-type]
    assert "http://deb.debian.org/debian gave no bookworm index (Temporary failure resolving" in err.value.message
    assert "VM image of debian-bookworm-i386" in err.value.message and calls == [("amd64",)]
    recorded(monkeypatch, SECURITY_STALE)
    (warning,) = update_lists(Path("/nonexistent"), userspace, None)  # type: ignore[arg-type]
    assert "bookworm-security/main/binary-i386" in warning and "Mirror sync" in warning and "IP:" not in warning


def test_an_arm_guest_on_an_x86_host_is_only_emulated(tmp_path: Path) -> None:
    intel = machine(tmp_path / "intel", "vmx", ("kvm", "kvm_intel"))
    assert kvm_problem(intel, "x86_64", guest="i386") is None
    assert kvm_problem(intel, "x86_64", guest="arm64") == "an arm64 guest on this x86_64 machine can only be emulated"
    with pytest.raises(TargetError, match="an armhf guest on this x86_64 machine can only be emulated"):
        choose_accel(False, intel, "x86_64", guest="armhf")
    assert choose_accel(True, intel, "x86_64", guest="armhf").name == "tcg"
    arm = machine(tmp_path / "arm", "", ("kvm",))  # an arm64 host with /dev/kvm
    assert kvm_problem(arm, "aarch64", guest="armhf") is None and kvm_problem(arm, "aarch64", guest="amd64")


@pytest.mark.parametrize("arch, flavour, cpu_tcg, cpu_kvm, board", [
    ("arm64", "arm64", "max", "host", "virt"),
    ("armhf", "arm64", "max", "host", "virt"),  # 64-bit kernel, 32-bit userspace
    # a 32-bit kernel needs a 32-bit CPU, and every device below 4 GiB (armmp has no LPAE)
    ("armhf", "armmp-lpae", "cortex-a15", "host,aarch64=off", "virt,highmem=off"),
    ("armhf", "armmp", "cortex-a15", "host,aarch64=off", "virt,highmem=off"),
])
def test_arm_guests_boot_on_the_virt_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arch: str,
                                           flavour: str, cpu_tcg: str, cpu_kvm: str, board: str) -> None:
    from shootout.vm import qemu
    from shootout.vm.kvm import Accel

    monkeypatch.setattr(qemu, "find_tool", lambda name, **_: f"/usr/bin/{name}")
    image = VmImage(tmp_path, {"arch": arch, "flavour": flavour, "host_key": "ssh-ed25519 AAAA"})
    for accel, cpu in ((Accel("tcg", True, "emulated"), cpu_tcg), (Accel("kvm", False, None), cpu_kvm)):
        argv = qemu_argv(image, VmShape(), accel, 40022, tmp_path / "serial.log")
        joined = " ".join(argv)
        assert f"/usr/bin/qemu-system-aarch64 -machine {board} -accel" in joined
        assert f"-cpu {cpu} -smp 2 -m 3072" in joined
        assert f"-kernel {tmp_path / 'vmlinuz'} -initrd {tmp_path / 'initrd.img'}" in joined  # the image's own
        assert "console=ttyAMA0" in argv[argv.index("-append") + 1]
    monkeypatch.setattr(qemu, "find_tool", lambda name, **_: None)
    with pytest.raises(ToolMissing, match="qemu-system-arm"):  # the Debian package to install
        qemu_argv(image, VmShape(), Accel("tcg", True, "x"), 40022, tmp_path / "serial.log")


def test_arm_kernel_packages() -> None:
    assert kernel_package("arm64", "arm64") == ("linux-image-arm64", None)
    assert kernel_package("armhf", "armmp-lpae") == ("linux-image-armmp-lpae", None)


def test_a_boot_that_fails_says_the_consoles_alarm_and_keeps_its_log(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The line that says why (not the reboot after it), and a log that outlives the run directory."""
    from shootout.vm import qemu

    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "serial.log").write_text("Begin: Running /scripts/local-block ... done.\n"
                                       "ALERT!  /dev/vda does not exist.  Dropping to a shell!\n"
                                       "Rebooting automatically due to panic= boot argument\n"
                                       "[   47.850756] reboot: Restarting system\n")
    (run_dir / "qemu.log").write_text("")
    done = subprocess.Popen(["true"])
    done.wait()
    vm = qemu.RunningVm(VmImage(tmp_path / "debian-bookworm-armhf-armmp-1", {}), [], 1, run_dir, done, 0)
    with pytest.raises(TargetError) as raised:
        qemu.check_alive(vm)
    assert raised.value.message == ("qemu exited (0) while booting debian-bookworm-armhf-armmp-1: "
                                    "ALERT! /dev/vda does not exist. Dropping to a shell!")
    kept = tmp_path / "home" / "logs" / "boot-debian-bookworm-armhf-armmp-1.log"
    assert raised.value.hint == f"console log: {kept}"
    shutil.rmtree(run_dir)  # as the journal does
    assert "Restarting system" in kept.read_text()
