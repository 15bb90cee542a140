"""kernel-modes on a Raspberry Pi, over the boot partitions of a Pi 4 and a Pi 5 written from the formats
(tests/fixtures/bootparts): the plan of boots, the switch between kernels (journalled, undone by
`shootout doctor` also after SIGKILL), and the refusals where it cannot work. Every partition is
a fake in a temporary directory; nothing here reboots anything."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from bootparts import killed_mid_switch, pi_root, snapshot, system

from shootout.arm import aarch32 as a32
from shootout.arm.configtxt import Reader
from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config, RunSettings
from shootout.boots.identity import read_boot
from shootout.boots.images import board_of, kernel_image
from shootout.boots.partition import boot_partition, default_image
from shootout.boots.tryboot import switch_lines
from shootout.configs.specs import resolve
from shootout.experiments.kernelmodes import EXPERIMENT
from shootout.measure import bootcampaign as campaign
from shootout.measure.bootcampaign import BlockOutcome, after_block
from shootout.system import emulator
from shootout.userspace import arches

PI3 = "Raspberry Pi 3 Model B Plus Rev 1.3"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def sides(root: Path, system_arch: str) -> list[Config]:
    """kernel-modes' configurations on the fake board, as `shootout run --experiment kernel-modes` reads them."""
    settings = dataclasses.replace(EXPERIMENT, root=root, system=system_arch).settings()
    return resolve(settings.run["configs"], settings.configs)


def plan_of_boots(root: Path, system_arch: str) -> tuple[list[str], dict[str, tuple[list[str], list[str]]]]:
    """The schedule, and for each boot: the lines that boot it, and the userspaces it measures."""
    configs = sides(root, system_arch)
    planned = campaign.plan(configs, 4, root)
    by_name = {c.name: c for c in configs}
    table = {boot: (switch_lines(planned.wants[boot]), [by_name[n].userspace or "" for n in planned.members(boot)])
             for boot in dict.fromkeys(planned.schedule)}
    return planned.schedule, table


def test_the_written_partitions_as_the_firmware_reads_them(tmp_path: Path) -> None:
    pi4 = boot_partition(pi_root(tmp_path / "pi4", "pi4-armhf"))
    pi5 = boot_partition(pi_root(tmp_path / "pi5", "pi5-arm64"))
    assert pi4 is not None and pi5 is not None and pi4.path == "/boot/firmware"
    assert {"kernel.img", "kernel7.img", "kernel7l.img", "kernel8.img"} <= pi4.files and not pi4.has("kernel_2712.img")
    assert {"kernel8.img", "kernel_2712.img"} <= pi5.files and not pi5.has("kernel7l.img")
    assert pi4.cmdline_txt is not None and "rootwait" in pi4.cmdline_txt and pi4.autoboot_txt is None
    # A plain boot: the Pi 4's firmware is 64-bit by default, the Pi 5's loads its own kernel first.
    pi4_model, pi5_model = system("pi4-armhf")["model"], system("pi5-arm64")["model"]
    assert default_image(board_of(pi4_model), pi4.config_txt, pi4.files, Reader(pi4_model)) == "kernel8.img"
    assert default_image(board_of(pi5_model), pi5.config_txt, pi5.files, Reader(pi5_model)) == "kernel_2712.img"
    assert default_image(board_of(PI3), pi4.config_txt, pi4.files, Reader(PI3)) == "kernel7.img"  # the Pi 3: arm_64bit=0
    assert default_image(board_of(pi4_model), pi4.config_txt + "\narm_64bit=0\n", pi4.files,
                         Reader(pi4_model)) == "kernel7l.img"
    for name in ("pi4-armhf", "pi5-arm64"):  # the release each default boot runs names its image
        assert kernel_image(system(name)["release"]) == ("kernel8.img" if name == "pi4-armhf" else "kernel_2712.img")


