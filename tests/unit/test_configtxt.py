"""config.txt's conditional sections as the firmware reads them, on config.txt files laid out as
Raspberry Pi OS ships them (tests/fixtures/bootparts, tests/fixtures/arm): [pi4], [pi400], [cm4],
[pi5] ... hold on their boards only, [all] resets, [none] holds nowhere, [tryboot] only in a
tryboot, filters of one type replace each other and of two types combine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shootout.arm import board
from shootout.arm.configtxt import Reader, model_filters, setting, settings
from shootout.boots.images import board_of
from shootout.boots.partition import default_image

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PI_OS = (FIXTURES / "bootparts" / "pi5-arm64" / "config.txt").read_text()  # ends in [cm4], [cm5], [all]
PI4, PI400, CM4 = "Raspberry Pi 4 Model B Rev 1.4", "Raspberry Pi 400 Rev 1.0", "Raspberry Pi Compute Module 4 Rev 1.0"
PI5, PI3, PI3B = "Raspberry Pi 5 Model B Rev 1.0", "Raspberry Pi 3 Model B Plus Rev 1.3", "Raspberry Pi 3 Model B Rev 1.2"
PI2_12, PI2_11 = "Raspberry Pi 2 Model B Rev 1.2", "Raspberry Pi 2 Model B Rev 1.1"
FILES = frozenset({"kernel7.img", "kernel7l.img", "kernel8.img", "kernel_2712.img"})
# what a user adds at the end of it to run a Pi 4 on its 32-bit kernel, the card also booting a Pi 5
PI4_32 = "\n[pi4]\nkernel=kernel7l.img\narm_64bit=0\n[all]\n"


def image(model: str, text: str, **reader: object) -> str:
    found = board_of(model)
    assert found is not None, model
    return default_image(found, text, FILES, Reader(model, **reader))  # type: ignore[arg-type]


def test_a_pi4_section_does_not_make_a_pi5_boot_the_pi4s_kernel() -> None:
    assert image(PI5, PI_OS + PI4_32) == "kernel_2712.img"
    assert image(PI4, PI_OS + PI4_32) == "kernel7l.img"
    assert image(PI400, PI_OS + PI4_32) == "kernel7l.img"  # a Pi 400 sees [pi4] too
    assert image(PI4, PI_OS + PI4_32.replace("[pi4]", "[pi400]")) == "kernel8.img"  # not the other way round
    assert image(PI3, PI_OS + PI4_32) == "kernel8.img"  # the shipped arm_64bit=1, not [pi4]'s 0


def test_the_shipped_cm4_and_cm5_sections_hold_on_those_modules_only() -> None:
    assert settings(PI_OS, Reader(CM4))["otg_mode"] == "1"
    assert "otg_mode" not in settings(PI_OS, Reader(PI4))
    assert settings(PI_OS, Reader("Raspberry Pi Compute Module 5 Rev 1.0"))["dtoverlay"] == "dwc2,dr_mode=host"
    assert settings(PI_OS, Reader(PI5))["dtoverlay"] == "vc4-kms-v3d"
    assert model_filters(PI3) == {"pi3", "pi3+"} and model_filters(PI3B) == {"pi3"}


@pytest.mark.parametrize("text, model, tryboot, wanted", [
    ("[none]\nkernel=a.img\n[all]\n", PI4, False, None),  # [none]: nowhere, until [all]
    ("[none]\n[pi4]\nkernel=a.img\n", PI4, False, None),  # a model filter does not end [none]
    ("[tryboot]\nkernel=a.img\n[all]\n", PI4, False, None),
    ("[tryboot]\nkernel=a.img\n[all]\n", PI4, True, "a.img"),
    ("[pi4]\n[tryboot]\nkernel=a.img\n", PI4, True, "a.img"),  # two types: both must hold
    ("[pi4]\n[tryboot]\nkernel=a.img\n", PI5, True, None),
    ("[pi4]\n[pi3]\nkernel=a.img\n", PI4, False, None),  # one type: [pi3] replaced [pi4]
    ("[pi3]\n[pi4]\nkernel=a.img\n", PI4, False, "a.img"),
    ("[board-type=0x11]\nkernel=a.img\n", PI4, False, "a.img"),  # a 4B's type
    ("[board-type=0x11]\nkernel=a.img\n", PI400, False, None),
    ("[EDID=VSC-TD2220]\nkernel=a.img\n[all]\n", PI4, False, None),  # a monitor's: not known here
    ("[HDMI:1]\nkernel=a.img\n", PI4, False, "a.img"),  # a port, not a condition
    ("[0x12345678]\nkernel=a.img\n", PI4, False, "a.img"),  # this board's serial
    ("[0x87654321]\nkernel=a.img\n", PI4, False, None),
    ("[pi4]\nkernel=a.img\n[all]\nkernel=b.img\n", PI4, False, "b.img"),  # the last line that applies wins
])
def test_filters_as_the_firmware_reads_them(text: str, model: str, tryboot: bool, wanted: str | None) -> None:
    types = {PI4: 0x11, PI400: 0x13, PI5: 0x17}
    reader = Reader(model, types.get(model), tryboot, 0x10000000_12345678)
    assert setting(text, "kernel", reader) == wanted


def test_a_pi2_v1_2_boots_a_64_bit_kernel_and_v1_1_does_not() -> None:
    found = board_of(PI2_12)
    assert found is not None and found.kernel32 == "kernel7.img" and found.kernel64 == "kernel8.img"
    assert image(PI2_12, PI_OS.replace("arm_64bit=1", "")) == "kernel7.img"  # the firmware's default: 32-bit
    assert image(PI2_12, PI_OS) == "kernel8.img"  # Raspberry Pi OS's arm_64bit=1
    assert image(PI2_12, "[pi2]\narm_64bit=1\n[pi3]\narm_64bit=0\n") == "kernel8.img"
    assert board_of(PI2_11) is None  # BCM2836: no 64-bit mode


def test_this_boards_firmware_config_reads_only_its_own_sections(tmp_path: Path) -> None:
    """On a Pi 5, a [pi4] kernel=kernel7l.img line made shootout believe kernel7l.img boots."""
    root = tmp_path / "pi5"
    shutil.copytree(FIXTURES / "arm" / "pi5", root)
    config = root / "boot" / "firmware" / "config.txt"
    config.write_text(config.read_text() + PI4_32)
    assert board.firmware_config(root) == {"path": "/boot/firmware/config.txt", "arm_64bit": "1", "kernel": None}
    pi4 = tmp_path / "pi4"
    shutil.copytree(FIXTURES / "arm" / "pi4", pi4)
    config = pi4 / "boot" / "firmware" / "config.txt"  # the 32-bit OS's, as shipped: no arm_64bit line
    config.write_text(config.read_text() + PI4_32)
    assert board.firmware_config(pi4)["kernel"] == "kernel7l.img"  # type: ignore[index]
