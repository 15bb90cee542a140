"""Experiments that compare a 64-bit userspace with its 32-bit companion take this machine's
pair: amd64/i386 on a PC, arm64/armhf on a Raspberry Pi or an ARM server (as the write-ups)."""

from __future__ import annotations

import pytest

from shootout.base.errors import UsageError
from shootout.experiments import EXPERIMENTS
from shootout.experiments import writeup as experiments_base


def on(monkeypatch: pytest.MonkeyPatch, userspace: str, kernel: str) -> None:
    monkeypatch.setattr(experiments_base, "host_arch", lambda: userspace)
    monkeypatch.setattr(experiments_base, "kernel_arch", lambda: kernel)


@pytest.mark.parametrize(("userspace", "kernel", "native", "companion"), [
    ("amd64", "amd64", "amd64", "i386"),
    ("arm64", "arm64", "arm64", "armhf"),  # a Pi 4/5 with a 64-bit OS, an ARM server
    ("armhf", "arm64", "arm64", "armhf"),  # 32-bit Raspberry Pi OS on its default 64-bit kernel
])
def test_rpi_network_compares_this_machines_pair(monkeypatch: pytest.MonkeyPatch, userspace: str, kernel: str,
                                                 native: str, companion: str) -> None:
    on(monkeypatch, userspace, kernel)
    settings = EXPERIMENTS["rpi-network"].settings()
    assert settings.run["configs"] == [native, companion]
    assert {name: c.userspace for name, c in settings.configs.items()} == {
        native: f"debian-bookworm-{native}", companion: f"debian-bookworm-{companion}"}


def test_a_machine_without_a_32_bit_companion_is_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    on(monkeypatch, "ppc64el", "ppc64el")
    with pytest.raises(UsageError, match="rpi-network compares a 64-bit userspace with its 32-bit companion, "
                                         "and this ppc64el machine has none"):
        EXPERIMENTS["rpi-network"].settings()
    EXPERIMENTS["drop-ladder"].settings()  # an experiment of one userspace does not care
