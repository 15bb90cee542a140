"""Whole installs across boots on a Raspberry Pi: `boot:ROOT[:IMAGE]`, a system on another root
partition (a second partition of the SD card, a USB SSD) compared with this one as a whole —
its kernel's modules, libraries, compiler, services — in A B B A blocks, one per boot.

Why `boot:` and not an option of `kernel:`: a kernel configuration runs its trials in a
userspace shootout controls on this root (the host, or a chroot it built); a whole install is
the other way round — the boot brings its own userspace, and shootout, run from that install,
measures on "the host" whatever that boot is. So it is a configuration kind of its own, on the
host kind (places/host.py), carried as a KernelWant with a root (boots/identity.py) so that the
schedule, the block records, the checks before each block and the switch are the kernel
campaign's (measure/bootcampaign.py). ROOT is what the kernel's root= takes: PARTUUID=xxxxxxxx-NN
(a GPT partition's UUID too) or /dev/…; IMAGE (kernel8.img, kernel7l.img …) picks the kernel
image from the boot partition where the installs differ in it.

How the next boot gets the other root: the firmware loads the kernel from the boot partition it
booted from, with the command line of the file config.txt's `cmdline=` names (cmdline.txt by
default). So tryboot.txt, which the firmware reads instead of config.txt for one boot after
`sudo reboot '0 tryboot'`, is config.txt plus `cmdline=cmdline-shootout.txt` (and the image's
lines), and cmdline-shootout.txt is cmdline.txt with root= pointing at the other root. A crash,
a power cut or a plain reboot boots config.txt's own root. Both files go through the next-boot
journal; `shootout doctor` and the resumed run remove them. A boot is recognised by its
/proc/cmdline root= (as a PARTUUID or the device it names): one that came up on another root
(tryboot fell back, the SSD was not ready) is refused in one line before it measures.

What the other install must have, checked before any waiting (it must be mounted, read-only is
enough: shootout reads it, never writes it):
- shootout itself, to run `shootout run --resume last` there;
- the run's data directory (SHOOTOUT_HOME) on a filesystem both installs mount at the same
  place — the database, the journal and the block records live there; a directory on this
  root is invisible from the other one. The boot partition (SHOOTOUT_HOME=/boot/firmware/shootout,
  FAT, a few MB for the database) or a shared data partition will do;
- this boot partition mounted where this install mounts it, so that the next-boot journal's
  paths (tryboot.txt, the command line file) are the same files there;
- the modules of the kernel it will boot (/lib/modules/RELEASE), where that kernel is this one.
Refused in one line: a board without tryboot (Pi 3 and older: no EEPROM boot loader),
autoboot.txt's tryboot_a_b=1 (tryboot then switches boot partitions), a root that does not
exist, and any of the above missing.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from shootout.arm.board import config_reader
from shootout.arm.configtxt import Reader, setting
from shootout.base.errors import TargetError, UsageError
from shootout.base.model import Config
from shootout.base.paths import data_dir
from shootout.boots.identity import BootIdentity, KernelWant
from shootout.boots.images import IMAGES, Board, board_of, kernel_image
from shootout.boots.partition import BootPartition, boot_partition, default_image, tryboot_switches_partitions
from shootout.boots.roots import cmdline_root, device_of, fstab, mount_holding, mounted_at, replace_root
from shootout.boots.tryboot import MARK, REBOOT, switch_lines
from shootout.conditions.machinefacts import board
from shootout.execution.fsread import read_text, under
from shootout.system.journal import Journal

CMDLINE = "cmdline-shootout.txt"  # the command line of the tryboot, beside cmdline.txt
HINT = "use boot:ROOT[:IMAGE] with ROOT as root= names it, e.g. boot:PARTUUID=2c4a9b1e-03 or boot:/dev/sda2:kernel8.img"
_ROOT = re.compile(r"PARTUUID=([0-9a-fA-F]{8}-[0-9a-fA-F]{2}|[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
                   r"|/dev/[\w./-]+")


def boot_config(spec: str) -> Config:
    """`boot:ROOT[:IMAGE]` -> a host configuration that requires a boot of the install on ROOT."""
    root, _, image = spec.removeprefix("boot:").partition(":")
    if not _ROOT.fullmatch(root) or (image and image not in IMAGES):
        raise UsageError(f"bad whole-install configuration {spec!r}", HINT)
    options: tuple[tuple[str, str], ...] = (("kernel", "*"), ("root", root))
    if image:
        options += (("kernel_image", image), ("machine", IMAGES[image].machine))
    return Config(name=spec, target="host", label=f"install on {root}" + (f", {image}" if image else ""),
                  options=options)


def installed_paths() -> tuple[str, ...]:
    """Where the other install's shootout may be: on PATH system-wide, or beside this one's Python
    (a checkout's .venv, at the same path there)."""
    return ("/usr/local/bin/shootout", "/usr/bin/shootout", str(Path(sys.executable).parent / "shootout"))


def _pi(root: Path, what: str) -> tuple[Board, BootPartition, Reader]:
    """The board and boot partition a switch of roots needs; refused in one line where tryboot cannot do it."""
    model = board(root) or "machine that is no Raspberry Pi"
    found = board_of(model) if model.startswith("Raspberry Pi") else None
    if found is None or not found.tryboot:
        raise TargetError(f"{what}: a {model} has no tryboot (the EEPROM boot loader of a Pi 4, 400, CM4 or 5), "
                          "which boots another root for one boot", "compare the installs by booting each by hand")
    part = boot_partition(root)
    if part is None:
        raise TargetError(f"{what}: this Raspberry Pi has no config.txt in /boot/firmware or /boot",
                          "mount the boot partition")
    reader = replace(config_reader(root), model=model)
    if setter := tryboot_switches_partitions(part, reader):
        raise TargetError(f"{what}: {setter} sets tryboot_a_b=1, so tryboot switches boot partitions here",
                          "boot the other install by hand, or set tryboot_a_b=0")
    return found, part, reader


def _cmdline_file(part: BootPartition, reader: Reader) -> str:
    """The command line file a plain boot of config.txt reads."""
    return (setting(part.config_txt, "cmdline", replace(reader, tryboot=False)) or "cmdline.txt").lstrip("/")


def check_sides(wants: Mapping[str, KernelWant], root: Path = Path("/")) -> None:
    """The sides of a run across whole installs, on this board: all of them roots that exist, and tryboot."""
    if not all(w.root for w in wants.values()):
        raise UsageError("a run across boots compares whole installs (boot:ROOT) or kernels (kernel:RELEASE), "
                         "not both", "name the kernel image with the root: boot:ROOT:IMAGE")
    _pi(root, "whole installs across boots")
    for name, want in wants.items():
        if device_of(want.root or "", root) is None:
            raise TargetError(f"{name}: there is no partition {want.root} on this machine",
                              "blkid lists each partition's PARTUUID; plug in the drive that holds it")


def check_others(wants: Mapping[str, KernelWant], running: BootIdentity, root: Path = Path("/"),
                 data: Path | None = None) -> None:
    """What the other installs need to continue the run (the module's list), checked before anything
    is measured or written; `running` is a boot of one of the sides (check_sides first)."""
    _, part, _ = _pi(root, "whole installs across boots")
    others = {name: want for name, want in wants.items() if not running.is_root(want.root or "")}
    devices = {name: device_of(want.root or "", root) for name, want in wants.items()}
    shared = _shared_data(data or data_dir(), running, root)
    boot_mount = mount_holding(part.path, root)
    needed = [("the run's data directory", shared)] + (
        [("this boot partition", boot_mount)] if boot_mount and boot_mount[1] != "/" else [])
    # this install too: after the reboot back to it, the data directory must be mounted again
    here = next((name for name, want in wants.items() if running.is_root(want.root or "")), "this install")
    _mounts_from_fstab(here, "this install", root, needed, root)
    for name, want in others.items():
        device = devices[name] or ""
        at = mounted_at(device, root)
        if at is None:
            raise TargetError(f"{name}: {want.root} ({device}) is not mounted, so shootout cannot check that it "
                              "can continue the run", f"mount it (read-only will do): sudo mount -o ro {device} /mnt")
        where = under(root, at)
        paths = installed_paths()
        if not any(under(where, p).is_file() for p in paths):
            raise TargetError(f"{name}: the install on {want.root} has no shootout (none of {', '.join(paths)}), "
                              "so the run cannot continue after the reboot",
                              "install shootout there as here (./install.sh, or pipx install) before the run")
        _mounts_from_fstab(name, f"the install on {want.root}", where, needed, root)
        if kernel_image(running.release) == (want.image or kernel_image(running.release)) and not any(
                under(where, f"{d}/{running.release}").is_dir() for d in ("/lib/modules", "/usr/lib/modules")):
            raise TargetError(f"{name}: the install on {want.root} has no modules for kernel {running.release} "
                              f"(/lib/modules/{running.release}), which it would boot from this boot partition",
                              "install the same kernel package there, at the same version as here")


def _mounts_from_fstab(name: str, install: str, where: Path, needed: Sequence[tuple[str, tuple[str, str]]],
                       root: Path) -> None:
    """Refuse when the install's /etc/fstab (under `where`) does not mount each needed filesystem at its place."""
    table = fstab(read_text(where, "/etc/fstab") or "")
    for path, (source, point) in needed:
        if not any(p == point and _same(s, source, root) for s, p in table):
            raise TargetError(f"{name}: {install} does not mount {source} at {point} (its /etc/fstab), "
                              f"where {path} is", f"add to its /etc/fstab: {source} {point} "
                              "(the same filesystem for both installs)")


def _same(a: str, b: str, root: Path) -> bool:
    """Whether two fstab/mount names are one filesystem (the same name, or the same device)."""
    device = device_of(a, root)
    return a == b or (device is not None and device == device_of(b, root))


def _shared_data(data: Path, running: BootIdentity, root: Path) -> tuple[str, str]:
    """The filesystem holding the data directory, refused when it is this install's root."""
    held = mount_holding(str(data), root)
    if held is None or held[1] == "/" or (running.root_device and device_of(held[0], root) == running.root_device):
        raise TargetError(f"the run's data directory {data} is on this install's root, which the other install "
                          "does not see", "put it where both installs mount it, e.g. "
                          "SHOOTOUT_HOME=/boot/firmware/shootout (and the same SHOOTOUT_HOME there)")
    return held


def write_root_tryboot(want: KernelWant, root: Path, journal: Journal) -> str:
    """Make the next boot run the install on want.root (journalled); the one line that says how, and its undo."""
    assert want.root is not None
    board_found, part, reader = _pi(root, "--next-kernel")
    cmdline_file = _cmdline_file(part, reader)
    current = read_text(root, part.file(cmdline_file))
    if current is None:
        raise TargetError(f"--next-kernel: there is no {part.file(cmdline_file)}", "mount the boot partition")
    lines = []
    image = want.image or kernel_image(want.release)
    if image and default_image(board_found, part.config_txt, part.files, reader) != image:
        if not part.has(image):
            raise TargetError(f"--next-kernel: there is no {part.file(image)}", "install that kernel first")
        lines += switch_lines(KernelWant("*", image=image))
    named = cmdline_root(current)
    if named is None or not _same(named, want.root, root):
        lines.append(f"cmdline={CMDLINE}")
    if not lines:
        return f"{part.file('config.txt')} boots the install on {want.root} already: reboot with: sudo reboot"
    tryboot = part.file("tryboot.txt")
    written = [(tryboot, part.config_txt.rstrip("\n") + f"\n\n{MARK}\n[all]\n" + "\n".join(lines) + "\n")]
    if f"cmdline={CMDLINE}" in lines:
        written.append((part.file(CMDLINE), replace_root(current, want.root) + "\n"))
    for path, _ in written:
        if under(root, path).exists():
            raise TargetError(f"{path} exists already", "move it away, or `shootout doctor` if shootout left it")
    for path, text in written:
        target = under(root, path)
        journal.change(f"{path}: the install on {want.root} for one boot", {"remove": str(target)},
                       lambda target=target, text=text: target.write_text(text))
    files = " ".join(path for path, _ in written)
    return (f"{tryboot} boots the install on {want.root} once, when you reboot with: {REBOOT} "
            f"(undo: rm {files}, or shootout doctor)")
