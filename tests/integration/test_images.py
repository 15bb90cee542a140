"""image: and rootfs: sides end to end: SD card images built here from the shared userspaces
(an MBR, a FAT32 boot partition with cmdline.txt, an ext4 root; xz, zstd and gzip), run as
the sides of real comparisons, and never written: each image's sha256 is the same after a
run, after a SIGKILL and after doctor. A dead image is one line, with nothing left attached."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from conftest import Shootout
from sdimage import disk, ext4_file, sd_image, sha
from shared_spaces import (
    ARM64,
    ARMHF,
    COMPANION,
    COMPANION_ARCH,
    FOREIGN,
    NATIVE,
    NATIVE_ARCH,
    Spaces,
)

from shootout.base.errors import TargetError
from shootout.images.unpack import UNPACKERS
from shootout.places import parse_kind_spec
from shootout.places.image import ImageTarget
from shootout.system.emulator import here as emulator_here
from shootout.system.journal import journal
from shootout.userspace.packages import installed_versions
from shootout.userspace.registry import get_ready

# inside the emulated arm64 check this whole machine runs under qemu-user: its runs need --emulate
EMULATE = ("--emulate",) if emulator_here() is not None else ()
COUNT = '[[workload]]\nname = "count"\ncommand = "seq 1 30000 | sort -n | wc -l"\n'



@pytest.fixture(scope="module")
def images(spaces: Spaces) -> dict[str, Path]:
    """SD card images of the shared userspaces, kept beside them (built once per test home)."""
    out = spaces.home / "sd-images"
    out.mkdir(exist_ok=True)
    wanted = {NATIVE_ARCH: (NATIVE, ".img.xz", 0x5AB1E001, True), COMPANION_ARCH: (COMPANION, ".img.zst", 0x5AB1E002, False)}
    if FOREIGN:
        wanted.update(armhf=(ARMHF, ".img.gz", 0x5AB1E003, False), arm64=(ARM64, ".img.xz", 0x5AB1E004, True))
    found = {}
    for arch, (space, suffix, disk_id, bit64) in wanted.items():
        spaces.need(space)
        path = out / f"bookworm-{arch}{suffix}"
        if not path.exists():
            sd_image(get_ready(space).root, path, disk_id, arm_64bit=bit64)
        found[arch] = path
    return found


def attached(home: Path) -> list[str]:
    """Loop devices backed by anything under home (the unpacked images, the user's raw ones)."""
    done = subprocess.run(["losetup", "-n", "-O", "NAME,BACK-FILE", "-l"], capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if str(home) in line]


def left_behind(home: Path) -> list[str]:
    images = home / "images"
    overlays = list((images / ".overlays").iterdir()) if (images / ".overlays").is_dir() else []
    parts = list(images.glob("*.part")) if images.is_dir() else []
    journals = [p for p in (home / "journal").glob("*.jsonl") if p.read_text().strip()] if (home / "journal").is_dir() else []
    return [*attached(home), *map(str, overlays), *map(str, parts), *map(str, journals)]


def unpacked(image: Path, raw: Path) -> Path:
    """The image's raw disk at `raw`, unpacked as shootout unpacks it (the same command)."""
    with open(raw, "wb") as out:
        subprocess.run([*UNPACKERS[image.suffix][0], str(image)], stdout=out, check=True)
    return raw


def run_file(tmp_path: Path) -> Path:
    toml = tmp_path / "count.toml"
    toml.write_text(COUNT)
    return toml


def test_native_images_compare_end_to_end_and_are_never_written(images: dict[str, Path], tmp_path: Path,
                                                                 require_root: None) -> None:
    shootout = Shootout(tmp_path / "home")
    a, b = images[NATIVE_ARCH], images[COMPANION_ARCH]
    before = {p: sha(p) for p in (a, b)}
    done = shootout("run", "-c", f"image:{a}", "-c", f"image:{b}", "--file", str(run_file(tmp_path)), "-w", "count",
                    "-w", "intmix", "--max-rounds", "8", "--threshold", "50%", "--db", shootout.db, *EMULATE, timeout=1200)
    assert done.returncode == 0, done.stderr
    # each found by cmdline.txt's root=PARTUUID=, said before the run
    assert f"image:{a}: Debian GNU/Linux 12 (bookworm) ({NATIVE_ARCH}), root from cmdline.txt's root=PARTUUID=5ab1e001-02" \
        in done.stdout + done.stderr
    rows = shootout.rows()
    assert {r["config"] for r in rows} == {f"image:{b}"} and {r["workload"] for r in rows} >= {"count", "intmix"}
    shown = shootout("show", "last", "--db", shootout.db)
    assert "The systems compared:" in shown.stdout and f"from image {a}" in shown.stdout.replace("\n", "")
    assert {p: sha(p) for p in (a, b)} == before
    assert left_behind(shootout.home) == []
    # the unpacked copies are kept, keyed by the compressed files' sha256
    assert {p.stem for p in (shootout.home / "images").glob("*.img")} == set(before.values())


def _trials(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("select count(*) from trials").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_a_sigkilled_run_leaves_the_images_unchanged_and_doctor_detaches_them(images: dict[str, Path], tmp_path: Path,
                                                                              require_root: None) -> None:
    shootout = Shootout(tmp_path / "home")
    a, b = images[NATIVE_ARCH], images[COMPANION_ARCH]
    before = {p: sha(p) for p in (a, b)}
    child = shootout.popen("run", "-c", f"image:{a}", "-c", f"image:{b}", "--file", str(run_file(tmp_path)),
                           "-w", "count", "--max-rounds", "30", "--threshold", "0.5%", "--db", shootout.db, *EMULATE)
    try:
        deadline = time.monotonic() + 600
        while _trials(tmp_path / "home" / "results.db") < 6:
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read() if child.stderr else ""
            time.sleep(0.1)
        assert len(attached(shootout.home)) == 2  # one read-only loop device per side
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert {p: sha(p) for p in (a, b)} == before
    done = shootout("doctor")
    assert left_behind(shootout.home) == [], done.stdout + done.stderr
    assert {p: sha(p) for p in (a, b)} == before


def _dead(tmp_path: Path, images: dict[str, Path]) -> dict[str, tuple[Path, str]]:
    """Images that cannot run, and what their one line must say."""
    whole = images[NATIVE_ARCH]
    truncated = tmp_path / "truncated.img.xz"
    with open(whole, "rb") as src, open(truncated, "wb") as out:
        out.write(src.read(whole.stat().st_size // 2))
    empty = tmp_path / "empty"
    (empty / "etc").mkdir(parents=True)
    no_release = tmp_path / "no-release.ext4"
    ext4_file(empty, no_release)
    not_linux = tmp_path / "not-linux.vfat"
    subprocess.run(["mkfs.vfat", "-C", str(not_linux), "8192"], check=True, capture_output=True)
    boot_only = tmp_path / "boot-only.img"
    disk(boot_only, [(not_linux, "c")], 0x0DEAD001)
    return {
        "truncated": (truncated, "cannot unpack"),
        "no root partition": (boot_only, "no Linux root filesystem in it (found partition 1 (vfat))"),
        "a root that is not Linux": (sd_image(None, tmp_path / "fat-root.img", 0x0DEAD003, root_fs=not_linux),
                                     "cmdline.txt's root=PARTUUID=0dead003-02 is partition 2 (vfat), not a Linux"),
        "no os-release": (sd_image(None, tmp_path / "no-release.img", 0x0DEAD002, root_fs=no_release, cmdline=False),
                          "no partition holds a Linux root with /etc/os-release"),
    }


def test_dead_images_are_one_line_and_leave_nothing_attached(images: dict[str, Path], tmp_path: Path,
                                                             require_root: None) -> None:
    shootout = Shootout(tmp_path / "home")
    good = images[COMPANION_ARCH]
    for what, (path, says) in _dead(tmp_path, images).items():
        before = sha(path)
        done = shootout("run", "-c", f"image:{path}", "-c", f"image:{good}", "-w", "intmix", "--db", shootout.db,
                        *EMULATE)
        *said, error = done.stderr.strip().splitlines()
        assert done.returncode != 0 and says in error, (what, done.stderr)
        assert all(line.startswith("unpacking ") for line in said), (what, done.stderr)  # the notice before it
        assert sha(path) == before, what
        assert left_behind(shootout.home) == [], what


def test_the_root_is_found_by_os_release_without_cmdline_txt(images: dict[str, Path], tmp_path: Path,
                                                             require_root: None) -> None:
    from shootout.images.inspect import inspect_disk

    raw = unpacked(images[NATIVE_ARCH], tmp_path / "plain.img")
    # the boot partition's cmdline.txt removed: the Linux partition holding /etc/os-release is the root
    subprocess.run(["mdel", "-i", f"{raw}@@{4 << 20}", "::cmdline.txt"], check=True, env={**os.environ, "MTOOLS_SKIP_CHECK": "1"})
    with journal() as j:
        found = inspect_disk(raw, "image", j, lambda line: None)
    assert found.partition is not None and found.partition.number == 2
    assert found.how == "the Linux filesystem holding /etc/os-release" and found.arch == NATIVE_ARCH
    assert found.os_release["VERSION_CODENAME"] == "bookworm"


def test_what_an_image_lacks_goes_into_the_overlay_and_an_unreachable_mirror_is_one_line(
        images: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, require_root: None) -> None:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    image = images[COMPANION_ARCH]
    before = sha(image)
    config = parse_kind_spec(f"image:{image}")
    with journal() as j:
        target = ImageTarget(config, j)
        try:  # dc: a package no other test installs into the userspace the image is made from
            assert target.lacks(["dc"]) == ["dc"]
            assert target.provide(["dc"]) == ["dc"]  # the image's own apt, from its own sources
            assert target.run(["sh", "-c", "echo '6 7 * p' | dc"], timeout=60).stdout.strip() == "42"
            assert target.facts(["dc"])["packages"]["dc"]
        finally:
            target.close()
        again = ImageTarget(config, j)
        try:  # a fresh overlay: the image itself never got dc
            assert again.lacks(["dc"]) == ["dc"] and "dc" not in installed_versions(again.root)
            again.put(b"deb http://127.0.0.1:9/debian bookworm main\n", "/etc/apt/sources.list")
            with pytest.raises(TargetError) as raised:
                again.provide(["dc"])
            assert "127.0.0.1:9" in raised.value.message and "\n" not in raised.value.message
        finally:
            again.close()
    assert sha(image) == before
    assert left_behind(tmp_path / "home") == []


def test_rootfs_directory_and_block_device(images: dict[str, Path], spaces: Spaces, tmp_path: Path,
                                           require_root: None) -> None:
    shootout = Shootout(tmp_path / "home")
    raw = unpacked(images[NATIVE_ARCH], tmp_path / "disk.img")
    before = sha(raw)
    # a whole disk as a second SD card in a USB reader would be: a block device with a partition table
    device = subprocess.run(["losetup", "--find", "--show", "--read-only", str(raw)], capture_output=True, text=True,
                            check=True).stdout.strip()
    try:
        directory = get_ready(COMPANION).root
        done = shootout("run", "-c", f"rootfs:{device}", "-c", f"rootfs:{directory}", "--file",
                        str(run_file(tmp_path)), "-w", "count", "--max-rounds", "8", "--threshold", "50%",
                        "--db", shootout.db, *EMULATE, timeout=900)
        assert done.returncode == 0, done.stderr
        facts = json.loads(shootout("export", "last", "--db", shootout.db).stdout)["run"]["facts"]["sides"]
        assert facts[f"rootfs:{device}"]["target"]["arch"] == NATIVE_ARCH
        assert facts[f"rootfs:{directory}"]["target"]["arch"] == COMPANION_ARCH
        # only the test's own loop device is left on the disk image: the run's went with it
        listed = subprocess.run(["losetup", "-n", "-O", "NAME", "-j", str(raw)], capture_output=True, text=True,
                                check=False).stdout
        assert listed.split() == [device]
        assert left_behind(shootout.home) == []
    finally:
        subprocess.run(["losetup", "-d", device], check=False)
    assert sha(raw) == before


@pytest.mark.skipif(FOREIGN is None, reason="on an arm64 machine its own images are the native pair above")
def test_arm_images_run_under_emulation_marked_so(images: dict[str, Path], tmp_path: Path, require_root: None) -> None:
    """Foreign images are treated as foreign debian: sides are (arches.arch_problem): on an ARM
    machine refused without --emulate, on x86-64 run under qemu-user and marked emulated."""
    shootout = Shootout(tmp_path / "home")
    a, b = images["arm64"], images["armhf"]
    before = {p: sha(p) for p in (a, b)}
    done = shootout("run", "-c", f"image:{a}", "-c", f"image:{b}", "--file", str(run_file(tmp_path)), "-w", "count",
                    "--max-rounds", "6", "--emulate", "--db", shootout.db, timeout=1200)
    assert done.returncode == 0, done.stderr
    facts = json.loads(shootout("export", "last", "--db", shootout.db).stdout)["run"]["facts"]["sides"]
    assert facts[f"image:{a}"]["target"]["uname_m"] == "aarch64" and facts[f"image:{b}"]["target"]["uname_m"] == "armv7l"
    assert all(facts[c]["target"]["emulated"] is True for c in (f"image:{a}", f"image:{b}"))
    assert "emulated" in shootout("show", "last", "--db", shootout.db).stdout
    assert {p: sha(p) for p in (a, b)} == before
    assert left_behind(shootout.home) == []
