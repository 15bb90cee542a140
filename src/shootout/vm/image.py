"""A VM disk image from a debootstrap userspace, with a Debian kernel installed inside.

  1. an overlay on the userspace's root (the userspace itself is never changed; what the
     steps below write lands in the overlay's upper directory: no copy of the whole tree
     to make and delete), mounted in this process's private mount namespace (journalled;
     gone with the process even after a kill);
  2. apt-get update (a failed release index is an error naming the mirror, a failed -updates or
     -security a warning kept in the image's meta); apt installs the kernel package, openssh-server, iproute2 and kmod; a 64-bit kernel
     for a 32-bit userspace comes through multiarch (linux-image-amd64:amd64 on i386); the
     initramfs holds only the virtio and ext4 modules (MODULES=list);
  3. the init script, a fresh client key in root's authorized_keys, the guest's host key
     kept for known_hosts; kernel and initrd copied out for qemu's direct boot;
  4. `mkfs.ext4 -d` makes the filesystem image from the directory — no mount, no loop device.
Images are cached per (userspace, flavour, recipe); a build in progress lives under
.incomplete-* and is removed through the journal if it fails or is killed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from shootout.base.errors import TargetError, ToolMissing
from shootout.base.paths import cache_dir
from shootout.execution.process import ProcResult
from shootout.execution.tools import find_tool
from shootout.system.journal import Journal
from shootout.system.mounts import mount, safe_rmtree
from shootout.userspace.apt import update_warnings
from shootout.userspace.binfmt import ensure_emulation
from shootout.userspace.registry import Userspace
from shootout.vm.kvm import GUEST_FAMILY

RECIPE = 3  # bump when the image contents change, so cached images are rebuilt
VM_PACKAGES = ("openssh-server", "iproute2", "kmod")
# Only what the guest needs to mount its root: an initramfs made in seconds, not a minute.
INITRAMFS_MODULES = ("virtio_pci", "virtio_mmio", "virtio_blk", "virtio_net", "ext4")
ARM_MODULES = ("pci-host-generic",)  # the PCIe host of qemu's arm `virt` board, where it is a module
SPARE = 1.25  # the filesystem is this much larger than its contents, plus the fixed slack below
SLACK_BYTES = 300 << 20

Progress = Callable[[str], None]

# Each step runs in a mount namespace of its own (gone with it) with the root's proc, sys, dev.
_IN_ROOT = r"""
set -e
R=$1; shift
mount -t proc proc "$R/proc"; mount -t sysfs sysfs "$R/sys"; mount --rbind /dev "$R/dev"
ch() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"; }
"""
# Its output is judged by userspace.apt.update_warnings: the release's own index failing is an
# error naming the mirror; an extra suite (-updates, -security) failing is a warning.
_UPDATE = _IN_ROOT + r"""
if [ -n "$1" ]; then ch dpkg --add-architecture "$1"; fi
ch apt-get -o Acquire::Retries=3 update
"""
_INSTALL = _IN_ROOT + r"""
PKG=$1; shift
if ! ch apt-cache show --no-all-versions "$PKG" >/dev/null 2>&1; then echo "shootout: no package $PKG" >&2; exit 3; fi
ch apt-get install -y -q --no-install-recommends "$PKG" "$@"
ch apt-get clean
"""


def in_root(script: str, root: Path, *args: str) -> ProcResult:
    """A recipe step in the image root, in a private mount namespace that dies with it."""
    argv = ["setpriv", "--pdeathsig", "KILL", "unshare", "--mount", "--propagation", "private",
            "sh", "-c", script, "sh", str(root), *args]
    t0 = time.time()
    done = subprocess.run(argv, capture_output=True, text=True)
    return ProcResult(tuple(argv), done.returncode, done.stdout, done.stderr, time.time() - t0, 0.0, 0.0, 0, 0, t0)


def update_lists(root: Path, userspace: Userspace, foreign: str | None) -> list[str]:
    """`apt-get update` in the image root; the warnings for the image's meta, or a TargetError."""
    done = in_root(_UPDATE, root, foreign or "")
    return update_warnings(done, f"the VM image of {userspace.name}", userspace.release)


@dataclass(frozen=True)
class VmImage:
    dir: Path
    meta: dict[str, Any]

    @property
    def disk(self) -> Path:
        return self.dir / "disk.img"

    @property
    def kernel(self) -> Path:
        return self.dir / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.dir / "initrd.img"

    @property
    def client_key(self) -> Path:
        return self.dir / "client_key"

    @property
    def host_key(self) -> str:
        """The guest's sshd host key, "TYPE BASE64", for a known_hosts line."""
        return str(self.meta["host_key"])

    @property
    def release(self) -> str:
        return str(self.meta["kernel_release"])


