"""Runs across boots, the pure parts: schedule, boot identity, the checks before a block."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.arm.configtxt import Reader
from shootout.base.errors import TargetError, UsageError
from shootout.boots.identity import (
    BootIdentity,
    KernelWant,
    arm_64bit,
    kernel_config,
    kernel_want,
    read_boot,
)
from shootout.boots.schedule import (
    Block,
    block_schedule,
    check_boot,
    matching_config,
    next_block,
    next_step,
)


def test_abba_and_balanced_orders() -> None:
    assert block_schedule(["A", "B"], 4) == ["A", "B", "B", "A"]
    assert block_schedule(["A", "B"], 8) == ["A", "B", "B", "A", "A", "B", "B", "A"]
    assert block_schedule(["A", "B", "C"], 6) == ["A", "B", "C", "C", "B", "A"]
    for configs, blocks in ((["A", "B"], 8), (["A", "B", "C"], 12)):
        order = block_schedule(configs, blocks)
        # every kernel's mean position is the same: a linear drift adds equally to all of them
        means = {c: sum(i for i, x in enumerate(order) if x == c) / order.count(c) for c in configs}
        assert len(set(means.values())) == 1


@pytest.mark.parametrize(("configs", "blocks"), [(["A"], 2), (["A", "B"], 2), (["A", "B"], 6), (["A", "A"], 4)])
def test_bad_schedules_are_refused(configs: list[str], blocks: int) -> None:
    with pytest.raises(UsageError):
        block_schedule(configs, blocks)


def test_boot_identity_from_files(fake_boot) -> None:
    root = fake_boot("1111-aaaa", "6.6.31+rpt-rpi-v8", "aarch64",
                     "# comment\n[all]\narm_64bit=0\n[cm4]\notg_mode=1\n[all]\narm_64bit = 1 # 64-bit kernel\n")
    boot = read_boot(root)
    assert boot == BootIdentity("1111-aaaa", "6.6.31+rpt-rpi-v8", "aarch64",
                                "BOOT_IMAGE=/vmlinuz-6.6.31+rpt-rpi-v8 root=/dev/sda1 ro quiet", "1")
    assert BootIdentity.from_dict(boot.as_dict()) == boot
    assert read_boot(fake_boot("b", "6.1.0-28-amd64")).arm_64bit is None
    assert arm_64bit("[pi3]\narm_64bit=1\n[none]\narm_64bit=0\n", Reader("Raspberry Pi 3 Model B Rev 1.2")) == "1"


def test_kernel_configurations_and_matching() -> None:
    c = kernel_config("kernel:6.1.0-*-686-pae:i686")
    want = kernel_want(c)
    assert want == KernelWant("6.1.0-*-686-pae", "i686") and c.target == "host"
    assert want.matches(BootIdentity("x", "6.1.0-28-686-pae", "i686", ""))
    assert not want.matches(BootIdentity("x", "6.1.0-28-686-pae", "x86_64", ""))
    assert not want.matches(BootIdentity("x", "6.1.0-28-amd64", "i686", ""))
    assert KernelWant("6.6.*", arm_64bit="0").matches(BootIdentity("x", "6.6.1", "armv7l", "", "0"))
    with pytest.raises(UsageError):
        kernel_config("kernel:")


K64, K32 = KernelWant("6.1.0-28-amd64"), KernelWant("6.1.0-28-686-pae")
WANTS = {"k64": K64, "k32": K32}
SCHEDULE = ["k64", "k32", "k32", "k64"]


def boot(boot_id: str, release: str) -> BootIdentity:
    return BootIdentity(boot_id, release, "x86_64", "")


def test_the_next_block_and_what_to_boot() -> None:
    blocks = [Block(0, "k64", boot("b1", K64.release), 1, True), Block(1, "k32", boot("b2", K32.release), 2, False)]
    assert next_block(SCHEDULE, blocks) == 1  # an unfinished block is measured again
    assert next_block(SCHEDULE, [*blocks[:1], Block(1, "k32", boot("b2", K32.release), 3, True)]) == 2
    assert next_step(SCHEDULE, 1, WANTS) == ("next: block 2 of 4, k32: boot kernel 6.1.0-28-686-pae, "
                                             "then run: shootout run --resume last")
    assert "reboot (same kernel, a fresh boot)" in next_step(SCHEDULE, 2, WANTS)
    assert next_step(SCHEDULE, None, WANTS) == "all 4 blocks are measured"


def test_a_resume_under_the_wrong_kernel_or_the_same_boot_is_refused() -> None:
    done = [Block(0, "k64", boot("b1", K64.release), 1, True), Block(1, "k32", boot("b2", K32.release), 2, True)]
    with pytest.raises(TargetError) as err:
        check_boot(SCHEDULE, done, 2, K32, boot("b3", K64.release))
    assert str(err.value) == ("this boot runs kernel 6.1.0-28-amd64 (x86_64; boot b3), but block 3 of 4 is scheduled "
                              "for k32 (kernel 6.1.0-28-686-pae) (boot 6.1.0-28-686-pae, then run: shootout run "
                              "--resume last)")
    with pytest.raises(TargetError, match="already measured block 2; block 3 of 4 needs a fresh boot"):
        check_boot(SCHEDULE, done, 2, K32, boot("b2", K32.release))
    check_boot(SCHEDULE, done, 2, K32, boot("b3", K32.release))  # a fresh boot of the right kernel


def test_the_schedule_starts_with_the_running_kernel() -> None:
    assert matching_config(["k64", "k32"], WANTS, boot("b", K32.release)) == "k32"
    with pytest.raises(TargetError, match="is none of the configurations"):
        matching_config(["k64", "k32"], WANTS, boot("b", "6.12.0-1-amd64"))
    with pytest.raises(UsageError, match="matches k64 and any"):
        matching_config(["k64", "any"], {"k64": K64, "any": KernelWant("*")}, boot("b", K64.release))


GRUB_CFG = """\
menuentry 'Debian GNU/Linux' --class debian --class gnu-linux $menuentry_id_option 'gnulinux-simple-abc' {
\tlinux\t/boot/vmlinuz-6.1.0-28-amd64 root=UUID=abc ro quiet
}
submenu 'Advanced options for Debian GNU/Linux' $menuentry_id_option 'gnulinux-advanced-abc' {
\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-28-amd64' --class debian $menuentry_id_option 'gnulinux-6.1.0-28-amd64-advanced-abc' {
\t\tif [ x$feature_all_video_module = xy ]; then
\t\t\tinsmod all_video
\t\tfi
\t}
\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-28-686-pae (recovery mode)' --class debian $menuentry_id_option 'gnulinux-6.1.0-28-686-pae-recovery-abc' {
\t}
\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-28-686-pae' --class debian $menuentry_id_option 'gnulinux-6.1.0-28-686-pae-advanced-abc' {
\t}
}
menuentry 'UEFI Firmware Settings' $menuentry_id_option 'uefi-firmware' {
}
"""


def test_grub_reboot_entry_for_a_kernel() -> None:
    from shootout.boots.switch import grub_entry

    assert grub_entry(GRUB_CFG, "6.1.0-28-686-pae") == "gnulinux-advanced-abc>gnulinux-6.1.0-28-686-pae-advanced-abc"
    assert grub_entry(GRUB_CFG, "6.1.0-28-amd64") == "gnulinux-advanced-abc>gnulinux-6.1.0-28-amd64-advanced-abc"
    assert grub_entry(GRUB_CFG, "6.12.0-1-amd64") is None


def test_the_resume_unit_is_one_shot_and_removes_itself(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    from shootout.boots.switch import UNIT, install_resume_unit

    undo = install_resume_unit([sys.executable, "-m", "shootout", "run", "--resume", "last"], root=tmp_path)
    unit = tmp_path / "etc/systemd/system" / UNIT
    text = unit.read_text()
    assert "Type=oneshot" in text and f"ExecStart={sys.executable} -m shootout run --resume last" in text
    assert f"ExecStartPost=/bin/rm -f /etc/systemd/system/{UNIT}" in text
    assert (tmp_path / "etc/systemd/system/multi-user.target.wants" / UNIT).is_symlink()
    assert undo.startswith("rm -f /etc/systemd/system/shootout-resume.service")
    analyze = shutil.which("systemd-analyze")
    if analyze:  # systemd's own parser, where it is installed
        done = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True)
        assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The next-boot journal lives under the data directory: a fresh one per test."""
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_after_a_block_the_opt_in_steps_say_their_undo(tmp_path: Path) -> None:
    from shootout.measure.bootcampaign import BlockOutcome, Campaign, after_block

    configs = {"k64": kernel_config("kernel:6.1.0-28-amd64"), "k32": kernel_config("kernel:6.1.0-*-686-pae")}
    campaign = Campaign("c", ["k64", "k32", "k32", "k64"], configs)
    (tmp_path / "etc/default").mkdir(parents=True)
    (tmp_path / "etc/default/grub").write_text("GRUB_DEFAULT=0\n")
    (tmp_path / "boot/grub").mkdir(parents=True)
    (tmp_path / "boot/grub/grub.cfg").write_text(GRUB_CFG)
    last = BlockOutcome(4, 3, campaign, None)
    assert after_block(last, next_kernel=True, resume_at_boot=True, command=["x"], root=tmp_path) == []
    first = BlockOutcome(1, 0, campaign, 1)
    with pytest.raises(UsageError, match="needs the exact release of k32"):
        after_block(first, next_kernel=True, resume_at_boot=False, command=["x"], root=tmp_path)
    second = BlockOutcome(2, 1, campaign, 2)
    lines = after_block(second, next_kernel=False, resume_at_boot=True, command=["/usr/bin/true"],
                        environment={"SHOOTOUT_HOME": "/srv/shootout"}, root=tmp_path)
    assert lines == ["installed shootout-resume.service: the next boot measures block 3 by itself "
                     "(undo: rm -f /etc/systemd/system/shootout-resume.service "
                     "/etc/systemd/system/multi-user.target.wants/shootout-resume.service, or shootout doctor)"]
    assert "Environment=SHOOTOUT_HOME=/srv/shootout" in (tmp_path / "etc/systemd/system/shootout-resume.service").read_text()
    fixed = BlockOutcome(3, 2, campaign, 3)
    with pytest.raises(TargetError, match="grub-reboot needs GRUB_DEFAULT=saved"):
        after_block(fixed, next_kernel=True, resume_at_boot=False, command=["x"], root=tmp_path)


