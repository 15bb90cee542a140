"""Disk images laid out as Raspberry Pi OS's SD card images are, built from a userspace's root:
an MBR (DOS) partition table, a FAT32 boot partition holding cmdline.txt and config.txt, and
an ext4 root whose PARTUUID cmdline.txt names, then compressed. Only files are written
(mkfs.ext4 -d fills the root without mounting it; mtools writes the boot files).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

MIB = 1 << 20
# Left out of an image's root: what no test of an image runs, which the shared userspaces gain
# as other tests use them (Chromium: a third of the root, and of every unpacking)
UNUSED = ("usr/lib/chromium", "usr/lib/debug", "usr/share/doc", "usr/share/icons", "usr/share/locale", "usr/share/man")
BOOT_START = 4 * MIB  # as Raspberry Pi OS: the first partition at 4 MiB
BOOT_SIZE = 64 * MIB  # FAT32 needs at least 65,525 clusters: 64 MiB of 512-byte ones
COMPRESS = {".xz": ["xz", "-T0", "-0", "-c"], ".zst": ["zstd", "-q", "-T0", "-1", "-c"], ".gz": ["gzip", "-1", "-c"]}


def sha(path: Path) -> str:
    """The sha256 of a file (an image must be the same after a run as before it)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _run(*argv: str | Path, stdout=None) -> None:
    subprocess.run([str(a) for a in argv], check=True, stdout=stdout if stdout is not None else subprocess.DEVNULL,
                   stderr=subprocess.PIPE, text=stdout is None)


def tree_bytes(root: Path) -> int:
    done = subprocess.run(["du", "-sb", "--one-file-system", str(root)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[0])


def ext4_file(root: Path, out: Path) -> int:
    """An ext4 filesystem in a file, filled from root (owners kept); its size in bytes, in whole MiB."""
    size = (tree_bytes(root) * 13 // 10 // MIB + 96) * MIB
    _run("mkfs.ext4", "-q", "-F", "-L", "rootfs", "-d", root, out, f"{size // 1024}k")
    return size


def lean_copy(root: Path, out: Path) -> Path:
    """root without UNUSED, as hard links (no file is copied, and root is never changed)."""
    _run("cp", "-al", root, out)
    for part in UNUSED:
        shutil.rmtree(out / part, ignore_errors=True)
    return out


def boot_file(out: Path, cmdline: str, config: str, extra: dict[str, str] | None = None) -> None:
    _run("mkfs.vfat", "-F", "32", "-n", "bootfs", "-C", out, str(BOOT_SIZE // 1024))
    files = {"cmdline.txt": cmdline + "\n", "config.txt": config, **(extra or {})}
    for name, text in files.items():
        local = out.with_name(name)
        local.write_text(text)
        _run("mcopy", "-i", out, local, f"::{name}")
        local.unlink()


def disk(out: Path, parts: list[tuple[Path, str]], disk_id: int) -> None:
    """An image whose DOS partitions hold the given files (path, sfdisk type), 1 MiB-aligned from 4 MiB."""
    offset, script = BOOT_START, [f"label: dos\nlabel-id: 0x{disk_id:08x}\n"]
    places = []
    for path, kind in parts:
        size = path.stat().st_size
        script.append(f"start={offset // 512}, size={size // 512}, type={kind}\n")
        places.append((path, offset))
        offset += -(-size // MIB) * MIB
    with open(out, "wb") as fh:
        fh.truncate(offset)
    subprocess.run(["sfdisk", "-q", str(out)], input="".join(script), text=True, check=True, capture_output=True)
    with open(out, "r+b") as fh:
        for path, at in places:
            fh.seek(at)
            with open(path, "rb") as src:
                shutil.copyfileobj(src, fh, 16 * MIB)


def sd_image(root: Path | None, out: Path, disk_id: int, *, arm_64bit: bool = True,
             cmdline: bool = True, root_fs: Path | None = None) -> Path:
    """out (NAME.img, or .img.xz/.img.zst/.img.gz: compressed) as an SD card image of root.
    cmdline False: no cmdline.txt (the root is then found by its /etc/os-release); root_fs:
    a filesystem file of the test's own as the second partition instead of root's ext4."""
    work = out.parent / (out.name + ".work")
    work.mkdir(parents=True, exist_ok=True)
    try:
        second = root_fs or work / "root.ext4"
        if root_fs is None:
            assert root is not None
            ext4_file(lean_copy(root, work / "root"), second)
        line = (f"console=serial0,115200 console=tty1 root=PARTUUID={disk_id:08x}-02 rootfstype=ext4 "
                "fsck.repair=yes rootwait")
        boot = work / "boot.vfat"
        boot_file(boot, line, f"[all]\narm_64bit={int(arm_64bit)}\n",
                  None if cmdline else {"issue.txt": "no cmdline.txt on this card\n"})
        if not cmdline:
            subprocess.run(["mdel", "-i", str(boot), "::cmdline.txt"], check=True, capture_output=True)
        raw = work / "disk.img"
        disk(raw, [(boot, "c"), (second, "83")], disk_id)
        if out.suffix in COMPRESS:
            with open(out.with_suffix(out.suffix + ".part"), "wb") as fh:
                subprocess.run([*COMPRESS[out.suffix], str(raw)], check=True, stdout=fh)
            out.with_suffix(out.suffix + ".part").replace(out)
        else:
            raw.replace(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out
