"""ARM facts and refusals over trees written from the formats of a Pi 3B+, a Pi 4, a Pi 5 and an
arm64 server (tests/fixtures/arm): cpuinfo, sysfs cpu and cache trees, device tree, config.txt,
vcgencmd outputs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from shootout.arm import aarch32 as a32
from shootout.arm import board
from shootout.arm.configtxt import Reader, setting
from shootout.base import socs
from shootout.conditions import machinefacts as facts
from shootout.conditions.governor import governor_summary, tune_problem
from shootout.system.emulator import here as emulator_here

ARM = Path(__file__).resolve().parents[1] / "fixtures" / "arm"
PI3, PI4, PI5, SERVER = (ARM / n for n in ("pi3bplus", "pi4", "pi5", "neoverse-n1"))


def vcgencmd(root: Path):  # type: ignore[no-untyped-def]
    """`vcgencmd ARGS` answered from the board's written outputs."""
    def run(*args: str) -> str | None:
        path = root / "vcgencmd" / "_".join(args)
        return path.read_text().strip() if path.exists() else None
    return run


@pytest.mark.parametrize("root, core, model, soc, kind, rev, mem", [
    (PI3, "Cortex-A53", "Raspberry Pi 3 Model B Plus Rev 1.3", "BCM2837", "3B+", "1.3", 1024),
    (PI4, "Cortex-A72", "Raspberry Pi 4 Model B Rev 1.4", "BCM2711", "4B", "1.4", 4096),
    (PI5, "Cortex-A76", "Raspberry Pi 5 Model B Rev 1.0", "BCM2712", "5", "1.0", 8192),
])
def test_pi_board(root: Path, core: str, model: str, soc: str, kind: str, rev: str, mem: int) -> None:
    # the Pi 3B+ and Pi 4 read cpuinfo as 32-bit processes: "ARMv7/ARMv8 Processor", the part names the core
    assert facts.cpu_model(root) == core
    found = board.pi_board(root)
    assert found is not None and found["model"] == model and found["soc"] == soc
    assert found["revision"]["type"] == kind and found["revision"]["revision"] == rev
    assert found["revision"]["memory_mb"] == mem and found["revision"]["soc"] == soc
    assert facts.board(root) == model
    assert governor_summary(root) == "ondemand"  # Raspberry Pi OS's default


def test_the_revision_is_read_from_the_device_tree_without_cpuinfo(tmp_path: Path) -> None:
    shutil.copytree(PI4, tmp_path / "pi4")
    (tmp_path / "pi4" / "proc" / "cpuinfo").unlink()
    assert board.revision_code(tmp_path / "pi4") == 0xC03114
    assert board.decode_revision(0x900092) is not None  # Pi Zero: new-style code
    assert board.decode_revision(0x0010) is None  # old-style (Pi 1 B+): no fields to decode


def test_server_has_no_pi_facts() -> None:
    assert facts.cpu_model(SERVER) == "Neoverse-N1"
    assert board.pi_board(SERVER) is None and board.firmware_config(SERVER) is None
    assert facts.board(SERVER) == "KVM Virtual Machine"


def test_caches_sysfs_else_known_per_soc_else_unknown(tmp_path: Path) -> None:
    assert board.caches(PI5) == {"source": "sysfs", "l1d": "64K", "l1i": "64K", "l2": "512K", "l3": "2048K"}
    assert board.caches(SERVER)["l3"] == "32768K"
    pi4 = board.caches(PI4)  # a Pi 4's kernel lists no caches
    assert pi4 is not None and pi4["source"] == "known sizes of the BCM2711" and pi4["l2"] == "1024K shared"
    pi3 = board.caches(PI3)
    assert pi3 is not None and "l1d" not in pi3 and pi3["l2"] == "512K shared"  # unpublished L1: not guessed
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True)
    assert board.caches(tmp_path) == {"source": "unknown"}  # never another machine's sizes


def test_firmware_config_arm_64bit() -> None:
    assert board.firmware_config(PI5) == {"path": "/boot/firmware/config.txt", "arm_64bit": "1", "kernel": None}
    assert board.firmware_config(PI4)["arm_64bit"] is None  # type: ignore[index]
    text = "arm_64bit=0\n[pi4]\nkernel=kernel8.img\n[pi0]\nkernel=other.img\n"
    assert setting(text, "kernel", Reader("Raspberry Pi 4 Model B Rev 1.4")) == "kernel8.img"
    assert setting(text, "kernel", Reader("Raspberry Pi Zero W Rev 1.1")) == "other.img"


