"""A Raspberry Pi's (and other device-tree boards') facts: revision, SoC, firmware state, caches.

The revision code is decoded by the Raspberry Pi documentation's new-style layout
(NOQuuuWuFMMMCCCCPPPPTTTTTTTTRRRR); the SoC is the device tree's last `compatible` entry;
`vcgencmd` gives the firmware's clocks, temperature and throttling flags.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shootout.arm.configtxt import Reader, setting
from shootout.base.socs import KNOWN_CACHES
from shootout.conditions.throttling import decode_throttled, parse_throttled
from shootout.conditions.throttling import vcgencmd as _vcgencmd
from shootout.execution.fsread import read_text, under

_TYPES = {0x04: "2B", 0x08: "3B", 0x09: "Zero", 0x0A: "CM3", 0x0C: "Zero W", 0x0D: "3B+", 0x0E: "3A+",
          0x10: "CM3+", 0x11: "4B", 0x12: "Zero 2 W", 0x13: "400", 0x14: "CM4", 0x15: "CM4S", 0x17: "5",
          0x18: "CM5", 0x19: "500", 0x1A: "CM5 Lite"}
_SOCS = {0: "BCM2835", 1: "BCM2836", 2: "BCM2837", 3: "BCM2711", 4: "BCM2712"}
_MEMORY_MB = {0: 256, 1: 512, 2: 1024, 3: 2048, 4: 4096, 5: 8192, 6: 16384}
_MAKERS = {0: "Sony UK", 1: "Egoman", 2: "Embest", 3: "Sony Japan", 4: "Embest", 5: "Stadium"}

CONFIG_TXT = ("/boot/firmware/config.txt", "/boot/config.txt")

Vcgencmd = Callable[..., "str | None"]


def revision_code(root: Path = Path("/")) -> int | None:
    """The board's revision code: /proc/cpuinfo's Revision line, else the device tree's."""
    for line in (read_text(root, "/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Revision" and re.fullmatch(r"[0-9a-fA-F]+", value.strip()):
            return int(value.strip(), 16)
    path = under(root, "/proc/device-tree/system/linux,revision")
    if path.is_file() and len(raw := path.read_bytes()) == 4:
        return int.from_bytes(raw, "big")
    return None


def decode_revision(code: int) -> dict[str, Any] | None:
    """A new-style revision code -> type, revision, SoC, memory, maker; None for old-style codes."""
    if not code >> 23 & 1:
        return None
    kind = code >> 4 & 0xFF
    return {"code": f"{code:x}", "type": _TYPES.get(kind, f"type 0x{kind:x}"), "revision": f"1.{code & 0xF}",
            "soc": _SOCS.get(code >> 12 & 0xF), "memory_mb": _MEMORY_MB.get(code >> 20 & 0x7),
            "maker": _MAKERS.get(code >> 16 & 0xF)}


def soc(root: Path = Path("/")) -> str | None:
    """The SoC from the device tree's compatible list (brcm,bcm2711 -> BCM2711), else the revision's."""
    raw = read_text(root, "/proc/device-tree/compatible")
    entries = [e for e in (raw or "").split("\x00") if e]
    if entries and "," in entries[-1]:
        return entries[-1].split(",", 1)[1].upper()
    code = revision_code(root)
    decoded = decode_revision(code) if code is not None else None
    return decoded["soc"] if decoded else None


def pi_board(root: Path = Path("/")) -> dict[str, Any] | None:
    """Model (device tree), decoded revision, SoC; None on a machine without either."""
    model = (read_text(root, "/proc/device-tree/model") or "").rstrip("\x00") or None
    code = revision_code(root)
    decoded = decode_revision(code) if code is not None else None
    chip = soc(root)
    if model is None and decoded is None and chip is None:
        return None
    return {"model": model, "soc": chip, **({"revision": decoded} if decoded else {})}


def _serial(root: Path) -> int | None:
    """cpuinfo's Serial (a Pi's serial number)."""
    for line in (read_text(root, "/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Serial" and re.fullmatch(r"[0-9a-fA-F]+", value.strip()):
            return int(value.strip(), 16)
    return None


def config_reader(root: Path = Path("/"), tryboot: bool = False) -> Reader:
    """The board under `root` as its firmware knows it reading config.txt: model, type, serial."""
    model = (read_text(root, "/proc/device-tree/model") or "").rstrip("\x00")
    code = revision_code(root)
    decoded = decode_revision(code) if code is not None else None
    return Reader(model, code >> 4 & 0xFF if decoded else None, tryboot, _serial(root))


def arm_64bit(text: str, reader: Reader) -> str | None:
    """config.txt's arm_64bit on this board (boots/identity.py records it per boot)."""
    return setting(text, "arm_64bit", reader)


def firmware_config(root: Path = Path("/")) -> dict[str, Any] | None:
    """config.txt's arm_64bit and kernel= lines as this board reads them (None where not set);
    None without a config.txt."""
    for path in CONFIG_TXT:
        text = read_text(root, path)
        if text is not None:
            reader = config_reader(root)
            return {"path": path, "arm_64bit": arm_64bit(text, reader), "kernel": setting(text, "kernel", reader)}
    return None


def caches(root: Path = Path("/"), chip: str | None = None) -> dict[str, Any] | None:
    """cpu0's caches from sysfs; where sysfs lists none, the SoC's known sizes, else "unknown"
    (never another machine's sizes); None without a CPU tree at all."""
    listed: dict[str, str] = {}
    base = under(root, "/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")) if base.is_dir() else []:
        level, kind, size = (read_text(root, index / n) for n in ("level", "type", "size"))
        if level and kind and size:
            suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
            listed[f"l{level}{suffix}"] = size
    if listed:
        return {"source": "sysfs", **listed}
    chip = chip or soc(root)
    if chip in KNOWN_CACHES:
        return {"source": f"known sizes of the {chip}", **KNOWN_CACHES[chip]}
    return {"source": "unknown"} if under(root, "/sys/devices/system/cpu").is_dir() else None


def firmware_state(vcgencmd: Vcgencmd = _vcgencmd) -> dict[str, Any] | None:
    """Clocks (MHz), SoC temperature and throttling flags from `vcgencmd`; None without it."""
    throttled = vcgencmd("get_throttled")
    if throttled is None:
        return None
    state: dict[str, Any] = {}
    for clock in ("arm", "core"):
        m = re.search(r"=\s*(\d+)", vcgencmd("measure_clock", clock) or "")
        state[f"{clock}_mhz"] = round(int(m.group(1)) / 1e6) if m else None
    m = re.search(r"temp=([\d.]+)", vcgencmd("measure_temp") or "")
    state["temp_c"] = float(m.group(1)) if m else None
    bits = parse_throttled(throttled)
    state["throttled"] = f"0x{bits:x}" if bits is not None else None
    state["throttled_flags"] = decode_throttled(bits) if bits else []
    return state


def preflight_lines(facts: dict[str, Any]) -> list[str]:
    """The ARM facts as the preflight prints them, one line each (nothing on a machine without them)."""
    lines = []
    if pi := facts.get("pi"):
        rev = pi.get("revision") or {}
        extra = ", ".join(x for x in (pi.get("soc"), f"{rev['memory_mb']} MB" if rev.get("memory_mb") else None,
                                      f"revision {rev['code']}" if rev.get("code") else None) if x)
        lines.append(f"board: {pi.get('model') or 'unknown model'}" + (f" ({extra})" if extra else ""))
    if fw := facts.get("firmware"):
        lines.append(f"firmware: {fw['path']}: arm_64bit={fw['arm_64bit'] or 'not set'}, "
                     f"kernel={fw['kernel'] or 'the default'}")
    if state := facts.get("firmware_state"):
        flags = ", ".join(state.get("throttled_flags") or []) or "none"
        lines.append(f"vcgencmd: arm {state.get('arm_mhz')} MHz, core {state.get('core_mhz')} MHz, "
                     f"{state.get('temp_c')} °C, throttled {state.get('throttled')} ({flags})")
    if (a32 := facts.get("aarch32")) is not None:
        lines.append(f"32-bit ARM programs: {'native' if a32['native'] and not a32['binfmt'] else 'not native'} "
                     f"({a32['how']})")
    if (size := facts.get("page_size")) and size != 4096:
        lines.append(f"page size: {size // 1024}K")
    caches_found = facts.get("caches") or {}
    if caches_found and caches_found.get("source") != "sysfs":
        sizes = ", ".join(f"{k} {v}" for k, v in caches_found.items() if k != "source")
        lines.append(f"caches: {sizes + ' (' + caches_found['source'] + ')' if sizes else 'unknown'}")
    return lines