def test_the_plan_of_boots_on_a_pi4(tmp_path: Path) -> None:
    schedule, table = plan_of_boots(pi_root(tmp_path / "pi4", "pi4-armhf"), "armhf")
    k64 = "kernel kernel8.img (aarch64)"
    # The running kernel first; the two sides of the 64-bit kernel share its boots, A B B A.
    assert schedule == [k64, "k32-u32", "k32-u32", k64]
    assert table == {k64: (["kernel=kernel8.img", "arm_64bit=1"], ["debian-bookworm-armhf", "debian-bookworm-arm64"]),
                     "k32-u32": (["kernel=kernel7l.img", "arm_64bit=0"], ["debian-bookworm-armhf"])}


def test_the_plan_of_boots_on_a_pi5(tmp_path: Path) -> None:
    schedule, table = plan_of_boots(pi_root(tmp_path / "pi5", "pi5-arm64"), "arm64")
    k64 = "kernel kernel8.img (aarch64)"
    assert schedule == ["k64-16k-u64", k64, k64, "k64-16k-u64"]  # no 32-bit kernel for a Pi 5
    assert table == {k64: (["kernel=kernel8.img", "arm_64bit=1"], ["debian-bookworm-armhf", "debian-bookworm-arm64"]),
                     "k64-16k-u64": (["kernel=kernel_2712.img", "arm_64bit=1"], ["debian-bookworm-arm64"])}


def test_a_pi_runs_kernel_modes_across_boots_elsewhere_vms(tmp_path: Path) -> None:
    from shootout.cli.boots import across_boots
    from shootout.measure.runstate import RunRequest

    pi = sides(pi_root(tmp_path / "pi4", "pi4-armhf"), "armhf")
    assert campaign.kernels(pi) == 2 and all(c.target == "chroot" for c in pi)
    assert [c.label for c in pi] == ["32/32 (kernel7l.img, armhf)", "64-bit kernel + 32-bit userspace (kernel8.img, armhf)",
                                     "64/64 (kernel8.img, arm64)"]
    # Implied without --across-boots (no boot runs two kernels): planned against the running kernel,
    # which on this test machine is none of the Pi's.
    with pytest.raises(TargetError, match=r"the running kernel .* is none of the configurations: k32-u32 "
                                          r"\(kernel7l.img \(armv7l\)\), kernel kernel8.img"):
        across_boots(None, None, RunRequest(pi, [], RunSettings()), 4, wanted=False)
    (tmp_path / "pc").mkdir()
    vms = sides(tmp_path / "pc", "amd64")
    assert [c.name for c in vms] == ["vm:debian:bookworm:i386:686-pae", "vm:debian:bookworm:i386:amd64",
                                     "vm:debian:bookworm:amd64:amd64"]
    assert campaign.kernels(vms) == 0 and across_boots(None, None, RunRequest(vms, [], RunSettings()), 4, wanted=False) is None


@pytest.mark.parametrize("board, kwargs, system_arch, message, hint", [
    ("pi4-armhf", {}, "arm64", ("its 32/32 boots run the 32-bit kernel kernel7l.img, which cannot run this arm64 "
                                "system"), "install 32-bit Raspberry Pi OS"),
    ("pi4-armhf", {"drop": ("kernel7l.img",)}, "armhf", "kernel-modes needs /boot/firmware/kernel7l.img, which is missing",
     "install linux-image-rpi-v7l (apt install linux-image-rpi-v7l; raspberrypi-kernel"),
    ("pi4-armhf", {"drop": ("kernel8.img",)}, "armhf", "/boot/firmware/kernel8.img, which is missing",
     "install linux-image-rpi-v8"),
    ("pi5-arm64", {"drop": ("kernel_2712.img",)}, "arm64",
     "kernel-modes on a Pi 5 has one kernel to boot (kernel8.img): it boots no 32-bit kernel",
     "shootout run --experiment rpi64"),
    ("pi4-armhf", {"extra": {"proc/device-tree/model": "Raspberry Pi 2 Model B Rev 1.1\x00"}}, "armhf",
     "needs a Raspberry Pi 2 v1.2, 3, 4 or 5", "Pi 3B+, 4, 400 or 5"),
    ("pi4-armhf", {"drop": ("config.txt",)}, "armhf", "there is none in /boot/firmware or /boot",
     "mount the boot partition"),
])
def test_refused_in_one_line_where_it_cannot_work(tmp_path: Path, board: str, kwargs: dict, system_arch: str,
                                                  message: str, hint: str) -> None:
    root = pi_root(tmp_path / "pi", board, **kwargs)
    before = snapshot(root)
    with pytest.raises(TargetError) as err:
        sides(root, system_arch)
    assert message in err.value.message and hint in err.value.hint and "\n" not in str(err.value)
    assert snapshot(root) == before