def test_firmware_state_decoded() -> None:
    pi3 = board.firmware_state(vcgencmd(PI3))
    assert pi3 == {"arm_mhz": 1400, "core_mhz": 400, "temp_c": 52.1, "throttled": "0x50000",
                   "throttled_flags": ["under-voltage occurred", "throttling occurred"]}
    pi5 = board.firmware_state(vcgencmd(PI5))
    assert pi5 is not None and pi5["arm_mhz"] == 2400 and pi5["throttled_flags"] == []
    assert board.firmware_state(vcgencmd(SERVER)) is None  # no vcgencmd


def test_page_size() -> None:
    assert a32.page_size(PI4) == 4096 and a32.page_size(PI5) == 16384 and a32.page_size(SERVER) == 4096


def _binfmt(root: Path, tmp: Path, *entries: str) -> Path:
    copy = tmp / root.name
    shutil.copytree(root, copy)
    target = copy / "proc/sys/fs/binfmt_misc"
    target.mkdir(parents=True)
    for name in ("register", "status", *entries):
        shutil.copy(ARM / "binfmt_misc" / name, target / name)
    return copy


def test_binfmt_entries_that_take_armhf(tmp_path: Path) -> None:
    root = _binfmt(PI4, tmp_path, "qemu-arm", "qemu-aarch64")
    assert a32.arm32_binfmt_entries(root) == ["qemu-arm"]
    (root / "proc/sys/fs/binfmt_misc/qemu-arm").write_text(
        (ARM / "binfmt_misc/qemu-arm").read_text().replace("enabled", "disabled"))
    assert a32.arm32_binfmt_entries(root) == []


def test_aarch32_native_on_a_pi4() -> None:
    ran: list[str] = []
    found = a32.aarch32(PI4, "aarch64", personality=lambda: True, run=lambda: ran.append("x") or "ran")
    assert found is not None and found.native and ran == ["x"] and found.binfmt == ()
    assert a32.armhf_problem(found, 4096) is None


def test_aarch32_absent_on_a_core_without_it() -> None:
    # AmpereOne: the kernel refuses PER_LINUX32; the tiny program is not even tried
    found = a32.aarch32(SERVER, "aarch64", personality=lambda: False, run=lambda: pytest.fail("not to run"))
    assert found is not None and not found.native and "32-bit personality" in found.how
    why, fix = a32.armhf_problem(found, 4096) or ("", "")
    assert "does not run 32-bit ARM" in why and "--emulate" in fix


def test_a_program_that_does_not_run_natively_is_not_native() -> None:
    found = a32.aarch32(SERVER, "aarch64", personality=lambda: True, run=lambda: "exec failed: Exec format error")
    assert found is not None and not found.native and "Exec format error" in found.how


def test_16k_pages_refuse_armhf_with_the_fix() -> None:
    found = a32.aarch32(PI5, "aarch64", personality=lambda: pytest.fail("page size decides"), run=lambda: "ran")
    assert found is not None and not found.native and "16K pages" in found.how
    why, fix = a32.armhf_problem(found, a32.page_size(PI5)) or ("", "")
    assert "16K pages" in why and "kernel=kernel8.img" in fix and "config.txt" in fix


def test_qemu_binfmt_entry_on_a_native_cpu_is_named(tmp_path: Path) -> None:
    root = _binfmt(PI4, tmp_path, "qemu-arm")
    found = a32.aarch32(root, "aarch64", personality=lambda: True, run=lambda: pytest.fail("qemu would run it"))
    assert found is not None and found.native and found.binfmt == ("qemu-arm",)
    why, fix = a32.armhf_problem(found, 4096) or ("", "")
    assert "qemu-arm" in why and "echo 0 > /proc/sys/fs/binfmt_misc/qemu-arm" in fix


def test_not_asked_off_arm64() -> None:
    assert a32.aarch32(PI3, "armv7l") is None and a32.aarch32(SERVER, "x86_64") is None


def test_the_tiny_armhf_program_exits_42() -> None:
    # run through qemu-arm here (x86 CI): proves the program's bytes, which an arm64 machine runs natively
    qemu = shutil.which("qemu-arm-static") or shutil.which("qemu-arm")
    assert qemu is not None, "qemu-user-static is installed by install.sh"
    elf = a32.tiny_armhf()
    assert len(elf) < 128
    path = Path("/tmp") / f"shootout-test-exit42-{id(elf)}"
    path.write_bytes(elf)
    path.chmod(0o755)  # qemu-user, like the kernel, runs only executable files
    try:
        # on a machine under qemu-user (scripts/emulated-arm64.sh) a qemu-arm inside cannot reserve its
        # guest's address space: the program runs as every armhf program does there (the real kernel's binfmt)
        argv = [str(path)] if emulator_here() else [qemu, str(path)]
        assert subprocess.run(argv, timeout=30).returncode == a32.EXIT_CODE
    finally:
        path.unlink()


