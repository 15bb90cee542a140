"""config.txt as a Raspberry Pi's firmware reads it: its conditional sections.

A `[filter]` line makes the lines after it apply only where the filter holds (the Raspberry Pi
documentation, config.txt "Conditional filters"): `[all]` resets every filter, `[none]` holds
nowhere until the next `[all]`, a model filter (`[pi4]`, `[pi400]`, `[cm4]`, `[pi5]`,
`[board-type=0x11]` ...) holds on the boards it names, `[tryboot]` only in a boot the tryboot
flag started, a serial number (`[0x12345678]`) on that board alone. A filter replaces the one
of its own type before it; filters of different types combine (both must hold). Filters this
module cannot evaluate from files (a monitor's `[EDID=...]`, a `[gpioN=...]` level) are taken
not to hold: a kernel chosen under them is not the one a plain boot loads. `[HDMI:N]` selects a
port for the lines after it; they still apply. Pure: the board is passed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The model filters each board sees, from its device-tree model string; a board also sees the
# filters of the family it belongs to ("a Pi 400 sees [pi400] and [pi4]").
_MODELS = (
    (re.compile(r"Raspberry Pi Compute Module 5"), ("pi5", "cm5")),
    (re.compile(r"Raspberry Pi 500"), ("pi5", "pi500")),
    (re.compile(r"Raspberry Pi 5"), ("pi5",)),
    (re.compile(r"Raspberry Pi Compute Module 4S"), ("pi4", "cm4s")),
    (re.compile(r"Raspberry Pi Compute Module 4"), ("pi4", "cm4")),
    (re.compile(r"Raspberry Pi 400"), ("pi4", "pi400")),
    (re.compile(r"Raspberry Pi 4"), ("pi4",)),
    (re.compile(r"Raspberry Pi Compute Module 3 Plus"), ("pi3", "pi3+", "cm3+")),
    (re.compile(r"Raspberry Pi Compute Module 3"), ("pi3", "cm3")),
    (re.compile(r"Raspberry Pi 3 Model [AB] Plus"), ("pi3", "pi3+")),
    (re.compile(r"Raspberry Pi 3"), ("pi3",)),
    (re.compile(r"Raspberry Pi 2"), ("pi2",)),
    (re.compile(r"Raspberry Pi Zero 2"), ("pi0", "pi0w", "pi02")),
    (re.compile(r"Raspberry Pi Zero W"), ("pi0", "pi0w")),
    (re.compile(r"Raspberry Pi Zero"), ("pi0",)),
    (re.compile(r"Raspberry Pi Compute Module\b"), ("pi1", "cm1")),
    (re.compile(r"Raspberry Pi Model"), ("pi1",)),
)
MODEL_FILTERS = frozenset(name for _, names in _MODELS for name in names)
_BOARD_TYPE = re.compile(r"board-type=(0x[0-9a-f]+|\d+)")
_SERIAL = re.compile(r"0x[0-9a-f]{1,16}")


def model_filters(model: str) -> frozenset[str]:
    """The model filters a board of this device-tree model sees ([pi4] on a Pi 400 too)."""
    return next((frozenset(names) for pattern, names in _MODELS if pattern.match(model)), frozenset())


@dataclass(frozen=True)
class Reader:
    """What the firmware knows of the board as it reads config.txt (arm/board.py's config_reader
    reads it from a machine)."""

    model: str  # the device tree's model ("Raspberry Pi 4 Model B Rev 1.4")
    board_type: int | None = None  # the revision code's type field, for [board-type=...]
    tryboot: bool = False  # this boot was started with the tryboot flag
    serial: int | None = None  # the board's serial number (cpuinfo's Serial)

    def holds(self, kind: str, name: str) -> bool:
        """Whether a filter of this kind and name holds for this board."""
        if kind == "model":
            if m := _BOARD_TYPE.fullmatch(name):
                return self.board_type == int(m.group(1), 0)
            return name in model_filters(self.model)
        if kind == "tryboot":
            return self.tryboot
        if kind == "serial":  # the serial's low 32 bits, as cpuinfo shows it
            return self.serial is not None and int(name, 16) == self.serial & 0xFFFFFFFF
        return kind == "hdmi"  # a port for what follows, not a condition; EDID, GPIO: unknown here


def _kind(name: str) -> str:
    """The type of a filter: filters of one type replace each other."""
    if name in MODEL_FILTERS or _BOARD_TYPE.fullmatch(name):
        return "model"
    if name == "tryboot":
        return "tryboot"
    if _SERIAL.fullmatch(name):
        return "serial"
    if name.startswith("hdmi:"):
        return "hdmi"
    return name.split("=", 1)[0]  # edid=..., gpio4=1, boot_partition=2: not evaluated here


def settings(text: str, reader: Reader) -> dict[str, str]:
    """Every `key=value` of config.txt that applies on this board, the last of each key winning."""
    found: dict[str, str] = {}
    active: dict[str, str] = {}  # filter type -> the filter now in force
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip().lower()
            if name == "all":
                active = {}
            else:
                active[_kind(name)] = name
        elif "=" in line and all(kind != "none" and reader.holds(kind, name) for kind, name in active.items()):
            key, value = line.split("=", 1)
            found[key.strip()] = value.strip()
    return found


def setting(text: str, key: str, reader: Reader) -> str | None:
    """The value of `key` a boot of this board takes from config.txt (None where no line applies)."""
    return settings(text, reader).get(key)