def kernel_package(arch: str, flavour: str) -> tuple[str, str | None]:
    """(package, foreign architecture to enable or None): a 64-bit kernel for a 32-bit userspace
    comes from the 64-bit archive, which Debian's i386 (armhf) archive does not carry."""
    if arch == "i386" and flavour == "amd64":
        return "linux-image-amd64:amd64", "amd64"
    if arch == "armhf" and flavour == "arm64":
        return "linux-image-arm64:arm64", "arm64"
    return f"linux-image-{flavour}", None


def init_script() -> bytes:
    return resources.files("shootout.vm").joinpath("init.sh").read_bytes()


def image_key(userspace: Userspace, flavour: str) -> str:
    # the userspace's packages: one installed later for a run's workloads makes a new image
    made = json.dumps([RECIPE, userspace.name, userspace.meta.get("created_at"), userspace.meta.get("updated_at"),
                       flavour, VM_PACKAGES, sorted(userspace.packages)]).encode()
    return hashlib.sha256(made + init_script()).hexdigest()[:12]


def _tree_bytes(root: Path) -> int:
    done = subprocess.run(["du", "-sb", "--apparent-size", str(root)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[0])


def _check_space(directory: Path, needed: int) -> None:
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    if free < needed:
        raise TargetError(f"not enough free space for a VM image: {free / 1e9:.1f} GB free in {directory}, "
                          f"about {needed / 1e9:.1f} GB needed", "free some space, or set SHOOTOUT_HOME elsewhere")


def build_image(userspace: Userspace, flavour: str, journal: Journal, progress: Progress | None = None) -> VmImage:
    """The cached image of userspace + kernel flavour, built first if needed."""
    say = progress or (lambda _m: None)
    base = cache_dir() / "vm"
    base.mkdir(exist_ok=True)
    name = f"{userspace.name}-{flavour}-{image_key(userspace, flavour)}"
    final = base / name
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs wanting an image build it once, one build at a time
        if (final / "meta.json").exists():
            return VmImage(final, json.loads((final / "meta.json").read_text()))
        return _build(userspace, flavour, base / f".incomplete-{name}", final, journal, say)


def _build(userspace: Userspace, flavour: str, work: Path, final: Path, journal: Journal,
           say: Progress) -> VmImage:
    for tool, package in (("mkfs.ext4", "e2fsprogs"), ("unshare", "util-linux"), ("ssh-keygen", "openssh-client")):
        if find_tool(tool) is None:
            raise ToolMissing(tool, package)
    package, foreign = kernel_package(userspace.arch, flavour)
    size = _tree_bytes(userspace.root)
    _check_space(final.parent, int(size * SPARE) + 4 * SLACK_BYTES)  # the image, and the kernel in the overlay
    shutil.rmtree(work, ignore_errors=True)  # a killed earlier build
    entry = journal.record(f"VM image being built in {work}", {"rmtree": str(work)})
    overlay: int | None = None
    try:
        work.mkdir(parents=True)
        seconds: dict[str, float] = {}
        root = work / "root"
        overlay = _mount_overlay(userspace, work, root, journal)
        _seed_root(root, userspace)
        t0 = time.monotonic()
        warnings = _install_kernel(root, userspace, package, foreign, journal, say)
        seconds["install"] = time.monotonic() - t0
        t0 = time.monotonic()
        meta = {**_configure(root, work, userspace, flavour, package), "apt_warnings": warnings}
        used = _tree_bytes(root)
        seconds["configure"] = time.monotonic() - t0
        t0 = time.monotonic()
        disk = _make_disk(root, work / "disk.img", used, say)
        seconds["mkfs"] = time.monotonic() - t0
        t0 = time.monotonic()
        journal.undo_entry(overlay)
        overlay = None
        for name in ("root", "upper", "ovl"):
            safe_rmtree(work / name)
        seconds["remove_tree"] = time.monotonic() - t0
        meta.update(seconds={k: round(v, 1) for k, v in seconds.items()}, image_bytes=disk.stat().st_size,
                    tree_bytes=used)
        (work / "meta.json").write_text(json.dumps(meta, indent=1))
        _commit(work, final, userspace, flavour)
        return VmImage(final, meta)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise TargetError(f"building the VM image failed: {exc}", "check the free space under the data directory") from None
    finally:
        if overlay is not None:
            journal.undo_entry(overlay)  # before anything under it is deleted
        journal.undo_entry(entry)  # removes whatever is left under the incomplete name


def _mount_overlay(userspace: Userspace, work: Path, root: Path, journal: Journal) -> int:
    """An overlay of the userspace at root, its changes under work/upper; its journal entry."""
    for d in (root, work / "upper", work / "ovl"):
        d.mkdir()
    return mount(journal, f"mount an overlay on {userspace.name} at {root}",
                 ["mount", "--make-private", "-t", "overlay", "-o",
                  f"lowerdir={userspace.root},upperdir={work / 'upper'},workdir={work / 'ovl'}",
                  "shootout-vm-image", str(root)], root)


def _seed_root(root: Path, userspace: Userspace) -> None:
    """What apt needs to reach the mirror, and the initramfs's short list of modules."""
    shutil.copyfile("/etc/resolv.conf", _replace(root / "etc/resolv.conf"))
    initramfs = root / "etc/initramfs-tools"
    (initramfs / "conf.d").mkdir(parents=True, exist_ok=True)
    (initramfs / "conf.d/shootout").write_text("MODULES=list\n")
    arm = GUEST_FAMILY.get(userspace.arch) == "arm"
    (initramfs / "modules").write_text("\n".join(INITRAMFS_MODULES + (ARM_MODULES if arm else ())) + "\n")


def _install_kernel(root: Path, userspace: Userspace, package: str, foreign: str | None, journal: Journal,
                    say: Progress) -> list[str]:
    """apt-get update, then the kernel package and VM_PACKAGES; the update's warnings."""
    say(f"VM image: installing {package} in a copy of {userspace.name}")
    ensure_emulation(userspace.arch, journal)  # an arm userspace on x86-64: its apt runs under qemu-user
    warnings = update_lists(root, userspace, foreign)
    for line in warnings:
        say(line)
    done = in_root(_INSTALL, root, package, *VM_PACKAGES)
    if done.exit_status == 3:
        raise TargetError(f"there is no {package} for {userspace.release}/{userspace.arch}",
                          "pick a kernel flavour that exists there (e.g. 686-pae or amd64 on i386, amd64 on amd64)")
    if done.exit_status != 0:
        last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or ["no output"])[-1]
        raise TargetError(f"installing {package} into the VM image failed: {last}", "check the mirror and the space")
    return warnings


