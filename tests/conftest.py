"""Fixtures shared by unit and end-to-end tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

FakeBoot = Callable[..., Path]


@pytest.fixture
def fake_boot(tmp_path: Path) -> FakeBoot:
    """A fake root as one boot shows it (boot id, release, uname -m, command line, config.txt)."""

    def make(boot_id: str, release: str, machine: str = "x86_64", config_txt: str | None = None) -> Path:
        root = tmp_path / "boots" / boot_id
        files = {"proc/sys/kernel/random/boot_id": boot_id, "proc/sys/kernel/osrelease": release,
                 "proc/sys/kernel/arch": machine, "proc/cmdline": f"BOOT_IMAGE=/vmlinuz-{release} root=/dev/sda1 ro quiet"}
        if config_txt is not None:
            files["boot/firmware/config.txt"] = config_txt
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text + "\n")
        return root

    return make
