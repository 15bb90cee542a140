"""Fake Raspberry Pi roots built from the boot partitions written from the formats (tests/fixtures/bootparts)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import shootout

BOOTPARTS = Path(__file__).parent.parent / "fixtures" / "bootparts"


def system(name: str) -> dict[str, str]:
    """model, release, machine and dpkg of a written board as it boots by default."""
    lines = (BOOTPARTS / name / "system.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def pi_root(root: Path, name: str, *, drop: tuple[str, ...] = (), release: str | None = None,
            machine: str | None = None, boot_id: str = "boot-1", extra: dict[str, str] | None = None) -> Path:
    """A fake root of the board `name` (its fixture): its boot partition at /boot/firmware (every listed
    file, empty but config.txt and cmdline.txt; `drop` leaves files out), its model, and the kernel
    it runs (the default boot's, or `release`/`machine`)."""
    facts = system(name)
    part = root / "boot/firmware"
    part.mkdir(parents=True, exist_ok=True)
    for entry in (BOOTPARTS / name / "files.txt").read_text().split():
        if entry.rstrip("/") in drop:
            continue
        if entry.endswith("/"):
            (part / entry).mkdir(exist_ok=True)
        elif entry in ("config.txt", "cmdline.txt"):
            (part / entry).write_text((BOOTPARTS / name / entry).read_text())
        else:
            (part / entry).write_bytes(b"")
    files = {"proc/device-tree/model": facts["model"] + "\x00",
             "proc/sys/kernel/osrelease": (release or facts["release"]) + "\n",
             "proc/sys/kernel/arch": (machine or facts["machine"]) + "\n",
             "proc/sys/kernel/random/boot_id": boot_id + "\n",
             **(extra or {})}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def snapshot(part: Path) -> dict[str, bytes]:
    """Every file of a boot partition and its bytes: to show that nothing else changed."""
    return {str(p.relative_to(part)): p.read_bytes() for p in sorted(part.rglob("*")) if p.is_file()}


def killed_mid_switch(tree: Path, /, **want: str) -> str:
    """A process that switches the next boot of the fake `tree` to KernelWant('*', **want) (an image,
    a root), then dies by SIGKILL before anything undoes it; what it said."""
    code = ("import os, signal, sys\nfrom pathlib import Path\n"
            "from shootout.boots.identity import KernelWant\n"
            "from shootout.boots.switch import next_boot_journal, switch_next_boot\n"
            f"print(switch_next_boot(KernelWant('*', **{want!r}), 'k', next_boot_journal(), Path({str(tree)!r})),"
            " flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(shootout.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    return done.stdout.strip()