def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """grub-reboot and grub-editenv on PATH that keep next_entry in a file, as grubenv does."""
    bin_dir, env = tmp_path / "bin", tmp_path / "grubenv"
    bin_dir.mkdir()
    (bin_dir / "grub-reboot").write_text(f'#!/bin/sh\necho "next_entry=$1" > {env}\n')
    (bin_dir / "grub-editenv").write_text(f'#!/bin/sh\n[ "$1 $2 $3" = "- unset next_entry" ] && : > {env}\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return env


def doctor() -> str:
    from typer.testing import CliRunner

    from shootout.cli.main import app

    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 0, done.output
    return done.output


def grub_machine(root: Path) -> Path:
    (root / "etc/default").mkdir(parents=True)
    (root / "etc/default/grub").write_text('GRUB_DEFAULT="saved"\n')
    (root / "boot/grub").mkdir(parents=True)
    (root / "boot/grub/grub.cfg").write_text(GRUB_CFG)
    return root


def test_grub_boots_the_next_kernel_once_journalled_and_undone_by_doctor(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from shootout.measure.bootcampaign import BlockOutcome, Campaign, after_block

    env = fake_tools(tmp_path, monkeypatch)
    root = grub_machine(tmp_path / "root")
    configs = {"k64": kernel_config("kernel:6.1.0-28-amd64"), "k32": kernel_config("kernel:6.1.0-28-686-pae")}
    block = BlockOutcome(1, 0, Campaign("c", ["k64", "k32", "k32", "k64"], configs), 1)
    (line,) = after_block(block, next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert line == ("GRUB boots 6.1.0-28-686-pae next, once (undo: grub-editenv - unset next_entry, "
                    "or shootout doctor)")
    assert env.read_text() == "next_entry=gnulinux-advanced-abc>gnulinux-6.1.0-28-686-pae-advanced-abc\n"
    out = doctor()
    assert "undid: GRUB boots 6.1.0-28-686-pae next, once" in out and env.read_text() == ""
    assert "no changes left behind" in doctor()  # undone once, then gone from the journal


PI4 = "Raspberry Pi 4 Model B Rev 1.4\x00"
CONFIG = "# the Pi's config\ndtparam=audio=on\n[pi4]\narm_boost=1\n[all]\narm_64bit=0\n"


def pi_machine(root: Path, model: str = PI4, config: str = CONFIG, images: tuple[str, ...] = ("kernel8.img",)) -> Path:
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_text(model)
    (root / "boot/firmware").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text(config)
    for image in images:
        (root / "boot/firmware" / image).write_bytes(b"\0")
    return root


def pi_block():
    from shootout.base.model import Config
    from shootout.measure.bootcampaign import BlockOutcome, Campaign

    configs = {name: Config(name=name, options=(("kernel", release), ("arm_64bit", bit)))
               for name, release, bit in (("pi32", "6.6.51+rpt-rpi-v7l", "0"), ("pi64", "6.6.51+rpt-rpi-v8", "1"))}
    return BlockOutcome(1, 0, Campaign("c", ["pi32", "pi64", "pi64", "pi32"], configs), 1)


def test_a_pi_boots_the_next_kernel_through_tryboot_undone_by_doctor(tmp_path: Path) -> None:
    from shootout.measure.bootcampaign import after_block

    root = pi_machine(tmp_path / "pi")
    (line,) = after_block(pi_block(), next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert line == ("/boot/firmware/tryboot.txt boots 6.6.51+rpt-rpi-v8 once, when you reboot with: "
                    "sudo reboot '0 tryboot' (undo: rm /boot/firmware/tryboot.txt, or shootout doctor)")
    tryboot = (root / "boot/firmware/tryboot.txt").read_text()
    # config.txt itself is untouched (a plain reboot or a crash boots it as before); tryboot.txt
    # is all of it, then the scheduled kernel's lines, which win as the firmware reads them.
    assert (root / "boot/firmware/config.txt").read_text() == CONFIG and tryboot.startswith(CONFIG)
    assert tryboot.endswith("[all]\nkernel=kernel8.img\narm_64bit=1\n") and arm_64bit(tryboot, Reader(PI4)) == "1"
    with pytest.raises(TargetError, match="tryboot.txt exists already"):
        after_block(pi_block(), next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert "undid: /boot/firmware/tryboot.txt: kernel 6.6.51+rpt-rpi-v8 for one boot" in doctor()
    assert not (root / "boot/firmware/tryboot.txt").exists()


@pytest.mark.parametrize("machine, message", [
    (dict(model="Raspberry Pi 2 Model B Rev 1.1\x00"), "a Raspberry Pi 2 Model B Rev 1.1 boots no 64-bit kernel"),
    (dict(config=CONFIG + "tryboot_a_b=1\n"), "sets tryboot_a_b=1"),
    (dict(images=()), "there is no /boot/firmware/kernel8.img"),
])
def test_tryboot_refusals_leave_nothing(tmp_path: Path, machine: dict, message: str) -> None:
    from shootout.measure.bootcampaign import after_block

    root = pi_machine(tmp_path / "pi", **machine)
    with pytest.raises(TargetError, match=message):
        after_block(pi_block(), next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert not (root / "boot/firmware/tryboot.txt").exists()


def test_which_switch_applies_is_detected(tmp_path: Path) -> None:
    from shootout.boots.switch import switch_next_boot
    from shootout.boots.tryboot import kernel_image
    from shootout.system.journal import Journal

    with pytest.raises(TargetError, match="neither through GRUB nor a Raspberry Pi"):
        switch_next_boot(KernelWant("6.1.0-28-amd64"), "k64", Journal(tmp_path), tmp_path)
    assert kernel_image("6.6.51+rpt-rpi-2712") == "kernel_2712.img" and kernel_image("5.15.84-v7l+") == "kernel7l.img"
    assert kernel_image("6.6.*-v8") is None and kernel_image("6.1.0-28-amd64") is None