def test_armhf_sides_keep_the_16k_page_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Pi 5's default kernel (16K pages) the armhf sides are refused with the fix, before anything is made."""
    from shootout.request.preparation import refuse_emulated

    monkeypatch.setattr(arches, "kernel_arch", lambda: "arm64")
    monkeypatch.setattr(arches, "host_arch", lambda: "arm64")
    monkeypatch.setattr(a32, "here", lambda: a32.AArch32(False, "the kernel uses 16K pages"))
    monkeypatch.setattr(a32, "page_size", lambda root=Path("/"): 16384)
    monkeypatch.setattr(emulator, "here", lambda: None)
    configs = {c.name: c for c in sides(pi_root(tmp_path / "pi5", "pi5-arm64"), "arm64")}
    refuse_emulated([configs["k64-16k-u64"], configs["k64-u64"]])  # arm64 runs on it
    with pytest.raises(UsageError) as err:
        refuse_emulated(list(configs.values()))
    assert err.value.message.startswith("k64-u32: this kernel uses 16K pages and cannot run 32-bit ARM")
    assert "kernel=kernel8.img" in err.value.hint


def _outcome(root: Path, system_arch: str, model: str | None = None) -> BlockOutcome:
    """The first block measured; its outcome names the next block."""
    configs = sides(root, system_arch)
    planned = campaign.plan(configs, 4, root)
    return BlockOutcome(1, 0, planned, 1)


def doctor() -> str:
    from typer.testing import CliRunner

    from shootout.cli.main import app

    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 0, done.output
    return done.output