def test_tune_refused_without_a_governor_to_set(tmp_path: Path) -> None:
    why, fix = tune_problem(SERVER) or ("", "")
    assert "no cpufreq governor" in why and fix == "leave --tune out"
    root = tmp_path / "pi"
    shutil.copytree(PI4, root)
    assert tune_problem(root) is None  # ondemand, performance offered, writable
    (root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors").write_text("ondemand powersave\n")
    why, _ = tune_problem(root) or ("", "")
    assert "no performance governor" in why


def test_sizing_uses_the_socs_known_caches_where_sysfs_lists_none() -> None:
    from shootout.execution.placefacts import sizing_from

    assert socs.known_caches_kib("BCM2711") == {"l1": 32, "l2": 1024}
    assert sizing_from(4, "", "", 32, "brcm,bcm2711").caches_kib == {"l1": 32, "l2": 1024}
    assert sizing_from(4, "", "", 32, "brcm,bcm2837").caches_kib == {"l2": 512}
    assert sizing_from(4, "", "", 64, "vendor,unknown-soc").caches_kib == {}  # the workload's fallback, said so
    assert sizing_from(4, "", "1 Data 64K\n2 Unified 512K\n", 64, "brcm,bcm2712").caches_kib == {"l1": 64, "l2": 512}


def test_qemu_arm_registration_without_a_binfmt_d_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Debian on arm64 ships no qemu-arm.conf (its own family): --emulate still registers qemu-arm-static,
    # with a magic that takes armhf programs (checked against the tiny one) and not arm64 ones
    from shootout.userspace import binfmt

    assert Path("/usr/bin/qemu-arm-static").exists(), "qemu-user-static is installed by install.sh"
    monkeypatch.setattr(binfmt, "BINFMT_D", (tmp_path,))
    entry, line = binfmt.registration("armhf")
    fields = line.split(":")
    assert entry == "qemu-arm" and fields[6] == "/usr/bin/qemu-arm-static" and "F" in fields[7]
    magic, mask = (bytes.fromhex(f.replace("\\x", "")).hex() for f in fields[4:6])
    status = f"enabled\ninterpreter {fields[6]}\nflags: F\noffset 0\nmagic {magic}\nmask {mask}\n"
    assert a32._matches(a32.tiny_armhf(), status)
    assert not a32._matches(b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x02\x00\xb7\x00", status)


def test_preflight_lines_of_a_pi5() -> None:
    pi5 = {"pi": board.pi_board(PI5), "firmware": board.firmware_config(PI5), "page_size": a32.page_size(PI5),
           "firmware_state": board.firmware_state(vcgencmd(PI5)), "caches": board.caches(PI5),
           "aarch32": a32.aarch32(PI5, "aarch64", personality=lambda: None, run=lambda: "ran").as_dict()}  # type: ignore[union-attr]
    lines = board.preflight_lines(pi5)
    assert lines[0] == "board: Raspberry Pi 5 Model B Rev 1.0 (BCM2712, 8192 MB, revision d04170)"
    assert "arm_64bit=1" in lines[1] and "kernel=the default" in lines[1]
    assert lines[2].startswith("vcgencmd: arm 2400 MHz, core 910 MHz, 58.8 °C, throttled 0x0 (none)")
    assert lines[3].startswith("32-bit ARM programs: not native (the kernel uses 16K pages")
    assert lines[4] == "page size: 16K" and len(lines) == 5  # caches from sysfs: not repeated
    assert board.caches(PI4) is not None and "known sizes of the BCM2711" in board.preflight_lines({"caches": board.caches(PI4)})[0]
    assert board.preflight_lines({"caches": {"source": "sysfs", "l1d": "48K"}, "page_size": 4096}) == []


@pytest.mark.parametrize("root", [PI3, PI4, PI5, SERVER], ids=lambda p: p.name)
def test_machine_facts_over_each_board(root: Path) -> None:
    found = facts.machine_facts(root)
    assert found["cores"] == 4 and found["memory_bytes"] and found["page_size"] in (4096, 16384)
    assert found["arch"] in ("aarch64", "armv7l") and found["caches"]["source"] != ""
    assert found["aarch32"] is None and found["firmware_state"] is None  # probed on the real machine only
    assert (found["pi"] is None) == (root == SERVER)


@pytest.mark.parametrize("root", [PI3, PI4, PI5, SERVER], ids=lambda p: p.name)
def test_each_cpuinfo_is_in_the_format_of_the_kernel_its_tree_runs(root: Path) -> None:
    """32-bit ARM's kernel prints a space after each Features word, arm64's (its compat view for a
    32-bit process too) one before each: a 64-bit kernel's line does not end in a space."""
    bits64 = (root / "proc" / "sys" / "kernel" / "arch").read_text().strip() == "aarch64"
    features = [line for line in (root / "proc" / "cpuinfo").read_text().splitlines() if line.startswith("Features")]
    assert features and all(line.endswith(" ") != bits64 for line in features)