def _make_disk(root: Path, disk: Path, used: int, say: Progress) -> Path:
    """The ext4 image of the tree at root (mkfs.ext4 -d: no mount, no loop device)."""
    say("VM image: mkfs.ext4 -d")
    with open(disk, "wb") as fh:
        fh.truncate(((int(used * SPARE) + SLACK_BYTES) >> 20) << 20)
    done = subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "shootout", "-d", str(root), str(disk)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise TargetError(f"mkfs.ext4 -d failed: {done.stderr.strip()[-200:]}", "check the free space")
    return disk


def _commit(work: Path, final: Path, userspace: Userspace, flavour: str) -> None:
    """Rename the finished build to its final name, then drop this userspace's older images."""
    work.rename(final)  # the commit point: complete images only
    for stale in final.parent.glob(f"{userspace.name}-{flavour}-*"):
        if stale != final:  # made from an older state of the userspace, or an older recipe
            subprocess.run(["rm", "-rf", "--one-file-system", str(stale)], check=False)


def _replace(path: Path) -> Path:
    """A path to write to that never follows a symlink inside the image root."""
    if path.is_symlink() or path.exists():
        path.unlink()
    return path


def _configure(root: Path, work: Path, userspace: Userspace, flavour: str, package: str) -> dict[str, Any]:
    boots = sorted((root / "boot").glob("vmlinuz-*"))
    if not boots:
        raise TargetError(f"{package} installed no kernel in /boot", "check the package")
    release = boots[-1].name.removeprefix("vmlinuz-")
    shutil.copyfile(boots[-1], work / "vmlinuz")
    shutil.copyfile(root / "boot" / f"initrd.img-{release}", work / "initrd.img")
    init = _replace(root / "sbin/shootout-init")
    init.write_bytes(init_script())
    init.chmod(0o755)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "shootout-vm", "-f", str(work / "client_key")],
                   check=True)
    ssh_dir = root / "root/.ssh"
    ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    _replace(ssh_dir / "authorized_keys").write_bytes((work / "client_key.pub").read_bytes())
    _replace(root / "etc/fstab").write_text("/dev/vda / ext4 rw 0 1\n")
    _replace(root / "etc/hostname").write_text("shootout-vm\n")
    host_key = (root / "etc/ssh/ssh_host_ed25519_key.pub").read_text().split()
    return {"userspace": userspace.name, "arch": userspace.arch, "release": userspace.meta.get("release"),
            "flavour": flavour, "package": package, "kernel_release": release,
            "host_key": f"{host_key[0]} {host_key[1]}", "recipe": RECIPE, "built_at": time.time()}
