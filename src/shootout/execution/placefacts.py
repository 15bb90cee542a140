"""What a target is, asked through its own run(): the facts workloads size their work by, and
the userspace's identity (libc, compiler, openssl, architecture, distro).

Every probe is a command run inside the target, so a target whose files live elsewhere (a
VM, a machine over SSH) answers the same way. A probe never raises for something absent:
facts describe, they do not judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from shootout.base.errors import ShootoutError
from shootout.base.socs import known_caches_kib
from shootout.execution.place import Place
from shootout.execution.versions import first_line, output

LEVELS = ("l1", "l2", "l3")

# One round trip: CPUs this target's processes may use, its memory, its data cache sizes,
# and the width of its userspace's pointers (a 32-bit process can map less than 4 GiB).
_SIZING = r"""
echo 'section cores'; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN
echo 'section bits'; getconf LONG_BIT 2>/dev/null
echo 'section meminfo'; cat /proc/meminfo
echo 'section caches'
for d in /sys/devices/system/cpu/cpu0/cache/index*; do
  [ -r "$d/size" ] && echo "$(cat "$d/level") $(cat "$d/type") $(cat "$d/size")"
done
echo 'section soc'
[ -r /proc/device-tree/compatible ] && tr '\000' '\n' < /proc/device-tree/compatible | tail -n 1
true
"""


@dataclass(frozen=True)
class TargetFacts:
    """The target's own resources, which default parameters are sized by (None: unknown)."""

    cores: int | None = None
    memory_bytes: int | None = None
    available_bytes: int | None = None
    caches_kib: dict[str, int] = field(default_factory=dict)  # data/unified cache per level
    # The configuration's memory limit for a trial's processes (parts/memory.py), when it has one;
    # memory_bytes and available_bytes are then at most this.
    memory_limit: int | None = None
    # Pointer width of the programs a trial runs (32 for an i386 or armhf userspace, or -m32).
    address_bits: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _meminfo_bytes(text: str, key: str) -> int | None:
    m = re.search(rf"^{key}:\s+(\d+) kB$", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


def parse_caches(text: str) -> dict[str, int]:
    """`level type size` lines (sysfs cache index*) -> KiB per level 'l1'..'l3'; instruction caches left out."""
    sizes: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3 or not parts[0].isdigit() or parts[1] == "Instruction":
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", parts[2])
        level = f"l{parts[0]}"
        if m and level in LEVELS:
            sizes[level] = int(m.group(1)) * {"": 1 / 1024, "K": 1, "M": 1024, "G": 1 << 20}[m.group(2)]
    return {k: int(v) for k, v in sizes.items() if v >= 1}


def sizing(target: Place) -> TargetFacts:
    """Cores, memory, available memory and cache sizes as the target sees them."""
    try:
        result = target.run(["sh", "-c", _SIZING], timeout=60)
    except (ShootoutError, OSError):
        return TargetFacts()
    parts = result.sections()
    cores = parts.get("cores", "").strip()
    return sizing_from(int(cores) if cores.isdigit() else None, parts.get("meminfo", ""), parts.get("caches", ""),
                       parse_bits(parts.get("bits", "")), parts.get("soc", "").strip())


def parse_bits(text: str) -> int | None:
    """`getconf LONG_BIT`'s answer: 32 or 64, else unknown."""
    word = text.strip()
    return int(word) if word in ("32", "64") else None


def sizing_from(cores: int | None, meminfo: str, caches: str, bits: int | None = None,
                compatible: str = "") -> TargetFacts:
    """TargetFacts from a CPU count, /proc/meminfo's text, `level type size` cache lines, pointer bits
    and the device tree's SoC entry (brcm,bcm2711): where sysfs lists no caches (a Pi 4), the SoC's
    known sizes, else none (the workloads' own fallback), never another machine's."""
    chip = compatible.split(",", 1)[1].upper() if "," in compatible else None
    return TargetFacts(
        cores=cores if cores is not None and cores > 0 else None,
        memory_bytes=_meminfo_bytes(meminfo, "MemTotal"),
        available_bytes=_meminfo_bytes(meminfo, "MemAvailable"),
        caches_kib=parse_caches(caches) or known_caches_kib(chip),
        address_bits=bits,
    )


# -- the userspace's identity ----------------------------------------------------------------


def os_release_name(text: str) -> str | None:
    values = dict(re.findall(r'^([A-Z_]+)="?(.*?)"?$', text, re.MULTILINE))
    return values.get("PRETTY_NAME") or values.get("NAME")


def libc(target: Place) -> str | None:
    """"glibc 2.36"; musl's ldd prints its version to stderr and exits 1."""
    if found := first_line(output(target, ["getconf", "GNU_LIBC_VERSION"])):
        return found
    text = output(target, ["ldd", "--version"], use_stderr=True)
    return first_line(text) if text and "libc" in text.lower() else None


_IDENTITY: dict[str, Callable[[Place], str | None]] = {
    "libc": libc,
    "cc": lambda t: first_line(output(t, ["cc", "--version"])),
    "openssl": lambda t: first_line(output(t, ["openssl", "version"])),
    "uname_m": lambda t: first_line(output(t, ["uname", "-m"])),
    "dpkg_arch": lambda t: first_line(output(t, ["dpkg", "--print-architecture"])),
    "distro": lambda t: os_release_name(output(t, ["cat", "/etc/os-release"]) or ""),
}


def identity(target: Place) -> dict[str, Any]:
    """Facts of a target's userspace (libc, compiler, openssl, architecture, distro); None if absent."""
    return {name: probe(target) for name, probe in _IDENTITY.items()}
