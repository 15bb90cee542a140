"""Run foreign-arch userspaces through qemu-user-static, registered with binfmt_misc.

The registration line comes from the qemu-user-static package's own binfmt.d file; its F
(fix-binary) flag makes the kernel open the interpreter at registration time, so nothing has
to be copied into the chroot. Mounting binfmt_misc and registering both go through the
journal and are undone by it (writing -1 to an entry removes it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from shootout.base.errors import TargetError, ToolMissing
from shootout.system.journal import Journal
from shootout.system.mountns import private_mounts
from shootout.system.mounts import umount_undo
from shootout.userspace.arches import arch, is_foreign

BINFMT_DIR = Path("/proc/sys/fs/binfmt_misc")
BINFMT_D = (Path("/usr/lib/binfmt.d"), Path("/lib/binfmt.d"))
_UNREGISTER = ('m=; if [ ! -e "$2/register" ]; then mount -t binfmt_misc binfmt_misc "$2" && m=1; fi\n'
               'if [ -e "$1" ]; then echo -1 > "$1"; fi; s=$?\n'
               'if [ -n "$m" ]; then umount "$2"; fi; exit $s')


# Debian's qemu-user-static ships no binfmt.d file for its host's own family (no qemu-arm.conf
# on arm64), yet an arm64 core without AArch32 runs armhf only through qemu-arm (--emulate):
# the 32-bit ARM ELF magic and mask of qemu's own qemu-binfmt-conf.sh, with the static binary.
_SAME_FAMILY = {
    "arm": (r"\x7f\x45\x4c\x46\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x28\x00",
            r"\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff"),
}


def registration(arch_name: str) -> tuple[str, str]:
    """(entry name, register line) for arch_name, from qemu-user-static's binfmt.d file."""
    qemu = arch(arch_name).qemu
    for directory in BINFMT_D:
        conf = directory / f"qemu-{qemu}.conf"
        if conf.is_file():
            line = conf.read_text().strip()
            fields = line.split(":")
            if len(fields) < 7 or not fields[1]:
                raise TargetError(f"cannot read the binfmt line in {conf}", "reinstall qemu-user-static")
            flags = fields[-1]
            if "F" not in flags:  # without F the interpreter would have to exist inside the chroot
                line = line + "F"
            return fields[1], line
    static = Path(f"/usr/bin/qemu-{qemu}-static")
    if qemu in _SAME_FAMILY and static.exists():
        magic, mask = _SAME_FAMILY[qemu]
        return f"qemu-{qemu}", f":qemu-{qemu}:M::{magic}:{mask}:{static}:F"
    raise ToolMissing(f"qemu-{qemu}-static", "qemu-user-static")


def _registered(entry: str) -> bool:
    path = BINFMT_DIR / entry
    try:
        return path.read_text().splitlines()[0].strip() == "enabled"
    except (OSError, IndexError):
        return False


def ensure_emulation(arch_name: str, journal: Journal) -> bool:
    """Make `arch_name` binaries runnable here; returns True when they run emulated."""
    if not is_foreign(arch_name):
        return False
    entry, line = registration(arch_name)
    interpreter = Path(line.split(":")[6])
    if not interpreter.exists():
        raise ToolMissing(str(interpreter), "qemu-user-static")
    if not (BINFMT_DIR / "register").exists():
        private_mounts()  # the mount goes away with the run; the registration is undone below
        try:
            journal.run("mount binfmt_misc", ["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT_DIR)],
                        umount_undo(BINFMT_DIR))
        except subprocess.CalledProcessError as exc:
            raise TargetError(f"cannot mount binfmt_misc: {exc.stderr.strip()}",
                              "load the binfmt_misc kernel module (modprobe binfmt_misc)") from None
    if _registered(entry):
        return True
    if os.geteuid() != 0:
        raise TargetError(f"running {arch_name} binaries needs a binfmt_misc entry for qemu, which needs root",
                          "run as root, or register it once: systemctl restart systemd-binfmt")

    def register() -> None:
        (BINFMT_DIR / "register").write_text(line)

    # Undo first looks whether the entry still exists: another tool may have removed it. The
    # registration is the kernel's, but our binfmt_misc mount dies with the run's mount
    # namespace: replayed after a kill, the undo mounts binfmt_misc for the moment it needs it.
    undo = {"argv": ["sh", "-c", _UNREGISTER, "shootout-binfmt", str(BINFMT_DIR / entry), str(BINFMT_DIR)]}
    try:
        journal.change(f"register qemu for {arch_name} in binfmt_misc", undo, register)
    except OSError as exc:
        raise TargetError(f"cannot register qemu for {arch_name} with binfmt_misc: {exc.strerror}",
                          "check /proc/sys/fs/binfmt_misc") from None
    return True