def test_a_pi4_switches_through_tryboot_only_and_doctor_undoes_it(tmp_path: Path) -> None:
    root = pi_root(tmp_path / "pi4", "pi4-armhf")
    part = root / "boot/firmware"
    before = snapshot(part)
    first = _outcome(root, "armhf")
    (line,) = after_block(first, next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert line == ("/boot/firmware/tryboot.txt boots kernel7l.img once, when you reboot with: sudo reboot "
                    "'0 tryboot' (undo: rm /boot/firmware/tryboot.txt, or shootout doctor)")
    after = snapshot(part)
    assert set(after) - set(before) == {"tryboot.txt"} and all(after[k] == v for k, v in before.items())
    assert after["tryboot.txt"].decode().endswith("[all]\nkernel=kernel7l.img\narm_64bit=0\n")
    assert "undid: /boot/firmware/tryboot.txt: kernel kernel7l.img for one boot" in doctor()
    assert snapshot(part) == before
    # That boot read tryboot.txt: its identity says so; the block after it is config.txt's own kernel.
    tried = pi_root(tmp_path / "pi4", "pi4-armhf", release="6.6.51+rpt-rpi-v7l", machine="armv7l", boot_id="boot-2",
                    extra={"proc/device-tree/chosen/bootloader/tryboot": "\0\0\0\1"})
    (tried / "boot/firmware/tryboot.txt").write_bytes(after["tryboot.txt"])
    assert read_boot(tried).arm_64bit == "0" and first.campaign.wants["k32-u32"].matches(read_boot(tried))
    (tried / "boot/firmware/tryboot.txt").unlink()
    back = BlockOutcome(3, 2, first.campaign, 3)
    (line,) = after_block(back, next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert line == "/boot/firmware/config.txt boots kernel8.img already: reboot with: sudo reboot"
    assert snapshot(part) == before and "no changes left behind" in doctor()


def test_a_pi3_edits_config_txt_which_doctor_restores_after_sigkill(tmp_path: Path) -> None:
    """No tryboot on a Pi 3: config.txt itself gets the lines; its old text is in the journal first."""
    root = pi_root(tmp_path / "pi3", "pi4-armhf", extra={"proc/device-tree/model": PI3 + "\x00"})
    part = root / "boot/firmware"
    before = snapshot(part)
    line = killed_mid_switch(root, image="kernel8.img")
    assert line.startswith("/boot/firmware/config.txt boots kernel8.img from now on (a Pi 3 has no tryboot)")
    changed = (part / "config.txt").read_text()
    assert changed.startswith(before["config.txt"].decode()) and changed.endswith("kernel=kernel8.img\narm_64bit=1\n")
    assert "undid: /boot/firmware/config.txt: kernel kernel8.img" in doctor()
    assert snapshot(part) == before  # config.txt byte for byte, nothing else touched


def test_a_pi4_tryboot_left_by_a_killed_run_is_removed_by_doctor(tmp_path: Path) -> None:
    root = pi_root(tmp_path / "pi4", "pi4-armhf")
    part = root / "boot/firmware"
    before = snapshot(part)
    assert killed_mid_switch(root, image="kernel7l.img").startswith("/boot/firmware/tryboot.txt boots kernel7l.img once")
    assert (part / "tryboot.txt").exists() and (part / "config.txt").read_bytes() == before["config.txt"]
    doctor()
    assert snapshot(part) == before


@pytest.mark.parametrize("autoboot, message", [
    ("[all]\ntryboot_a_b=1\nboot_partition=2\n[tryboot]\nboot_partition=3\n", "autoboot.txt sets tryboot_a_b=1"),
])
def test_tryboot_refused_where_it_switches_partitions(tmp_path: Path, autoboot: str, message: str) -> None:
    root = pi_root(tmp_path / "pi4", "pi4-armhf")
    (root / "boot/firmware/autoboot.txt").write_text(autoboot)
    before = snapshot(root / "boot/firmware")
    with pytest.raises(TargetError, match=message):
        after_block(_outcome(root, "armhf"), next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert snapshot(root / "boot/firmware") == before
    # boot_partition alone (no A/B) keeps tryboot.txt working
    (root / "boot/firmware/autoboot.txt").write_text("[all]\nboot_partition=1\n")
    (line,) = after_block(_outcome(root, "armhf"), next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert "tryboot.txt boots kernel7l.img once" in line


def test_a_kernel_configuration_names_the_userspace_its_trials_run_in() -> None:
    from shootout.configs.specs import parse_spec

    config = parse_spec("kernel:kernel7l.img/debian:bookworm:armhf")
    assert (config.name, config.target, config.userspace) == ("kernel:kernel7l.img/debian:bookworm:armhf", "chroot",
                                                               "debian-bookworm-armhf")
    assert config.label == "kernel kernel7l.img, armhf userspace"
    want = campaign.kernel_want(config)
    assert want is not None and (want.image, want.machine) == ("kernel7l.img", "armv7l")
    assert switch_lines(want) == ["kernel=kernel7l.img", "arm_64bit=0"]
    plain = parse_spec("kernel:6.1.0-28-amd64/debian:bookworm:i386")
    assert plain.target == "chroot" and campaign.kernel_want(plain).release == "6.1.0-28-amd64"
    with pytest.raises(UsageError, match="the userspace after / must be debian:RELEASE:ARCH or userspace:NAME"):
        parse_spec("kernel:kernel8.img/host")


def test_a_pi5_report_says_its_32_32_side_cannot_exist(tmp_path: Path, analysis) -> None:
    """The write-up's 32/32 is said missing where the answer is read: a Pi 5's, not a Pi 4's."""
    def lines(board: str, arch: str) -> list[str]:
        configs = tuple(sides(pi_root(tmp_path / board, board), arch))
        return EXPERIMENT.explain(dataclasses.replace(analysis, configs=configs, comparisons=()))

    pi5 = lines("pi5-arm64", "arm64")
    assert pi5[1].startswith("no 32/32 side: a Pi 5 boots no 32-bit kernel"), pi5
    assert not any("no 32/32 side" in line for line in lines("pi4-armhf", "armhf"))
