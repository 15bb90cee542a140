"""Whole installs across boots (boot:ROOT), over the Pi 4 boot partition written from the formats
(tests/fixtures/bootparts): the spec, the plan, the tryboot switch with its own command line
(journalled, undone by `shootout doctor`, also after SIGKILL), recognising the root a boot came up
on, and the one-line refusals. Every partition and device is a fake in a temporary directory;
nothing here mounts or reboots anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from bootparts import BOOTPARTS, killed_mid_switch, pi_root, snapshot, system

from shootout.base.errors import TargetError, UsageError
from shootout.boots.identity import BootIdentity, KernelWant, read_boot
from shootout.boots.roots import cmdline_root, replace_root
from shootout.boots.schedule import Block, check_boot
from shootout.boots.tryboot import MARK
from shootout.boots.wholeroot import CMDLINE, boot_config
from shootout.configs.specs import parse_spec
from shootout.measure import bootcampaign as campaign
from shootout.measure.bootcampaign import BlockOutcome, after_block

HOME, SSD = "PARTUUID=2c4a9b1e-02", "PARTUUID=5d1e7a3c-02"  # the SD card's root (the fixture's), a USB SSD's
DATA = Path("/boot/firmware/shootout")  # the shared data directory: on the boot partition both mount
SHOOTOUT = "/usr/local/bin/shootout"
HOME_FSTAB = "PARTUUID=2c4a9b1e-01 /boot/firmware vfat defaults 0 2\nPARTUUID=2c4a9b1e-02 / ext4 defaults 0 1\n"
FSTAB = "proc /proc proc defaults 0 0\nPARTUUID=2c4a9b1e-01 /boot/firmware vfat defaults 0 2\n" \
        "PARTUUID=5d1e7a3c-02 / ext4 defaults,noatime 0 1\n"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from shootout.boots import wholeroot

    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(wholeroot, "installed_paths", lambda: (SHOOTOUT,))  # where the fake SSD has it
    return tmp_path / "home"


def pi(tmp_path: Path, *, cmdline_root: str = HOME, fstab: str = FSTAB, home_fstab: str = HOME_FSTAB,
       ssd_mounted: bool = True,
       modules: bool = True, installed: bool = True, boot_id: str = "boot-1", **kwargs) -> Path:
    """The Pi 4 of the fixture booted from its SD card (or `cmdline_root`), with a USB SSD holding
    another install, mounted read-only at /mnt/ssd: udev's links, the mount table, the SSD's files."""
    cmdline = (BOOTPARTS / "pi4-armhf/cmdline.txt").read_text().strip().replace(f"root={HOME}",
                                                                                 f"root={cmdline_root}")
    mounts = "/dev/mmcblk0p2 / ext4 rw,noatime 0 0\n/dev/mmcblk0p1 /boot/firmware vfat rw 0 0\n" + (
        "/dev/sda2 /mnt/ssd ext4 ro,relatime 0 0\n" if ssd_mounted else "")
    root = pi_root(tmp_path / "pi4", "pi4-armhf", boot_id=boot_id,
                   extra={"proc/cmdline": cmdline + "\n", "proc/self/mounts": mounts, **kwargs.pop("extra", {})},
                   **kwargs)
    for device, partuuid in (("mmcblk0p1", "2c4a9b1e-01"), ("mmcblk0p2", "2c4a9b1e-02"), ("sda2", "5d1e7a3c-02")):
        (root / "dev" / device).parent.mkdir(parents=True, exist_ok=True)
        (root / "dev" / device).write_bytes(b"")
        links = root / "dev/disk/by-partuuid"
        links.mkdir(parents=True, exist_ok=True)
        if not (links / partuuid).is_symlink():
            (links / partuuid).symlink_to(f"../../{device}")
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc/fstab").write_text(home_fstab)
    ssd = root / "mnt/ssd"
    (ssd / "etc").mkdir(parents=True, exist_ok=True)
    (ssd / "etc/fstab").write_text(fstab)
    if installed:
        (ssd / SHOOTOUT.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (ssd / SHOOTOUT.lstrip("/")).write_text("#!/bin/sh\n")
    if modules:
        (ssd / "lib/modules" / system("pi4-armhf")["release"]).mkdir(parents=True, exist_ok=True)
    return root


def configs(*specs: str) -> list:
    return [parse_spec(s) for s in (specs or (f"boot:{HOME}", f"boot:{SSD}"))]


def _plan(root: Path, sides: list, data: Path) -> campaign.Campaign:
    return campaign.plan(sides, 4, root, data)


def doctor() -> str:
    from typer.testing import CliRunner

    from shootout.cli.main import app

    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 0, done.output
    return done.output


def test_the_spec_names_the_root_as_root_does() -> None:
    config = parse_spec(f"boot:{SSD}")
    assert (config.target, config.label) == ("host", f"install on {SSD}")
    assert campaign.kernel_want(config) == KernelWant("*", root=SSD)
    with_image = boot_config("boot:/dev/sda2:kernel7l.img")
    assert campaign.kernel_want(with_image) == KernelWant("*", "armv7l", None, "kernel7l.img", "/dev/sda2")
    assert campaign.kernel_want(with_image).describe() == "root /dev/sda2 with kernel7l.img"
    assert boot_config("boot:PARTUUID=0b4f6a2e-9c1d-4e5f-8a7b-6c5d4e3f2a1b").option("root").endswith("2a1b")
    for bad in ("boot:", "boot:UUID=1234-ABCD", "boot:PARTUUID=2c4a9b1e", "boot:/dev/sda2:kernel9.img", "boot:sda2"):
        with pytest.raises(UsageError, match="bad whole-install configuration"):
            parse_spec(bad)


def test_command_line_roots() -> None:
    line = (BOOTPARTS / "pi4-armhf/cmdline.txt").read_text().strip()
    assert cmdline_root(line) == HOME and cmdline_root("root=/dev/a ro root=/dev/b") == "/dev/b"
    moved = replace_root(line, SSD)
    assert moved == line.replace(HOME, SSD) and cmdline_root(moved) == SSD
    assert replace_root("ro root=/dev/a quiet root=/dev/b", "/dev/sda2") == "ro root=/dev/sda2 quiet"
    assert replace_root("quiet", "/dev/sda2") == "root=/dev/sda2 quiet"


def test_a_boot_is_recognised_by_its_root_however_named(tmp_path: Path) -> None:
    from shootout.boots.roots import device_of

    root = pi(tmp_path, cmdline_root="/dev/sda2")
    (root / "dev/disk/by-uuid").mkdir()
    (root / "dev/disk/by-uuid/4A1B-2C3D").symlink_to("../../mmcblk0p1")  # a FAT volume's UUID, upper case
    assert device_of("UUID=4A1B-2C3D", root) == "/dev/mmcblk0p1"
    assert device_of("PARTUUID=5D1E7A3C-02", root) == "/dev/sda2"
    assert device_of("LABEL=bootfs", root) is None and device_of("tmpfs", root) is None
    booted = read_boot(root)
    assert (booted.root, booted.root_device, booted.root_partuuid) == ("/dev/sda2", "/dev/sda2", "5d1e7a3c-02")
    assert KernelWant("*", root=SSD).matches(booted) and KernelWant("*", root="/dev/sda2").matches(booted)
    assert not KernelWant("*", root=HOME).matches(booted)
    assert BootIdentity.from_dict(booted.as_dict()) == booted
    older = {k: v for k, v in booted.as_dict().items() if not k.startswith("root_")}  # a block stored before
    assert BootIdentity.from_dict(older).is_root("/dev/sda2") and not BootIdentity.from_dict(older).is_root(SSD)


def test_the_plan_starts_on_the_running_root(tmp_path: Path) -> None:
    root = pi(tmp_path, cmdline_root=SSD)
    # booted from the SSD: the SD card's install is the other one, checked as the SSD's was
    (root / SHOOTOUT.lstrip("/")).parent.mkdir(parents=True)
    (root / SHOOTOUT.lstrip("/")).write_text("#!/bin/sh\n")
    (root / "lib/modules" / system("pi4-armhf")["release"]).mkdir(parents=True)
    plan = _plan(root, configs(), DATA)
    assert plan.schedule == [f"boot:{SSD}", f"boot:{HOME}", f"boot:{HOME}", f"boot:{SSD}"]
    assert plan.wants[f"boot:{HOME}"] == KernelWant("*", root=HOME)


def test_tryboot_boots_the_other_root_once_and_doctor_undoes_it(tmp_path: Path) -> None:
    root = pi(tmp_path)
    part = root / "boot/firmware"
    before = snapshot(part)
    first = BlockOutcome(1, 0, _plan(root, configs(), DATA), 1)
    (line,) = after_block(first, next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert line == (f"/boot/firmware/tryboot.txt boots the install on {SSD} once, when you reboot with: "
                    f"sudo reboot '0 tryboot' (undo: rm /boot/firmware/tryboot.txt /boot/firmware/{CMDLINE}, "
                    "or shootout doctor)")
    after = snapshot(part)
    assert set(after) - set(before) == {"tryboot.txt", CMDLINE} and all(after[k] == v for k, v in before.items())
    config_txt = before["config.txt"].decode()
    assert after["tryboot.txt"].decode() == config_txt.rstrip("\n") + f"\n\n{MARK}\n[all]\ncmdline={CMDLINE}\n"
    assert after[CMDLINE].decode() == before["cmdline.txt"].decode().strip().replace(HOME, SSD) + "\n"
    with pytest.raises(TargetError, match="tryboot.txt exists already"):
        after_block(first, next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    out = doctor()
    assert f"undid: /boot/firmware/{CMDLINE}: the install on {SSD} for one boot" in out
    assert f"undid: /boot/firmware/tryboot.txt: the install on {SSD} for one boot" in out
    assert snapshot(part) == before
    # back to the SD card's root: config.txt's own command line boots it, nothing is written
    back = BlockOutcome(3, 2, first.campaign, 3)
    (line,) = after_block(back, next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    assert line == f"/boot/firmware/config.txt boots the install on {HOME} already: reboot with: sudo reboot"
    assert snapshot(part) == before and "no changes left behind" in doctor()


def test_an_install_with_its_own_kernel_image(tmp_path: Path) -> None:
    root = pi(tmp_path)
    sides = configs(f"boot:{HOME}", "boot:/dev/sda2:kernel7l.img")
    first = BlockOutcome(1, 0, _plan(root, sides, DATA), 1)
    after_block(first, next_kernel=True, resume_at_boot=False, command=["x"], root=root)
    tryboot = (root / "boot/firmware/tryboot.txt").read_text()
    assert tryboot.endswith(f"[all]\nkernel=kernel7l.img\narm_64bit=0\ncmdline={CMDLINE}\n")
    assert cmdline_root((root / "boot/firmware" / CMDLINE).read_text()) == "/dev/sda2"
    doctor()


def test_a_boot_on_the_wrong_root_is_refused_before_it_measures(tmp_path: Path) -> None:
    plan = _plan(pi(tmp_path), configs(), DATA)
    fell_back = read_boot(pi(tmp_path, boot_id="boot-2"))  # tryboot fell back to config.txt's root
    done = [Block(0, plan.schedule[0], read_boot(pi(tmp_path)), 1, True)]
    with pytest.raises(TargetError) as err:
        check_boot(plan.schedule, done, 1, plan.wants[plan.schedule[1]], fell_back)
    assert str(err.value) == (f"this boot came up on root {HOME} = /dev/mmcblk0p2, but block 2 of 4 is scheduled "
                              f"for boot:{SSD} (root {SSD}) (boot the install on root {SSD}, then run there: "
                              "shootout run --resume last)")
    check_boot(plan.schedule, done, 1, plan.wants[plan.schedule[1]],
               read_boot(pi(tmp_path, cmdline_root="/dev/sda2", boot_id="boot-2")))
    step = BlockOutcome(1, 0, plan, 1).message()
    assert step.endswith(f"next: block 2 of 4, boot:{SSD}: boot the install on root {SSD}, then run there with "
                         f"SHOOTOUT_HOME={tmp_path / 'home'}: shootout run --resume last")


def test_resume_at_boot_is_refused_for_the_other_install(tmp_path: Path) -> None:
    root = pi(tmp_path)
    first = BlockOutcome(1, 0, _plan(root, configs(), DATA), 1)
    with pytest.raises(UsageError, match=f"--resume-at-boot installs its unit on this install, but block 2 boots "
                                         f"the install on {SSD}"):
        after_block(first, next_kernel=True, resume_at_boot=True, command=["x"], root=root)
    assert not (root / "boot/firmware/tryboot.txt").exists() and "no changes left behind" in doctor()


@pytest.mark.parametrize("setup, specs, message, hint", [
    (dict(extra={"proc/device-tree/model": "Raspberry Pi 3 Model B Plus Rev 1.3\x00"}), (),
     "a Raspberry Pi 3 Model B Plus Rev 1.3 has no tryboot", "by hand"),
    (dict(autoboot="[all]\ntryboot_a_b=1\nboot_partition=2\n"), (), "autoboot.txt sets tryboot_a_b=1", "by hand"),
    ({}, (f"boot:{HOME}", "boot:PARTUUID=deadbeef-02"), "there is no partition PARTUUID=deadbeef-02", "blkid"),
    (dict(ssd_mounted=False), (), f"{SSD} (/dev/sda2) is not mounted", "sudo mount -o ro /dev/sda2 /mnt"),
    (dict(installed=False), (), f"the install on {SSD} has no shootout", "install shootout there"),
    (dict(data="/home/pi/.local/share/shootout"), (), "data directory /home/pi/.local/share/shootout is on this "
     "install's root", "SHOOTOUT_HOME=/boot/firmware/shootout"),
    (dict(fstab="PARTUUID=5d1e7a3c-01 /boot/firmware vfat defaults 0 2\n"), (),
     f"the install on {SSD} does not mount /dev/mmcblk0p1 at /boot/firmware", "add to its /etc/fstab"),
    (dict(home_fstab="PARTUUID=2c4a9b1e-02 / ext4 defaults 0 1\n"), (), f"boot:{HOME}: this install does not "
     "mount /dev/mmcblk0p1 at /boot/firmware", "add to its /etc/fstab"),
    (dict(modules=False), (), f"the install on {SSD} has no modules for kernel 6.6.51+rpt-rpi-v8",
     "install the same kernel package there"),
    ({}, (f"boot:{HOME}", "kernel:kernel7l.img"), "compares whole installs (boot:ROOT) or kernels", "boot:ROOT:IMAGE"),
    (dict(cmdline_root="/dev/sdb1"), (), "this boot (root /dev/sdb1, kernel 6.6.51+rpt-rpi-v8) is none of the "
     "configurations", "start the run on one of the roots"),
])
def test_refused_in_one_line_leaving_nothing(tmp_path: Path, setup: dict, specs: tuple, message: str,
                                             hint: str) -> None:
    autoboot, data = setup.pop("autoboot", None), Path(setup.pop("data", str(DATA)))
    root = pi(tmp_path, **setup)
    if autoboot:
        (root / "boot/firmware/autoboot.txt").write_text(autoboot)
    before = snapshot(root)
    with pytest.raises((TargetError, UsageError)) as err:
        _plan(root, configs(*specs), data)
    assert message in err.value.message and hint in err.value.hint and "\n" not in str(err.value)
    assert snapshot(root) == before


def test_a_switch_left_by_a_killed_run_is_removed_by_doctor(tmp_path: Path) -> None:
    root = pi(tmp_path)
    part = root / "boot/firmware"
    before = snapshot(part)
    said = killed_mid_switch(root, root=SSD)
    assert said.startswith(f"/boot/firmware/tryboot.txt boots the install on {SSD} once")
    assert {"tryboot.txt", CMDLINE} <= set(snapshot(part))
    doctor()
    assert snapshot(part) == before


def test_four_blocks_on_two_roots_through_the_store(tmp_path: Path) -> None:
    """A whole campaign as `shootout run` and `--resume last` drive it, each boot a fake tree of the
    Pi (the fake target stands in for the host the trials run on): blocks on the SD card's and the
    SSD's root, A B B A, the root recorded with each block, a boot on the wrong root refused."""
    import math
    import random

    from shootout.base.model import Config, RunSettings
    from shootout.measure.runner import Runner, RunRequest
    from shootout.places.fake import SCRIPTS
    from shootout.request.request import workloads_of
    from shootout.store import Store
    from shootout.system.journal import Journal
    from shootout.workloads.user import CommandWorkload

    rng = random.Random(5)

    def throughput(argv: list[str], config: str, n: int) -> str:  # the SSD's install 5% faster
        return f"throughput: {1000 * (1.05 if config == 'ssd' else 1.0) * math.exp(rng.gauss(0, 0.01)):.4f}\n"

    SCRIPTS["roots"] = throughput
    bench = {"name": "bench", "command": "bench", "regex": r"throughput: ([0-9.]+)", "unit": "ops/s"}
    sides = [Config(name=name, target="fake", label=name, options=(("script", "roots"), ("kernel", "*"), ("root", r)))
             for name, r in (("sd", HOME), ("ssd", SSD))]
    runner = Runner(Store(f"sqlite:///{tmp_path / 'r.db'}"), Journal(tmp_path / "journal"))
    request = RunRequest(sides, [CommandWorkload(bench)], RunSettings(seed=3, min_rounds=6, max_rounds=6),
                         user_workloads={"bench": bench})

    def resumed(boot: Path) -> BlockOutcome:
        step = campaign.prepare_resume(runner.store, runner.store.get_run("last"), boot)
        return campaign.resume(runner, step, lambda r: workloads_of([w.name for w in r.workloads], r.user_workloads),
                               {})

    root = pi(tmp_path)
    first = campaign.start(runner, request, campaign.plan(sides, 4, root, DATA), {}, root)
    assert first.campaign.schedule == ["sd", "ssd", "ssd", "sd"]
    with pytest.raises(TargetError, match="this boot came up on root PARTUUID=2c4a9b1e-02 = /dev/mmcblk0p2, but "
                                          "block 2 of 4 is scheduled for ssd"):
        resumed(pi(tmp_path, boot_id="boot-2a"))  # tryboot fell back to the SD card
    second = resumed(pi(tmp_path, cmdline_root=SSD, boot_id="boot-2"))
    third = resumed(pi(tmp_path, cmdline_root="/dev/sda2", boot_id="boot-3"))  # root= named as a device this time
    fourth = resumed(pi(tmp_path, boot_id="boot-4"))
    assert fourth.next_index is None
    booted = {r: runner.store.get_run(r).facts.machine["boot"] for r in (second.run_id, third.run_id, fourth.run_id)}
    assert [(b["root_device"], b["root_partuuid"]) for b in booted.values()] == [
        ("/dev/sda2", "5d1e7a3c-02"), ("/dev/sda2", "5d1e7a3c-02"), ("/dev/mmcblk0p2", "2c4a9b1e-02")]
    assert campaign.groups(runner.store, first.campaign) == {"sd": [first.run_id, fourth.run_id],
                                                             "ssd": [second.run_id, third.run_id]}
    assert campaign.compare_hint(runner.store, first.campaign) == (
        f"shootout compare {first.run_id} {fourth.run_id} vs {second.run_id} {third.run_id}")
